//go:build amd64 && !purego

package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/gemv"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/ops/tuning"
	"github.com/kernbench/kernbench/quant"
)

// vnniGemvs are the VNNI four-row kernels the vnni table installs, by
// weight type, with the AVX2 kernels the avx2 and avx512 tables keep.
var vnniGemvs = []struct {
	wt         quant.Type
	avx2, vnni gemvFunc
}{
	{quant.Q4_K, gemv.Q4_KAVX2, gemv.Q4_KVNNI},
	{quant.Q5_K, gemv.Q5_KAVX2, gemv.Q5_KVNNI},
	{quant.Q6_K, gemv.Q6_KAVX2, gemv.Q6_KVNNI},
	{quant.Q4_0, gemv.Q4_0AVX2, gemv.Q4_0VNNI},
	{quant.Q5_0, gemv.Q5_0AVX2, gemv.Q5_0VNNI},
	{quant.Q4_1, gemv.Q4_1AVX2, gemv.Q4_1VNNI},
	{quant.Q5_1, gemv.Q5_1AVX2, gemv.Q5_1VNNI},
	{quant.Q8_0, gemv.Q8_0AVX2, gemv.Q8_0VNNI},
	{quant.Q2_K, gemv.Q2_KAVX2, gemv.Q2_KVNNI},
	{quant.Q3_K, gemv.Q3_KAVX2, gemv.Q3_KVNNI},
}

// TestVNNITableGemv checks that the vnni table's four-row kernels are the
// VNNI ones and that the avx2 and avx512 tables keep the AVX2 ones, and
// likewise for the q4_0 side kernel.
func TestVNNITableGemv(t *testing.T) {
	ptr := func(f any) uintptr { return reflect.ValueOf(f).Pointer() }
	for _, c := range vnniGemvs {
		for _, ks := range []*kernelSet{avx2Kernels, avx512Kernels} {
			if ptr(ks.gemv[c.wt]) != ptr(c.avx2) {
				t.Errorf("%s table's %v four-row kernel is not the AVX2 one", ks.name, c.wt)
			}
		}
		if ptr(vnniKernels.gemv[c.wt]) != ptr(c.vnni) {
			t.Errorf("vnni table's %v four-row kernel is not the VNNI one", c.wt)
		}
	}
	for _, ks := range []*kernelSet{avx2Kernels, avx512Kernels} {
		if ptr(ks.gemvSide[quant.Q4_0].f) != ptr(gemv.SideQ4_0AVX2) {
			t.Errorf("%s table's q4_0 side kernel is not the AVX2 one", ks.name)
		}
	}
	v, a := vnniKernels.gemvSide[quant.Q4_0], avx2Kernels.gemvSide[quant.Q4_0]
	if ptr(v.f) != ptr(gemv.SideQ4_0VNNI) || v.per != a.per || ptr(v.prep) != ptr(a.prep) {
		t.Errorf("vnni table's q4_0 side kernel is not SideQ4_0VNNI with avx2's side data")
	}
}

// TestVNNITableDots checks that the vnni table's q4_K, q5_K, q6_K, q4_0
// and q8_0 dot products are the VNNI ones (activation type kept) and that
// the avx2 and avx512 tables keep the AVX2 ones.
func TestVNNITableDots(t *testing.T) {
	ptr := func(f any) uintptr { return reflect.ValueOf(f).Pointer() }
	for _, c := range []struct {
		wt         quant.Type
		avx2, vnni vecDotFunc
	}{
		{quant.Q4_K, dot.Q4_KAVX2, dot.Q4_KVNNI},
		{quant.Q5_K, dot.Q5_KAVX2, dot.Q5_KVNNI},
		{quant.Q6_K, dot.Q6_KAVX2, dot.Q6_KVNNI},
		{quant.Q4_0, dot.Q4_0AVX2, dot.Q4_0VNNI},
		{quant.Q8_0, dot.Q8_0AVX2, dot.Q8_0VNNI},
	} {
		for _, ks := range []*kernelSet{avx2Kernels, avx512Kernels} {
			if ptr(ks.dots[c.wt].dot) != ptr(c.avx2) {
				t.Errorf("%s table's %v dot product is not the AVX2 one", ks.name, c.wt)
			}
		}
		v := vnniKernels.dots[c.wt]
		if ptr(v.dot) != ptr(c.vnni) || v.actType != avx2Kernels.dots[c.wt].actType {
			t.Errorf("vnni table's %v dot product is not the VNNI one with avx2's activation type", c.wt)
		}
	}
}

