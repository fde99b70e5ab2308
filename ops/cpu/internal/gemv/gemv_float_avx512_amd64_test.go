//go:build amd64 && !purego

package gemv

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// TestFloatAVX512Twins checks the zmm float four-row kernels (f32's with
// and without its prefetch) against their twins and their AVX2 kernels
// bit for bit over random run counts (odd and even: f16 and bf16 take
// two runs a step), row strides, offsets and values (NaN, Inf and
// denormals included).
func TestFloatAVX512Twins(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(59, 60))
	for _, c := range []struct {
		wt        quant.Type
		zmm, avx2 Func
		twin      twinFunc
	}{
		{quant.F16, F16AVX512, F16AVX2, F16Twin},
		{quant.BF16, BF16AVX512, BF16AVX2, BF16Twin},
		{quant.F32, F32AVX512, F32AVX2, F32Twin},
		{quant.F32, F32AVX512PF, F32AVX2, F32Twin},
	} {
		for trial := range 300 {
			nb, ldx, x, y := floatTrial(rng, c.wt, trial)
			n := nb * F16Run
			got := [4]float32{float32(math.NaN()), 1, 2, 3}
			var want [4]float32
			c.zmm(nb, x, ldx, y, nil, &got)
			c.avx2(nb, x, ldx, y, nil, &want)
			what := fmt.Sprintf("%v nb=%d ldx=%d", c.wt, nb, ldx)
			checkRows(t, what+" (avx2)", &got, func(r int) float32 { return want[r] })
			checkRows(t, what+" (twin)", &got, func(r int) float32 { return c.twin(n, x[r*ldx:], y) })
		}
	}
}

// TestBF16DPTwin checks the VDPBF16PS four-row kernel row by row against
// BF16PairTwin, and its prefetching form BF16DPPF against it, bit for bit, over random run counts (odd ones end in a
// half line), row strides, offsets and values: NaN, Inf, denormals
// (which VDPBF16PS reads as zero) and products that overflow.
func TestBF16DPTwin(t *testing.T) {
	simdtest.NeedBF16(t)
	rng := rand.New(rand.NewPCG(53, 54))
	for trial := range 400 {
		nb, ldx, x, y := floatTrial(rng, quant.BF16, trial)
		n := nb * F16Run
		got := [4]float32{float32(math.NaN()), 1, 2, 3}
		what := fmt.Sprintf("trial %d nb=%d ldx=%d", trial, nb, ldx)
		BF16DP(nb, x, ldx, y, nil, &got)
		checkRows(t, what, &got, func(r int) float32 { return BF16PairTwin(n, x[r*ldx:], y) })
		pf := [4]float32{float32(math.NaN()), 1, 2, 3}
		BF16DPPF(nb, x, ldx, y, nil, &pf)
		checkRows(t, what+" (BF16DPPF)", &pf, func(r int) float32 { return got[r] })
	}
}

// TestBF16DPFlushes checks the two properties by which the kernel and its
// twin differ from BF16AVX2, on values where they show: a denormal
// weight reads as zero, and a sum that becomes denormal is written as
// zero; and that on ordinary values the two kernels agree to float32
// rounding.
func TestBF16DPFlushes(t *testing.T) {
	simdtest.NeedBF16(t)
	const n = 4 * F16Run
	ldx := 2 * n
	bf := func(f float32) uint16 { return uint16(math.Float32bits(f) >> 16) }
	fill := func(b []byte, v func(i int) float32) {
		for i := 0; i < len(b)/2; i++ {
			binary.LittleEndian.PutUint16(b[2*i:], bf(v(i)))
		}
	}
	x, y := make([]byte, 4*ldx), make([]byte, 2*n)
	// Row 0: one denormal weight, 2^-127, against 2^100 (its product
	// 2^-27 if read). Row 1: 2^-63 * 2^-63 = 2^-126, then 2^-64 * -2^-63
	// in the same lane (a denormal sum, 2^-127, if kept).
	// Rows 2, 3: ordinary values.
	fill(y, func(i int) float32 { return []float32{0x1p100, 0x1p-63, 1, -1}[i%4] })
	fill(x[:ldx], func(i int) float32 {
		if i == 0 {
			return 0x1p-126 / 2
		}
		return 0
	})
	fill(x[ldx:2*ldx], func(i int) float32 {
		switch i {
		case 1:
			return 0x1p-63
		case 33:
			return -0x1p-64
		}
		return 0
	})
	rng := rand.New(rand.NewPCG(55, 56))
	fill(x[2*ldx:], func(int) float32 { return float32(rng.NormFloat64()) })
	var dp, avx2 [4]float32
	BF16DP(n/F16Run, x, ldx, y, nil, &dp)
	BF16AVX2(n/F16Run, x, ldx, y, nil, &avx2)
	if dp[0] != 0 || avx2[0] != 0x1p-27 {
		t.Errorf("denormal weight times 2^100: dp %g, avx2 %g; want 0 and 2^-27", dp[0], avx2[0])
	}
	if dp[1] != 0 || avx2[1] != 0x1p-127 {
		t.Errorf("denormal sum: dp %g, avx2 %g; want 0 and 2^-127", dp[1], avx2[1])
	}
	for r := 2; r < 4; r++ {
		if d := math.Abs(float64(dp[r] - avx2[r])); d > 1e-5*math.Abs(float64(avx2[r]))+1e-6 {
			t.Errorf("row %d: dp %g, avx2 %g", r, dp[r], avx2[r])
		}
	}
	checkRows(t, "flushes", &dp, func(r int) float32 { return BF16PairTwin(n, x[r*ldx:], y) })
}

