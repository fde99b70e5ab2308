//go:build amd64 && !purego

package cpu

// Panel kernels of the quantized gemm path (qgemm.go, qgemm_amd64.s).

// qgemmQ4_0AVX2 accumulates into out[8c+r] the dot product of row r of
// nb blocks of a q4_0 panel with column c of a biased packed group
// (twin: qgemmTwin, which starts from zero; run in chunks of k, the
// kernel continues the same FMA chains).
//
//go:noescape
func qgemmQ4_0AVX2(panel, grp *byte, nb int, out *[32]float32)

// qgemmQ5_0AVX2 is qgemmQ4_0AVX2 for a q5_0 panel.
//
//go:noescape
func qgemmQ5_0AVX2(panel, grp *byte, nb int, out *[32]float32)

// qgemmQ8_0AVX2 is qgemmQ4_0AVX2 for a q8_0 panel and a signed packed
// group.
//
//go:noescape
func qgemmQ8_0AVX2(panel, grp *byte, nb int, out *[32]float32)

// qgemmQ4_1AVX2 accumulates into out[8c+r] the dot product of row r of
// nb blocks of a q4_1 panel with column c of a packed q8_1 group (twin:
// qgemmTwin).
//
//go:noescape
func qgemmQ4_1AVX2(panel, grp *byte, nb int, out *[32]float32)

// qgemmQ5_1AVX2 is qgemmQ4_1AVX2 for a q5_1 panel.
//
//go:noescape
func qgemmQ5_1AVX2(panel, grp *byte, nb int, out *[32]float32)

// repackQ4_1AVX2 writes the q4_1 panel of nb blocks of the eight rows
// w + r*ld, as repackQ4_1 does.
//
//go:noescape
func repackQ4_1AVX2(panel, w *byte, ld, nb int)

// repackQ5_1AVX2 is repackQ4_1AVX2 for q5_1 rows (as repackQ5_1).
//
//go:noescape
func repackQ5_1AVX2(panel, w *byte, ld, nb int)

// repackQ4_0AVX2 writes the q4_0 panel of nb blocks of the eight rows
// w + r*ld, as repackQ4_0 does.
//
//go:noescape
func repackQ4_0AVX2(panel, w *byte, ld, nb int)

// repackQ5_0AVX2 is repackQ4_0AVX2 for q5_0 rows (as repackQ5_0).
//
//go:noescape
func repackQ5_0AVX2(panel, w *byte, ld, nb int)

// repackQ8_0AVX2 is repackQ4_0AVX2 for q8_0 rows (as repackQ8_0).
//
//go:noescape
func repackQ8_0AVX2(panel, w *byte, ld, nb int)

// qRepack wraps an assembly repacking of xs weight and ps panel bytes
// per block.
func qRepack(f func(panel, w *byte, ld, nb int), xs, ps int64) func(panel, w []byte, ld, nb int64) {
	return func(panel, w []byte, ld, nb int64) {
		if nb <= 0 {
			return
		}
		_, _ = panel[nb*ps-1], w[7*ld+nb*xs-1]
		f(&panel[0], &w[0], int(ld), int(nb))
	}
}

// qKernel wraps a panel kernel with ps panel and gs group bytes per
// block.
func qKernel(f func(panel, grp *byte, nb int, out *[32]float32), ps, gs int) func(int, []byte, []byte, *[32]float32) {
	return func(nb int, panel, grp []byte, out *[32]float32) {
		if nb <= 0 {
			return
		}
		_, _ = panel[nb*ps-1], grp[nb*gs-1]
		f(&panel[0], &grp[0], nb, out)
	}
}
