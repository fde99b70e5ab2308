//go:build amd64 && !purego

package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/gemv"
	"github.com/kernbench/kernbench/ops/cpu/internal/quantize"
	"github.com/kernbench/kernbench/ops/cpu/internal/sgemm"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// TestSgemmBF16Path checks bf16 MUL_MAT on the vnni tier, where the CPU
// has AVX-512 BF16, bit for bit against the sums the bfloat16 pair path
// defines, computed here with sgemm.DotBF16Pair: activations rounded to
// bf16; per output, chunks of sgemmKC summed pair by pair from zero, the
// chunk sums added in order. The shapes cover k over several chunks with
// a short last one, weight rows not a multiple of six, panel counts odd
// and even, several column blocks (past sgemmBF16NC), broadcast batches,
// NaN and infinities, and one and two threads.
func TestSgemmBF16Path(t *testing.T) {
	simdtest.NeedBF16(t)
	if vnniKernels.gemm[quant.BF16].microBF16 == nil {
		t.Fatal("the vnni tier has no bfloat16 pair kernel")
	}
	type shape struct {
		k, m, n, a2, b2 int64
		special         bool // NaN and infinities among the weights and activations
	}
	for _, s := range []shape{
		{2*sgemmKC + 8, 13, 16, 1, 1, false},
		{sgemmKC, 102, 33, 1, 1, false},
		{sgemmKC + 16, 7, 64, 1, 2, false},
		{2 * sgemmKC, 20, 200, 2, 2, false},
		{24, 6, 560, 1, 1, false},
		{3*sgemmKC + 40, 61, 47, 1, 1, false},
		{sgemmKC + 8, 14, 40, 1, 1, true},
	} {
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("k%d_m%d_n%d_b%d_t%d", s.k, s.m, s.n, s.b2, threads), func(t *testing.T) {
				b, err := NewWithOptions(Options{Threads: threads, Tier: "vnni"})
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				if b.kern.gemm[quant.BF16].microBF16 == nil {
					t.Fatal("the backend's vnni tier has no bfloat16 pair kernel")
				}
				rng := rand.New(rand.NewPCG(uint64(s.k), uint64(s.n)))
				a := mxLeaf(t, b, rng, "a", quant.BF16, s.k, s.m, s.a2)
				x := mxLeaf(t, b, rng, "x", quant.F32, s.k, s.n, s.b2)
				if s.special {
					plantBF16Specials(a, x, s.k, 2*s.k+9, 30*s.k)
				}
				node, err := ops.MulMat(a, x)
				if err != nil {
					t.Fatal(err)
				}
				if err := mxCompute(t, b, node); err != nil {
					t.Fatal(err)
				}
				got := f32s(mem(node), 0, node.NumElements())
				w := u16s(mem(a), 0, a.NumElements())
				xs := f32s(mem(x), 0, x.NumElements())
				for i2 := range s.b2 {
					wm := w[i2/(s.b2/s.a2)*s.m*s.k:]
					for c := range s.n {
						xr := xs[(i2*s.n+c)*s.k:][:s.k]
						for i := range s.m {
							wr := wm[i*s.k:][:s.k]
							var want float32
							for k0 := int64(0); k0 < s.k; k0 += sgemmKC {
								var acc float32
								for kk := k0; kk < min(k0+sgemmKC, s.k); kk += 2 {
									acc = sgemm.DotBF16Pair(acc, wr[kk], wr[kk+1], quant.FP32ToBF16(xr[kk]), quant.FP32ToBF16(xr[kk+1]))
								}
								want += acc
							}
							o := (i2*s.n+c)*s.m + i
							if !simdtest.SameFloat(got[o], want) {
								t.Fatalf("out[batch %d, column %d, row %d] = %g, want %g", i2, c, i, got[o], want)
							}
						}
					}
				}
			})
		}
	}
}

// plantBF16Specials puts a NaN, +Inf and -Inf among the bf16 weights a
// (rows of k; elements 3, k+100 and 5k+7) and +Inf and NaN into the
// float32 activations x at elements xInf and xNaN.
func plantBF16Specials(a, x *ops.Tensor, k, xInf, xNaN int64) {
	wa, xa := u16s(mem(a), 0, a.NumElements()), f32s(mem(x), 0, x.NumElements())
	inf := float32(math.Inf(1))
	wa[3], wa[k+100], wa[5*k+7] = quant.FP32ToBF16(float32(math.NaN())), quant.FP32ToBF16(inf), quant.FP32ToBF16(-inf)
	xa[xInf], xa[xNaN] = inf, float32(math.NaN())
}

