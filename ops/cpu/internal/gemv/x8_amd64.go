//go:build amd64 && !purego

package gemv

import "github.com/kernbench/kernbench/ops/cpu/internal/simd"

// An x8Shape is what an x8 kernel reads per block: xb bytes of each
// group's x8 block, yb bytes of the activation row's block (q8_0 or
// q8_K) and per side slots.
type x8Shape struct{ xb, yb, per int }

// The x8 kernels' shapes.
var (
	x8ShapeQ4_0 = x8Shape{X8BytesQ4_0, simd.BytesQ8_0, X8SlotsQ4_0}
	x8ShapeQ8_0 = x8Shape{X8BytesQ8_0, simd.BytesQ8_0, X8SlotsQ8_0}
	x8ShapeQ4_K = x8Shape{X8BytesQ4_K, simd.BytesQ8_K, X8SlotsK}
	x8ShapeQ6_K = x8Shape{X8BytesQ6_K, simd.BytesQ8_K, X8SlotsK}
)

// x8Asm is the signature of the x8 assembly kernels.
type x8Asm func(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)

// run is an X8Func over kernel: it clears out when there is nothing to
// compute, and otherwise panics unless the slices hold what the kernel
// reads (ng groups of nb blocks, nb activation blocks, nb*per side
// slots, 8*ng outputs) before calling it.
func (s x8Shape) run(kernel x8Asm, nb, ng int, x, y []byte, side, out []float32, pfd int) {
	if nb <= 0 || ng <= 0 {
		clear(out[:8*max(ng, 0)])
		return
	}
	_, _, _, _ = x[ng*nb*s.xb-1], y[nb*s.yb-1], side[nb*s.per-1], out[8*ng-1]
	kernel(&x[0], &y[0], &side[0], nb, ng, &out[0], pfd)
}

// q4_0x8AVX2 sets out[8g+r] to the dot product of nb blocks of row r of
// x8 group g (g < ng) with the q8_0 row y, given X8Q4_0Prep's side data
// (gemv_x8_amd64.s; twin: X8Q4_0Twin).
//
//go:noescape
func q4_0x8AVX2(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)

// q8_0x8AVX2 is q4_0x8AVX2 for q8_0 x8 groups, with X8Q8_0Prep's side
// data (twin: X8Q8_0Twin).
//
//go:noescape
func q8_0x8AVX2(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)

// X8Q4_0AVX2 runs q4_0x8AVX2 after checking the slice bounds it relies
// on; it is an X8Func (twin: X8Q4_0Twin).
func X8Q4_0AVX2(nb, ng int, x, y []byte, side []float32, out []float32, pfd int) {
	x8ShapeQ4_0.run(q4_0x8AVX2, nb, ng, x, y, side, out, pfd)
}

// X8Q8_0AVX2 runs q8_0x8AVX2 after checking the slice bounds it relies
// on; it is an X8Func (twin: X8Q8_0Twin).
func X8Q8_0AVX2(nb, ng int, x, y []byte, side []float32, out []float32, pfd int) {
	x8ShapeQ8_0.run(q8_0x8AVX2, nb, ng, x, y, side, out, pfd)
}

// q6_Kx8AVX2 is q4_0x8AVX2 for q6_K x8 groups against a q8_K row, with
// X8Q8_KPrep's side data (gemv_x8k_amd64.s; twin: X8Q6_KTwin).
//
//go:noescape
func q6_Kx8AVX2(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)

// q4_Kx8AVX2 is q6_Kx8AVX2 for q4_K x8 groups (twin: X8Q4_KTwin).
//
//go:noescape
func q4_Kx8AVX2(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)

// X8Q6_KAVX2 runs q6_Kx8AVX2 after checking the slice bounds it relies
// on; it is an X8Func over super-blocks (twin: X8Q6_KTwin).
func X8Q6_KAVX2(nb, ng int, x, y []byte, side []float32, out []float32, pfd int) {
	x8ShapeQ6_K.run(q6_Kx8AVX2, nb, ng, x, y, side, out, pfd)
}

// X8Q4_KAVX2 runs q4_Kx8AVX2 after checking the slice bounds it relies
// on; it is an X8Func over super-blocks (twin: X8Q4_KTwin).
func X8Q4_KAVX2(nb, ng int, x, y []byte, side []float32, out []float32, pfd int) {
	x8ShapeQ4_K.run(q4_Kx8AVX2, nb, ng, x, y, side, out, pfd)
}
