//go:build amd64 && !purego

package quantize

import (
	"unsafe"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// Activation quantizers of the AVX2 tier (quantize_amd64.s). For finite
// inputs each writes exactly the bytes quant.QuantizeRow writes, unlike
// ggml's AVX2 quantize_row_q8_0, which scales by 127/amax instead of
// 1/(amax/127) and rounds halves to even; here the scale is computed as
// the reference does and halves round away from zero (trunc(p +
// copysign(0.49999997, p))), so the generic twin is quant.QuantizeRow
// itself. Inputs with NaN or Inf are outside that contract: their codes
// may differ (a NaN becomes -128 rather than 0, and a q8_K block whose
// largest magnitude is NaN is written as zeros), as they differ between
// ggml's SIMD and reference quantizers.

// quantQ8_0AVX2 quantizes nb blocks of 32 floats to q8_0.
//
//go:noescape
func quantQ8_0AVX2(x *float32, y *byte, nb int)

// quantQ8_1AVX2 quantizes nb blocks of 32 floats to q8_1.
//
//go:noescape
func quantQ8_1AVX2(x *float32, y *byte, nb int)

// quantQ8_KAVX2 quantizes nb blocks of 256 floats to q8_K.
//
//go:noescape
func quantQ8_KAVX2(x *float32, y *byte, nb int)

// cvtF32F16AVX2 converts n floats to binary16 as quant.FP32ToFP16 does,
// every NaN included.
//
//go:noescape
func cvtF32F16AVX2(x *float32, y *uint16, n int)

// F16AVX2 converts a row to binary16 with cvtF32F16AVX2 (twin:
// quant.QuantizeRow).
func F16AVX2(src []float32, dst []byte) { halves(cvtF32F16AVX2, src, dst) }

// halves runs cvt, a converter of n floats to 2-byte values, on a row
// (dst 2*len(src) bytes, checked).
func halves(cvt func(x *float32, y *uint16, n int), src []float32, dst []byte) {
	n := len(src)
	if n == 0 {
		return
	}
	_ = dst[2*n-1]
	cvt(&src[0], (*uint16)(unsafe.Pointer(&dst[0])), n)
}

// Q8_0AVX2 quantizes a row of whole q8_0 blocks (twin: quant.QuantizeRow).
func Q8_0AVX2(src []float32, dst []byte) { blocks(quantQ8_0AVX2, quant.QK, simd.BytesQ8_0, src, dst) }

// Q8_1AVX2 quantizes a row of whole q8_1 blocks (twin: quant.QuantizeRow).
func Q8_1AVX2(src []float32, dst []byte) { blocks(quantQ8_1AVX2, quant.QK, simd.BytesQ8_1, src, dst) }

// Q8_KAVX2 quantizes a row of whole q8_K blocks (twin: quant.QuantizeRow).
func Q8_KAVX2(src []float32, dst []byte) { blocks(quantQ8_KAVX2, quant.QKK, simd.BytesQ8_K, src, dst) }

// blocks runs an assembly quantizer of whole blocks (bs floats to bb
// bytes) on src, which holds whole blocks.
func blocks(f func(x *float32, y *byte, nb int), bs, bb int, src []float32, dst []byte) {
	nb := len(src) / bs
	if nb == 0 {
		return
	}
	_ = dst[nb*bb-1]
	f(&src[0], &dst[0], nb)
}
