package dot

import (
	"encoding/binary"
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// Pure-Go twins of the SIMD kernels. Each twin performs the float32
// operations of its assembly kernel in the same order, lane by lane, and
// mimics the integer instructions' wrapping and saturation, so that tests
// compare the two bit for bit (NaN payloads aside: two NaNs are equal).
// They are written for clarity, not speed; the generic tier does not use
// them. The K-format dot products need no twins: their assembly reduces
// each super-block to exact integers and then performs the generic
// functions' scalar float operations, so it equals the generic tier bit
// for bit.

// FloatTwin is the twin of dotF32AVX2, dotF16AVX2 and dotBF16AVX2 for
// n elements read by x(i) and y(i): four 8-lane FMA accumulators over
// runs of 32, then runs of 8 into the first, the accumulators summed
// pairwise and across lanes, and a scalar FMA chain over the last n%8
// elements added at the end.
func FloatTwin(n int, x, y func(i int) float32) float32 {
	var acc [4][8]float32
	i := 0
	for ; i+32 <= n; i += 32 {
		for a := range 4 {
			for l := range 8 {
				acc[a][l] = simd.FMA32(x(i+8*a+l), y(i+8*a+l), acc[a][l])
			}
		}
	}
	for ; i+8 <= n; i += 8 {
		for l := range 8 {
			acc[0][l] = simd.FMA32(x(i+l), y(i+l), acc[0][l])
		}
	}
	var v [8]float32
	for l := range v {
		v[l] = (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l])
	}
	h := simd.Hsum8(&v)
	var s float32
	for ; i < n; i++ {
		s = simd.FMA32(x(i), y(i), s)
	}
	return h + s
}

// F32Twin is the twin of dotF32AVX2.
func F32Twin(n int, x, y []byte) float32 {
	xs, ys := simd.F32s(x, 0, int64(n)), simd.F32s(y, 0, int64(n))
	return FloatTwin(n, func(i int) float32 { return xs[i] }, func(i int) float32 { return ys[i] })
}

// F16Twin is the twin of dotF16AVX2.
func F16Twin(n int, x, y []byte) float32 {
	return FloatTwin(n, func(i int) float32 { return simd.HalfAt(x, 2*i) }, func(i int) float32 { return simd.HalfAt(y, 2*i) })
}

// BF16Twin is the twin of dotBF16AVX2.
func BF16Twin(n int, x, y []byte) float32 {
	bf := func(b []byte) func(int) float32 {
		return func(i int) float32 { return widenBF16(binary.LittleEndian.Uint16(b[2*i:])) }
	}
	return FloatTwin(n, bf(x), bf(y))
}

// Q8_0Twin is the twin of dotQ8_0Q8_0AVX2.
func Q8_0Twin(n int, x, y []byte) float32 { return q8_0Twin(n, x, y, false) }

func q8_0Twin(n int, x, y []byte, single bool) float32 {
	acc := simd.LaneAcc{Single: single}
	for ib := range n / quant.QK {
		bx, by := x[ib*simd.BytesQ8_0:], y[ib*simd.BytesQ8_0:]
		xs, ys := simd.Codes8(bx[2:34]), simd.Codes8(by[2:34])
		acc.Add(ib, simd.SignedLanes(&xs, &ys), simd.HalfAt(bx, 0)*simd.HalfAt(by, 0))
	}
	return acc.Sum()
}

// Q4_0Twin is the twin of dotQ4_0Q8_0AVX2.
func Q4_0Twin(n int, x, y []byte) float32 { return q4_0Twin(n, x, y, false) }

func q4_0Twin(n int, x, y []byte, single bool) float32 {
	acc := simd.LaneAcc{Single: single}
	for ib := range n / quant.QK {
		bx, by := x[ib*simd.BytesQ4_0:], y[ib*simd.BytesQ8_0:]
		var xs [32]int8
		for j, q := range simd.Nibbles(bx[2:18]) {
			xs[j] = int8(q) - 8
		}
		ys := simd.Codes8(by[2:34])
		acc.Add(ib, simd.SignedLanes(&xs, &ys), simd.HalfAt(bx, 0)*simd.HalfAt(by, 0))
	}
	return acc.Sum()
}

// Q5_0Twin is the twin of dotQ5_0Q8_0AVX2.
func Q5_0Twin(n int, x, y []byte) float32 {
	var acc simd.LaneAcc
	for ib := range n / quant.QK {
		bx, by := x[ib*simd.BytesQ5_0:], y[ib*simd.BytesQ8_0:]
		qh := binary.LittleEndian.Uint32(bx[2:6])
		var xs [32]int8
		for j, q := range simd.Nibbles(bx[6:22]) {
			xs[j] = int8(q|uint8(qh>>uint(j)&1)<<4) - 16
		}
		ys := simd.Codes8(by[2:34])
		acc.Add(ib, simd.SignedLanes(&xs, &ys), simd.HalfAt(bx, 0)*simd.HalfAt(by, 0))
	}
	return acc.Sum()
}