// TestVNNITableQuads checks that the vnni table's q2_K and q3_K quad
// kernels are the VNNI ones, the rest of each gemm entry avx2's, and that
// the avx2 and avx512 tables keep the AVX2 ones.
func TestVNNITableQuads(t *testing.T) {
	ptr := func(f any) uintptr { return reflect.ValueOf(f).Pointer() }
	for _, c := range []struct {
		wt         quant.Type
		avx2, vnni quadFunc
	}{
		{quant.Q2_K, dot.QuadQ2_KAVX2, dot.QuadQ2_KVNNI},
		{quant.Q3_K, dot.QuadQ3_KAVX2, dot.QuadQ3_KVNNI},
	} {
		for _, ks := range []*kernelSet{avx2Kernels, avx512Kernels} {
			if ptr(ks.gemm[c.wt].quad) != ptr(c.avx2) {
				t.Errorf("%s table's %v quad kernel is not the AVX2 one", ks.name, c.wt)
			}
		}
		v, a := vnniKernels.gemm[c.wt], avx2Kernels.gemm[c.wt]
		if ptr(v.quad) != ptr(c.vnni) || v.kind != a.kind || v.ktile != a.ktile || v.qtile != a.qtile {
			t.Errorf("vnni table's %v gemm entry is not avx2's with the VNNI quad kernel", c.wt)
		}
	}
}

