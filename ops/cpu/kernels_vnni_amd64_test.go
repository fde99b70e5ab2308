//go:build amd64 && !purego

package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/qgemm"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// vnniQTiles are the VNNI panel kernels the vnni table installs, by
// weight type, beside the AVX2 ones the avx2 table keeps.
var vnniQTiles = []struct {
	wt         quant.Type
	avx2, vnni func(int, []byte, []byte, *[32]float32)
}{
	{quant.Q4_0, qgemm.Q4_0AVX2, qgemm.Q4_0VNNI},
	{quant.Q5_0, qgemm.Q5_0AVX2, qgemm.Q5_0VNNI},
	{quant.Q8_0, qgemm.Q8_0AVX2, qgemm.Q8_0VNNI},
	{quant.Q4_1, qgemm.Q4_1AVX2, qgemm.Q4_1VNNI},
	{quant.Q5_1, qgemm.Q5_1AVX2, qgemm.Q5_1VNNI},
}

// vnniKTiles are the VNNI K-format panel kernels the vnni table
// installs, beside the AVX2 ones.
var vnniKTiles = []struct {
	wt         quant.Type
	avx2, vnni func(int, []byte, []byte, int, *[32]float32)
}{
	{quant.Q4_K, qgemm.Q4_KAVX2, qgemm.Q4_KVNNI},
	{quant.Q5_K, qgemm.Q5_KAVX2, qgemm.Q5_KVNNI},
	{quant.Q6_K, qgemm.Q6_KAVX2, qgemm.Q6_KVNNI},
}

// TestVNNITableQTiles checks that the vnni table's panel kernels (q8
// and K formats) are the VNNI ones, with the rest of each entry
// (repacking, block sizes, minN, quad kernel) the avx2 table's, and that
// the avx2 and avx512 tables keep the AVX2 kernels.
func TestVNNITableQTiles(t *testing.T) {
	ptr := func(f any) uintptr { return reflect.ValueOf(f).Pointer() }
	for _, c := range vnniQTiles {
		for _, ks := range []*kernelSet{avx2Kernels, avx512Kernels} {
			if ptr(ks.gemm[c.wt].qtile.kernel) != ptr(c.avx2) {
				t.Errorf("%s table's %v panel kernel is not the AVX2 one", ks.name, c.wt)
			}
		}
		g, base := vnniKernels.gemm[c.wt], avx2Kernels.gemm[c.wt]
		if ptr(g.qtile.kernel) != ptr(c.vnni) {
			t.Errorf("vnni table's %v panel kernel is not the VNNI one", c.wt)
		}
		q, bq := *g.qtile, *base.qtile
		q.kernel, bq.kernel = nil, nil
		if c.wt == quant.Q8_0 {
			// The VNNI panel kernel pays from n = 4.
			if q.minN != 4 {
				t.Errorf("vnni table's q8_0 panel minN %d, want 4", q.minN)
			}
			q.minN = bq.minN
		}
		if ptr(q.repack) != ptr(bq.repack) || ptr(q.fromX8) != ptr(bq.fromX8) ||
			q.block != bq.block || q.gblock != bq.gblock || q.minN != bq.minN || q.biased != bq.biased {
			t.Errorf("vnni table's %v panel entry differs from avx2's beyond its kernel", c.wt)
		}
		if g.kind != base.kind || ptr(g.quad) != ptr(base.quad) {
			t.Errorf("vnni table's %v gemm entry differs from avx2's beyond its panel kernel", c.wt)
		}
	}
	for _, c := range vnniKTiles {
		for _, ks := range []*kernelSet{avx2Kernels, avx512Kernels} {
			if ptr(ks.gemm[c.wt].ktile.kernel) != ptr(c.avx2) {
				t.Errorf("%s table's %v K panel kernel is not the AVX2 one", ks.name, c.wt)
			}
		}
		g, base := vnniKernels.gemm[c.wt], avx2Kernels.gemm[c.wt]
		if ptr(g.ktile.kernel) != ptr(c.vnni) {
			t.Errorf("vnni table's %v K panel kernel is not the VNNI one", c.wt)
		}
		if g.ktile.block != base.ktile.block || g.ktile.minN != base.ktile.minN || ptr(g.ktile.repack) != ptr(base.ktile.repack) ||
			g.kind != base.kind || ptr(g.quad) != ptr(base.quad) {
			t.Errorf("vnni table's %v gemm entry differs from avx2's beyond its K panel kernel", c.wt)
		}
	}
}

