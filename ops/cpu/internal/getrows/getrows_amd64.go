//go:build amd64 && !purego

package getrows

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// deqQ4_0AVX2 writes the 32*nb values of nb q4_0 blocks at x to y, equal
// bit for bit to quant.DequantizeRow.
//
//go:noescape
func deqQ4_0AVX2(x *byte, y *float32, nb int)

// deqQ8_0AVX2 is deqQ4_0AVX2 for q8_0 blocks.
//
//go:noescape
func deqQ8_0AVX2(x *byte, y *float32, nb int)

// DeqQ4_0AVX2 decodes a row of whole q4_0 blocks (len(dst) elements),
// bit for bit as quant.DequantizeRow.
func DeqQ4_0AVX2(src []byte, dst []float32) { blocks(deqQ4_0AVX2, simd.BytesQ4_0, src, dst) }

// DeqQ8_0AVX2 decodes a row of whole q8_0 blocks, bit for bit as
// quant.DequantizeRow.
func DeqQ8_0AVX2(src []byte, dst []float32) { blocks(deqQ8_0AVX2, simd.BytesQ8_0, src, dst) }

// blocks runs a dequantizer of 32-element blocks of xs bytes each.
func blocks(f func(x *byte, y *float32, nb int), xs int, src []byte, dst []float32) {
	nb := len(dst) / quant.QK
	if nb == 0 {
		return
	}
	_, _ = src[nb*xs-1], dst[nb*quant.QK-1]
	f(&src[0], &dst[0], nb)
}
