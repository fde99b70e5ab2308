package cpu

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/gemv"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/reference"
)

// x8Types are the weight types with x8 kernels on some tier.
var x8Types = []quant.Type{quant.Q4_0, quant.Q8_0, quant.F16, quant.BF16, quant.Q6_K, quant.Q4_K}

// x8Count returns how many repacked copies b holds.
func x8Count(b *Backend) int {
	n := 0
	for _, m := range b.x8.copies {
		n += len(m)
	}
	return n
}

// weightsLeaf is mxLeaf in a buffer marked as holding weights.
func weightsLeaf(t *testing.T, b *Backend, rng *rand.Rand, typ quant.Type, ne ...int64) *ops.Tensor {
	t.Helper()
	a := mxLeaf(t, b, rng, "w", typ, ne...)
	a.Buffer.(*ops.HostBuffer).MarkWeights()
	return a
}

// TestMulMatX8 checks MUL_MAT on weights in a buffer marked as holding
// them (the repacked x8 path where the tier has a kernel: one to three
// activation rows, and the gemm path's panels) against the float64
// reference, over row counts with and without a tail of fewer than eight
// rows, several blocks, and broadcast batches; and that the copy is made
// exactly where the tier has an x8 kernel.
func TestMulMatX8(t *testing.T) {
	shapes := []struct {
		name           string
		blocks, m, n   int64
		a2, b2, b3, a3 int64
	}{
		{"m8", 1, 8, 1, 1, 1, 1, 1},
		{"tail", 3, 37, 1, 1, 1, 1, 1},
		{"n2", 4, 64, 2, 1, 1, 1, 1},
		{"n3-tail", 2, 203, 3, 1, 1, 1, 1},
		{"long", 64, 96, 1, 1, 1, 1, 1},
		{"broadcast", 2, 24, 1, 2, 4, 1, 1},
		// The gemm path's panels from the copy: whole groups, a
		// padded last panel, columns past a multiple of four.
		{"gemm", 4, 48, 16, 1, 1, 1, 1},
		{"gemm-edges", 3, 75, 10, 1, 1, 1, 1},
		{"gemm-broadcast", 2, 40, 8, 2, 4, 1, 1},
		// sgemm widening f16 rows from the copy: several k chunks,
		// tail rows, broadcast batches.
		{"sgemm", 20, 45, 17, 1, 1, 1, 1},
		{"sgemm-broadcast", 9, 30, 16, 2, 4, 1, 1},
	}
	mxEachBackend(t, func(t *testing.T, b *Backend) {
		rng := rand.New(rand.NewPCG(7, 8))
		for _, wt := range x8Types {
			for _, s := range shapes {
				t.Run(wt.String()+"/"+s.name, func(t *testing.T) {
					k := s.blocks * x8Block(wt)
					a := weightsLeaf(t, b, rng, wt, k, s.m, s.a2, s.a3)
					x := mxLeaf(t, b, rng, "x", quant.F32, k, s.n, s.b2, s.b3)
					node, err := ops.MulMat(a, x)
					if err != nil {
						t.Fatal(err)
					}
					before := x8Count(b)
					mxCheck(t, b, node, mxMatTol(wt))
					// The matrix-vector path makes the copy; the gemm
					// path only where its panels come from one.
					want := 0
					g, xk := b.kern.gemm[wt], b.kern.x8[wt]
					panels := g != nil && g.qtile != nil && g.qtile.fromX8 != nil
					widened := g != nil && xk != nil && xk.gather != nil && g.kind == gemmFloat && sgemmUsable(g, s.n)
					if xk != nil && (s.n < 4 || panels || widened) {
						want = 1
					}
					if got := x8Count(b) - before; got != want {
						t.Errorf("%d new repacked copies, want %d (tier %s)", got, want, b.kern.name)
					}
				})
			}
		}
	})
}

// x8Block returns the elements of a block of an x8 layout of wt: 256
// for the K formats, 32 for q4_0 and q8_0, and a run of 16 for f16 and
// bf16, so that their shapes include rows of an odd number of runs (the
// "tail" shape's 48: Mamba's dt projection).
func x8Block(wt quant.Type) int64 {
	if wt == quant.F16 || wt == quant.BF16 {
		return gemv.F16Run
	}
	return max(quant.QK, wt.BlockSize())
}

