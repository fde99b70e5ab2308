//go:build amd64 && !purego

package dot

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// tableChunk is how many blocks' sums one call of the chunked integer
// kernels (iqgrid_amd64.go, iq2xxs_amd64.go) leaves on the stack.
const tableChunk = 64

// dotIQ4_NLQ8_0AVX2 dots nb IQ4_NL blocks with q8_0 blocks, the indexes
// looked up in table (quant.IQ4NLValues) (dot_q_amd64.s; twin:
// IQ4_NLTwin).
//
//go:noescape
func dotIQ4_NLQ8_0AVX2(x, y *byte, nb int, table *int8) float32

// dotMXFP4Q8_0AVX2 is dotIQ4_NLQ8_0AVX2 for MXFP4 blocks (table:
// quant.MXFP4Values; twin: MXFP4Twin).
//
//go:noescape
func dotMXFP4Q8_0AVX2(x, y *byte, nb int, table *int8) float32

// MXFP4AVX2 dots an MXFP4 row with a q8_0 row as q8_0's dot does, the
// codes looked up in the value table (twin: MXFP4Twin): eight int32 lanes
// per block FMA'd with the block's scale into float32 lanes, summed at
// the end. It differs from the generic MXFP4 by rounding only.
func MXFP4AVX2(n int, x, y []byte) float32 {
	return tableBlocks(dotMXFP4Q8_0AVX2, &quant.MXFP4Values, bytesMXFP4, n, x, y)
}

// IQ4_NLAVX2 is MXFP4AVX2 for IQ4_NL rows (twin: IQ4_NLTwin).
func IQ4_NLAVX2(n int, x, y []byte) float32 {
	return tableBlocks(dotIQ4_NLQ8_0AVX2, &quant.IQ4NLValues, bytesIQ4_NL, n, x, y)
}

// tableBlocks runs a table format's block kernel f over the whole blocks
// of n elements after checking the slice bounds it relies on.
func tableBlocks(f func(x, y *byte, nb int, table *int8) float32, table *[16]int8, xs, n int, x, y []byte) float32 {
	nb := n / quant.QK
	if nb <= 0 {
		return 0
	}
	_, _ = x[nb*xs-1], y[nb*simd.BytesQ8_0-1]
	return f(&x[0], &y[0], nb, &table[0])
}

// dotIQ4_XSQ8_KAVX2 dots nb IQ4_XS super-blocks with q8_K blocks, the
// indexes looked up in table (quant.IQ4NLValues) (iq4xs_amd64.s; twin:
// IQ4_XSTwin).
//
//go:noescape
func dotIQ4_XSQ8_KAVX2(x, y *byte, nb int, table *int8) float32

// IQ4_XSAVX2 dots an IQ4_XS row with a q8_K row in registers (twin:
// IQ4_XSTwin): per super-block, each sub-block's table products times
// its scale ls-32 summed as eight exact int32 lanes, the lanes converted
// once and FMA'd with d_x*d_y into float32 lanes, summed at the end. It
// differs from the generic IQ4_XS, which scales each sub-block in
// float32, by rounding only.
func IQ4_XSAVX2(n int, x, y []byte) float32 {
	nb := n / quant.QKK
	if nb <= 0 {
		return 0
	}
	_, _ = x[nb*bytesIQ4_XS-1], y[nb*simd.BytesQ8_K-1]
	return dotIQ4_XSQ8_KAVX2(&x[0], &y[0], nb, &quant.IQ4NLValues[0])
}