// Q4_1Twin is the twin of dotQ4_1Q8_1AVX2: the lanes as for
// q4_0 with unsigned codes, and a scalar sum of m_x*s_y per block added
// at the end.
func Q4_1Twin(n int, x, y []byte) float32 {
	var acc simd.LaneAcc
	var summs float32
	for ib := range n / quant.QK {
		bx, by := x[ib*simd.BytesQ4_1:], y[ib*simd.BytesQ8_1:]
		xs, ys := simd.Nibbles(bx[4:20]), simd.Codes8(by[4:36])
		acc.Add(ib, simd.MaddLanes(&xs, &ys), simd.HalfAt(bx, 0)*simd.HalfAt(by, 0))
		summs += float32(simd.HalfAt(bx, 2) * simd.HalfAt(by, 2))
	}
	return acc.Sum() + summs
}

// Q5_1Twin is the twin of dotQ5_1Q8_1AVX2.
func Q5_1Twin(n int, x, y []byte) float32 {
	var acc simd.LaneAcc
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
		summs += float32(simd.HalfAt(bx, 2) * simd.HalfAt(by, 2))
	}
	return acc.Sum() + summs
}

// QuadQ5_0Twin is the twin of gemmQ5_0x4AVX2: out[c] is the dot product
// of nb q5_0 blocks of x with column c of the packed q8 group y. Per
// block and column the lanes of SIGNED_DOT are summed in two halves
// (lanes 0-3 and 4-7, exact integers), each half converted to float32
// and accumulated by FMA with d_y[c]*d_x; the halves' sums are added at
// the end.
func QuadQ5_0Twin(nb int, x, y []byte) [4]float32 {
	var acc [8]float32
	for ib := range nb {
		bx, blk := x[ib*simd.BytesQ5_0:], y[ib*PackQ8Block:]
		qh := binary.LittleEndian.Uint32(bx[2:6])
		var xs [32]int8
		for j, q := range simd.Nibbles(bx[6:22]) {
			xs[j] = int8(q|uint8(qh>>uint(j)&1)<<4) - 16
		}
		dx := simd.HalfAt(bx, 0)
		for c := range 4 {
			ys := simd.Codes8(blk[16+32*c : 48+32*c])
			l := simd.SignedLanes(&xs, &ys)
			lo, hi := (l[0]+l[1])+(l[2]+l[3]), (l[4]+l[5])+(l[6]+l[7])
			d := math.Float32frombits(binary.LittleEndian.Uint32(blk[4*c:])) * dx
			acc[c] = simd.FMA32(float32(lo), d, acc[c])
			acc[c+4] = simd.FMA32(float32(hi), d, acc[c+4])
		}
	}
	var out [4]float32
	for c := range out {
		out[c] = acc[c] + acc[c+4]
	}
	return out
}

// QuadQ4_1Twin is the twin of gemmQ4_1x4AVX2 over nb blocks of x and the
// packed q8_1 group y.
func QuadQ4_1Twin(nb int, x, y []byte) [4]float32 {
	return quadQ81Twin(nb, x, y, simd.BytesQ4_1, func(bx []byte) [32]uint8 { return simd.Nibbles(bx[4:20]) })
}

// QuadQ5_1Twin is the twin of gemmQ5_1x4AVX2.
func QuadQ5_1Twin(nb int, x, y []byte) [4]float32 {
	return quadQ81Twin(nb, x, y, simd.BytesQ5_1, func(bx []byte) [32]uint8 {
		qh := binary.LittleEndian.Uint32(bx[4:8])
		q := simd.Nibbles(bx[8:24])
		for j := range q {
			q[j] |= uint8(qh>>uint(j)&1) << 4
		}
		return q
	})
}

// quadQ81Twin is the twin of the packed q8_1 kernels, whose weight
// blocks of xs bytes start with the f16 pair (d, m) and whose unsigned
// codes codes gives: per block and column the exact lane sums of the
// code products in two halves (lanes 0-3, 4-7), each converted and
// accumulated by FMA with d_y[c]*d_x, and m_x*s_y[c] added to a third
// sum; out[c] = (half sums added) + min sum.
func quadQ81Twin(nb int, x, y []byte, xs int, codes func(bx []byte) [32]uint8) [4]float32 {
	var acc [8]float32
	var mins [4]float32
	for ib := range nb {
		bx, blk := x[ib*xs:], y[ib*PackQ81Block:]
		q := codes(bx)
		dx, mx := simd.HalfAt(bx, 0), simd.HalfAt(bx, 2)
		for c := range 4 {
			ys := simd.Codes8(blk[32+32*c : 64+32*c])
			var lanes [8]int32
			for j := range 32 {
				lanes[j/4] += int32(q[j]) * int32(ys[j])
			}
			lo, hi := (lanes[0]+lanes[1])+(lanes[2]+lanes[3]), (lanes[4]+lanes[5])+(lanes[6]+lanes[7])
			d := math.Float32frombits(binary.LittleEndian.Uint32(blk[4*c:])) * dx
			acc[c] = simd.FMA32(float32(lo), d, acc[c])
			acc[c+4] = simd.FMA32(float32(hi), d, acc[c+4])
			mins[c] += float32(mx * math.Float32frombits(binary.LittleEndian.Uint32(blk[16+4*c:])))
		}
	}
	var out [4]float32
	for c := range out {
		out[c] = (acc[c] + acc[c+4]) + mins[c]
	}
	return out
}

