package cpu

import (
	"encoding/binary"
	"math"

	"github.com/kernbench/kernbench/quant"
)

// gemv2Q5_0Twin is the twin of one row of gemv2Q5_0x4AVX2 (the four-row
// q5_0 kernel MUL_MAT uses with one to three activation rows): per block
// the eight lanes are the exact sums of (u-16)*y over elements 4l..4l+3,
// u = nibble | fifth bit << 4, for every activation code (-128 included:
// the kernel multiplies unsigned codes and takes 16*y out, with no sign
// trick), and every block goes into one accumulator by FMA with d =
// d_x*d_y, reduced as hsum8 at the end. The dot product (dotQ5_0Q8_0Twin)
// alternates two accumulators and wraps y*sign(x) at y = -128, so the two
// can differ in rounding; both are within the harness tolerances.
func gemv2Q5_0Twin(n int, x, y []byte) float32 {
	acc := laneAcc{single: true}
	for ib := range n / quant.QK {
		bx, by := x[ib*bytesQ5_0:], y[ib*bytesQ8_0:]
		qh := binary.LittleEndian.Uint32(bx[2:6])
		ys := codes8(by[2:34])
		var lanes [8]int32
		for j, q := range nibbles(bx[6:22]) {
			u := int32(q) | int32(qh>>uint(j)&1)<<4
			lanes[j/4] += (u - 16) * int32(ys[j])
		}
		acc.add(ib, lanes, halfAt(bx, 0)*halfAt(by, 0))
	}
	return acc.sum()
}

// gemv2Q4_1Twin is the twin of one row of gemv2Q4_1x4AVX2: the q4_1 dot
// product twin (dotQ4_1Q8_1Twin) with every block in one lane
// accumulator; the min terms m_x*s_y are summed in block order and added
// to the lane sum at the end, as there.
func gemv2Q4_1Twin(n int, x, y []byte) float32 {
	acc := laneAcc{single: true}
	var summs float32
	for ib := range n / quant.QK {
		bx, by := x[ib*bytesQ4_1:], y[ib*bytesQ8_1:]
		xs, ys := nibbles(bx[4:20]), codes8(by[4:36])
		acc.add(ib, maddLanes(&xs, &ys), halfAt(bx, 0)*halfAt(by, 0))
		summs += halfAt(bx, 2) * halfAt(by, 2)
	}
	return acc.sum() + summs
}

// gemv2Q5_1Twin is the twin of one row of gemv2Q5_1x4AVX2, as
// gemv2Q4_1Twin for q5_1 (dotQ5_1Q8_1Twin with one lane accumulator).
func gemv2Q5_1Twin(n int, x, y []byte) float32 {
	acc := laneAcc{single: true}
	var summs float32
	for ib := range n / quant.QK {
		bx, by := x[ib*bytesQ5_1:], y[ib*bytesQ8_1:]
		qh := binary.LittleEndian.Uint32(bx[4:8])
		xs := nibbles(bx[8:24])
		for j := range xs {
			xs[j] |= uint8(qh>>uint(j)&1) << 4
		}
		ys := codes8(by[4:36])
		acc.add(ib, maddLanes(&xs, &ys), halfAt(bx, 0)*halfAt(by, 0))
		summs += halfAt(bx, 2) * halfAt(by, 2)
	}
	return acc.sum() + summs
}

// gemv2F32Twin is the twin of one row of gemv2F32x4AVX2 over n float32
// elements (a multiple of gemvF16Run), in the manner of gemvF16Twin.
func gemv2F32Twin(n int, x, y []byte) float32 { return gemv2FloatTwin(n, x, y, 4, float32At) }

// gemv2BF16Twin is the twin of one row of gemv2BF16x4AVX2 over n bfloat16
// elements (a multiple of gemvF16Run), in the manner of gemvF16Twin.
func gemv2BF16Twin(n int, x, y []byte) float32 { return gemv2FloatTwin(n, x, y, 2, bf16At) }

// bf16At returns the bfloat16 value at byte offset off of b as float32.
func bf16At(b []byte, off int) float32 {
	return math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[off:])) << 16)
}

// gemv2FloatTwin is gemvF16Twin for elements of size bytes read by at:
// two 8-lane FMA accumulators, one for elements 0-7 and one for 8-15 of
// every run of 16, summed lane by lane and reduced as hsum8.
func gemv2FloatTwin(n int, x, y []byte, size int, at func([]byte, int) float32) float32 {
	var acc [2][8]float32
	for i := 0; i+gemvF16Run <= n; i += gemvF16Run {
		for h := range 2 {
			for l := range 8 {
				e := size * (i + 8*h + l)
				acc[h][l] = fma32(at(x, e), at(y, e), acc[h][l])
			}
		}
	}
	var v [8]float32
	for l := range v {
		v[l] = acc[0][l] + acc[1][l]
	}
	return hsum8(&v)
}

// gemv3Q4_0Twin is the twin of one row of gemv3Q4_0x4AVX2 (the q4_0
// four-row kernel with two rows per vector): per block four int32 lanes,
// lane l the exact sum of (q-8)*y over elements 4l..4l+3 (low nibbles)
// and 16+4l..16+4l+3 (high nibbles), each added by FMA with d = d_x*d_y
// into one four-lane accumulator, whose lanes are summed as (v0+v1) +
// (v2+v3) at the end.
func gemv3Q4_0Twin(n int, x, y []byte) float32 {
	var acc [4]float32
	for ib := range n / quant.QK {
		bx, by := x[ib*bytesQ4_0:], y[ib*bytesQ8_0:]
		q := nibbles(bx[2:18])
		ys := codes8(by[2:34])
		var lanes [4]int32
		for j := range 32 {
			lanes[j%16/4] += (int32(q[j]) - 8) * int32(ys[j])
		}
		d := halfAt(bx, 0) * halfAt(by, 0)
		for l := range acc {
			acc[l] = fma32(float32(lanes[l]), d, acc[l])
		}
	}
	return (acc[0] + acc[1]) + (acc[2] + acc[3])
}