// TestGemvBF16Path checks bf16 MUL_MAT with one to three activation rows
// on the vnni tier, where the CPU has AVX-512 BF16, bit for bit against
// gemv.BF16PairTwin of each weight row and the activation row rounded to
// bf16: weight row counts in whole groups of four (each thread's share
// too), k of odd and even run counts (a last half line), NaN and
// infinities, one and two threads.
func TestGemvBF16Path(t *testing.T) {
	simdtest.NeedBF16(t)
	for _, s := range []struct {
		k, m, n int64
		special bool
	}{
		{16, 8, 1, false}, {48, 64, 2, false}, {4096, 32, 1, false},
		{1040, 128, 3, false}, {336, 16, 1, true},
	} {
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("k%d_m%d_n%d_t%d", s.k, s.m, s.n, threads), func(t *testing.T) {
				b, err := NewWithOptions(Options{Threads: threads, Tier: "vnni"})
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				if f := b.kern.gemv[quant.BF16]; reflect.ValueOf(f).Pointer() != reflect.ValueOf(gemv.BF16DP).Pointer() {
					t.Fatal("the backend's vnni tier does not take bf16 mat-vec products by gemv.BF16DP")
				}
				rng := rand.New(rand.NewPCG(uint64(s.k), uint64(s.m)))
				a := mxLeaf(t, b, rng, "a", quant.BF16, s.k, s.m)
				x := mxLeaf(t, b, rng, "x", quant.F32, s.k, s.n)
				if s.special {
					plantBF16Specials(a, x, s.k, 9, s.k-1)
				}
				node, err := ops.MulMat(a, x)
				if err != nil {
					t.Fatal(err)
				}
				if err := mxCompute(t, b, node); err != nil {
					t.Fatal(err)
				}
				got := f32s(mem(node), 0, node.NumElements())
				xs := f32s(mem(x), 0, x.NumElements())
				rowBytes := 2 * int(s.k)
				for c := range s.n {
					y := make([]byte, rowBytes)
					for i, v := range xs[c*s.k:][:s.k] {
						binary.LittleEndian.PutUint16(y[2*i:], quant.FP32ToBF16(v))
					}
					for i := range s.m {
						want := gemv.BF16PairTwin(int(s.k), mem(a)[int(i)*rowBytes:], y)
						if o := c*s.m + i; !simdtest.SameFloat(got[o], want) {
							t.Fatalf("out[column %d, row %d] = %g, want %g", c, i, got[o], want)
						}
					}
				}
			})
		}
	}
}

// TestWithoutBF16 checks the table the vnni tier gets on a CPU without
// AVX-512 BF16: no bfloat16 pair kernel, bf16 weights widened as on the
// avx512 tier (the mat-vec kernel too), and the vnni table itself
// unchanged.
func TestWithoutBF16(t *testing.T) {
	if vnniKernels == nil {
		t.Skip("no vnni kernels in this build")
	}
	ks := withoutBF16(vnniKernels)
	for wt, g := range ks.gemm {
		if g.microBF16 != nil {
			t.Errorf("%v keeps its bfloat16 pair kernel", wt)
		}
	}
	if g := ks.gemm[quant.BF16]; g.widen == nil || g.micro2 == nil {
		t.Error("bf16 lost its widening path")
	}
	if ks.name != "vnni" {
		t.Errorf("name %q", ks.name)
	}
	if vnniKernels.gemm[quant.BF16].microBF16 == nil {
		t.Error("withoutBF16 changed the vnni table")
	}
	same := func(a, b gemvFunc) bool { return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer() }
	if !same(ks.gemv[quant.BF16], avx512Kernels.gemv[quant.BF16]) || !same(vnniKernels.gemv[quant.BF16], gemv.BF16DP) {
		t.Error("bf16 mat-vec products: want the avx512 tier's kernel without AVX-512 BF16, gemv.BF16DP with it")
	}
	if _, ok := ks.gemvPF[quant.BF16]; ok || !same(vnniKernels.gemvPF[quant.BF16], gemv.BF16DPPF) {
		t.Error("bf16 prefetching mat-vec kernel: want none without AVX-512 BF16, gemv.BF16DPPF with it")
	}
	x8f := func(ks *kernelSet) uintptr { return reflect.ValueOf(ks.x8[quant.BF16].f).Pointer() }
	if x8f(ks) != x8f(avx512Kernels) || x8f(vnniKernels) != reflect.ValueOf(gemv.X8BF16DP).Pointer() {
		t.Error("bf16 x8 products: want the avx512 tier's kernel without AVX-512 BF16, gemv.X8BF16DP with it")
	}
	for _, tr := range Tiers() {
		if tr.Name == "vnni" && tr.Supported && simdtest.HasBF16() != (tr.Without == "") {
			t.Errorf("vnni tier: Without %q on a CPU with AVX-512 BF16 %v", tr.Without, simdtest.HasBF16())
		}
	}
}

// TestBF16ActTable checks that the avx512 and vnni tiers convert bf16
// activation rows with the zmm converter (internal/quantize's tests hold
// it to quant.FP32ToBF16 bit for bit), not row by row in Go.
func TestBF16ActTable(t *testing.T) {
	for _, ks := range []*kernelSet{avx512Kernels, vnniKernels} {
		if f := ks.act[quant.BF16]; f == nil || reflect.ValueOf(f).Pointer() != reflect.ValueOf(quantize.BF16AVX512).Pointer() {
			t.Errorf("%s tier: bf16 activations are not converted by quantize.BF16AVX512", ks.name)
		}
	}
}
