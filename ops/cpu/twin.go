package cpu

import (
	"encoding/binary"
	"math"

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

// fma32 returns x*y+z rounded once to float32, as VFMADD231SS/PS compute
// it. The product is exact in float64; the sum is rounded to float64 and
// then to float32, which rounds twice only when the float64 sum lands
// exactly halfway between two float32 values while the exact sum does
// not: then the exact sum lies on the side of the float64 rounding
// error, and a nudge of one float64 ulp that way gives the correct
// rounding.
func fma32(x, y, z float32) float32 {
	p := float64(float64(x) * float64(y))
	s := float64(p + float64(z))
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	// Exact error of the addition (Knuth's TwoSum).
	bv := float64(s - p)
	av := float64(s - bv)
	e := float64(float64(p-av) + float64(float64(z)-bv))
	if e != 0 && isFloat32Midpoint(s) {
		s = math.Nextafter(s, math.Copysign(math.Inf(1), e))
	}
	return float32(s)
}

// isFloat32Midpoint reports whether the float64 s lies exactly halfway
// between two adjacent float32 values (counting the overflow threshold
// 2^128 - 2^103 as one).
func isFloat32Midpoint(s float64) bool {
	m := math.Abs(s)
	if m == 0 {
		return false
	}
	_, e := math.Frexp(m) // m = f * 2^e, f in [0.5, 1)
	// The float32 spacing near m is 2^(max(e-1, -126) - 23); midpoints
	// are the odd multiples of half of it.
	halfExp := max(e-1, -126) - 24
	r := math.Ldexp(m, -halfExp)
	return r == math.Trunc(r) && math.Mod(r, 2) == 1
}

// hsum8 sums eight lanes as the assembly's HSUM8 does.
func hsum8(v *[8]float32) float32 {
	h0, h1, h2, h3 := v[0]+v[4], v[1]+v[5], v[2]+v[6], v[3]+v[7]
	return (h0 + h2) + (h1 + h3)
}

// dotFloatTwin is the twin of dotF32AVX2, dotF16AVX2 and dotBF16AVX2 for
// n elements read by x(i) and y(i): four 8-lane FMA accumulators over
// runs of 32, then runs of 8 into the first, the accumulators summed
// pairwise and across lanes, and a scalar FMA chain over the last n%8
// elements added at the end.
func dotFloatTwin(n int, x, y func(i int) float32) float32 {
	var acc [4][8]float32
	i := 0
	for ; i+32 <= n; i += 32 {
		for a := range 4 {
			for l := range 8 {
				acc[a][l] = fma32(x(i+8*a+l), y(i+8*a+l), acc[a][l])
			}
		}
	}
	for ; i+8 <= n; i += 8 {
		for l := range 8 {
			acc[0][l] = fma32(x(i+l), y(i+l), acc[0][l])
		}
	}
	var v [8]float32
	for l := range v {
		v[l] = (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l])
	}
	h := hsum8(&v)
	var s float32
	for ; i < n; i++ {
		s = fma32(x(i), y(i), s)
	}
	return h + s
}

// dotF32Twin is the twin of dotF32AVX2.
func dotF32Twin(n int, x, y []byte) float32 {
	xs, ys := f32s(x, 0, int64(n)), f32s(y, 0, int64(n))
	return dotFloatTwin(n, func(i int) float32 { return xs[i] }, func(i int) float32 { return ys[i] })
}

// dotF16Twin is the twin of dotF16AVX2.
func dotF16Twin(n int, x, y []byte) float32 {
	return dotFloatTwin(n, func(i int) float32 { return halfAt(x, 2*i) }, func(i int) float32 { return halfAt(y, 2*i) })
}

// dotBF16Twin is the twin of dotBF16AVX2.
func dotBF16Twin(n int, x, y []byte) float32 {
	bf := func(b []byte) func(int) float32 {
		return func(i int) float32 { return widenBF16(binary.LittleEndian.Uint16(b[2*i:])) }
	}
	return dotFloatTwin(n, bf(x), bf(y))
}