// TestBF16DPBounds checks that a row or activation shorter than nb runs
// panics rather than being read past its end.
func TestBF16DPBounds(t *testing.T) {
	simdtest.NeedBF16(t)
	const nb = 3
	ldx := 2 * nb * F16Run
	var out [4]float32
	for _, c := range []struct {
		name string
		x, y int
	}{{"short x", 4*ldx - 1, 2 * nb * F16Run}, {"short y", 4 * ldx, 2*nb*F16Run - 1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", c.name)
				}
			}()
			BF16DP(nb, make([]byte, c.x), ldx, make([]byte, c.y), nil, &out)
		}()
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic from BF16DPPF", c.name)
				}
			}()
			BF16DPPF(nb, make([]byte, c.x), ldx, make([]byte, c.y), nil, &out)
		}()
	}
}

// BenchmarkFloatGemv compares one thread's float matrix-vector products
// with the AVX2 kernels, their zmm forms and (bf16) the VDPBF16PS kernel:
// l2 (256 x 2048, the weights in L2) and dram (4096 x 14336, 117 MB in
// f16 and bf16, a feed-forward down projection's shape, streamed from
// DRAM). Alternate the kernels with -count and take the ratio of
// medians.
func BenchmarkFloatGemv(b *testing.B) {
	simdtest.NeedAVX512(b)
	rng := rand.New(rand.NewPCG(57, 58))
	type kernel struct {
		name string
		f    Func
	}
	for _, c := range []struct {
		wt      quant.Type
		kernels []kernel
	}{
		{quant.F16, []kernel{{"avx2", F16AVX2}, {"avx512", F16AVX512}}},
		{quant.BF16, []kernel{{"avx2", BF16AVX2}, {"avx512", BF16AVX512}, {"dp", BF16DP}, {"dppf", BF16DPPF}}},
		{quant.F32, []kernel{{"avx2", F32AVX2}, {"avx512", F32AVX512}, {"avx512pf", F32AVX512PF}}},
	} {
		for _, sz := range []struct {
			name    string
			rows, n int
		}{{"l2", 256, 2048}, {"dram", 4096, 14336}} {
			ldx := int(c.wt.TypeSize()) * sz.n
			x := simdtest.Row(rng, c.wt, sz.rows*sz.n, 0, 0)
			y := simdtest.Row(rng, c.wt, sz.n, 0, 0)
			nb := sz.n / F16Run
			for _, k := range c.kernels {
				if (k.name == "dp" || k.name == "dppf") && !simdtest.HasBF16() {
					continue
				}
				b.Run(fmt.Sprintf("%v/%s/%s", c.wt, sz.name, k.name), func(b *testing.B) {
					var out [4]float32
					b.SetBytes(int64(len(x)))
					for b.Loop() {
						for r := 0; r < sz.rows; r += 4 {
							k.f(nb, x[r*ldx:], ldx, y, nil, &out)
						}
					}
				})
			}
		}
	}
}
