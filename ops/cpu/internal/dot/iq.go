package dot

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// Dot products of the table-coded and ternary formats (block layouts in
// quant/layout.go): MXFP4 and IQ4_NL with q8_0 activations, IQ4_XS,
// TQ1_0 and TQ2_0 with q8_K. The codes index a small integer table
// (quant.MXFP4Values, quant.IQ4NLValues) or are trits; the products are
// summed as integers and scaled per block in float32 as ggml's generic
// ggml_vec_dot_*_q8_* functions do, with every product rounded before
// it is added (the explicit float32 conversions).

// Block sizes in bytes of the formats in this file.
const (
	bytesMXFP4  = 17
	bytesIQ4_NL = 18
	bytesIQ4_XS = 136
	bytesTQ1_0  = 54
	bytesTQ2_0  = 66
)

// tableDot returns sum(table[code_j] * y_j) over a 32-element block
// whose codes qs are arranged as Q4_0's and whose activation codes are
// the int8 bytes qy.
func tableDot(table *[16]int8, qs, qy []byte) int32 {
	var lo, hi int32
	for j, q := range qs[:16] {
		lo += int32(table[q&0xf]) * int32(int8(qy[j]))
		hi += int32(table[q>>4]) * int32(int8(qy[j+16]))
	}
	return lo + hi
}

// MXFP4 dots an mxfp4 row with a q8_0 row: per block
// sum(MXFP4Values[q]*y) * d_y * 2^(e-128).
func MXFP4(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QK {
		bx := x[ib*bytesMXFP4 : (ib+1)*bytesMXFP4]
		by := y[ib*simd.BytesQ8_0 : (ib+1)*simd.BytesQ8_0]
		d := float32(simd.HalfAt(by, 0) * quant.E8M0Half(bx[0]))
		sum += float32(d * float32(tableDot(&quant.MXFP4Values, bx[1:17], by[2:34])))
	}
	return sum
}

// IQ4_NL dots an iq4_nl row with a q8_0 row: per block
// sum(IQ4NLValues[q]*y) * d_x * d_y.
func IQ4_NL(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QK {
		bx := x[ib*bytesIQ4_NL : (ib+1)*bytesIQ4_NL]
		by := y[ib*simd.BytesQ8_0 : (ib+1)*simd.BytesQ8_0]
		d := float32(simd.HalfAt(by, 0) * simd.HalfAt(bx, 0))
		sum += float32(d * float32(tableDot(&quant.IQ4NLValues, bx[2:18], by[2:34])))
	}
	return sum
}

// IQ4_XS dots an iq4_xs row with a q8_K row: per 32-element sub-block j,
// sum(IQ4NLValues[q]*y) * d_x*d_y*(ls_j - 32), accumulated in float32
// sub-block by sub-block.
func IQ4_XS(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QKK {
		bx := x[ib*bytesIQ4_XS : (ib+1)*bytesIQ4_XS]
		yd, q8, _ := q8KBlock(y[ib*simd.BytesQ8_K : (ib+1)*simd.BytesQ8_K])
		d4d8 := float32(simd.HalfAt(bx, 0) * yd)
		for j := range 8 {
			dl := float32(d4d8 * float32(quant.IQ4XSScale(bx, j)-32))
			s := tableDot(&quant.IQ4NLValues, bx[8+16*j:24+16*j], q8[32*j:32*j+32])
			sum += float32(dl * float32(s))
		}
	}
	return sum
}

// TQ1_0 dots a tq1_0 row with a q8_K row: per super-block
// sum((trit-1)*y) * d_x*d_y.
func TQ1_0(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QKK {
		bx := x[ib*bytesTQ1_0 : (ib+1)*bytesTQ1_0]
		yd, q8, _ := q8KBlock(y[ib*simd.BytesQ8_K : (ib+1)*simd.BytesQ8_K])
		var s int32
		for t := range 5 {
			for m := range 32 {
				s += int32(quant.Trit(bx[m], t)-1) * int32(int8(q8[32*t+m]))
			}
			for m := range 16 {
				s += int32(quant.Trit(bx[32+m], t)-1) * int32(int8(q8[160+16*t+m]))
			}
		}
		for t := range 4 {
			for j := range 4 {
				s += int32(quant.Trit(bx[48+j], t)-1) * int32(int8(q8[240+4*t+j]))
			}
		}
		d := float32(float32(simd.HalfAt(bx, 52)) * yd)
		sum += float32(float32(s) * d)
	}
	return sum
}

// TQ2_0 dots a tq2_0 row with a q8_K row: per super-block
// sum((q-1)*y) * d_x*d_y.
func TQ2_0(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QKK {
		bx := x[ib*bytesTQ2_0 : (ib+1)*bytesTQ2_0]
		yd, q8, _ := q8KBlock(y[ib*simd.BytesQ8_K : (ib+1)*simd.BytesQ8_K])
		var s int32
		for h := range 2 {
			for l := range 4 {
				for m := range 32 {
					q := int32(bx[32*h+m]>>(2*l)) & 3
					s += (q - 1) * int32(int8(q8[128*h+32*l+m]))
				}
			}
		}
		d := float32(yd * simd.HalfAt(bx, 64))
		sum += float32(float32(s) * d)
	}
	return sum
}