// sat16 saturates v to int16, as VPMADDUBSW does.
func sat16(v int32) int32 { return min(max(v, math.MinInt16), math.MaxInt16) }

// maddLanes returns VPMADDWD(VPMADDUBSW(u, s), ones): lane l is the sum
// of the two saturated int16 pair sums of elements 4l..4l+3.
func maddLanes(u *[32]uint8, s *[32]int8) [8]int32 {
	var out [8]int32
	for l := range out {
		j := 4 * l
		p0 := sat16(int32(u[j])*int32(s[j]) + int32(u[j+1])*int32(s[j+1]))
		p1 := sat16(int32(u[j+2])*int32(s[j+2]) + int32(u[j+3])*int32(s[j+3]))
		out[l] = p0 + p1
	}
	return out
}

// signedLanes returns the lanes of SIGNED_DOT: VPSIGNB gives |x| (with
// -128 read back as the unsigned 128) and y with x's sign (negation
// wrapping -128 to itself), then maddLanes. For y codes in [-127, 127],
// as every quantizer writes, the lanes are the exact sums of x*y.
func signedLanes(x, y *[32]int8) [8]int32 {
	var u [32]uint8
	var s [32]int8
	for j := range x {
		switch {
		case x[j] < 0:
			u[j], s[j] = uint8(-x[j]), -y[j]
		case x[j] > 0:
			u[j], s[j] = uint8(x[j]), y[j]
		}
	}
	return maddLanes(&u, &s)
}

// laneAcc is the pair of 8-lane accumulators of the block loops: block i
// goes into acc[i%2], or always into acc[0] for the one-accumulator
// kernels (the four-row gemv kernels).
type laneAcc struct {
	acc    [2][8]float32
	single bool
}

// add adds lanes times d into the accumulator of block ib.
func (a *laneAcc) add(ib int, lanes [8]int32, d float32) {
	if a.single {
		ib = 0
	}
	acc := &a.acc[ib%2]
	for l, v := range lanes {
		acc[l] = fma32(float32(v), d, acc[l])
	}
}

// sum returns the lanes of both accumulators summed as the assembly does.
func (a *laneAcc) sum() float32 {
	var v [8]float32
	if a.single {
		return hsum8(&a.acc[0])
	}
	for l := range v {
		v[l] = a.acc[0][l] + a.acc[1][l]
	}
	return hsum8(&v)
}

// nibbles returns the 32 4-bit codes of a legacy block's 16 code bytes.
func nibbles(qs []byte) (q [32]uint8) {
	for j := range 16 {
		q[j], q[j+16] = qs[j]&15, qs[j]>>4
	}
	return q
}

// codes8 returns 32 int8 codes.
func codes8(b []byte) (q [32]int8) {
	for j := range q {
		q[j] = int8(b[j])
	}
	return q
}

// dotQ8_0Q8_0Twin is the twin of dotQ8_0Q8_0AVX2.
func dotQ8_0Q8_0Twin(n int, x, y []byte) float32 { return q8_0Twin(n, x, y, false) }

// gemvQ8_0Twin is the twin of one row of gemv2Q8_0x4AVX2.
func gemvQ8_0Twin(n int, x, y []byte) float32 { return q8_0Twin(n, x, y, true) }

func q8_0Twin(n int, x, y []byte, single bool) float32 {
	acc := laneAcc{single: single}
	for ib := range n / quant.QK {
		bx, by := x[ib*bytesQ8_0:], y[ib*bytesQ8_0:]
		xs, ys := codes8(bx[2:34]), codes8(by[2:34])
		acc.add(ib, signedLanes(&xs, &ys), halfAt(bx, 0)*halfAt(by, 0))
	}
	return acc.sum()
}