// TestMulMatX8Rewrite checks that a weight rewritten after a compute
// gives the new result: through WriteAt, through a Compute into the
// weights' buffer, and through Bytes followed by Touch.
func TestMulMatX8Rewrite(t *testing.T) {
	mxEachBackend(t, func(t *testing.T, b *Backend) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, wt := range x8Types {
			t.Run(wt.String(), func(t *testing.T) {
				k, m := 4*x8Block(wt), int64(40)
				// The weights and a second tensor of the same shape,
				// both in one buffer of weights.
				buf, err := ops.NewHostBuffer(2 * x8RowSize(t, wt, k) * m)
				if err != nil {
					t.Fatal(err)
				}
				buf.MarkWeights()
				a, err := ops.NewTensor("w", wt, k, m)
				if err != nil {
					t.Fatal(err)
				}
				a.Buffer = buf
				x := mxLeaf(t, b, rng, "x", quant.F32, k, 1)
				node, err := ops.MulMat(a, x)
				if err != nil {
					t.Fatal(err)
				}
				mxFill(t, a, mxRandom(rng, k*m))
				mxCheck(t, b, node, mxMatTol(wt))
				firstOut, _ := reference.Read(node)
				// Computed again with nothing written: the copy is
				// reused.
				made := b.x8.made
				for range 2 {
					if err := b.Compute(node); err != nil {
						t.Fatal(err)
					}
				}
				if b.x8.made != made {
					t.Errorf("%d copies made by products of unchanged weights", b.x8.made-made)
				}

				check := func(how string) {
					t.Helper()
					made := b.x8.made
					mxCheck(t, b, node, mxMatTol(wt))
					if b.kern.x8[wt] != nil && b.x8.made != made+1 {
						t.Errorf("%s: %d copies made, want 1", how, b.x8.made-made)
					}
					got, _ := reference.Read(node)
					if same(got, firstOut) {
						t.Errorf("%s: the output did not change with the weights", how)
					}
				}

				// WriteAt: new values for every row.
				rs := x8RowSize(t, wt, k)
				raw := make([]byte, rs*m)
				for r := range m {
					vals := mxRandom(rng, k)
					if err := quant.QuantizeRow(wt, vals, raw[r*rs:(r+1)*rs]); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := buf.WriteAt(raw, 0); err != nil {
					t.Fatal(err)
				}
				check("WriteAt")

				// Bytes and Touch.
				firstOut, _ = reference.Read(node)
				mxFill(t, a, mxRandom(rng, k*m))
				buf.Touch()
				check("Touch")

				// A Compute writing the weights: CPY of other values
				// into them.
				firstOut, _ = reference.Read(node)
				src := mxLeaf(t, b, rng, "src", quant.F32, k, m)
				cpy, err := ops.Cpy(src, a)
				if err != nil {
					t.Fatal(err)
				}
				if err := b.Compute(cpy); err != nil {
					t.Fatal(err)
				}
				check("Compute into the weights")
			})
		}
	})
}

