//go:build amd64 && !purego

package qgemm

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// Panel kernels of the quantized gemm path (qgemm.go, qgemm_amd64.s).

// qgemmQ4_0AVX2 accumulates into out[8c+r] the dot product of row r of
// nb blocks of a q4_0 panel with column c of a biased packed group
// (twin: Twin, which starts from zero; run in chunks of k, the
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
// Twin).
//
//go:noescape
func qgemmQ4_1AVX2(panel, grp *byte, nb int, out *[32]float32)

// qgemmQ5_1AVX2 is qgemmQ4_1AVX2 for a q5_1 panel.
//
//go:noescape
func qgemmQ5_1AVX2(panel, grp *byte, nb int, out *[32]float32)

// repackQ4_1AVX2 writes the q4_1 panel of nb blocks of the eight rows
// w + r*ld, as RepackQ4_1 does.
//
//go:noescape
func repackQ4_1AVX2(panel, w *byte, ld, nb int)

// repackQ5_1AVX2 is repackQ4_1AVX2 for q5_1 rows (as RepackQ5_1).
//
//go:noescape
func repackQ5_1AVX2(panel, w *byte, ld, nb int)

// repackQ4_KAVX2 writes the q4_K panel of nb super-blocks of the eight
// rows w + r*ld, as RepackQ4_K does.
//
//go:noescape
func repackQ4_KAVX2(panel, w *byte, ld, nb int)

// repackQ5_KAVX2 is repackQ4_KAVX2 for q5_K rows (as RepackQ5_K).
//
//go:noescape
func repackQ5_KAVX2(panel, w *byte, ld, nb int)

// repackQ6_KAVX2 writes the q6_K panel of nb super-blocks of the eight
// rows w + r*ld, as RepackQ6_K does.
//
//go:noescape
func repackQ6_KAVX2(panel, w *byte, ld, nb int)

// repackQ4_0AVX2 writes the q4_0 panel of nb blocks of the eight rows
// w + r*ld, as RepackQ4_0 does.
//
//go:noescape
func repackQ4_0AVX2(panel, w *byte, ld, nb int)

// repackQ5_0AVX2 is repackQ4_0AVX2 for q5_0 rows (as RepackQ5_0).
//
//go:noescape
func repackQ5_0AVX2(panel, w *byte, ld, nb int)

// repackQ8_0AVX2 is repackQ4_0AVX2 for q8_0 rows (as RepackQ8_0).
//
//go:noescape
func repackQ8_0AVX2(panel, w *byte, ld, nb int)

// panelQ4_0FromX8AVX2 writes the q4_0 panel of nb blocks of an x8
// group (package gemv's layout of eight interleaved rows): the bytes
// repackQ4_0AVX2 writes for the rows the group holds.
//
//go:noescape
func panelQ4_0FromX8AVX2(panel, x8 *byte, nb int)

// panelQ8_0FromX8AVX2 is panelQ4_0FromX8AVX2 for q8_0 (as
// repackQ8_0AVX2).
//
//go:noescape
func panelQ8_0FromX8AVX2(panel, x8 *byte, nb int)

// The wrappers check the slice bounds the assembly relies on.

// PanelQ4_0FromX8AVX2 runs panelQ4_0FromX8AVX2: the panel of an x8
// group, byte for byte RepackQ4_0AVX2's of the group's rows.
func PanelQ4_0FromX8AVX2(panel, x8 []byte, nb int64) {
	fromX8(panelQ4_0FromX8AVX2, 8*simd.BytesQ4_0, PanelBlock, panel, x8, nb)
}

// PanelQ8_0FromX8AVX2 runs panelQ8_0FromX8AVX2 (as
// PanelQ4_0FromX8AVX2, for q8_0).
func PanelQ8_0FromX8AVX2(panel, x8 []byte, nb int64) {
	fromX8(panelQ8_0FromX8AVX2, 8*simd.BytesQ8_0, PanelBlock8, panel, x8, nb)
}

// fromX8 runs an x8-to-panel conversion of xs x8 and ps panel bytes per
// block.
func fromX8(f func(panel, x8 *byte, nb int), xs, ps int64, panel, x8 []byte, nb int64) {
	if nb <= 0 {
		return
	}
	_, _ = panel[nb*ps-1], x8[nb*xs-1]
	f(&panel[0], &x8[0], int(nb))
}

// Q4_0AVX2 runs qgemmQ4_0AVX2 on nb blocks of a panel and a packed q8
// group (biased codes; twin: Twin).
func Q4_0AVX2(nb int, panel, grp []byte, out *[32]float32) {
	kernel(qgemmQ4_0AVX2, PanelBlock, dot.PackQ8Block, nb, panel, grp, out)
}

