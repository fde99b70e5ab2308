//go:build amd64 && !purego

package cpu

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/flashattn"
	"github.com/kernbench/kernbench/ops/cpu/internal/gemv"
	"github.com/kernbench/kernbench/ops/cpu/internal/getrows"
	"github.com/kernbench/kernbench/ops/cpu/internal/qgemm"
	"github.com/kernbench/kernbench/ops/cpu/internal/quantize"
	"github.com/kernbench/kernbench/ops/cpu/internal/rope"
	"github.com/kernbench/kernbench/ops/cpu/internal/sgemm"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/ssm"
	"github.com/kernbench/kernbench/ops/cpu/internal/vec"

	"github.com/kernbench/kernbench/quant"
)

// avx2Gemv lists the assembly four-row kernel the avx2 table must install
// for each weight type.
var avx2Gemv = []struct {
	wt  quant.Type
	asm gemvFunc
}{
	{quant.Q4_0, gemv.Q4_0AVX2},
	{quant.Q8_0, gemv.Q8_0AVX2},
	{quant.Q5_0, gemv.Q5_0AVX2},
	{quant.Q4_1, gemv.Q4_1AVX2},
	{quant.Q5_1, gemv.Q5_1AVX2},
	{quant.Q2_K, gemv.Q2_KAVX2},
	{quant.Q3_K, gemv.Q3_KAVX2},
	{quant.Q4_K, gemv.Q4_KAVX2},
	{quant.Q5_K, gemv.Q5_KAVX2},
	{quant.Q6_K, gemv.Q6_KAVX2},
	{quant.F16, gemv.F16AVX2},
	{quant.BF16, gemv.BF16AVX2},
	{quant.F32, gemv.F32AVX2},
	{quant.IQ4_NL, gemv.IQ4_NLAVX2},
	{quant.MXFP4, gemv.MXFP4AVX2},
	{quant.IQ4_XS, gemv.IQ4_XSAVX2},
}

// TestAVX2GemvTable checks that the avx2 table's four-row kernel of each
// weight type is that type's assembly kernel: present, and giving its
// results bit for bit on random rows (a missing entry, or one of another
// type's kernel, fails; so does the dot product wherever its rounding
// differs, as for q4_0, q5_0, q4_1, q5_1, bf16 and f32), and that it has
// no entry for a type this list lacks.
func TestAVX2GemvTable(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(91, 92))
	if len(avx2Kernels.gemv) != len(avx2Gemv) {
		t.Errorf("avx2 table has %d four-row kernels, want %d", len(avx2Kernels.gemv), len(avx2Gemv))
	}
	for _, c := range avx2Gemv {
		f := avx2Kernels.gemv[c.wt]
		if f == nil {
			t.Errorf("%v: no four-row kernel in the avx2 table", c.wt)
			continue
		}
		for trial := range 20 {
			nb := 1 + rng.IntN(12)
			n := nb * int(gemvRun(c.wt))
			ldx := int(mustRowSize(t, c.wt, n)) + rng.IntN(40)
			special := []float64{0, 0.05}[trial%2]
			x := gemvRows(rng, c.wt, nb, ldx, rng.IntN(64), special, nil)
			act := c.wt.VecDotType()
			y := simdRow(rng, act, n, rng.IntN(64), special)
			var dy []float32
			if act == quant.Q8_0 {
				dy = make([]float32, nb)
				for ib := range dy {
					dy[ib] = simd.HalfAt(y, ib*simd.BytesQ8_0)
				}
			}
			var got, want [4]float32
			f(nb, x, ldx, y, dy, &got)
			c.asm(nb, x, ldx, y, dy, &want)
			for r := range 4 {
				if !sameFloat(got[r], want[r]) {
					t.Fatalf("%v nb=%d row %d: table's kernel gives %g, the assembly kernel %g", c.wt, nb, r, got[r], want[r])
				}
			}
		}
	}
}