// same reports whether a and b hold the same values.
func same(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// x8RowSize returns the bytes of a row of n elements of typ.
func x8RowSize(t *testing.T, typ quant.Type, n int64) int64 {
	t.Helper()
	s, err := typ.RowSize(n)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMulMatX8Off checks that Options.NoRepack and unmarked buffers keep
// the plain layout (no copy), and that $KERNBENCH_REPACK is validated.
func TestMulMatX8Off(t *testing.T) {
	forEachTier(t, func(t *testing.T, ks *kernelSet) {
		rng := rand.New(rand.NewPCG(11, 12))
		for _, c := range []struct {
			name   string
			no     bool
			marked bool
		}{{"NoRepack", true, true}, {"unmarked", false, false}} {
			t.Run(c.name, func(t *testing.T) {
				b, err := NewWithOptions(Options{Threads: 2, Tier: ks.name, NoRepack: c.no})
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				a := mxLeaf(t, b, rng, "w", quant.Q4_0, 64, 16)
				if c.marked {
					a.Buffer.(*ops.HostBuffer).MarkWeights()
				}
				x := mxLeaf(t, b, rng, "x", quant.F32, 64, 1)
				node, err := ops.MulMat(a, x)
				if err != nil {
					t.Fatal(err)
				}
				mxCheck(t, b, node, mxMatTol(quant.Q4_0))
				if n := x8Count(b); n != 0 {
					t.Errorf("%d repacked copies, want none", n)
				}
			})
		}
	})
	t.Setenv(EnvRepack, "maybe")
	if _, err := New(1); err == nil {
		t.Errorf("$%s=maybe accepted", EnvRepack)
	}
	t.Setenv(EnvRepack, "0")
	b, err := New(1)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.repack {
		t.Errorf("$%s=0 left repacking on", EnvRepack)
	}
}

// TestMulMatIDX8 checks MUL_MAT_ID on experts in a buffer marked as
// holding weights (the x8 kernel where the tier has one and no expert
// has four pairs for the tiled kernel) against the float64 reference:
// one token (decoding), a few tokens, many (the tiled kernel on the
// original), expert rows with a tail of fewer than eight.
func TestMulMatIDX8(t *testing.T) {
	shapes := []struct {
		name               string
		blocks, m, nExpert int64
		nUsed, nTokens, b1 int64
		pick               []int32
		// x8 tells whether the x8 copy is taken (where the tier has a
		// kernel): not when an expert has four pairs for the tiled
		// kernel, which reads the original.
		x8 bool
	}{
		{"one-token", 2, 40, 8, 2, 1, 1, []int32{5, 2}, true},
		{"one-token-tail", 1, 37, 4, 4, 1, 4, []int32{3, 0, 1, 2}, true},
		{"few-tokens", 2, 44, 8, 2, 3, 2, []int32{1, 6, 4}, true},
		{"tokens", 3, 64, 4, 2, 7, 2, []int32{0, 3, 1}, false},
	}
	mxEachBackend(t, func(t *testing.T, b *Backend) {
		rng := rand.New(rand.NewPCG(13, 14))
		for _, wt := range x8Types {
			for _, s := range shapes {
				t.Run(wt.String()+"/"+s.name, func(t *testing.T) {
					k := s.blocks * x8Block(wt)
					w := weightsLeaf(t, b, rng, wt, k, s.m, s.nExpert)
					x := mxLeaf(t, b, rng, "x", quant.F32, k, s.b1, s.nTokens)
					vals := make([]int32, s.nUsed*s.nTokens)
					for i := range vals {
						vals[i] = s.pick[(i*5+i/3)%len(s.pick)]
					}
					ids := mxIDs(t, b, "ids", vals, s.nUsed, s.nTokens)
					node, err := ops.MulMatID(w, x, ids)
					if err != nil {
						t.Fatal(err)
					}
					before := x8Count(b)
					mxCheck(t, b, node, mxMatTol(wt))
					want := 0
					if b.kern.x8[wt] != nil && s.x8 {
						want = 1
					}
					if got := x8Count(b) - before; got != want {
						t.Errorf("%d new repacked copies, want %d (tier %s)", got, want, b.kern.name)
					}
				})
			}
		}
	})
}

// TestX8SameBits checks that MUL_MAT (one to three activation rows) and
// MUL_MAT_ID (one token, and 40 tokens by expert) give the same bits from
// the x8 copy as from the plain layout (Options.NoRepack), tail rows
// included, and that prefill makes no copy beside the decode's.
func TestX8SameBits(t *testing.T) {
	forEachTier(t, func(t *testing.T, ks *kernelSet) {
		for _, wt := range x8Types {
			t.Run(wt.String(), func(t *testing.T) {
				var outs [2][]float64
				for i, no := range []bool{true, false} {
					b, err := NewWithOptions(Options{Threads: 2, Tier: ks.name, NoRepack: no})
					if err != nil {
						t.Fatal(err)
					}
					defer b.Close()
					rng := rand.New(rand.NewPCG(15, 16))
					k := 6 * x8Block(wt)
					a := weightsLeaf(t, b, rng, wt, k, 45)
					x := mxLeaf(t, b, rng, "x", quant.F32, k, 3)
					mm, err := ops.MulMat(a, x)
					if err != nil {
						t.Fatal(err)
					}
					w := weightsLeaf(t, b, rng, wt, k, 44, 4)
					xe := mxLeaf(t, b, rng, "xe", quant.F32, k, 2, 1)
					ids := mxIDs(t, b, "ids", []int32{3, 1}, 2, 1)
					mid, err := ops.MulMatID(w, xe, ids)
					if err != nil {
						t.Fatal(err)
					}
					// Prefill: 40 tokens, 20 pairs an expert, so MUL_MAT_ID
					// goes by expert (mul_mat_id_gemm.go), each expert a
					// view whose rows come from the same copy.
					xp := mxLeaf(t, b, rng, "xp", quant.F32, k, 2, 40)
					vals := make([]int32, 80)
					for v := range vals {
						vals[v] = int32((v + v/4) % 4)
					}
					pre, err := ops.MulMatID(w, xp, mxIDs(t, b, "idp", vals, 2, 40))
					if err != nil {
						t.Fatal(err)
					}
					for _, node := range []*ops.Tensor{mm, mid, pre} {
						if err := mxCompute(t, b, node); err != nil {
							t.Fatal(err)
						}
						got, err := reference.Read(node)
						if err != nil {
							t.Fatal(err)
						}
						outs[i] = append(outs[i], got...)
					}
					if want := 2; !no && ks.x8[wt] != nil && x8Count(b) != want {
						t.Fatalf("%d copies, want %d: the x8 path was not taken", x8Count(b), want)
					}
				}
				for e := range outs[0] {
					if outs[0][e] != outs[1][e] {
						t.Fatalf("output %d: plain %v, x8 %v", e, outs[0][e], outs[1][e])
					}
				}
			})
		}
	})
}

// TestX8WeightsView checks that a view of whole matrices of a weight
// tensor (MUL_MAT_ID by expert's expert) reads the parent's copy at its
// offset, making no copy of its own, and that other views get none.
func TestX8WeightsView(t *testing.T) {
	b, err := NewWithOptions(Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, wt := range x8Types {
		xk := b.kern.x8[wt]
		if xk == nil {
			continue
		}
		rng := rand.New(rand.NewPCG(17, 18))
		k, m := 4*x8Block(wt), int64(24)
		w := weightsLeaf(t, b, rng, wt, k, m, 3)
		whole := b.x8Weights(w, xk)
		if whole == nil {
			t.Fatalf("%v: no copy of the whole tensor", wt)
		}
		before := x8Count(b)
		expert := &ops.Tensor{Type: wt, Ne: [4]int64{k, m, 1, 1}, Nb: [4]int64{w.Nb[0], w.Nb[1], w.Nb[2], w.Nb[2]}, ViewOf: w, Offset: 2 * w.Nb[2]}
		got := b.x8Weights(expert, xk)
		if len(got) != int(w.Nb[2]) || &got[0] != &whole[2*w.Nb[2]] {
			t.Errorf("%v: the expert view does not read the parent's copy at its offset", wt)
		}
		if x8Count(b) != before {
			t.Errorf("%v: the view made a copy of its own", wt)
		}
		rows := &ops.Tensor{Type: wt, Ne: [4]int64{k, 8, 1, 1}, Nb: [4]int64{w.Nb[0], w.Nb[1], 8 * w.Nb[1], 8 * w.Nb[1]}, ViewOf: w, Offset: w.Nb[1]}
		if b.x8Weights(rows, xk) != nil {
			t.Errorf("%v: a view of some rows got a copy", wt)
		}
	}
}

// TestX8Rerelease checks that the original of weights with an x8 copy
// is released again after a product that read it in place (the K
// formats' gemm panels: MUL_MAT of 16 rows, MUL_MAT_ID by expert of 20
// tokens), and not after one that read the copy (the q4_0/q8_0 panels,
// f16's sgemm): Release is counted through the buffer's release hook.
func TestX8Rerelease(t *testing.T) {
	b, err := NewWithOptions(Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, wt := range x8Types {
		if b.kern.x8[wt] == nil {
			continue
		}
		t.Run(wt.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(19, 20))
			k, m := 2*x8Block(wt), int64(24)
			// In place: the gemm path reads the original (no panels or
			// rows from the copy).
			g := b.kern.gemm[wt]
			inPlace := g.ktile != nil
			for _, moe := range []bool{false, true} {
				var w *ops.Tensor
				if moe {
					w = weightsLeaf(t, b, rng, wt, k, m, 2)
				} else {
					w = weightsLeaf(t, b, rng, wt, k, m)
				}
				releases := 0
				w.Buffer.(*ops.HostBuffer).SetRelease(func([]byte) { releases++ })
				var one, many *ops.Tensor
				if moe {
					x1 := mxLeaf(t, b, rng, "x1", quant.F32, k, 1, 1)
					one, err = ops.MulMatID(w, x1, mxIDs(t, b, "ids1", []int32{1}, 1, 1))
					if err != nil {
						t.Fatal(err)
					}
					const tokens = 20
					xs := mxLeaf(t, b, rng, "xs", quant.F32, k, 1, tokens)
					ids := make([]int32, tokens)
					many, err = ops.MulMatID(w, xs, mxIDs(t, b, "ids", ids, 1, tokens))
				} else {
					one, err = ops.MulMat(w, mxLeaf(t, b, rng, "x1", quant.F32, k, 1))
					if err != nil {
						t.Fatal(err)
					}
					many, err = ops.MulMat(w, mxLeaf(t, b, rng, "xs", quant.F32, k, 16))
				}
				if err != nil {
					t.Fatal(err)
				}
				mxCheck(t, b, one, mxMatTol(wt))
				if releases != 1 {
					t.Fatalf("moe=%v: %d releases after the copy was made, want 1", moe, releases)
				}
				mxCheck(t, b, many, mxMatTol(wt))
				want := 1
				if inPlace {
					want = 2
				}
				if releases != want {
					t.Errorf("moe=%v: %d releases after the product of many rows, want %d", moe, releases, want)
				}
			}
		})
	}
}
