//go:build amd64 && !purego

package cpu

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/sgemm"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// TestSgemmMicro2Table checks that the avx512 and vnni tiers give every
// gemm entry of the packed float path (f32, f16, bf16 and the gemmDeq
// formats) the two-panel kernel and f16 and bf16 the zmm wideners, and that the
// avx2 tier's entries, whose pointers the derived tiers share until they
// copy them, are left alone.
func TestSgemmMicro2Table(t *testing.T) {
	for _, wt := range append([]quant.Type{quant.F32, quant.F16, quant.BF16}, deqTypes...) {
		if avx2Kernels.gemm[wt].micro2 != nil {
			t.Errorf("avx2 tier's gemm[%v] has a two-panel kernel", wt)
		}
		for _, ks := range []*kernelSet{avx512Kernels, vnniKernels} {
			g := ks.gemm[wt]
			if g.micro2 == nil {
				t.Errorf("%s tier's gemm[%v] has no two-panel kernel", ks.name, wt)
			}
			if g == avx2Kernels.gemm[wt] {
				t.Errorf("%s tier's gemm[%v] is the avx2 tier's entry", ks.name, wt)
			}
		}
	}
	same := func(f, g func([]byte, []float32)) bool {
		return reflect.ValueOf(f).Pointer() == reflect.ValueOf(g).Pointer()
	}
	for _, ks := range []*kernelSet{avx512Kernels, vnniKernels} {
		if !same(ks.gemm[quant.F16].widen, dot.WidenF16AVX512) || !same(ks.deq[quant.F16], dot.WidenF16AVX512) {
			t.Errorf("%s tier's f16 widener is not dot.WidenF16AVX512", ks.name)
		}
		if !same(ks.gemm[quant.BF16].widen, dot.WidenBF16AVX512) || !same(ks.deq[quant.BF16], dot.WidenBF16AVX512) {
			t.Errorf("%s tier's bf16 widener is not dot.WidenBF16AVX512", ks.name)
		}
	}
	if !same(avx2Kernels.gemm[quant.F16].widen, dot.WidenF16AVX2) || !same(avx2Kernels.gemm[quant.BF16].widen, dot.WidenBF16AVX2) {
		t.Error("avx2 tier's f16 or bf16 gemm widener changed")
	}
	if avx512Kernels.gemm[quant.Q4_0].micro2 != nil {
		t.Error("avx512 tier's gemm[q4_0] has a two-panel kernel")
	}
}

// TestSgemmMicro2SameBits checks that MUL_MAT on the avx512 tier gives
// the same bits with the two-panel micro-kernel as without it (every
// panel through the 6x16 one): panel counts odd and even, several
// column blocks (sgemmNC and sgemmWideNC), k over several chunks with a
// short last one, weight rows not a multiple of six, broadcast batches,
// float weights and decoded ones. A counting wrapper checks that the
// two-panel kernel ran, that calls prefetched the next pair, and that
// for f16 and bf16 weights in blocks of 64 rows or more, calls
// prefetched columns of the rows the next chunk widens.
func TestSgemmMicro2SameBits(t *testing.T) {
	simdtest.NeedAVX512(t)
	var calls, pfCalls, colCalls atomic.Int64
	counted := *avx512Kernels
	counted.gemm = maps.Clone(avx512Kernels.gemm)
	plain := counted
	plain.gemm = maps.Clone(avx512Kernels.gemm)
	for wt, g := range avx512Kernels.gemm {
		if g.micro2 == nil {
			continue
		}
		c, p := *g, *g
		f := g.micro2
		c.micro2 = func(kc int, a []float32, lda int, b []float32, bstride int, cc []float32, ldc int, pf []byte, step int) {
			calls.Add(1)
			switch {
			case pf == nil:
			case step == 64:
				if len(pf) != 4*sgemm.PfLen(kc) {
					t.Errorf("kc=%d: panel prefetch operand of %d bytes, want %d", kc, len(pf), 4*sgemm.PfLen(kc))
				}
				pfCalls.Add(1)
			default:
				// A column of lines down the weight rows widened next.
				if n := sgemm.PfLines(kc); len(pf) != (n-1)*step+1 {
					t.Errorf("kc=%d: column prefetch operand of %d bytes, want %d lines %d apart", kc, len(pf), n, step)
				}
				colCalls.Add(1)
			}
			f(kc, a, lda, b, bstride, cc, ldc, pf, step)
		}
		p.micro2 = nil
		counted.gemm[wt], plain.gemm[wt] = &c, &p
	}
	type shape struct{ k, m, n, a2, b2 int64 }
	for _, wt := range []quant.Type{quant.F32, quant.F16, quant.BF16, quant.MXFP4, quant.IQ4_XS, quant.TQ2_0} {
		k0 := int64(8)
		if wt.IsQuantized() {
			k0 = wt.BlockSize()
		}
		for _, s := range []shape{
			{2*sgemmKC + k0, 13, 16, 1, 1},
			{sgemmKC, 102, 33, 1, 1},
			{sgemmKC + k0, 7, 64, 1, 2},
			{2 * sgemmKC, 20, 200, 2, 2},
			{k0 * 3, 6, 560, 1, 1},
			{2 * sgemmKC, 600, 64, 1, 1}, // blocks of 78 rows: columns prefetched
		} {
			if s.k%k0 != 0 {
				s.k += k0 - s.k%k0
			}
			t.Run(fmt.Sprintf("%v/k%d_m%d_n%d_b%d", wt, s.k, s.m, s.n, s.b2), func(t *testing.T) {
				seed := rand.Uint64()
				var outs [2][]float32
				before, pfBefore, colBefore := calls.Load(), pfCalls.Load(), colCalls.Load()
				for i, ks := range []*kernelSet{&counted, &plain} {
					b, err := NewWithOptions(Options{Threads: 2, Tier: "avx512"})
					if err != nil {
						t.Fatal(err)
					}
					b.kern = ks
					rng := rand.New(rand.NewPCG(seed, 32))
					a := mxLeaf(t, b, rng, "a", wt, s.k, s.m, s.a2)
					x := mxLeaf(t, b, rng, "x", quant.F32, s.k, s.n, s.b2)
					node, err := ops.MulMat(a, x)
					if err != nil {
						t.Fatal(err)
					}
					if err := mxCompute(t, b, node); err != nil {
						t.Fatal(err)
					}
					outs[i] = append([]float32(nil), f32s(mem(node), 0, node.NumElements())...)
					b.Close()
				}
				if s.n >= 2*sgemmNR && calls.Load() == before {
					t.Fatal("the two-panel kernel did not run")
				}
				if s.n >= 4*sgemmNR && pfCalls.Load() == pfBefore {
					t.Fatal("no call prefetched the next panel pair")
				}
				if widened := wt == quant.F16 || wt == quant.BF16; widened && s.m == 600 && colCalls.Load() == colBefore {
					t.Fatal("no call prefetched the weight rows the next chunk widens")
				} else if !widened && colCalls.Load() != colBefore {
					t.Fatal("a column of weight rows prefetched for weights that are not widened")
				}
				for i := range outs[0] {
					g, w := outs[0][i], outs[1][i]
					if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
						t.Fatalf("output %d: two-panel %g, one-panel %g", i, g, w)
					}
				}
			})
		}
	}
}

