package gemv

import (
	"encoding/binary"

	"github.com/kernbench/kernbench/ops/cpu/internal/sgemm"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// Q5_0Twin is the twin of one row of q5_0x4AVX2 (the four-row
// q5_0 kernel MUL_MAT uses with one to three activation rows): per block
// the eight lanes are the exact sums of (u-16)*y over elements 4l..4l+3,
// u = nibble | fifth bit << 4, for every activation code (-128 included:
// the kernel multiplies unsigned codes and takes 16*y out, with no sign
// trick), and every block goes into one accumulator by FMA with d =
// d_x*d_y, reduced as hsum8 at the end. The dot product (dotQ5_0Q8_0Twin)
// alternates two accumulators and wraps y*sign(x) at y = -128, so the two
// can differ in rounding; both are within the harness tolerances.
func Q5_0Twin(n int, x, y []byte) float32 {
	acc := simd.LaneAcc{Single: true}
	for ib := range n / quant.QK {
		bx, by := x[ib*simd.BytesQ5_0:], y[ib*simd.BytesQ8_0:]
		qh := binary.LittleEndian.Uint32(bx[2:6])
		ys := simd.Codes8(by[2:34])
		var lanes [8]int32
		for j, q := range simd.Nibbles(bx[6:22]) {
			u := int32(q) | int32(qh>>uint(j)&1)<<4
			lanes[j/4] += (u - 16) * int32(ys[j])
		}
		acc.Add(ib, lanes, simd.HalfAt(bx, 0)*simd.HalfAt(by, 0))
	}
	return acc.Sum()
}

// Q4_1Twin is the twin of one row of q4_1x4AVX2: the q4_1 dot
// product twin (dotQ4_1Q8_1Twin) with every block in one lane
// accumulator; the min terms m_x*s_y are summed in block order and added
// to the lane sum at the end, as there.
func Q4_1Twin(n int, x, y []byte) float32 {
	acc := simd.LaneAcc{Single: true}
	var summs float32
	for ib := range n / quant.QK {
		bx, by := x[ib*simd.BytesQ4_1:], y[ib*simd.BytesQ8_1:]
		xs, ys := simd.Nibbles(bx[4:20]), simd.Codes8(by[4:36])
		acc.Add(ib, simd.MaddLanes(&xs, &ys), simd.HalfAt(bx, 0)*simd.HalfAt(by, 0))
		summs += simd.HalfAt(bx, 2) * simd.HalfAt(by, 2)
	}
	return acc.Sum() + summs
}

// Q5_1Twin is the twin of one row of q5_1x4AVX2, as
// Q4_1Twin for q5_1 (dotQ5_1Q8_1Twin with one lane accumulator).
func Q5_1Twin(n int, x, y []byte) float32 {
	acc := simd.LaneAcc{Single: true}
	var summs float32
	for ib := range n / quant.QK {
		bx, by := x[ib*simd.BytesQ5_1:], y[ib*simd.BytesQ8_1:]
		qh := binary.LittleEndian.Uint32(bx[4:8])
		xs := simd.Nibbles(bx[8:24])
		for j := range xs {
			xs[j] |= uint8(qh>>uint(j)&1) << 4
		}
		ys := simd.Codes8(by[4:36])
		acc.Add(ib, simd.MaddLanes(&xs, &ys), simd.HalfAt(bx, 0)*simd.HalfAt(by, 0))
		summs += simd.HalfAt(bx, 2) * simd.HalfAt(by, 2)
	}
	return acc.Sum() + summs
}

// F32Twin is the twin of one row of f32x4AVX2 over n float32
// elements (a multiple of F16Run), in the manner of F16Twin.
func F32Twin(n int, x, y []byte) float32 { return floatTwin(n, x, y, 4, simd.Float32At) }

// BF16Twin is the twin of one row of bf16x4AVX2 over n bfloat16
// elements (a multiple of F16Run), in the manner of F16Twin.
func BF16Twin(n int, x, y []byte) float32 { return floatTwin(n, x, y, 2, simd.BF16At) }

// BF16PairTwin is the twin of one row of bf16x4DP over n bfloat16
// elements (a multiple of F16Run): sixteen lanes, lane l taking pair l
// of every line of 32 elements by sgemm.DotBF16Pair (VDPBF16PS's
// rounding and flushing) and a pair of zeros from a last half line's
// missing upper 16; lane l plus lane l+8, reduced as hsum8.
func BF16PairTwin(n int, x, y []byte) float32 {
	var acc [16]float32
	for i := 0; i < n; i += 2 * F16Run {
		for l := range acc {
			var x0, x1, y0, y1 uint16
			if e := 2 * (i + 2*l); e < 2*n {
				x0, x1 = binary.LittleEndian.Uint16(x[e:]), binary.LittleEndian.Uint16(x[e+2:])
				y0, y1 = binary.LittleEndian.Uint16(y[e:]), binary.LittleEndian.Uint16(y[e+2:])
			}
			acc[l] = sgemm.DotBF16Pair(acc[l], x0, x1, y0, y1)
		}
	}
	var v [8]float32
	for l := range v {
		v[l] = acc[l] + acc[l+8]
	}
	return simd.Hsum8(&v)
}

// floatTwin is F16Twin for elements of size bytes read by at:
// two 8-lane FMA accumulators, one for elements 0-7 and one for 8-15 of
// every run of 16, summed lane by lane and reduced as hsum8.
func floatTwin(n int, x, y []byte, size int, at func([]byte, int) float32) float32 {
	var acc [2][8]float32
	for i := 0; i+F16Run <= n; i += F16Run {
		for h := range 2 {
			for l := range 8 {
				e := size * (i + 8*h + l)
				acc[h][l] = simd.FMA32(at(x, e), at(y, e), acc[h][l])
			}
		}
	}
	var v [8]float32
	for l := range v {
		v[l] = acc[0][l] + acc[1][l]
	}
	return simd.Hsum8(&v)
}

// SideQ4_0Twin is the twin of one row of sideQ4_0x4AVX2 (the q4_0
// four-row kernel with two rows per vector): per block four int32 lanes,
// lane l the exact sum of (q-8)*y over elements 4l..4l+3 (low nibbles)
// and 16+4l..16+4l+3 (high nibbles), each added by FMA with d = d_x*d_y
// into one four-lane accumulator, whose lanes are summed as (v0+v1) +
// (v2+v3) at the end.
func SideQ4_0Twin(n int, x, y []byte) float32 {
	var acc [4]float32
	for ib := range n / quant.QK {
		bx, by := x[ib*simd.BytesQ4_0:], y[ib*simd.BytesQ8_0:]
		q := simd.Nibbles(bx[2:18])
		ys := simd.Codes8(by[2:34])
		var lanes [4]int32
		for j := range 32 {
			lanes[j%16/4] += (int32(q[j]) - 8) * int32(ys[j])
		}
		d := simd.HalfAt(bx, 0) * simd.HalfAt(by, 0)
		for l := range acc {
			acc[l] = simd.FMA32(float32(lanes[l]), d, acc[l])
		}
	}
	return (acc[0] + acc[1]) + (acc[2] + acc[3])
}

// Q8_0Twin is the twin of one row of q8_0x4AVX2.
func Q8_0Twin(n int, x, y []byte) float32 {
	acc := simd.LaneAcc{Single: true}
	for ib := range n / quant.QK {
		bx, by := x[ib*simd.BytesQ8_0:], y[ib*simd.BytesQ8_0:]
		xs, ys := simd.Codes8(bx[2:34]), simd.Codes8(by[2:34])
		acc.Add(ib, simd.SignedLanes(&xs, &ys), simd.HalfAt(bx, 0)*simd.HalfAt(by, 0))
	}
	return acc.Sum()
}

// Q4_0Twin is the twin of one row of q4_0x4AVX2: the q4_0
// dot product twin with every block in one accumulator, its lanes the
// exact sums of (q-8)*y (the kernel multiplies unsigned codes and takes
// 8*y out, with no sign trick, so an activation code of -128 is exact).
func Q4_0Twin(n int, x, y []byte) float32 {
	acc := simd.LaneAcc{Single: true}
	for ib := range n / quant.QK {
		bx, by := x[ib*simd.BytesQ4_0:], y[ib*simd.BytesQ8_0:]
		q := simd.Nibbles(bx[2:18])
		ys := simd.Codes8(by[2:34])
		var lanes [8]int32
		for j := range 32 {
			lanes[j/4] += (int32(q[j]) - 8) * int32(ys[j])
		}
		acc.Add(ib, lanes, simd.HalfAt(bx, 0)*simd.HalfAt(by, 0))
	}
	return acc.Sum()
}

// F16Twin is the twin of one row of f16x4AVX2 over n elements (a
// multiple of F16Run): two 8-lane FMA accumulators, one for elements
// 0-7 and one for 8-15 of every run, summed lane by lane and reduced as
// hsum8.
func F16Twin(n int, x, y []byte) float32 {
	var acc [2][8]float32
	for i := 0; i+F16Run <= n; i += F16Run {
		for h := range 2 {
			for l := range 8 {
				e := 2 * (i + 8*h + l)
				acc[h][l] = simd.FMA32(simd.HalfAt(x, e), simd.HalfAt(y, e), acc[h][l])
			}
		}
	}
	var v [8]float32
	for l := range v {
		v[l] = acc[0][l] + acc[1][l]
	}
	return simd.Hsum8(&v)
}

// Block sizes in bytes of the table-coded formats.
const (
	bytesIQ4_NL = 18
	bytesMXFP4  = 17
)

// IQ4_NLTwin is the twin of one row of iq4_nlx4AVX2: per block the eight
// lanes are the exact sums of IQ4NLValues[q]*y over elements 4l..4l+3
// (for every activation code, -128 included), and every block goes into
// one accumulator by FMA with d = d_x*d_y, reduced as hsum8 at the end.
// The dot product (internal/dot's IQ4_NLAVX2) alternates two
// accumulators, so the two differ by rounding only.
func IQ4_NLTwin(n int, x, y []byte) float32 {
	return tableTwin(n, x, y, &quant.IQ4NLValues, bytesIQ4_NL, 2, func(bx []byte) float32 { return simd.HalfAt(bx, 0) })
}

// MXFP4Twin is IQ4_NLTwin for mxfp4x4AVX2: the codes from
// quant.MXFP4Values, d_x = quant.E8M0Half(e).
func MXFP4Twin(n int, x, y []byte) float32 {
	return tableTwin(n, x, y, &quant.MXFP4Values, bytesMXFP4, 1, func(bx []byte) float32 { return quant.E8M0Half(bx[0]) })
}

// tableTwin is the twin of one row of the table-coded four-row kernels
// for blocks of size bytes, their 16 index bytes at head (elements 0-15
// in the low nibbles, 16-31 in the high ones) and their scale given by
// scale.
func tableTwin(n int, x, y []byte, table *[16]int8, size, head int, scale func(bx []byte) float32) float32 {
	acc := simd.LaneAcc{Single: true}
	for ib := range n / quant.QK {
		bx, by := x[ib*size:], y[ib*simd.BytesQ8_0:]
		ys := simd.Codes8(by[2:34])
		var lanes [8]int32
		for j, q := range simd.Nibbles(bx[head : head+16]) {
			lanes[j/4] += int32(table[q]) * int32(ys[j])
		}
		acc.Add(ib, lanes, scale(bx)*simd.HalfAt(by, 0))
	}
	return acc.Sum()
}
