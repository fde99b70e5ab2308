//go:build amd64 && !purego

package gemv

// f16x4iAVX2 sets out[r] to the dot product of nb runs of 16 binary16
// values of row r of a half of an f16 x8 group (rows interleaved run by
// run) with the binary16 row y (gemv_x8f16_amd64.s; twin: F16Twin per
// row).
//
//go:noescape
func f16x4iAVX2(x *byte, y *byte, nb int, out *[4]float32, pfd int)

// bf16x4iAVX2 is f16x4iAVX2 for bfloat16 rows and activations (twin:
// BF16Twin per row).
//
//go:noescape
func bf16x4iAVX2(x *byte, y *byte, nb int, out *[4]float32, pfd int)

// X8F16AVX2 is the f16 x8 kernel: f16x4iAVX2 on each half of each of
// ng groups, after checking the slice bounds it relies on; it is an
// X8Func (twin: X8F16Twin).
func X8F16AVX2(nb, ng int, x, y []byte, _ []float32, out []float32, pfd int) {
	x8HalvesRun(f16x4iAVX2, nb, ng, x, y, out, pfd)
}

// X8BF16AVX2 is X8F16AVX2 for bfloat16 weights in the same layout, with
// a bfloat16 activation row (twin: X8BF16Twin).
func X8BF16AVX2(nb, ng int, x, y []byte, _ []float32, out []float32, pfd int) {
	x8HalvesRun(bf16x4iAVX2, nb, ng, x, y, out, pfd)
}

// x8HalvesRun runs kernel (f16x4iAVX2 or bf16x4iAVX2) on each half of
// each of ng f16/bf16 x8 groups, after the bounds checks it relies on
// (nothing to compute clears out).
func x8HalvesRun(kernel func(x *byte, y *byte, nb int, out *[4]float32, pfd int), nb, ng int, x, y []byte, out []float32, pfd int) {
	if nb <= 0 || ng <= 0 {
		clear(out[:8*max(ng, 0)])
		return
	}
	x8F16Check(nb, ng, x, y, out)
	half := X8BytesF16 / 2 * nb
	for h := range 2 * ng {
		kernel(&x[h*half], &y[0], nb, (*[4]float32)(out[4*h:4*h+4]), pfd)
	}
}