// TestAVX2TableFuncs checks entries of the avx2 table by function
// identity: each is its package's named wrapper of the assembly.
func TestAVX2TableFuncs(t *testing.T) {
	same := func(what string, got, want any) {
		t.Helper()
		if reflect.ValueOf(got).Pointer() != reflect.ValueOf(want).Pointer() {
			t.Errorf("avx2 table's %s is not the assembly wrapper", what)
		}
	}
	ks := avx2Kernels
	same("act[f16]", ks.act[quant.F16], quantize.F16AVX2)
	same("deq[f16]", ks.deq[quant.F16], dot.WidenF16AVX2)
	same("deq[bf16]", ks.deq[quant.BF16], dot.WidenBF16AVX2)
	same("dots[f32]", ks.dots[quant.F32].dot, dot.F32AVX2)
	same("dots[f16]", ks.dots[quant.F16].dot, dot.F16AVX2)
	same("dots[bf16]", ks.dots[quant.BF16].dot, dot.BF16AVX2)
	same("gemm[f32].micro", ks.gemm[quant.F32].micro, sgemm.MicroAVX2)
	same("vec.expSum", ks.vec.expSum, vec.ExpSumAVX2)
	same("vec.axpyQ8_0", ks.vec.axpyQ8_0, vec.AxpyQ8_0AVX2)
	same("elt.silu", ks.elt.silu, vec.SiLUAVX2)
	same("rope.neox", ks.rope.neox, rope.NeoXHeadsAVX2)
	same("ssm.scanSTile", ks.ssm.scanSTile, ssm.ScanSTileAVX2)
	same("ssm.expMul", ks.ssm.expMul, ssm.ExpMulAVX2)
	same("fa.scores", ks.fa.scores, flashattn.ScoresAVX2)
	same("fa.small.scores", ks.fa.small.scores, flashattn.ScoresSmallAVX2)
	for _, c := range avx2Gemv {
		same("gemv["+c.wt.String()+"]", ks.gemv[c.wt], c.asm)
	}
	same("gemvSide[q4_0]", ks.gemvSide[quant.Q4_0].f, gemv.SideQ4_0AVX2)
	same("dots[q4_K]", ks.dots[quant.Q4_K].dot, dot.Q4_KAVX2)
	same("gemm[q6_K].quad", ks.gemm[quant.Q6_K].quad, dot.QuadQ6_KAVX2)
	same("gemm[q4_0].qtile.kernel", ks.gemm[quant.Q4_0].qtile.kernel, qgemm.Q4_0AVX2)
	same("gemm[q4_K].ktile.kernel", ks.gemm[quant.Q4_K].ktile.kernel, qgemm.Q4_KAVX2)
	same("gemm[q5_K].ktile.kernel", ks.gemm[quant.Q5_K].ktile.kernel, qgemm.Q5_KAVX2)
	same("gemm[q6_K].ktile.kernel", ks.gemm[quant.Q6_K].ktile.kernel, qgemm.Q6_KAVX2)
	same("act[q8_K]", ks.act[quant.Q8_K], quantize.Q8_KAVX2)
	same("deq[q4_0]", ks.deq[quant.Q4_0], getrows.DeqQ4_0AVX2)
	same("dots[iq4_nl]", ks.dots[quant.IQ4_NL].dot, dot.IQ4_NLAVX2)
	same("dots[iq4_xs]", ks.dots[quant.IQ4_XS].dot, dot.IQ4_XSAVX2)
	same("dots[mxfp4]", ks.dots[quant.MXFP4].dot, dot.MXFP4AVX2)
	same("dots[tq1_0]", ks.dots[quant.TQ1_0].dot, dot.TQ1_0AVX2)
	same("dots[tq2_0]", ks.dots[quant.TQ2_0].dot, dot.TQ2_0AVX2)
	same("dots[iq2_xxs]", ks.dots[quant.IQ2_XXS].dot, dot.IQ2_XXSAVX2)
	same("dots[iq3_xxs]", ks.dots[quant.IQ3_XXS].dot, dot.IQ3_XXSAVX2)
	same("dots[iq3_s]", ks.dots[quant.IQ3_S].dot, dot.IQ3_SAVX2)
	same("dots[iq2_xs]", ks.dots[quant.IQ2_XS].dot, dot.IQ2_XSAVX2)
	same("dots[iq2_s]", ks.dots[quant.IQ2_S].dot, dot.IQ2_SAVX2)
	same("dots[iq1_s]", ks.dots[quant.IQ1_S].dot, dot.IQ1_SAVX2)
	same("dots[iq1_m]", ks.dots[quant.IQ1_M].dot, dot.IQ1_MAVX2)
	// The generic dot products fill in the types the tier lacks.
	same("dots[q8_K]", ks.dots[quant.Q8_K].dot, dotKernels[quant.Q8_K].dot)
	same("dots[q8_1]", ks.dots[quant.Q8_1].dot, dotKernels[quant.Q8_1].dot)
}
