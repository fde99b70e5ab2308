package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// TestMulMatGemm checks the gemm path (every tier with tiled kernels)
// on shapes that exercise its blocking: k over several gemmKC chunks,
// several row and column blocks, rows and columns left over at the edges,
// broadcast batches, and permuted activations. Every output is compared
// with the dot product of the same tier on the same converted
// activations: bit for bit for the K formats computed one weight row at a
// time (whose quad kernels perform the dot product's operations), else
// (float tiles, q8 and K panels) within float32 rounding of the sum of
// |terms|; and the whole product with the float64 reference.
func TestMulMatGemm(t *testing.T) {
	type shape struct {
		k, m, n, a2, b2 int64
		perm            bool
	}
	shapes := []shape{
		{k: 768, m: 70, n: 53, a2: 1, b2: 1},
		{k: 2 * gemmKC, m: 9, n: 4, a2: 2, b2: 4},
		{k: 256, m: 130, n: 7, a2: 1, b2: 1},
		{k: 256, m: 6, n: 11, a2: 1, b2: 2, perm: true},
	}
	forEachTier(t, func(t *testing.T, ks *kernelSet) {
		if len(ks.gemm) == 0 {
			t.Skipf("tier %s has no tiled kernels", ks.name)
		}
		for _, threads := range []int{1, 3} {
			b, err := NewWithOptions(Options{Threads: threads, Tier: ks.name})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			rng := rand.New(rand.NewPCG(41, uint64(threads)))
			for _, wt := range mxWeightTypes {
				g := ks.gemm[wt]
				if g == nil || g.kind == gemmDeq {
					// gemmDeq: TestMulMatDeq.
					continue
				}
				for _, s := range shapes {
					t.Run(fmt.Sprintf("%v/threads=%d/k%d_m%d_n%d_b%d", wt, threads, s.k, s.m, s.n, s.b2), func(t *testing.T) {
						if !gemmUsable(g, s.k, s.n) {
							t.Fatalf("gemm path not taken for %+v", s)
						}
						a := mxLeaf(t, b, rng, "a", wt, s.k, s.m, s.a2)
						var x *ops.Tensor
						if s.perm {
							base := mxLeaf(t, b, rng, "bT", quant.F32, s.n, s.k, s.b2)
							v, err := ops.Transpose(base)
							if err != nil {
								t.Fatal(err)
							}
							x = v
						} else {
							x = mxLeaf(t, b, rng, "b", quant.F32, s.k, s.n, s.b2)
						}
						node, err := ops.MulMat(a, x)
						if err != nil {
							t.Fatal(err)
						}
						mxCheck(t, b, node, mxMatTol(wt))
						quad := wt.IsQuantized() && wt.BlockSize() == quant.QKK && (g.ktile == nil || s.n < g.ktile.minN)
						gemmCompareDots(t, ks, node, quad)
					})
				}
			}
		}
	})
}

// gemmCompareDots recomputes every output of the computed node with the
// tier's dot product and compares.
func gemmCompareDots(t *testing.T, ks *kernelSet, node *ops.Tensor, exact bool) {
	t.Helper()
	a, x := node.Src[0], node.Src[1]
	kern, err := ks.dot(a.Type)
	if err != nil {
		t.Fatal(err)
	}
	k, m, n, b2 := a.Ne[0], a.Ne[1], x.Ne[1], x.Ne[2]
	r2 := b2 / a.Ne[2]
	out := f32s(mem(node), 0, node.NumElements())
	aRow, _ := a.Type.RowSize(k)
	yRow, _ := kern.actType.RowSize(k)
	xf := make([]float32, k)
	y := alignedBytes(yRow)
	var absTerm []float64
	for i2 := range b2 {
		for c := range n {
			if err := loadFloatRow(x.Type, mem(x), at(x, 0, c, i2, 0), x.Nb[0], xf); err != nil {
				t.Fatal(err)
			}
			if err := ks.convertRow(kern.actType, xf, y); err != nil {
				t.Fatal(err)
			}
			yd := vdDequant(t, kern.actType, y, int(k))
			for i := range m {
				off := at(a, 0, i, i2/r2, 0)
				w := mem(a)[off : off+aRow]
				want := kern.dot(int(k), w, y)
				got := out[i+m*(c+n*i2)]
				if exact {
					if !sameFloat(got, want) {
						t.Fatalf("output (%d, %d, %d) = %g, dot product %g", i, c, i2, got, want)
					}
					continue
				}
				// Both sum the same float32 block terms in different
				// orders: each may err by (terms+lanes) roundings of
				// the sum of |terms|.
				xd := vdDequant(t, a.Type, w, int(k))
				absTerm = absTerm[:0]
				var mag float64
				for e := range xd {
					mag += math.Abs(xd[e] * yd[e])
				}
				tol := 2 * float64(k/a.Type.BlockSize()+16) * 0x1p-24 * mag
				if math.Abs(float64(got)-float64(want)) > tol+1e-30 {
					t.Fatalf("output (%d, %d, %d) = %g, dot product %g (tol %.3g)", i, c, i2, got, want, tol)
				}
			}
		}
	}
}
