//go:build amd64 && !purego

package dot

import (
	"unsafe"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// Register-tiled MUL_MAT kernels of the AVX2 tier (dot_float_amd64.s,
// dot_q_amd64.s, gemmk_amd64.s); package cpu's mul_mat_gemm.go drives them.

// gemmF32x4x3AVX2 adds to c[r + col*ldc] the dot product of float32 rows
// a + r*lda and b + col*ldb over k elements (a multiple of 8), for r < 4
// and col < 3.
//
//go:noescape
func gemmF32x4x3AVX2(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

// cvtF16F32AVX2 widens n binary16 values to float32.
//
//go:noescape
func cvtF16F32AVX2(x *uint16, y *float32, n int)

// cvtBF16F32AVX2 widens n bfloat16 values to float32.
//
//go:noescape
func cvtBF16F32AVX2(x *uint16, y *float32, n int)

// gemmQ4_0x4AVX2 sets out[c] to the dot product of nb q4_0 blocks at x
// with column c of a packed q8 group at y (see ops/cpu's packGroup).
//
//go:noescape
func gemmQ4_0x4AVX2(x, y *byte, nb int, out *[4]float32)

// gemmQ8_0x4AVX2 is gemmQ4_0x4AVX2 for q8_0 weights.
//
//go:noescape
func gemmQ8_0x4AVX2(x, y *byte, nb int, out *[4]float32)

// gemmQ4_Kx4AVX2 sets out[c] to the dot product of nb q4_K blocks at x
// with the q8_K row y + c*ldy, equal bit for bit to Q4_K.
//
//go:noescape
func gemmQ4_Kx4AVX2(x, y *byte, ldy int, nb int, out *[4]float32)

// gemmQ6_Kx4AVX2 is gemmQ4_Kx4AVX2 for q6_K weights.
//
//go:noescape
func gemmQ6_Kx4AVX2(x, y *byte, ldy int, nb int, out *[4]float32)

// TileF32AVX2 checks the panel bounds and runs gemmF32x4x3AVX2.
func TileF32AVX2(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	_, _, _ = a[3*lda+k-1], b[2*ldb+k-1], c[2*ldc+3]
	gemmF32x4x3AVX2(k, &a[0], lda, &b[0], ldb, &c[0], ldc)
}

func WidenF16AVX2(src []byte, dst []float32) {
	if n := len(dst); n > 0 {
		_ = src[2*n-1]
		cvtF16F32AVX2((*uint16)(unsafe.Pointer(&src[0])), &dst[0], n)
	}
}

func WidenBF16AVX2(src []byte, dst []float32) {
	if n := len(dst); n > 0 {
		_ = src[2*n-1]
		cvtBF16F32AVX2((*uint16)(unsafe.Pointer(&src[0])), &dst[0], n)
	}
}

// quadLegacy runs a packed-group kernel of a 32-element format with xs
// bytes per block.
func quadLegacy(f func(x, y *byte, nb int, out *[4]float32), xs int, nb int, x, y []byte, out *[4]float32) {
	if nb <= 0 {
		*out = [4]float32{}
		return
	}
	_, _ = x[nb*xs-1], y[nb*PackQ8Block-1]
	f(&x[0], &y[0], nb, out)
}

// quadK runs a K-format kernel with xs bytes per super-block.
func quadK(f func(x, y *byte, ldy int, nb int, out *[4]float32), xs int, nb int, x, y []byte, ldy int, out *[4]float32) {
	if nb <= 0 {
		*out = [4]float32{}
		return
	}
	_, _ = x[nb*xs-1], y[3*ldy+nb*simd.BytesQ8_K-1]
	f(&x[0], &y[0], ldy, nb, out)
}

// gemmQ5_0x4AVX2 is gemmQ4_0x4AVX2 for q5_0 weights (twin:
// QuadQ5_0Twin).
//
//go:noescape
func gemmQ5_0x4AVX2(x, y *byte, nb int, out *[4]float32)

// gemmQ5_Kx4AVX2 is gemmQ4_Kx4AVX2 for q5_K weights, equal bit for bit
// to Q5_K (twin: the generic dot product per column).
//
//go:noescape
func gemmQ5_Kx4AVX2(x, y *byte, ldy int, nb int, out *[4]float32)

// gemmQ2_Kx4AVX2 is gemmQ4_Kx4AVX2 for q2_K weights, equal bit for bit
// to Q2_K (twin: the generic dot product per column).
//
//go:noescape
func gemmQ2_Kx4AVX2(x, y *byte, ldy int, nb int, out *[4]float32)

// gemmQ4_1x4AVX2 sets out[c] to the dot product of nb q4_1 blocks at x
// with column c of a packed q8_1 group at y (twin: QuadQ4_1Twin).
//
//go:noescape
func gemmQ4_1x4AVX2(x, y *byte, nb int, out *[4]float32)

// gemmQ5_1x4AVX2 is gemmQ4_1x4AVX2 for q5_1 weights (twin:
// QuadQ5_1Twin).
//
//go:noescape
func gemmQ5_1x4AVX2(x, y *byte, nb int, out *[4]float32)

// quadLegacy1 runs a packed q8_1 group kernel with xs bytes per block.
func quadLegacy1(f func(x, y *byte, nb int, out *[4]float32), xs int, nb int, x, y []byte, out *[4]float32) {
	if nb <= 0 {
		*out = [4]float32{}
		return
	}
	_, _ = x[nb*xs-1], y[nb*PackQ81Block-1]
	f(&x[0], &y[0], nb, out)
}

// gemmQ3_Kx4AVX2 is gemmQ4_Kx4AVX2 for q3_K weights, equal bit for bit
// to Q3_K (twin: the generic dot product per column).
//
//go:noescape
func gemmQ3_Kx4AVX2(x, y *byte, ldy int, nb int, out *[4]float32)

// The quad kernels as QuadFuncs: one weight row against a packed group of
// four q8_0 (Q8Quad) or q8_1 (Q81Quad) activation rows, or four q8_K rows
// ldy bytes apart (KQuad).

// QuadQ4_0AVX2 runs gemmQ4_0x4AVX2.
func QuadQ4_0AVX2(nb int, x, y []byte, ldy int, out *[4]float32) {
	quadLegacy(gemmQ4_0x4AVX2, simd.BytesQ4_0, nb, x, y, out)
}

// QuadQ5_0AVX2 runs gemmQ5_0x4AVX2 (twin: QuadQ5_0Twin).
func QuadQ5_0AVX2(nb int, x, y []byte, ldy int, out *[4]float32) {
	quadLegacy(gemmQ5_0x4AVX2, simd.BytesQ5_0, nb, x, y, out)
}

// QuadQ8_0AVX2 runs gemmQ8_0x4AVX2.
func QuadQ8_0AVX2(nb int, x, y []byte, ldy int, out *[4]float32) {
	quadLegacy(gemmQ8_0x4AVX2, simd.BytesQ8_0, nb, x, y, out)
}

// QuadQ4_1AVX2 runs gemmQ4_1x4AVX2 (twin: QuadQ4_1Twin).
func QuadQ4_1AVX2(nb int, x, y []byte, ldy int, out *[4]float32) {
	quadLegacy1(gemmQ4_1x4AVX2, simd.BytesQ4_1, nb, x, y, out)
}

// QuadQ5_1AVX2 runs gemmQ5_1x4AVX2 (twin: QuadQ5_1Twin).
func QuadQ5_1AVX2(nb int, x, y []byte, ldy int, out *[4]float32) {
	quadLegacy1(gemmQ5_1x4AVX2, simd.BytesQ5_1, nb, x, y, out)
}

// QuadQ2_KAVX2 runs gemmQ2_Kx4AVX2 (twin: Q2_K per column).
func QuadQ2_KAVX2(nb int, x, y []byte, ldy int, out *[4]float32) {
	quadK(gemmQ2_Kx4AVX2, simd.BytesQ2_K, nb, x, y, ldy, out)
}

// QuadQ3_KAVX2 runs gemmQ3_Kx4AVX2 (twin: Q3_K per column).
func QuadQ3_KAVX2(nb int, x, y []byte, ldy int, out *[4]float32) {
	quadK(gemmQ3_Kx4AVX2, simd.BytesQ3_K, nb, x, y, ldy, out)
}

// QuadQ4_KAVX2 runs gemmQ4_Kx4AVX2 (twin: Q4_K per column).
func QuadQ4_KAVX2(nb int, x, y []byte, ldy int, out *[4]float32) {
	quadK(gemmQ4_Kx4AVX2, simd.BytesQ4_K, nb, x, y, ldy, out)
}

// QuadQ5_KAVX2 runs gemmQ5_Kx4AVX2 (twin: Q5_K per column).
func QuadQ5_KAVX2(nb int, x, y []byte, ldy int, out *[4]float32) {
	quadK(gemmQ5_Kx4AVX2, simd.BytesQ5_K, nb, x, y, ldy, out)
}

// QuadQ6_KAVX2 runs gemmQ6_Kx4AVX2 (twin: Q6_K per column).
func QuadQ6_KAVX2(nb int, x, y []byte, ldy int, out *[4]float32) {
	quadK(gemmQ6_Kx4AVX2, simd.BytesQ6_K, nb, x, y, ldy, out)
}