// dotQ4_0Q8_0Twin is the twin of dotQ4_0Q8_0AVX2.
func dotQ4_0Q8_0Twin(n int, x, y []byte) float32 { return q4_0Twin(n, x, y, false) }

// gemvQ4_0Twin is the twin of one row of gemv2Q4_0x4AVX2: the q4_0
// dot product twin with every block in one accumulator, its lanes the
// exact sums of (q-8)*y (the kernel multiplies unsigned codes and takes
// 8*y out, with no sign trick, so an activation code of -128 is exact).
func gemvQ4_0Twin(n int, x, y []byte) float32 {
	acc := laneAcc{single: true}
	for ib := range n / quant.QK {
		bx, by := x[ib*bytesQ4_0:], y[ib*bytesQ8_0:]
		q := nibbles(bx[2:18])
		ys := codes8(by[2:34])
		var lanes [8]int32
		for j := range 32 {
			lanes[j/4] += (int32(q[j]) - 8) * int32(ys[j])
		}
		acc.add(ib, lanes, halfAt(bx, 0)*halfAt(by, 0))
	}
	return acc.sum()
}

func q4_0Twin(n int, x, y []byte, single bool) float32 {
	acc := laneAcc{single: single}
	for ib := range n / quant.QK {
		bx, by := x[ib*bytesQ4_0:], y[ib*bytesQ8_0:]
		var xs [32]int8
		for j, q := range nibbles(bx[2:18]) {
			xs[j] = int8(q) - 8
		}
		ys := codes8(by[2:34])
		acc.add(ib, signedLanes(&xs, &ys), halfAt(bx, 0)*halfAt(by, 0))
	}
	return acc.sum()
}

// dotQ5_0Q8_0Twin is the twin of dotQ5_0Q8_0AVX2.
func dotQ5_0Q8_0Twin(n int, x, y []byte) float32 {
	var acc laneAcc
	for ib := range n / quant.QK {
		bx, by := x[ib*bytesQ5_0:], y[ib*bytesQ8_0:]
		qh := binary.LittleEndian.Uint32(bx[2:6])
		var xs [32]int8
		for j, q := range nibbles(bx[6:22]) {
			xs[j] = int8(q|uint8(qh>>uint(j)&1)<<4) - 16
		}
		ys := codes8(by[2:34])
		acc.add(ib, signedLanes(&xs, &ys), halfAt(bx, 0)*halfAt(by, 0))
	}
	return acc.sum()
}

// dotQ4_1Q8_1Twin is the twin of dotQ4_1Q8_1AVX2: the lanes as for
// q4_0 with unsigned codes, and a scalar sum of m_x*s_y per block added
// at the end.
func dotQ4_1Q8_1Twin(n int, x, y []byte) float32 {
	var acc laneAcc
	var summs float32
	for ib := range n / quant.QK {
		bx, by := x[ib*bytesQ4_1:], y[ib*bytesQ8_1:]
		xs, ys := nibbles(bx[4:20]), codes8(by[4:36])
		acc.add(ib, maddLanes(&xs, &ys), halfAt(bx, 0)*halfAt(by, 0))
		summs += float32(halfAt(bx, 2) * halfAt(by, 2))
	}
	return acc.sum() + summs
}

// dotQ5_1Q8_1Twin is the twin of dotQ5_1Q8_1AVX2.
func dotQ5_1Q8_1Twin(n int, x, y []byte) float32 {
	var acc laneAcc
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
		summs += float32(halfAt(bx, 2) * halfAt(by, 2))
	}
	return acc.sum() + summs
}

// gemvF16Run is the run of elements the f16 four-row kernel
// (gemv2F16x4AVX2) takes per step.
const gemvF16Run = 16