// Q5_0AVX2 runs qgemmQ5_0AVX2 (biased codes; twin: Twin).
func Q5_0AVX2(nb int, panel, grp []byte, out *[32]float32) {
	kernel(qgemmQ5_0AVX2, PanelBlock, dot.PackQ8Block, nb, panel, grp, out)
}

// Q8_0AVX2 runs qgemmQ8_0AVX2 (twin: Twin).
func Q8_0AVX2(nb int, panel, grp []byte, out *[32]float32) {
	kernel(qgemmQ8_0AVX2, PanelBlock8, dot.PackQ8Block, nb, panel, grp, out)
}

// Q4_1AVX2 runs qgemmQ4_1AVX2 with a packed q8_1 group (twin: Twin).
func Q4_1AVX2(nb int, panel, grp []byte, out *[32]float32) {
	kernel(qgemmQ4_1AVX2, PanelBlock, dot.PackQ81Block, nb, panel, grp, out)
}

// Q5_1AVX2 runs qgemmQ5_1AVX2 with a packed q8_1 group (twin: Twin).
func Q5_1AVX2(nb int, panel, grp []byte, out *[32]float32) {
	kernel(qgemmQ5_1AVX2, PanelBlock, dot.PackQ81Block, nb, panel, grp, out)
}

// RepackQ4_0AVX2 runs repackQ4_0AVX2 (as RepackQ4_0).
func RepackQ4_0AVX2(panel, w []byte, ld, nb int64) {
	repack(repackQ4_0AVX2, simd.BytesQ4_0, PanelBlock, panel, w, ld, nb)
}

// RepackQ4_KAVX2 runs repackQ4_KAVX2: byte for byte RepackQ4_K, 13
// times as fast (BenchmarkRepackK on a Zen 5; q5_K 13x, q6_K 32x),
// which matters where a panel serves few activation rows (MoE prefill:
// about 32 per expert).
func RepackQ4_KAVX2(panel, w []byte, ld, nb int64) {
	repack(repackQ4_KAVX2, simd.BytesQ4_K, PanelQ4_K, panel, w, ld, nb)
}

// RepackQ5_KAVX2 runs repackQ5_KAVX2 (as RepackQ5_K).
func RepackQ5_KAVX2(panel, w []byte, ld, nb int64) {
	repack(repackQ5_KAVX2, simd.BytesQ5_K, PanelQ4_K, panel, w, ld, nb)
}

// RepackQ6_KAVX2 runs repackQ6_KAVX2 (as RepackQ6_K).
func RepackQ6_KAVX2(panel, w []byte, ld, nb int64) {
	repack(repackQ6_KAVX2, simd.BytesQ6_K, PanelQ6_K, panel, w, ld, nb)
}

// RepackQ5_0AVX2 runs repackQ5_0AVX2 (as RepackQ5_0).
func RepackQ5_0AVX2(panel, w []byte, ld, nb int64) {
	repack(repackQ5_0AVX2, simd.BytesQ5_0, PanelBlock, panel, w, ld, nb)
}

// RepackQ8_0AVX2 runs repackQ8_0AVX2 (as RepackQ8_0).
func RepackQ8_0AVX2(panel, w []byte, ld, nb int64) {
	repack(repackQ8_0AVX2, simd.BytesQ8_0, PanelBlock8, panel, w, ld, nb)
}

// RepackQ4_1AVX2 runs repackQ4_1AVX2 (as RepackQ4_1).
func RepackQ4_1AVX2(panel, w []byte, ld, nb int64) {
	repack(repackQ4_1AVX2, simd.BytesQ4_1, PanelBlock, panel, w, ld, nb)
}

// RepackQ5_1AVX2 runs repackQ5_1AVX2 (as RepackQ5_1).
func RepackQ5_1AVX2(panel, w []byte, ld, nb int64) {
	repack(repackQ5_1AVX2, simd.BytesQ5_1, PanelBlock, panel, w, ld, nb)
}

// repack runs an assembly repacking of xs weight and ps panel bytes per
// block.
func repack(f func(panel, w *byte, ld, nb int), xs, ps int64, panel, w []byte, ld, nb int64) {
	if nb <= 0 {
		return
	}
	_, _ = panel[nb*ps-1], w[7*ld+nb*xs-1]
	f(&panel[0], &w[0], int(ld), int(nb))
}

// kernel runs a panel kernel with ps panel and gs group bytes per block.
func kernel(f func(panel, grp *byte, nb int, out *[32]float32), ps, gs int, nb int, panel, grp []byte, out *[32]float32) {
	if nb <= 0 {
		return
	}
	_, _ = panel[nb*ps-1], grp[nb*gs-1]
	f(&panel[0], &grp[0], nb, out)
}
