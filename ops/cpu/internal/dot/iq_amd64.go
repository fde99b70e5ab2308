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

// MXFP4AVX2 is MXFP4 with the integer sums in AVX2; it equals MXFP4 bit
// for bit.
func MXFP4AVX2(n int, x, y []byte) float32 {
	return tableRowAVX2(n, x, y, &quant.MXFP4Values, bytesMXFP4, 1, func(bx []byte) float32 { return quant.E8M0Half(bx[0]) })
}

// IQ4_NLAVX2 is IQ4_NL with the integer sums in AVX2; it equals IQ4_NL
// bit for bit.
func IQ4_NLAVX2(n int, x, y []byte) float32 {
	return tableRowAVX2(n, x, y, &quant.IQ4NLValues, bytesIQ4_NL, 2, func(bx []byte) float32 { return simd.HalfAt(bx, 0) })
}

// tableRowAVX2 dots a row of 32-element blocks of size bytes, each a
// scale (read by scale) then at head its 16 bytes of 4-bit indexes into
// table, with a q8_0 row: the integer sums in AVX2, tableChunk blocks a
// call, then per block d_y*scale times its sum, in the order MXFP4 and
// IQ4_NL add them.
func tableRowAVX2(n int, x, y []byte, table *[16]int8, bytes, head int, scale func(bx []byte) float32) float32 {
	var sums [tableChunk]int32
	var sum float32
	nb := n / quant.QK
	for b0 := 0; b0 < nb; b0 += tableChunk {
		c := min(tableChunk, nb-b0)
		tableSums(table, x[b0*bytes+head:], bytes, y[b0*simd.BytesQ8_0+2:], simd.BytesQ8_0, sums[:c])
		for i, s := range sums[:c] {
			d := float32(simd.HalfAt(y[(b0+i)*simd.BytesQ8_0:], 0) * scale(x[(b0+i)*bytes:]))
			sum += float32(d * float32(s))
		}
	}
	return sum
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