// TestSgemmX8Prefetch checks that f16 weights widened from their x8
// copy have the next chunk's half groups prefetched: with weights in a
// buffer marked as holding them (so sgemm reads the copy), some
// two-panel calls get a run of 8*kc bytes at step 32, inside the copy;
// and the outputs are those of the unmarked weights.
func TestSgemmX8Prefetch(t *testing.T) {
	simdtest.NeedAVX512(t)
	var runs atomic.Int64
	counted := *avx512Kernels
	counted.gemm = maps.Clone(avx512Kernels.gemm)
	g := *avx512Kernels.gemm[quant.F16]
	f := g.micro2
	g.micro2 = func(kc int, a []float32, lda int, b []float32, bstride int, cc []float32, ldc int, pf []byte, step int) {
		if step == 32 {
			if len(pf) != 8*kc {
				t.Errorf("kc=%d: x8 run of %d bytes, want %d", kc, len(pf), 8*kc)
			}
			runs.Add(1)
		}
		f(kc, a, lda, b, bstride, cc, ldc, pf, step)
	}
	counted.gemm[quant.F16] = &g
	const k, m, n = 3 * sgemmKC, 1200, 96 // blocks of 25 row groups
	var outs [2][]float32
	for i, marked := range []bool{true, false} {
		b, err := NewWithOptions(Options{Threads: 2, Tier: "avx512"})
		if err != nil {
			t.Fatal(err)
		}
		b.kern = &counted
		rng := rand.New(rand.NewPCG(3, 4))
		a := mxLeaf(t, b, rng, "a", quant.F16, k, m)
		if marked {
			a.Buffer.(*ops.HostBuffer).MarkWeights()
		}
		x := mxLeaf(t, b, rng, "x", quant.F32, k, n)
		node, err := ops.MulMat(a, x)
		if err != nil {
			t.Fatal(err)
		}
		before := runs.Load()
		if err := mxCompute(t, b, node); err != nil {
			t.Fatal(err)
		}
		if got := runs.Load() - before; marked && got == 0 {
			t.Error("no call prefetched the x8 copy's next chunk")
		} else if !marked && got != 0 {
			t.Errorf("%d x8 prefetches for weights with no copy", got)
		}
		outs[i] = append([]float32(nil), f32s(mem(node), 0, node.NumElements())...)
		b.Close()
	}
	for i := range outs[0] {
		if !simdtest.SameFloat(outs[0][i], outs[1][i]) {
			t.Fatalf("output %d: from the copy %g, plain %g", i, outs[0][i], outs[1][i])
		}
	}
}