// gemvF16Twin is the twin of one row of gemv2F16x4AVX2 over n elements (a
// multiple of gemvF16Run): two 8-lane FMA accumulators, one for elements
// 0-7 and one for 8-15 of every run, summed lane by lane and reduced as
// hsum8.
func gemvF16Twin(n int, x, y []byte) float32 {
	var acc [2][8]float32
	for i := 0; i+gemvF16Run <= n; i += gemvF16Run {
		for h := range 2 {
			for l := range 8 {
				e := 2 * (i + 8*h + l)
				acc[h][l] = fma32(halfAt(x, e), halfAt(y, e), acc[h][l])
			}
		}
	}
	var v [8]float32
	for l := range v {
		v[l] = acc[0][l] + acc[1][l]
	}
	return hsum8(&v)
}

// quadQ5_0Twin is the twin of gemmQ5_0x4AVX2: out[c] is the dot product
// of nb q5_0 blocks of x with column c of the packed q8 group y. Per
// block and column the lanes of SIGNED_DOT are summed in two halves
// (lanes 0-3 and 4-7, exact integers), each half converted to float32
// and accumulated by FMA with d_y[c]*d_x; the halves' sums are added at
// the end.
func quadQ5_0Twin(nb int, x, y []byte) [4]float32 {
	var acc [8]float32
	for ib := range nb {
		bx, blk := x[ib*bytesQ5_0:], y[ib*packQ8Block:]
		qh := binary.LittleEndian.Uint32(bx[2:6])
		var xs [32]int8
		for j, q := range nibbles(bx[6:22]) {
			xs[j] = int8(q|uint8(qh>>uint(j)&1)<<4) - 16
		}
		dx := halfAt(bx, 0)
		for c := range 4 {
			ys := codes8(blk[16+32*c : 48+32*c])
			l := signedLanes(&xs, &ys)
			lo, hi := (l[0]+l[1])+(l[2]+l[3]), (l[4]+l[5])+(l[6]+l[7])
			d := math.Float32frombits(binary.LittleEndian.Uint32(blk[4*c:])) * dx
			acc[c] = fma32(float32(lo), d, acc[c])
			acc[c+4] = fma32(float32(hi), d, acc[c+4])
		}
	}
	var out [4]float32
	for c := range out {
		out[c] = acc[c] + acc[c+4]
	}
	return out
}

// quadQ4_1Twin is the twin of gemmQ4_1x4AVX2 over nb blocks of x and the
// packed q8_1 group y.
func quadQ4_1Twin(nb int, x, y []byte) [4]float32 {
	return quadQ81Twin(nb, x, y, bytesQ4_1, func(bx []byte) [32]uint8 { return nibbles(bx[4:20]) })
}

// quadQ5_1Twin is the twin of gemmQ5_1x4AVX2.
func quadQ5_1Twin(nb int, x, y []byte) [4]float32 {
	return quadQ81Twin(nb, x, y, bytesQ5_1, func(bx []byte) [32]uint8 {
		qh := binary.LittleEndian.Uint32(bx[4:8])
		q := nibbles(bx[8:24])
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
		bx, blk := x[ib*xs:], y[ib*packQ81Block:]
		q := codes(bx)
		dx, mx := halfAt(bx, 0), halfAt(bx, 2)
		for c := range 4 {
			ys := codes8(blk[32+32*c : 64+32*c])
			var lanes [8]int32
			for j := range 32 {
				lanes[j/4] += int32(q[j]) * int32(ys[j])
			}
			lo, hi := (lanes[0]+lanes[1])+(lanes[2]+lanes[3]), (lanes[4]+lanes[5])+(lanes[6]+lanes[7])
			d := math.Float32frombits(binary.LittleEndian.Uint32(blk[4*c:])) * dx
			acc[c] = fma32(float32(lo), d, acc[c])
			acc[c+4] = fma32(float32(hi), d, acc[c+4])
			mins[c] += float32(mx * math.Float32frombits(binary.LittleEndian.Uint32(blk[16+4*c:])))
		}
	}
	var out [4]float32
	for c := range out {
		out[c] = (acc[c] + acc[c+4]) + mins[c]
	}
	return out
}
