//go:build amd64 && !purego

package cpu

import (
	"unsafe"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// Register-tiled MUL_MAT kernels of the AVX2 tier (dot_amd64.s,
// dotk_amd64.s); gemm.go drives them.

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
// with column c of a packed q8 group at y (see packQ8Groups).
//
//go:noescape
func gemmQ4_0x4AVX2(x, y *byte, nb int, out *[4]float32)

// gemmQ8_0x4AVX2 is gemmQ4_0x4AVX2 for q8_0 weights.
//
//go:noescape
func gemmQ8_0x4AVX2(x, y *byte, nb int, out *[4]float32)

// gemmQ4_Kx4AVX2 sets out[c] to the dot product of nb q4_K blocks at x
// with the q8_K row y + c*ldy, equal bit for bit to vecDotQ4_KQ8_K.
//
//go:noescape
func gemmQ4_Kx4AVX2(x, y *byte, ldy int, nb int, out *[4]float32)

// gemmQ6_Kx4AVX2 is gemmQ4_Kx4AVX2 for q6_K weights.
//
//go:noescape
func gemmQ6_Kx4AVX2(x, y *byte, ldy int, nb int, out *[4]float32)

// tileF32AVX2 checks the panel bounds and runs gemmF32x4x3AVX2.
func tileF32AVX2(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	_, _, _ = a[3*lda+k-1], b[2*ldb+k-1], c[2*ldc+3]
	gemmF32x4x3AVX2(k, &a[0], lda, &b[0], ldb, &c[0], ldc)
}

func widenF16AVX2(src []byte, dst []float32) {
	if n := len(dst); n > 0 {
		_ = src[2*n-1]
		cvtF16F32AVX2((*uint16)(unsafe.Pointer(&src[0])), &dst[0], n)
	}
}

func widenBF16AVX2(src []byte, dst []float32) {
	if n := len(dst); n > 0 {
		_ = src[2*n-1]
		cvtBF16F32AVX2((*uint16)(unsafe.Pointer(&src[0])), &dst[0], n)
	}
}

// quadLegacy wraps a packed-group kernel of a 32-element format with xs
// bytes per block.
func quadLegacy(f func(x, y *byte, nb int, out *[4]float32), xs int) quadFunc {
	return func(nb int, x, y []byte, _ int, out *[4]float32) {
		if nb <= 0 {
			*out = [4]float32{}
			return
		}
		_, _ = x[nb*xs-1], y[nb*packQ8Block-1]
		f(&x[0], &y[0], nb, out)
	}
}

// quadK wraps a K-format kernel with xs bytes per super-block.
func quadK(f func(x, y *byte, ldy int, nb int, out *[4]float32), xs int) quadFunc {
	return func(nb int, x, y []byte, ldy int, out *[4]float32) {
		if nb <= 0 {
			*out = [4]float32{}
			return
		}
		_, _ = x[nb*xs-1], y[3*ldy+nb*simd.BytesQ8_K-1]
		f(&x[0], &y[0], ldy, nb, out)
	}
}

// gemmQ5_0x4AVX2 is gemmQ4_0x4AVX2 for q5_0 weights (twin:
// quadQ5_0Twin).
//
//go:noescape
func gemmQ5_0x4AVX2(x, y *byte, nb int, out *[4]float32)

// gemmQ5_Kx4AVX2 is gemmQ4_Kx4AVX2 for q5_K weights, equal bit for bit
// to vecDotQ5_KQ8_K (twin: the generic dot product per column).
//
//go:noescape
func gemmQ5_Kx4AVX2(x, y *byte, ldy int, nb int, out *[4]float32)

// gemmQ2_Kx4AVX2 is gemmQ4_Kx4AVX2 for q2_K weights, equal bit for bit
// to vecDotQ2_KQ8_K (twin: the generic dot product per column).
//
//go:noescape
func gemmQ2_Kx4AVX2(x, y *byte, ldy int, nb int, out *[4]float32)

// gemmQ4_1x4AVX2 sets out[c] to the dot product of nb q4_1 blocks at x
// with column c of a packed q8_1 group at y (twin: quadQ4_1Twin).
//
//go:noescape
func gemmQ4_1x4AVX2(x, y *byte, nb int, out *[4]float32)

// gemmQ5_1x4AVX2 is gemmQ4_1x4AVX2 for q5_1 weights (twin:
// quadQ5_1Twin).
//
//go:noescape
func gemmQ5_1x4AVX2(x, y *byte, nb int, out *[4]float32)

// quadLegacy1 wraps a packed q8_1 group kernel with xs bytes per block.
func quadLegacy1(f func(x, y *byte, nb int, out *[4]float32), xs int) quadFunc {
	return func(nb int, x, y []byte, _ int, out *[4]float32) {
		if nb <= 0 {
			*out = [4]float32{}
			return
		}
		_, _ = x[nb*xs-1], y[nb*packQ81Block-1]
		f(&x[0], &y[0], nb, out)
	}
}

// gemmQ3_Kx4AVX2 is gemmQ4_Kx4AVX2 for q3_K weights, equal bit for bit
// to vecDotQ3_KQ8_K (twin: the generic dot product per column).
//
//go:noescape
func gemmQ3_Kx4AVX2(x, y *byte, ldy int, nb int, out *[4]float32)