// TestVNNIQTileMulMat checks that MUL_MAT on the vnni tier gives the avx2
// tier's outputs bit for bit for the panel formats, q8 and K (the
// kernels compute the same float32 steps from exact integer sums), over
// panel rows and columns left at the edges, k in several chunks, and 1
// or 3 threads, wherever both tiers take the panel path.
func TestVNNIQTileMulMat(t *testing.T) {
	simdtest.NeedVNNI(t)
	shapes := []struct{ k, m, n int64 }{
		{k: 256, m: 19, n: 13}, {k: 2 * gemmKC, m: 16, n: 8}, {k: 4096, m: 8, n: 37}, {k: 256, m: 9, n: 4},
	}
	var types []quant.Type
	for _, c := range vnniQTiles {
		types = append(types, c.wt)
	}
	for _, c := range vnniKTiles {
		types = append(types, c.wt)
	}
	for _, threads := range []int{1, 3} {
		outs := map[string][][]float64{}
		for _, tier := range []string{"avx2", "vnni"} {
			b, err := NewWithOptions(Options{Threads: threads, Tier: tier})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			rng := rand.New(rand.NewPCG(91, uint64(threads)))
			for _, wt := range types {
				for _, s := range shapes {
					a := mxLeaf(t, b, rng, "a", wt, s.k, s.m)
					x := mxLeaf(t, b, rng, "b", quant.F32, s.k, s.n)
					node, err := ops.MulMat(a, x)
					if err != nil {
						t.Fatal(err)
					}
					outs[tier] = append(outs[tier], mxOutputs(t, b, node))
				}
			}
		}
		i := 0
		for _, wt := range types {
			for _, s := range shapes {
				got, want := outs["vnni"][i], outs["avx2"][i]
				i++
				if q := avx2Kernels.gemm[wt].qtile; q != nil && s.n < q.minN {
					// The avx2 tier takes the quad kernel here (q8_0 at
					// n = 4), another rounding; TestMulMatGemm checks both.
					continue
				}
				name := fmt.Sprintf("%v/threads=%d/k%d_m%d_n%d", wt, threads, s.k, s.m, s.n)
				if len(got) != len(want) {
					t.Fatalf("%s: %d outputs, avx2 %d", name, len(got), len(want))
				}
				for j := range got {
					if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
						t.Fatalf("%s: output %d: vnni %g, avx2 %g", name, j, got[j], want[j])
					}
				}
			}
		}
	}
}

// TestAVX512TableIQ checks that the avx512 and vnni tables take the
// codebook formats' dot products in zmm, with the activation type of the avx2 table's
// entries, which keep the AVX2 kernels.
func TestAVX512TableIQ(t *testing.T) {
	ptr := func(f any) uintptr { return reflect.ValueOf(f).Pointer() }
	for wt, c := range map[quant.Type]struct{ avx2, avx512 vecDotFunc }{
		quant.IQ1_M:   {dot.IQ1_MAVX2, dot.IQ1_MAVX512},
		quant.IQ1_S:   {dot.IQ1_SAVX2, dot.IQ1_SAVX512},
		quant.IQ2_S:   {dot.IQ2_SAVX2, dot.IQ2_SAVX512},
		quant.IQ2_XXS: {dot.IQ2_XXSAVX2, dot.IQ2_XXSAVX512},
		quant.IQ2_XS:  {dot.IQ2_XSAVX2, dot.IQ2_XSAVX512},
		quant.IQ3_XXS: {dot.IQ3_XXSAVX2, dot.IQ3_XXSAVX512},
		quant.IQ3_S:   {dot.IQ3_SAVX2, dot.IQ3_SAVX512},
		quant.TQ2_0:   {dot.TQ2_0AVX2, dot.TQ2_0AVX512},
		quant.TQ1_0:   {dot.TQ1_0AVX2, dot.TQ1_0AVX512},
	} {
		if ptr(avx2Kernels.dots[wt].dot) != ptr(c.avx2) {
			t.Errorf("avx2 table's %v dot is not the AVX2 one", wt)
		}
		for _, ks := range []*kernelSet{avx512Kernels, vnniKernels} {
			if ptr(ks.dots[wt].dot) != ptr(c.avx512) {
				t.Errorf("%s table's %v dot is not the AVX-512 one", ks.name, wt)
			}
			if ks.dots[wt].actType != avx2Kernels.dots[wt].actType {
				t.Errorf("%s table's %v dot takes %v activations, the avx2 table's %v", ks.name, wt, ks.dots[wt].actType, avx2Kernels.dots[wt].actType)
			}
		}
	}
}
