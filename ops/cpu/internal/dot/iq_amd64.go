//go:build amd64 && !purego

package dot

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// tableSumsAVX2 sets out[b], for b < nb, to the integer dot product of
// the 32 table-coded elements at x + b*xstride (16 bytes of codes,
// arranged as Q4_0's) with the 32 int8 codes at y + b*ystride (twin:
// tableSumsTwin).
//
//go:noescape
func tableSumsAVX2(table *[16]int8, x *byte, xstride int, y *byte, ystride int, nb int, out *int32)

// tableSums is tableSumsAVX2 with its reads checked against the slices.
func tableSums(table *[16]int8, x []byte, xstride int, y []byte, ystride int, out []int32) {
	nb := len(out)
	if nb == 0 {
		return
	}
	_ = x[(nb-1)*xstride+15]
	_ = y[(nb-1)*ystride+31]
	tableSumsAVX2(table, &x[0], xstride, &y[0], ystride, nb, &out[0])
}

// tableChunk is how many blocks' sums one call of tableSums leaves on the
// stack.
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

// IQ4_XSAVX2 is IQ4_XS with the integer sums in AVX2; it equals IQ4_XS
// bit for bit.
func IQ4_XSAVX2(n int, x, y []byte) float32 {
	var sums [8]int32
	var sum float32
	for ib := range n / quant.QKK {
		bx := x[ib*bytesIQ4_XS : (ib+1)*bytesIQ4_XS]
		yd, q8, _ := q8KBlock(y[ib*simd.BytesQ8_K : (ib+1)*simd.BytesQ8_K])
		tableSums(&quant.IQ4NLValues, bx[8:], 16, q8, 32, sums[:])
		d4d8 := float32(simd.HalfAt(bx, 0) * yd)
		for j, s := range sums {
			dl := float32(d4d8 * float32(quant.IQ4XSScale(bx, j)-32))
			sum += float32(dl * float32(s))
		}
	}
	return sum
}
