package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// deqTol is the NMSE against the float64 reference that a product of the
// gemmDeq path may have: the weights are decoded exactly as the
// reference reads them (up to float32 rounding of the decoded values) and
// the activations stay float32, so only float32 accumulation is left
// (about 1e-12 at these k). The dot path, which rounds the activations to
// q8_0 or q8_K, lands near 1e-5, so a product within deqTol was computed
// by gemmDeq (checked by TestMulMatDeqTolSeparates).
const deqTol = 1e-9

// TestMulMatDeq checks the gemmDeq path (the packed float path with
// weights decoded from the new block formats, mul_mat_sgemm.go) for every
// type of deqTypes on every tier against the float64 reference, within
// deqTol (so the path was taken): k of one, two and sixteen 256-element
// chunks, n at sgemmMinN, one past it and past two panels, m not a
// multiple of sgemmMR, broadcast batches (r2 = 2, r3 = 2), weights that
// are a view of a wider matrix at an offset, activation rows with a
// stride past their elements, and a NaN activation (its column's
// outputs NaN, the others finite).
func TestMulMatDeq(t *testing.T) {
	type shape struct {
		name           string
		k, m, n        int64
		a2, a3, b2, b3 int64
		wview, xview   bool
		nan            bool // activation (5, 3) is NaN
	}
	shapes := []shape{
		{name: "k256_n16", k: 256, m: 13, n: 16, a2: 1, a3: 1, b2: 1, b3: 1},
		{name: "k512_n17_broadcast", k: 512, m: 13, n: 17, a2: 2, a3: 1, b2: 4, b3: 2},
		{name: "k4096_n40", k: 4096, m: 7, n: 40, a2: 1, a3: 1, b2: 1, b3: 1},
		{name: "k512_n40_views", k: 512, m: 11, n: 40, a2: 1, a3: 1, b2: 1, b3: 1, wview: true, xview: true},
		{name: "k768_m100_n33", k: 768, m: 100, n: 33, a2: 1, a3: 1, b2: 1, b3: 1},
		{name: "k256_n20_nan", k: 256, m: 9, n: 20, a2: 1, a3: 1, b2: 1, b3: 1, nan: true},
	}
	forEachTier(t, func(t *testing.T, ks *kernelSet) {
		for _, threads := range []int{1, 3} {
			b, err := NewWithOptions(Options{Threads: threads, Tier: ks.name})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			rng := rand.New(rand.NewPCG(71, uint64(threads)))
			for _, wt := range deqTypes {
				g := ks.gemm[wt]
				if g == nil || g.kind != gemmDeq {
					t.Fatalf("tier %s: no gemmDeq kernel for %v", ks.name, wt)
				}
				for _, s := range shapes {
					t.Run(fmt.Sprintf("%v/threads=%d/%s", wt, threads, s.name), func(t *testing.T) {
						var a *ops.Tensor
						if s.wview {
							// Rows m of a [2k, m+2] matrix, first
							// half, from row 1 and block 1 on.
							base := mxLeaf(t, b, rng, "base", wt, 2*s.k, s.m+2)
							blk := wt.TypeSize()
							v, err := ops.View(base, []int64{s.k, s.m}, []int64{base.Nb[0], base.Nb[1]}, base.Nb[1]+blk)
							if err != nil {
								t.Fatal(err)
							}
							a = v
						} else {
							a = mxLeaf(t, b, rng, "a", wt, s.k, s.m, s.a2, s.a3)
						}
						var x *ops.Tensor
						if s.xview {
							base := mxLeaf(t, b, rng, "xbase", quant.F32, s.k+32, s.n)
							v, err := ops.View(base, []int64{s.k, s.n}, []int64{base.Nb[0], base.Nb[1]}, 4*16)
							if err != nil {
								t.Fatal(err)
							}
							x = v
						} else {
							x = mxLeaf(t, b, rng, "x", quant.F32, s.k, s.n, s.b2, s.b3)
						}
						if s.nan {
							raw, err := x.HostBytes()
							if err != nil {
								t.Fatal(err)
							}
							f32s(raw, 3*x.Nb[1]+5*4, 1)[0] = float32(math.NaN())
						}
						if !deqUsable(g, x) {
							t.Fatalf("gemmDeq not usable for %+v", s)
						}
						node, err := ops.MulMat(a, x)
						if err != nil {
							t.Fatal(err)
						}
						mxCheck(t, b, node, deqTol)
					})
				}
			}
		}
	})
}

// TestMulMatDeqTolSeparates checks that deqTol tells the paths apart:
// with fewer than sgemmMinN activation rows, or f16 activations, MUL_MAT
// of the new formats takes the dot product on q8 activations, whose
// error exceeds deqTol (and stays within the dot path's tolerance), while
// the same weights at sgemmMinN float32 rows are within it.
func TestMulMatDeqTolSeparates(t *testing.T) {
	forEachTier(t, func(t *testing.T, ks *kernelSet) {
		b, err := NewWithOptions(Options{Threads: 2, Tier: ks.name})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		rng := rand.New(rand.NewPCG(73, 74))
		for _, wt := range []quant.Type{quant.MXFP4, quant.IQ4_XS, quant.TQ2_0, quant.IQ2_XXS} {
			t.Run(wt.String(), func(t *testing.T) {
				a := mxLeaf(t, b, rng, "a", wt, 512, 30)
				for _, c := range []struct {
					n   int64
					xt  quant.Type
					deq bool
				}{{sgemmMinN - 1, quant.F32, false}, {sgemmMinN, quant.F16, false}, {sgemmMinN, quant.F32, true}} {
					x := mxLeaf(t, b, rng, "x", c.xt, 512, c.n)
					node, err := ops.MulMat(a, x)
					if err != nil {
						t.Fatal(err)
					}
					e := mxCheck(t, b, node, mxMatTol(wt))
					if (e <= deqTol) != c.deq {
						t.Errorf("n=%d %v activations: NMSE %.3g, want gemmDeq (NMSE <= %.3g) %v", c.n, c.xt, e, deqTol, c.deq)
					}
				}
			})
		}
	})
}

// TestMulMatIDDeq checks MUL_MAT_ID by expert (mul_mat_id_gemm.go) with
// a new format: every expert has more than sgemmMinN pairs, so every
// output comes from gemmDeq and the product is within deqTol.
func TestMulMatIDDeq(t *testing.T) {
	mxEachBackend(t, func(t *testing.T, b *Backend) {
		rng := rand.New(rand.NewPCG(75, 76))
		for _, wt := range []quant.Type{quant.IQ4_XS, quant.MXFP4} {
			t.Run(wt.String(), func(t *testing.T) {
				const k, m, nExpert, nUsed, nTok = 512, 19, 3, 2, 40
				w := mxLeaf(t, b, rng, "experts", wt, k, m, nExpert)
				x := mxLeaf(t, b, rng, "x", quant.F32, k, nUsed, nTok)
				vals := make([]int32, nUsed*nTok)
				count := make([]int, nExpert)
				for tok := range nTok {
					for s := range nUsed {
						e := (tok + s) % nExpert
						vals[tok*nUsed+s] = int32(e)
						count[e]++
					}
				}
				for e, c := range count {
					if c < max(idGemmMinPairs, sgemmMinN) {
						t.Fatalf("expert %d has %d pairs", e, c)
					}
				}
				ids := mxIDs(t, b, "ids", vals, nUsed, nTok)
				node, err := ops.MulMatID(w, x, ids)
				if err != nil {
					t.Fatal(err)
				}
				mxCheck(t, b, node, deqTol)
			})
		}
	})
}