// iq2xxsSumsTwin is the twin of iq2xxsSumsAVX2: per block and sub-block
// j, the grid magnitudes g negated (two's complement, in int8) where the
// sign bit is set, then VPSIGNB by y and VPMADDUBSW with |y| (read
// unsigned), each pair saturated to int16 and multiplied by 2*ls_j+1 in
// VPMADDWD's int32 pairs, all summed.
func iq2xxsSumsTwin(x, y []byte, out []int32) {
	for b := range out {
		bx, q8 := x[b*bytesIQ2_XXS:], y[b*simd.BytesQ8_K+4:]
		var s int32
		for j := range 8 {
			q := bx[2+8*j:]
			w := binary.LittleEndian.Uint32(q[4:])
			var g, ys [32]int8
			for l := range 4 {
				signs := quant.KSignsIQ2XS[w>>(7*l)&127]
				for i := range 8 {
					v := int8(uint8(quant.IQ2XXSGrid[q[l]] >> (8 * i)))
					if signs>>i&1 != 0 {
						v = -v
					}
					g[8*l+i] = v
				}
			}
			ys = simd.Codes8(q8[32*j : 32*j+32])
			sc := int32(2*(w>>28) + 1)
			for p := range 16 {
				var pair int32
				for k := 2 * p; k < 2*p+2; k++ {
					a := int32(uint8(psignb(ys[k], ys[k])))
					pair += a * int32(psignb(g[k], ys[k]))
				}
				s += simd.Sat16(pair) * sc
			}
		}
		out[b] = s
	}
}

// psignb is VPSIGNB on one byte: v negated (wrapping) where s < 0, zero
// where s = 0.
func psignb(v, s int8) int8 {
	switch {
	case s < 0:
		return -v
	case s == 0:
		return 0
	}
	return v
}

// MXFP4Twin is the twin of dotMXFP4Q8_0AVX2: q8_0's lanes and FMAs with
// the codes from quant.MXFP4Values and the scale quant.E8M0Half(e) times
// the activation block's.
func MXFP4Twin(n int, x, y []byte) float32 {
	return tableTwin(n, x, y, &quant.MXFP4Values, 17, 1, func(bx []byte) float32 { return quant.E8M0Half(bx[0]) })
}

// IQ4_NLTwin is the twin of dotIQ4_NLQ8_0AVX2 (codes from
// quant.IQ4NLValues, an f16 scale).
func IQ4_NLTwin(n int, x, y []byte) float32 {
	return tableTwin(n, x, y, &quant.IQ4NLValues, 18, 2, func(bx []byte) float32 { return simd.HalfAt(bx, 0) })
}

// tableTwin dots a row of table-coded blocks of size bytes (a scale, then
// at head 16 bytes of 4-bit indexes: elements 0-15 in the low nibbles,
// 16-31 in the high ones) with a q8_0 row, as q8_0Twin does.
func tableTwin(n int, x, y []byte, table *[16]int8, size, head int, scale func(bx []byte) float32) float32 {
	var acc simd.LaneAcc
	for ib := range n / quant.QK {
		bx, by := x[ib*size:], y[ib*simd.BytesQ8_0:]
		var xs [32]int8
		for j, q := range simd.Nibbles(bx[head : head+16]) {
			xs[j] = table[q]
		}
		ys := simd.Codes8(by[2:34])
		acc.Add(ib, simd.SignedLanes(&xs, &ys), scale(bx)*simd.HalfAt(by, 0))
	}
	return acc.Sum()
}

// IQ4_XSTwin is the twin of dotIQ4_XSQ8_KAVX2: per super-block eight
// int32 lanes, lane l the sum over the sub-blocks j of (ls_j-32) times
// the products IQ4NLValues[q]*y of elements 4l..4l+3 (exact: the
// assembly's VPMADDUBSW pairs never saturate), FMA'd with d_x*d_y into
// one 8-lane accumulator, summed across at the end.
func IQ4_XSTwin(n int, x, y []byte) float32 {
	acc := simd.LaneAcc{Single: true}
	for ib := range n / quant.QKK {
		bx, by := x[ib*bytesIQ4_XS:], y[ib*simd.BytesQ8_K:]
		var lanes [8]int32
		for j := range 8 {
			s := int32(quant.IQ4XSScale(bx, j)) - 32
			for k, q := range simd.Nibbles(bx[8+16*j : 24+16*j]) {
				lanes[k/4] += s * int32(quant.IQ4NLValues[q]) * int32(int8(by[4+32*j+k]))
			}
		}
		acc.Add(ib, lanes, simd.HalfAt(bx, 0)*simd.Float32At(by, 0))
	}
	return acc.Sum()
}
