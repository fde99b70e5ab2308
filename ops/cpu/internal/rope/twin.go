package rope

import "math"

// The float64 sine and cosine of the AVX2 ROPE cache (rope_amd64.s), in
// Go: the twin the assembly is tested against bit for bit, and the code
// the assembly's Go wrapper runs for the pairs left over after the runs
// of four.
//
// The method is the classic one: k = round(θ·2/π) by the 1.5·2^52 trick
// (adding it leaves k in the low mantissa bits, so the quadrant k mod 4 is
// read from the bits), r = θ - k·π/2 with π/2 split in two doubles and
// each step an FMA (Cody-Waite), then fdlibm's minimax polynomials for sin
// and cos on [-π/4, π/4] and the quadrant's swap and signs. Every step is
// one float64 operation (FMA where the assembly fuses), so the twin is
// exact. For |θ| up to FastAngle the error stays below 1e-15 absolute,
// far below the float32 rounding of the result (TestRopeSinCos); beyond
// it callers use math.Sincos.

// FastAngle bounds |θ| for SinCos: k = round(θ·2/π) then stays
// below 2^40, well inside the 2^51 the rounding trick allows, and the part
// of π/2 beyond its two doubles (1.5e-33) contributes at most 2e-21 rad.
const FastAngle = 1 << 40

// Constants of SinCos; their bits are repeated in rope_amd64.s.
const (
	ropeMagic     = 0x1.8p52              // 1.5·2^52: adding it rounds to an integer
	ropeTwoOverPi = 0x1.45f306dc9c883p-1  // 2/π
	ropePio2Hi    = 0x1.921fb54442d18p+0  // π/2 rounded
	ropePio2Lo    = 0x1.1a62633145c07p-54 // π/2 - ropePio2Hi, rounded
)

// fdlibm's __kernel_sin and __kernel_cos coefficients: sin r ≈ r +
// r³(S1 + z S2 + ... + z⁵ S6) and cos r ≈ 1 - z/2 + z²(C1 + ... + z⁵ C6),
// z = r².
var (
	ropeSinPoly = [6]float64{
		-1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
		2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10,
	}
	ropeCosPoly = [6]float64{
		4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
		-2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11,
	}
)

// SinCos returns sin θ and cos θ for |θ| <= FastAngle, as the
// assembly computes them lane by lane.
func SinCos(theta float64) (sin, cos float64) {
	t := math.FMA(theta, ropeTwoOverPi, ropeMagic)
	q := math.Float64bits(t)
	k := t - ropeMagic
	r := math.FMA(-k, ropePio2Hi, theta)
	r = math.FMA(-k, ropePio2Lo, r)
	z := r * r
	ps := ropeSinPoly[5]
	for i := 4; i >= 0; i-- {
		ps = math.FMA(ps, z, ropeSinPoly[i])
	}
	s := math.FMA(ps, r*z, r)
	pc := ropeCosPoly[5]
	for i := 4; i >= 0; i-- {
		pc = math.FMA(pc, z, ropeCosPoly[i])
	}
	c := math.FMA(pc, z*z, 1-0.5*z)
	if q&1 != 0 {
		s, c = c, s
	}
	if q&2 != 0 {
		s = -s
	}
	if (q+1)&2 != 0 {
		c = -c
	}
	return s, c
}

// AnglesTwin is the twin of AnglesAVX2: for pair i, with θ =
// pos·w[i], cos θ·mscale and sin θ·mscale rounded to float32 into c[i]
// and s[i]; when dup (the normal mode's layout), into c[2i] and c[2i+1]
// both, and -sin into s[2i], sin into s[2i+1].
func AnglesTwin(c, s []float32, w []float64, pos, mscale float64, dup bool) {
	for i, wi := range w {
		sn, cs := SinCos(pos * wi)
		cf, sf := float32(cs*mscale), float32(sn*mscale)
		if dup {
			c[2*i], c[2*i+1] = cf, cf
			s[2*i], s[2*i+1] = -sf, sf
		} else {
			c[i], s[i] = cf, sf
		}
	}
}
