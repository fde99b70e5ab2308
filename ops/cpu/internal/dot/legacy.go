package dot

import (
	"encoding/binary"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// Dot products of the 32-element block formats (block layouts in
// quant/layout.go). Inside a block the codes are multiplied and summed as
// integers; each block's integer sum is then scaled by the product of the
// two block scales and accumulated in float32, as ggml's generic
// ggml_vec_dot_*_q8_* functions do.

// Q4_0 dots a q4_0 row with a q8_0 row: per block
// sum((q-8)*y) * d_x * d_y.
func Q4_0(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QK {
		bx := x[ib*simd.BytesQ4_0 : (ib+1)*simd.BytesQ4_0]
		by := y[ib*simd.BytesQ8_0 : (ib+1)*simd.BytesQ8_0]
		qx, qy := bx[2:18], by[2:34]
		var lo, hi int32
		for j, q := range qx {
			lo += (int32(q&0x0f) - 8) * int32(int8(qy[j]))
			hi += (int32(q>>4) - 8) * int32(int8(qy[j+16]))
		}
		sum += float32(lo+hi) * simd.HalfAt(bx, 0) * simd.HalfAt(by, 0)
	}
	return sum
}

// Q4_1 dots a q4_1 row with a q8_1 row: per block
// sum(q*y)*d_x*d_y + m_x*s_y, where s_y = d_y*sum(y codes) carries the
// offset term.
func Q4_1(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QK {
		bx := x[ib*simd.BytesQ4_1 : (ib+1)*simd.BytesQ4_1]
		by := y[ib*simd.BytesQ8_1 : (ib+1)*simd.BytesQ8_1]
		qx, qy := bx[4:20], by[4:36]
		var lo, hi int32
		for j, q := range qx {
			lo += int32(q&0x0f) * int32(int8(qy[j]))
			hi += int32(q>>4) * int32(int8(qy[j+16]))
		}
		sum += simd.HalfAt(bx, 0)*simd.HalfAt(by, 0)*float32(lo+hi) + simd.HalfAt(bx, 2)*simd.HalfAt(by, 2)
	}
	return sum
}

// Q5_0 dots a q5_0 row with a q8_0 row: per block
// sum((q-16)*y) * d_x * d_y, q holding the fifth bit from qh.
func Q5_0(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QK {
		bx := x[ib*simd.BytesQ5_0 : (ib+1)*simd.BytesQ5_0]
		by := y[ib*simd.BytesQ8_0 : (ib+1)*simd.BytesQ8_0]
		qh := binary.LittleEndian.Uint32(bx[2:6])
		qx, qy := bx[6:22], by[2:34]
		var lo, hi int32
		for j, q := range qx {
			h0 := int32((qh>>uint(j))&1) << 4
			h1 := int32((qh>>uint(j+16))&1) << 4
			lo += ((int32(q&0x0f) | h0) - 16) * int32(int8(qy[j]))
			hi += ((int32(q>>4) | h1) - 16) * int32(int8(qy[j+16]))
		}
		sum += simd.HalfAt(bx, 0) * simd.HalfAt(by, 0) * float32(lo+hi)
	}
	return sum
}

// Q5_1 dots a q5_1 row with a q8_1 row: per block
// sum(q*y)*d_x*d_y + m_x*s_y.
func Q5_1(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QK {
		bx := x[ib*simd.BytesQ5_1 : (ib+1)*simd.BytesQ5_1]
		by := y[ib*simd.BytesQ8_1 : (ib+1)*simd.BytesQ8_1]
		qh := binary.LittleEndian.Uint32(bx[4:8])
		qx, qy := bx[8:24], by[4:36]
		var lo, hi int32
		for j, q := range qx {
			h0 := int32((qh>>uint(j))&1) << 4
			h1 := int32((qh>>uint(j+16))&1) << 4
			lo += (int32(q&0x0f) | h0) * int32(int8(qy[j]))
			hi += (int32(q>>4) | h1) * int32(int8(qy[j+16]))
		}
		sum += simd.HalfAt(bx, 0)*simd.HalfAt(by, 0)*float32(lo+hi) + simd.HalfAt(bx, 2)*simd.HalfAt(by, 2)
	}
	return sum
}

// Q8_0 dots two q8_0 rows: per block sum(x*y) * (d_x*d_y).
func Q8_0(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QK {
		bx := x[ib*simd.BytesQ8_0 : (ib+1)*simd.BytesQ8_0]
		by := y[ib*simd.BytesQ8_0 : (ib+1)*simd.BytesQ8_0]
		qx, qy := bx[2:34], by[2:34]
		var s int32
		for j, q := range qx {
			s += int32(int8(q)) * int32(int8(qy[j]))
		}
		sum += float32(s) * (simd.HalfAt(bx, 0) * simd.HalfAt(by, 0))
	}
	return sum
}

// Q8_1 dots a q8_1 weight row with a float32 activation row.
// ggml has no dot product for q8_1 weights (q8_1 is its activation
// format), so each block is dequantized on the fly: d * sum(q*y), summed
// in float32.
func Q8_1(n int, x, y []byte) float32 {
	ys := simd.F32s(y, 0, int64(n))
	var sum float32
	for ib := range n / quant.QK {
		bx := x[ib*simd.BytesQ8_1 : (ib+1)*simd.BytesQ8_1]
		qx, yb := bx[4:36], ys[ib*quant.QK:(ib+1)*quant.QK]
		var s float32
		for j, q := range qx {
			s += float32(int8(q)) * yb[j]
		}
		sum += simd.HalfAt(bx, 0) * s
	}
	return sum
}
