//go:build amd64 && !purego

package flashattn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
)

// faRandHalves returns n bytes of random f16 values (faRandHalf).
func faRandHalves(rng *rand.Rand, n int, special bool) []byte {
	b := make([]byte, 2*n)
	for i := range n {
		h := faRandHalf(rng, special)
		b[2*i], b[2*i+1] = byte(h), byte(h>>8)
	}
	return b
}

// faRandMaskBits returns mask bits for nk keys: none, all, a causal
// edge, or scattered (with whole runs of 4 and 32 masked).
func faRandMaskBits(rng *rand.Rand, nk, kind int) []uint64 {
	bits := make([]uint64, (nk+63)/64+1)
	for t := range nk {
		var set bool
		switch kind {
		case 1:
			set = true
		case 2:
			set = t >= nk/2
		case 3:
			set = rng.IntN(3) == 0 || t/4%5 == 1 || t/32 == 2
		}
		if set {
			bits[t/64] |= 1 << (t % 64)
		}
	}
	return bits
}

// TestFAKTAVX2 compares KTAVX2 with KTTwin bit for bit over head sizes,
// key counts around the groups of 8, padded and zero strides, with Inf
// and NaN keys, and checks that it writes nothing past each element row's
// nk keys.
func TestFAKTAVX2(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(91, 92))
	for _, d := range []int{8, 16, 24} {
		for _, nk := range []int{1, 7, 8, 9, 16, 31, 64, 100, 256} {
			for trial := range 3 {
				ks := 2*d + 2*rng.IntN(5)
				if trial == 2 {
					ks = 0
				}
				ts := nk + rng.IntN(9)
				k := faRandHalves(rng, max(1, (nk-1)*ks/2+d), trial == 1)
				got, want := make([]float32, d*ts), make([]float32, d*ts)
				for i := range got {
					got[i], want[i] = -7, -7
				}
				KTAVX2(got, ts, k, ks, nk, d)
				KTTwin(want, ts, k, ks, nk, d)
				for i := range got {
					if !faSameBits(got[i], want[i]) {
						t.Fatalf("d %d nk %d ks %d ts %d: element %d (e %d, t %d): asm %g, twin %g", d, nk, ks, ts, i, i/ts, i%ts, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestFAScoresSmallAVX2 compares ScoresSmallAVX2 with ScoresSmallTwin
// bit for bit (logits, mask bits, maximum) over head sizes, key counts
// around the groups of 32 (the last keys taken as a group of 32 or by the
// twin), masks with whole groups masked, ALiBi slopes
// and Inf/NaN keys and queries; finite logits must be within float32
// rounding of the float64 ones.
func TestFAScoresSmallAVX2(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(93, 94))
	ninf := simd.HalfTable[0xfc00]
	for _, d := range []int{8, 16, 4, 12} {
		for _, n := range []int{1, 31, 32, 33, 64, 96, 100, 256} {
			for trial := range 8 {
				special := trial >= 6
				ts := n + rng.IntN(5) // the last keys by the twin
				if trial%2 == 0 {
					ts = (n+31)&^31 + rng.IntN(3) // as a group of 32
				}
				kt := make([]float32, d*ts)
				for i := range kt {
					kt[i] = simd.HalfTable[faRandHalf(rng, special)]
				}
				q := make([]float32, d)
				for i := range q {
					q[i] = simd.HalfTable[faRandHalf(rng, special && trial == 7)]
				}
				m := make([]uint16, n)
				kind := trial % 4
				for i := range m {
					m[i] = faRandHalf(rng, false)
					if kind == 1 && i >= n/3 || kind == 2 && (i/32 == 1 || rng.IntN(4) == 0) || kind == 3 && i == n-1 {
						m[i] = 0xfc00
					}
				}
				slope := [4]float32{1, 0.5, 0.25, 1}[trial%4]
				scale := 0.35 * float32(1+trial)
				gsc, wsc := make([]float32, n), make([]float32, n)
				gb, wb := make([]uint64, 4), make([]uint64, 4)
				for i := range gb {
					gb[i], wb[i] = ^uint64(0), 12345 // cleared by both
				}
				gmx := ScoresSmallAVX2(q, kt, ts, m, slope, scale, gsc, gb)
				wmx := ScoresSmallTwin(q, kt, ts, m, slope, scale, wsc, wb)
				where := func() string {
					return fmt.Sprintf("d %d n %d trial %d", d, n, trial)
				}
				if gmx != wmx && !(gmx != gmx && wmx != wmx) {
					t.Fatalf("%s: max asm %g, twin %g", where(), gmx, wmx)
				}
				for i := range (n + 63) / 64 {
					if gb[i] != wb[i] {
						t.Fatalf("%s: bits word %d: asm %#x, twin %#x", where(), i, gb[i], wb[i])
					}
				}
				for i := range n {
					if !faSameBits(gsc[i], wsc[i]) {
						t.Fatalf("%s: key %d: asm %g, twin %g", where(), i, gsc[i], wsc[i])
					}
					if special || wb[i/64]>>(i%64)&1 != 0 {
						if m[i] == 0xfc00 && (gsc[i] != ninf || wb[i/64]>>(i%64)&1 == 0) {
							t.Fatalf("%s: masked key %d: %g, bit %d", where(), i, gsc[i], wb[i/64]>>(i%64)&1)
						}
						continue
					}
					var dot float64
					for e := range d {
						dot += float64(q[e]) * float64(kt[e*ts+i])
					}
					ref := dot*float64(scale) + float64(slope*simd.HalfTable[m[i]])
					if math.Abs(float64(gsc[i])-ref) > 1e-5*(1+math.Abs(ref)) {
						t.Fatalf("%s: key %d: %g, float64 %g", where(), i, gsc[i], ref)
					}
				}
			}
		}
	}
}

// TestFAValuesSmallTAVX2 compares ValuesSmallTAVX2 with
// ValuesSmallTTwin bit for bit over value sizes 8, 16 and 24, key counts
// around the groups of 8, masks of every kind (none, all, causal,
// scattered) and padded strides; the masked keys' values and p, and
// those past nk, are NaN or Inf, which must not reach the accumulator
// (each sum must be within float32 rounding of the float64 one).
func TestFAValuesSmallTAVX2(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(95, 96))
	nan := float32(math.NaN())
	for _, n := range []int{8, 16, 24} {
		for _, nk := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 31, 43, 64, 65, 100, 130, 256} {
			for kind := range 4 {
				n8 := (nk + 7) &^ 7
				ts := n8 + 8*rng.IntN(2)
				bits := faRandMaskBits(rng, nk, kind)
				masked := func(t int) bool { return t >= nk || bits[t/64]>>(t%64)&1 != 0 }
				vt := make([]float32, n*ts)
				for i := range vt {
					vt[i] = 4*rng.Float32() - 2
					if masked(i % ts) {
						vt[i] = nan
					}
				}
				p := make([]float32, ts)
				for i := range p {
					p[i] = rng.Float32()
					if masked(i) {
						p[i] = float32(math.Inf(-1 + 2*(i%2)))
					}
				}
				got, want, ref := make([]float32, n), make([]float32, n), make([]float64, n)
				for i := range got {
					got[i] = 4*rng.Float32() - 2
					want[i] = got[i]
					ref[i] = float64(got[i])
					for t := range nk {
						if !masked(t) {
							ref[i] += float64(p[t]) * float64(vt[i*ts+t])
						}
					}
				}
				ValuesSmallTAVX2(got, p, vt, ts, nk, bits)
				ValuesSmallTTwin(want, p, vt, ts, nk, bits)
				for i := range got {
					if !faSameBits(got[i], want[i]) {
						t.Fatalf("n %d nk %d kind %d ts %d: element %d: asm %g, twin %g", n, nk, kind, ts, i, got[i], want[i])
					}
					if math.Abs(float64(got[i])-ref[i]) > 1e-5*(1+float64(nk)) {
						t.Fatalf("n %d nk %d kind %d: element %d: %g, float64 %g", n, nk, kind, i, got[i], ref[i])
					}
				}
			}
		}
	}
}
