package simd

import "math"

// The lane arithmetic of the AVX2 kernels in Go, for their twins: each
// twin performs the float32 operations of its assembly kernel in the same
// order, lane by lane, and mimics the integer instructions' wrapping and
// saturation, so that tests compare the two bit for bit (NaN payloads
// aside: two NaNs are equal). Written for clarity, not speed.

// FMA32 returns x*y+z rounded once to float32, as VFMADD231SS/PS compute
// it. The product is exact in float64; the sum is rounded to float64 and
// then to float32, which rounds twice only when the float64 sum lands
// exactly halfway between two float32 values while the exact sum does
// not: then the exact sum lies on the side of the float64 rounding
// error, and a nudge of one float64 ulp that way gives the correct
// rounding.
func FMA32(x, y, z float32) float32 {
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

// Hsum8 sums eight lanes as the assembly's HSUM8 does.
func Hsum8(v *[8]float32) float32 {
	h0, h1, h2, h3 := v[0]+v[4], v[1]+v[5], v[2]+v[6], v[3]+v[7]
	return (h0 + h2) + (h1 + h3)
}

// Sat16 saturates v to int16, as VPMADDUBSW does.
func Sat16(v int32) int32 { return min(max(v, math.MinInt16), math.MaxInt16) }

// MaddLanes returns VPMADDWD(VPMADDUBSW(u, s), ones): lane l is the sum
// of the two saturated int16 pair sums of elements 4l..4l+3.
func MaddLanes(u *[32]uint8, s *[32]int8) [8]int32 {
	var out [8]int32
	for l := range out {
		j := 4 * l
		p0 := Sat16(int32(u[j])*int32(s[j]) + int32(u[j+1])*int32(s[j+1]))
		p1 := Sat16(int32(u[j+2])*int32(s[j+2]) + int32(u[j+3])*int32(s[j+3]))
		out[l] = p0 + p1
	}
	return out
}

// SignedLanes returns the lanes of SIGNED_DOT: VPSIGNB gives |x| (with
// -128 read back as the unsigned 128) and y with x's sign (negation
// wrapping -128 to itself), then MaddLanes. For y codes in [-127, 127],
// as every quantizer writes, the lanes are the exact sums of x*y.
func SignedLanes(x, y *[32]int8) [8]int32 {
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
	return MaddLanes(&u, &s)
}

// LaneAcc is the pair of 8-lane accumulators of the block loops: block i
// goes into acc[i%2], or always into acc[0] for the one-accumulator
// kernels (the four-row gemv kernels).
type LaneAcc struct {
	acc    [2][8]float32
	Single bool
}

// Add adds lanes times d into the accumulator of block ib.
func (a *LaneAcc) Add(ib int, lanes [8]int32, d float32) {
	if a.Single {
		ib = 0
	}
	acc := &a.acc[ib%2]
	for l, v := range lanes {
		acc[l] = FMA32(float32(v), d, acc[l])
	}
}

// Sum returns the lanes of both accumulators summed as the assembly does.
func (a *LaneAcc) Sum() float32 {
	var v [8]float32
	if a.Single {
		return Hsum8(&a.acc[0])
	}
	for l := range v {
		v[l] = a.acc[0][l] + a.acc[1][l]
	}
	return Hsum8(&v)
}

// Nibbles returns the 32 4-bit codes of a legacy block's 16 code bytes.
func Nibbles(qs []byte) (q [32]uint8) {
	for j := range 16 {
		q[j], q[j+16] = qs[j]&15, qs[j]>>4
	}
	return q
}

// Codes8 returns 32 int8 codes.
func Codes8(b []byte) (q [32]int8) {
	for j := range q {
		q[j] = int8(b[j])
	}
	return q
}
