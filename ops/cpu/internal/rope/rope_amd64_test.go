//go:build amd64 && !purego

package rope

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
)

// sameFloat reports whether a and b have the same bits or are both NaN.
func sameFloat(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// TestAVX2Twins compares the AVX2 ROPE kernels with their twins bit for
// bit: the cache (AnglesTwin) for lengths around the runs of
// four, both layouts, any sign of position, and the head rotations
// (NormHeads, NeoXHeads) for head sizes around the
// runs of eight and sixteen, several heads at strides, in place or not,
// with NaN and infinities among the values.
func TestAVX2Twins(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, np := range []int{0, 1, 3, 4, 5, 8, 13, 16, 31, 64, 67} {
		for _, pos := range []float64{0, 1, -7, 511, 4095, 100000, -65536, 1 << 30} {
			for _, dup := range []bool{false, true} {
				w := make([]float64, np)
				for i := range w {
					w[i] = math.Pow(10000, -2*float64(i)/float64(2*np)) * (0.25 + rng.Float64())
				}
				if math.Abs(pos)*1.25 > FastAngle {
					continue
				}
				mscale := 0.5 + rng.Float64()
				k := 1
				if dup {
					k = 2
				}
				gc, gs := make([]float32, k*np+1), make([]float32, k*np+1)
				wc, ws := make([]float32, k*np+1), make([]float32, k*np+1)
				gc[k*np], gs[k*np] = 7, 7
				AnglesAVX2(gc, gs, w, pos, mscale, dup)
				AnglesTwin(wc, ws, w, pos, mscale, dup)
				if gc[k*np] != 7 || gs[k*np] != 7 {
					t.Fatalf("np=%d: angles wrote past the cache", np)
				}
				for i := range k * np {
					if math.Float32bits(gc[i]) != math.Float32bits(wc[i]) || math.Float32bits(gs[i]) != math.Float32bits(ws[i]) {
						t.Fatalf("angles np=%d pos=%v dup=%v [%d]: (%v, %v), twin (%v, %v)", np, pos, dup, i, gc[i], gs[i], wc[i], ws[i])
					}
				}
			}
		}
	}
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 1e-40, 3e38}
	for _, nd := range []int{2, 4, 6, 8, 10, 16, 18, 24, 32, 34, 48, 64, 80, 128, 130} {
		for _, nh := range []int{1, 2, 5} {
			for _, inPlace := range []bool{false, true} {
				xstr := nd + rng.IntN(3)
				ostr := nd + rng.IntN(3)
				if inPlace {
					ostr = xstr
				}
				x := make([]float32, (nh-1)*xstr+nd)
				for i := range x {
					x[i] = rng.Float32()*4 - 2
					if rng.IntN(16) == 0 {
						x[i] = special[rng.IntN(len(special))]
					}
				}
				c, s := make([]float32, nd), make([]float32, nd)
				for i := range c {
					c[i], s[i] = rng.Float32()*2-1, rng.Float32()*2-1
				}
				for _, neox := range []bool{false, true} {
					got, want := make([]float32, (nh-1)*ostr+nd), make([]float32, (nh-1)*ostr+nd)
					for i := range got {
						got[i], want[i] = -3, -3
					}
					src := x
					if inPlace {
						copy(got, x)
						copy(want, x)
						src = got
					}
					if neox {
						NeoXHeadsAVX2(got, src, ostr, xstr, nh, nd, c, s)
						NeoXHeads(want, x, ostr, xstr, nh, nd, c, s)
					} else {
						NormHeadsAVX2(got, src, ostr, xstr, nh, nd, c, s)
						NormHeads(want, x, ostr, xstr, nh, nd, c, s)
					}
					for i := range got {
						if !sameFloat(got[i], want[i]) {
							t.Fatalf("neox=%v nd=%d nh=%d in-place=%v [%d]: %v, twin %v", neox, nd, nh, inPlace, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}
