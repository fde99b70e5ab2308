package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// forEachTier runs f once per tier the host CPU supports (generic first),
// each as a subtest named after the tier, and logs the tiers it skips with
// the reason, as crypto/internal/cryptotest runs every implementation.
func forEachTier(t *testing.T, f func(t *testing.T, ks *kernelSet)) {
	t.Helper()
	for _, st := range detectTiers() {
		if !st.Supported {
			t.Logf("tier %s skipped on this CPU: %s", st.Name, st.Reason)
			continue
		}
		t.Run(st.Name, func(t *testing.T) { f(t, st.kernels) })
	}
}

// sameFloat is simdtest.SameFloat.
func sameFloat(a, b float32) bool { return simdtest.SameFloat(a, b) }

// simdRow is simdtest.Row.
func simdRow(rng *rand.Rand, wt quant.Type, n, off int, special float64) []byte {
	return simdtest.Row(rng, wt, n, off, special)
}

func TestFMA32(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	cases := [][3]float32{
		{1, 1, 1},
		// x*y = 1 + 2^-23 + 2^-24 + 2^-47 needs one rounding: the naive
		// float64 sum lands on a float32 midpoint.
		{1 + 0x1p-23, 1 + 0x1p-24, 0},
		{1 + 0x1p-23, 1 + 0x1p-24, -0x1p-60},
		{0x1p-149, 0.5, 0}, {0x1p-149, 1.5, 0}, {0x1p-149, 2.5, 0},
		{3, 5, float32(math.Inf(-1))}, {float32(math.Inf(1)), 0, 1},
		{math.MaxFloat32, 2, -math.MaxFloat32}, {math.MaxFloat32, 1 + 0x1p-23, 0},
		{negZero, 1, 0}, {negZero, 1, negZero}, {0, -1, negZero},
	}
	for _, c := range cases {
		got, want := simd.FMA32(c[0], c[1], c[2]), fma32Ref(c[0], c[1], c[2])
		if !sameFloat(got, want) {
			t.Errorf("simd.FMA32(%g, %g, %g) = %g, want %g", c[0], c[1], c[2], got, want)
		}
	}
	// The signs of zero sums, stated: -0*1 + 0 is +0, -0*1 + -0 and
	// 0*-1 + -0 are -0.
	for _, c := range []struct {
		x, y, z float32
		neg     bool
	}{{negZero, 1, 0, false}, {negZero, 1, negZero, true}, {0, -1, negZero, true}} {
		if got := simd.FMA32(c.x, c.y, c.z); got != 0 || math.Signbit(float64(got)) != c.neg {
			t.Errorf("simd.FMA32(%g, %g, %g) = %g, want a zero with sign bit %v", c.x, c.y, c.z, got, c.neg)
		}
	}
}

// fma32Ref is the hardware FMA where the host has it, else simd.FMA32 itself
// checked against exact big-float arithmetic in TestFMA32Exact.
var fma32Ref = simd.FMA32
