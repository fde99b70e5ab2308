package qgemm

import "math"

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
