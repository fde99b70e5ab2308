package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/reference"
)

// deqTol is the NMSE that a product of the gemmDeq path may have against
// the float64 reference of the same weights by the rounded activations
// (every row through the vec-dot type and back, mxRounded): the weights
// are decoded exactly as the reference reads them (up to float32 rounding
// of the decoded values) and the activations are the ones the dot path
// multiplies by, so only float32 accumulation is left (about 1e-12 at
// these k). Against the unrounded activations the error is near 1e-5,
// so a product within deqTol of the rounded reference and beyond it of
// the plain one had its activations rounded as ggml rounds them.
const deqTol = 1e-9

// mxRounded returns a packed float32 tensor with x's shape whose every
// row is x's row (read with reference.Read) encoded as vt and decoded
// again: the activations that the dot path and gemmDeq multiply by. A
// row holding a NaN becomes NaN throughout, as the backend's quantizers
// carry it into the block's scale (so that its outputs are NaN).
func mxRounded(t testing.TB, b *Backend, x *ops.Tensor, vt quant.Type) *ops.Tensor {
	t.Helper()
	vals, err := reference.Read(x)
	if err != nil {
		t.Fatal(err)
	}
	k := x.Ne[0]
	rowBytes, err := vt.RowSize(k)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, rowBytes)
	row := make([]float32, k)
	out := make([]float32, len(vals))
	for r := 0; r < len(vals); r += int(k) {
		nan := false
		for i := range row {
			row[i] = float32(vals[r+i])
			nan = nan || math.IsNaN(vals[r+i])
		}
		if nan {
			for i := range row {
				out[r+i] = float32(math.NaN())
			}
			continue
		}
		if err := quant.QuantizeRow(vt, row, buf); err != nil {
			t.Fatal(err)
		}
		if err := quant.DequantizeRow(vt, buf, out[r:r+int(k)]); err != nil {
			t.Fatal(err)
		}
	}
	xr, err := ops.NewTensor(x.Name+"-rounded", quant.F32, x.Ne[:]...)
	if err != nil {
		t.Fatal(err)
	}
	mxAlloc(t, b, xr, 0)
	mxFill(t, xr, out)
	return xr
}

// mxCheckRounded computes node (a MUL_MAT or MUL_MAT_ID of weights by
// activations x) on b and checks it within tol of the float64 reference
// of the same node with x's rows rounded through vt (mxRounded), and
// beyond tol of the plain reference. It returns the node's outputs.
func mxCheckRounded(t testing.TB, b *Backend, node, x *ops.Tensor, vt quant.Type, tol float64) []float64 {
	t.Helper()
	got := mxOutputs(t, b, node)
	xr := mxRounded(t, b, x, vt)
	rounded := *node
	rounded.Src = append([]*ops.Tensor(nil), node.Src...)
	for i, s := range rounded.Src {
		if s == x {
			rounded.Src[i] = xr
		}
	}
	want, err := reference.Compute(&rounded)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	e := mxNMSE(t, got, want)
	if e > tol {
		t.Errorf("%s: NMSE %.3g against the reference with rounded activations > %.3g", node.Label(), e, tol)
	}
	plain, err := reference.Compute(node)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	if p := mxNMSE(t, got, plain); p <= tol {
		t.Errorf("%s: NMSE %.3g against the plain reference, want beyond %.3g (activations not rounded to %v?)", node.Label(), p, tol, vt)
	}
	return got
}

// TestMulMatDeq checks the gemmDeq path (the packed float path with
// weights decoded from the new block formats, mul_mat_sgemm.go) for every
// type of deqTypes on every tier against the float64 reference of the
// rounded activations, within deqTol (mxCheckRounded): k of one, two and sixteen 256-element
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
						mxCheckRounded(t, b, node, x, wt.VecDotType(), deqTol)
					})
				}
			}
		}
	})
}

// TestMulMatDeqBatchInvariant checks that a product of the new formats
// does not depend on the batch's row count beyond float32 sums: the first
// rows of a batch that takes gemmDeq (sgemmMinN rows or more) and the
// same rows alone, which take the dot product, agree within deqTol, for
// float32 and f16 activations, because both round the activations to
// the vec-dot type first.
func TestMulMatDeqBatchInvariant(t *testing.T) {
	forEachTier(t, func(t *testing.T, ks *kernelSet) {
		b, err := NewWithOptions(Options{Threads: 2, Tier: ks.name})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		rng := rand.New(rand.NewPCG(73, 74))
		for _, wt := range []quant.Type{quant.MXFP4, quant.IQ4_XS, quant.TQ2_0, quant.IQ2_XXS} {
			for _, xt := range []quant.Type{quant.F32, quant.F16} {
				t.Run(fmt.Sprintf("%v/%v", wt, xt), func(t *testing.T) {
					const k, m, n, few = 512, 30, sgemmMinN + 8, sgemmMinN - 1
					a := mxLeaf(t, b, rng, "a", wt, k, m)
					x := mxLeaf(t, b, rng, "x", xt, k, n)
					if !deqUsable(ks.gemm[wt], x) {
						t.Fatalf("gemmDeq not usable for %d rows", n)
					}
					head, err := ops.View(x, []int64{k, few}, []int64{x.Nb[0], x.Nb[1]}, 0)
					if err != nil {
						t.Fatal(err)
					}
					if deqUsable(ks.gemm[wt], head) {
						t.Fatalf("gemmDeq usable for %d rows", few)
					}
					var outs [2][]float64
					for i, src := range []*ops.Tensor{x, head} {
						node, err := ops.MulMat(a, src)
						if err != nil {
							t.Fatal(err)
						}
						outs[i] = mxCheckRounded(t, b, node, src, wt.VecDotType(), deqTol)
					}
					if e := mxNMSE(t, outs[0][:m*few], outs[1]); e > deqTol {
						t.Errorf("first %d rows of %d (gemmDeq) against the same rows alone (dot product): NMSE %.3g > %.3g", few, n, e, deqTol)
					}
				})
			}
		}
	})
}

// TestMulMatIDDeq checks MUL_MAT_ID by expert (mul_mat_id_gemm.go) with
// a new format: every expert has more than sgemmMinN pairs, so every
// output comes from gemmDeq and the product is within deqTol of the
// reference with rounded activations.
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
				mxCheckRounded(t, b, node, x, wt.VecDotType(), deqTol)
			})
		}
	})
}
