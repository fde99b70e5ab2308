//go:build amd64 && !purego

package quantize

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// Activation quantizers of the avx512 tier (quantize_avx512_amd64.s):
// the AVX2 ones in zmm registers, under the same contract (exactly
// quant.QuantizeRow's bytes for finite inputs; see quantize_amd64.go).
// They need AVX-512 F, BW and VL.

// quantQ8_0AVX512 quantizes nb blocks of 32 floats to q8_0.
//
//go:noescape
func quantQ8_0AVX512(x *float32, y *byte, nb int)

// quantQ8_1AVX512 quantizes nb blocks of 32 floats to q8_1.
//
//go:noescape
func quantQ8_1AVX512(x *float32, y *byte, nb int)

// quantQ8_KAVX512 quantizes nb blocks of 256 floats to q8_K.
//
//go:noescape
func quantQ8_KAVX512(x *float32, y *byte, nb int)

// cvtF32F16AVX512 converts n floats to binary16 as quant.FP32ToFP16
// does, every NaN included (a masked step for the last n%16).
//
//go:noescape
func cvtF32F16AVX512(x *float32, y *uint16, n int)

// F16AVX512 converts a row to binary16 with cvtF32F16AVX512 (twin:
// quant.QuantizeRow).
func F16AVX512(src []float32, dst []byte) { halves(cvtF32F16AVX512, src, dst) }

// cvtF32BF16AVX512 converts n floats to bfloat16 as quant.FP32ToBF16
// does, every NaN included (a masked step for the last n%16).
//
//go:noescape
func cvtF32BF16AVX512(x *float32, y *uint16, n int)

// BF16AVX512 converts a row to bfloat16 with cvtF32BF16AVX512 (twin:
// quant.QuantizeRow).
func BF16AVX512(src []float32, dst []byte) { halves(cvtF32BF16AVX512, src, dst) }

// Q8_0AVX512 quantizes a row of whole q8_0 blocks (twin:
// quant.QuantizeRow).
func Q8_0AVX512(src []float32, dst []byte) {
	blocks(quantQ8_0AVX512, quant.QK, simd.BytesQ8_0, src, dst)
}

// Q8_1AVX512 quantizes a row of whole q8_1 blocks (twin:
// quant.QuantizeRow).
func Q8_1AVX512(src []float32, dst []byte) {
	blocks(quantQ8_1AVX512, quant.QK, simd.BytesQ8_1, src, dst)
}

// Q8_KAVX512 quantizes a row of whole q8_K blocks (twin:
// quant.QuantizeRow).
func Q8_KAVX512(src []float32, dst []byte) {
	blocks(quantQ8_KAVX512, quant.QKK, simd.BytesQ8_K, src, dst)
}