// TestVNNIGemvMulMat checks that MUL_MAT with one to three activation
// rows (and 5 and 9: the quad and panel paths) gives the same outputs
// bit for bit on the avx2 and vnni tiers for the types whose four-row
// kernel the vnni tier replaces (its kernels equal the AVX2 ones), with
// the weights repacked or not.
func TestVNNIGemvMulMat(t *testing.T) {
	simdtest.NeedVNNI(t)
	shapes := []struct{ k, m, n int64 }{
		{k: 256, m: 19, n: 1}, {k: 1024, m: 16, n: 2}, {k: 768, m: 9, n: 3}, {k: 4096, m: 8, n: 1},
		{k: 512, m: 7, n: 5}, {k: 256, m: 12, n: 9},
	}
	for _, noRepack := range []bool{true, false} {
		outs := map[string][][]float64{}
		for _, tier := range []string{"avx2", "vnni"} {
			b, err := NewWithOptions(Options{Threads: 2, Tier: tier, NoRepack: noRepack})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			rng := rand.New(rand.NewPCG(93, 94))
			for _, c := range vnniGemvs {
				for _, s := range shapes {
					a := mxLeaf(t, b, rng, "a", c.wt, s.k, s.m)
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
		for _, c := range vnniGemvs {
			for _, s := range shapes {
				got, want := outs["vnni"][i], outs["avx2"][i]
				i++
				if q := avx2Kernels.gemm[c.wt].qtile; q != nil && s.n >= 4 && s.n < q.minN {
					// The avx2 tier takes the quad kernel here, the vnni
					// tier the panel kernel (q8_0 at n = 4-7): another
					// rounding (see TestVNNIQTileMulMat).
					continue
				}
				name := fmt.Sprintf("%v/noRepack=%v/k%d_m%d_n%d", c.wt, noRepack, s.k, s.m, s.n)
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

// TestGemv512Off checks Gemv512 = 0: a backend of the vnni or avx512
// tier opened with it runs the AVX2 four-row kernels of plain weights
// (vnniGemvs' types, the q4_0 side kernel, f16; f32 and bf16 keep
// theirs; nothing else changes, the tier's table included), one opened
// with 1 or with the defaults the tier's own; and MUL_MAT of one
// activation row on plain weights gives the same bits either way.
func TestGemv512Off(t *testing.T) {
	simdtest.NeedVNNI(t)
	ptr := func(f any) uintptr { return reflect.ValueOf(f).Pointer() }
	for _, tier := range []*kernelSet{avx512Kernels, vnniKernels} {
		open := func(v tuning.Values) *Backend { return openTuned(t, tier.name, v) }
		off, on, def := open(tuning.Values{Gemv512.Name: 0}), open(tuning.Values{Gemv512.Name: 1}), open(tuning.Values{})
		for _, c := range vnniGemvs {
			if ptr(off.kern.gemv[c.wt]) != ptr(c.avx2) {
				t.Errorf("%s, gemv_512 0: %v four-row kernel is not the AVX2 one", tier.name, c.wt)
			}
		}
		for _, wt := range []quant.Type{quant.F16, quant.F32, quant.BF16} {
			want := tier.gemv[wt]
			if wt == quant.F16 {
				want = gemv.F16AVX2
			}
			if ptr(off.kern.gemv[wt]) != ptr(want) {
				t.Errorf("%s, gemv_512 0: %v four-row kernel %v", tier.name, wt, runtime.FuncForPC(ptr(off.kern.gemv[wt])).Name())
			}
		}
		if ptr(tier.gemv[quant.F16]) != ptr(gemv.F16AVX512) {
			t.Errorf("%s table's f16 four-row kernel is not the zmm one", tier.name)
		}
		for wt, f := range tier.gemv {
			for _, b := range []*Backend{on, def} {
				if ptr(b.kern.gemv[wt]) != ptr(f) {
					t.Errorf("%s, gemv_512 %d: %v four-row kernel is not the table's", tier.name, b.tuned.values.Get(Gemv512), wt)
				}
			}
		}
		if ptr(off.kern.gemvSide[quant.Q4_0].f) != ptr(gemv.SideQ4_0AVX2) || ptr(on.kern.gemvSide[quant.Q4_0].f) != ptr(tier.gemvSide[quant.Q4_0].f) {
			t.Errorf("%s: q4_0 side kernels: gemv_512 0 takes AVX2's, 1 the table's", tier.name)
		}
		if ptr(off.kern.dots[quant.Q4_K].dot) != ptr(tier.dots[quant.Q4_K].dot) || ptr(off.kern.x8[quant.Q4_K].f) != ptr(tier.x8[quant.Q4_K].f) ||
			ptr(off.kern.gemvLLC[quant.F16]) != ptr(tier.gemvLLC[quant.F16]) || off.kern.name != tier.name {
			t.Errorf("%s: gemv_512 0 changed more than the four-row kernels", tier.name)
		}
		types := []quant.Type{quant.F16}
		for _, c := range vnniGemvs {
			types = append(types, c.wt)
		}
		for _, wt := range types {
			sameMulMat(t, tier.name+", gemv_512 0 and 1", wt, 1, off, on)
		}
	}
}

// TestGemvPrefetch checks GemvPrefetch: a backend of the avx512 or vnni
// tier opened with 1 runs the prefetching forms of f32's four-row kernel
// and (vnni, with AVX-512 BF16) bf16's, alone or with Gemv512 = 0, and
// every other four-row kernel as it would without; one opened with 0 or
// the defaults the table's; and MUL_MAT of one activation row on plain
// f32 and bf16 weights gives the same bits either way.
func TestGemvPrefetch(t *testing.T) {
	simdtest.NeedAVX512(t)
	ptr := func(f any) uintptr { return reflect.ValueOf(f).Pointer() }
	for _, tier := range []*kernelSet{avx512Kernels, vnniKernels} {
		if tier == vnniKernels && !simdtest.HasVNNI() {
			continue
		}
		open := func(v tuning.Values) *Backend { return openTuned(t, tier.name, v) }
		on, off, def := open(tuning.Values{GemvPrefetch.Name: 1}), open(tuning.Values{GemvPrefetch.Name: 0}), open(tuning.Values{})
		both, only512 := open(tuning.Values{GemvPrefetch.Name: 1, Gemv512.Name: 0}), open(tuning.Values{Gemv512.Name: 0})
		want := map[quant.Type]gemvFunc{quant.F32: gemv.F32AVX512PF}
		if tier == vnniKernels && simdtest.HasBF16() {
			want[quant.BF16] = gemv.BF16DPPF
		}
		if len(on.kern.gemvPF) != len(want) {
			t.Errorf("%s: %d prefetching four-row kernels, want %d", tier.name, len(on.kern.gemvPF), len(want))
		}
		for wt, f := range on.kern.gemv {
			w, ok := want[wt]
			if !ok {
				w = def.kern.gemv[wt]
			}
			if ptr(f) != ptr(w) {
				t.Errorf("%s, gemv_prefetch 1: %v four-row kernel %v", tier.name, wt, runtime.FuncForPC(ptr(f)).Name())
			}
			if ptr(off.kern.gemv[wt]) != ptr(def.kern.gemv[wt]) {
				t.Errorf("%s, gemv_prefetch 0: %v four-row kernel is not the default one", tier.name, wt)
			}
			w, ok = want[wt]
			if !ok {
				w = only512.kern.gemv[wt]
			}
			if ptr(both.kern.gemv[wt]) != ptr(w) {
				t.Errorf("%s, gemv_prefetch 1 and gemv_512 0: %v four-row kernel %v", tier.name, wt, runtime.FuncForPC(ptr(both.kern.gemv[wt])).Name())
			}
		}
		if ptr(def.kern.gemv[quant.F32]) != ptr(gemv.F32AVX512) || ptr(tier.gemv[quant.F32]) != ptr(gemv.F32AVX512) {
			t.Errorf("%s: gemv_prefetch 1 changed the default backend or the tier's table", tier.name)
		}
		for wt := range want {
			sameMulMat(t, tier.name+", gemv_prefetch 0 and 1", wt, 1, off, on)
		}
	}
}

// openTuned opens a two-thread backend of the named tier with the tuned
// values v and without x8 copies, closed when the test ends.
func openTuned(t *testing.T, tier string, v tuning.Values) *Backend {
	t.Helper()
	b, err := NewWithOptions(Options{Threads: 2, Tier: tier, NoRepack: true, Tuned: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// sameMulMat checks that backends a and b give the same bits for
// MUL_MAT of 20 plain rows of 512 weights of type wt by n activation
// rows.
func sameMulMat(t *testing.T, what string, wt quant.Type, n int64, a, b *Backend) {
	t.Helper()
	var outs [2][]float64
	for i, be := range []*Backend{a, b} {
		rng := rand.New(rand.NewPCG(5, 6))
		w := mxLeaf(t, be, rng, "a", wt, 512, 20)
		x := mxLeaf(t, be, rng, "b", quant.F32, 512, n)
		node, err := ops.MulMat(w, x)
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = mxOutputs(t, be, node)
	}
	for j := range outs[0] {
		if math.Float64bits(outs[0][j]) != math.Float64bits(outs[1][j]) {
			t.Errorf("%s, %v: MUL_MAT n=%d differs", what, wt, n)
			return
		}
	}
}

// TestKTileVNNIOff checks KTileVNNI = 0: a vnni backend opened with it
// runs AVX2's K-format panel kernels (q4_K, q5_K, q6_K) and the VNNI
// ones of the other formats, the tier's table untouched; one opened with
// 1 or the defaults the VNNI ones; and MUL_MAT from 32 activation rows
// gives the same bits either way.
func TestKTileVNNIOff(t *testing.T) {
	simdtest.NeedVNNI(t)
	ptr := func(f any) uintptr { return reflect.ValueOf(f).Pointer() }
	off, on, def := openTuned(t, "vnni", tuning.Values{KTileVNNI.Name: 0}), openTuned(t, "vnni", tuning.Values{KTileVNNI.Name: 1}), openTuned(t, "vnni", tuning.Values{})
	for _, c := range vnniKTiles {
		if ptr(off.kern.gemm[c.wt].ktile.kernel) != ptr(c.avx2) {
			t.Errorf("ktile_vnni 0: %v panel kernel is not AVX2's", c.wt)
		}
		for _, b := range []*Backend{on, def} {
			if ptr(b.kern.gemm[c.wt].ktile.kernel) != ptr(c.vnni) {
				t.Errorf("ktile_vnni %d: %v panel kernel is not the VNNI one", b.tuned.values.Get(KTileVNNI), c.wt)
			}
		}
		if ptr(vnniKernels.gemm[c.wt].ktile.kernel) != ptr(c.vnni) {
			t.Errorf("ktile_vnni 0 changed the vnni table's %v panel kernel", c.wt)
		}
		sameMulMat(t, "vnni, ktile_vnni 0 and 1", c.wt, 32, off, on)
	}
	for _, c := range vnniQTiles {
		if ptr(off.kern.gemm[c.wt].qtile.kernel) != ptr(c.vnni) {
			t.Errorf("ktile_vnni 0: %v's q8 panel kernel is not the VNNI one", c.wt)
		}
	}
	if fmt.Sprint(off.kern.gemv, off.kern.gemvSide) != fmt.Sprint(def.kern.gemv, def.kern.gemvSide) || off.kern.name != "vnni" {
		t.Error("ktile_vnni 0 changed more than the K-format panel kernels")
	}
}
