//go:build amd64 && !purego

package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/flashattn"
	"github.com/kernbench/kernbench/quant"
)

// faSmallCases are FLASH_ATTN_EXT shapes that take the small-head
// kernels: causal GQA prefill past one tile (tiles and runs of 32 keys
// with a tail), scattered masks with a fully masked query and sinks,
// ALiBi, no mask, value sizes other than the head size, decode (GQA and
// not), a batch dimension with a broadcast mask, a permuted query, and
// fewer keys than a step of the kernels.
var faSmallCases = []faCase{
	{name: "causal-gqa-d8", d: 8, dv: 8, nQ: 40, nKV: 300, nHead: 8, nHeadKV: 4, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1},
	{name: "causal-d16", d: 16, dv: 16, nQ: 70, nKV: 270, nHead: 2, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1},
	{name: "scattered-sinks-d8", d: 8, dv: 8, nQ: 10, nKV: 133, nHead: 2, nHeadKV: 1, q3: 1, k3: 1, mask: quant.F16, maskedQuery: 4, sinks: true},
	{name: "alibi-d16-dv8", d: 16, dv: 8, nQ: 7, nKV: 66, nHead: 4, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, maskedQuery: -1, params: ops.FlashAttnParams{Scale: 0.25, MaxBias: 8}},
	{name: "nomask-d8-dv16", d: 8, dv: 16, nQ: 6, nKV: 65, nHead: 2, nHeadKV: 1, q3: 2, k3: 1, noMask: true, maskedQuery: -1},
	{name: "decode-gqa-d8", d: 8, dv: 8, nQ: 1, nKV: 150, nHead: 8, nHeadKV: 4, q3: 1, k3: 1, mask: quant.F16, maskedQuery: -1},
	{name: "decode-d16-sinks", d: 16, dv: 16, nQ: 1, nKV: 37, nHead: 2, nHeadKV: 2, q3: 1, k3: 1, noMask: true, maskedQuery: -1, sinks: true},
	{name: "dim3-d8", d: 8, dv: 8, nQ: 3, nKV: 40, nHead: 2, nHeadKV: 1, q3: 4, k3: 2, mask: quant.F16, m3: 2, maskedQuery: -1},
	{name: "permuted-q-d16", d: 16, dv: 16, nQ: 5, nKV: 9, nHead: 4, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, maskedQuery: -1, permQ: true},
	{name: "three-keys-d8", d: 8, dv: 8, nQ: 3, nKV: 3, nHead: 2, nHeadKV: 2, q3: 1, k3: 1, noMask: true, maskedQuery: -1},
}

// faSmallOut computes case c (operands from seed, f16 K and V) with the
// kernel set ks and the given threads and returns a copy of the output;
// it fails the test unless the small-head kernels were used.
func faSmallOut(t *testing.T, ks *kernelSet, c faCase, seed uint64, threads int) []float32 {
	t.Helper()
	b, err := NewWithOptions(Options{Threads: threads, Tier: "avx2"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.kern = ks
	node := faBuild(t, b, rand.New(rand.NewPCG(seed, 7)), c, quant.F16, quant.F16)
	if err := mxCompute(t, b, node); err != nil {
		t.Fatal(err)
	}
	if b.fa.small == nil {
		t.Fatal("small-head kernels not used")
	}
	return append([]float32(nil), f32s(mem(node), 0, node.NumElements())...)
}

// TestFlashAttnSmall checks FLASH_ATTN_EXT with the small-head kernels:
// the same bits at 1, 2 and 3 threads (which group the rows differently
// into items), the same bits with the kernels' Go twins in place of the
// assembly, and within the reference tolerance.
func TestFlashAttnSmall(t *testing.T) {
	needAVX2(t)
	twins := avx2Kernels.extend("avx2-small-twins")
	fa := *avx2Kernels.fa
	fa.small = &faSmallKernels{kt: flashattn.KTTwin, scores: flashattn.ScoresSmallTwin, values: flashattn.ValuesSmallTTwin}
	twins.fa = &fa
	rng := rand.New(rand.NewPCG(81, 82))
	for _, c := range faSmallCases {
		if c.params.Scale == 0 {
			c.params.Scale = 0.3
		}
		seed := rng.Uint64()
		t.Run(c.name, func(t *testing.T) {
			want := faSmallOut(t, avx2Kernels, c, seed, 1)
			check := func(what string, got []float32) {
				t.Helper()
				for i := range want {
					if !sameFloat(got[i], want[i]) {
						t.Fatalf("%s: element %d: %g, 1 thread %g", what, i, got[i], want[i])
					}
				}
			}
			for _, threads := range []int{2, 3} {
				check(fmt.Sprintf("%d threads", threads), faSmallOut(t, avx2Kernels, c, seed, threads))
			}
			check("twins", faSmallOut(t, twins, c, seed, 2))
			b, err := NewWithOptions(Options{Threads: 2, Tier: "avx2"})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			node := faBuild(t, b, rand.New(rand.NewPCG(seed, 7)), c, quant.F16, quant.F16)
			mxCheck(t, b, node, faTol(quant.F16))
		})
	}
}

// TestFlashAttnSmallDecodeAsPrefill checks that a query computed alone
// (decode: its row of Q and of the mask as views) gives the same bits as
// in a prefill batch with the small-head kernels: a row's sums do not
// depend on the rows computed with it.
func TestFlashAttnSmallDecodeAsPrefill(t *testing.T) {
	needAVX2(t)
	b, err := NewWithOptions(Options{Threads: 2, Tier: "avx2"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, d := range []int64{8, 16} {
		c := faCase{d: d, dv: d, nQ: 70, nKV: 300, nHead: 8, nHeadKV: 4, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1, params: ops.FlashAttnParams{Scale: 0.3}}
		node := faBuild(t, b, rand.New(rand.NewPCG(85, uint64(d))), c, quant.F16, quant.F16)
		if err := mxCompute(t, b, node); err != nil {
			t.Fatal(err)
		}
		batch := append([]float32(nil), f32s(mem(node), 0, node.NumElements())...)
		q, mask := node.Src[ops.FAQ], node.Src[ops.FAMask]
		for _, iq := range []int64{0, 33, c.nQ - 1} {
			q1, err := ops.View(q, []int64{d, 1, c.nHead, 1}, []int64{0, q.Nb[1], q.Nb[2], q.Nb[3]}, iq*q.Nb[1])
			if err != nil {
				t.Fatal(err)
			}
			m1, err := ops.View(mask, []int64{c.nKV, 1, 1, 1}, []int64{0, mask.Nb[1], mask.Nb[2], mask.Nb[3]}, iq*mask.Nb[1])
			if err != nil {
				t.Fatal(err)
			}
			one, err := ops.FlashAttnExt(q1, node.Src[ops.FAK], node.Src[ops.FAV], m1, nil, c.params)
			if err != nil {
				t.Fatal(err)
			}
			if err := mxCompute(t, b, one); err != nil {
				t.Fatal(err)
			}
			if b.fa.small == nil {
				t.Fatal("small-head kernels not used")
			}
			got := f32s(mem(one), 0, one.NumElements())
			for h := range c.nHead {
				for e := range c.dv {
					g, w := got[h*c.dv+e], batch[c.dv*(h+c.nHead*iq)+e]
					if !sameFloat(g, w) {
						t.Fatalf("d %d query %d head %d element %d: alone %g, in the batch %g", d, iq, h, e, g, w)
					}
				}
			}
		}
	}
}

// TestFlashAttnSmallMaskedNaN is TestFlashAttnBlockMaskedNaN at head
// sizes 8 and 16, which take the small-head kernels: keys masked for a
// row never reach it, even when their K and V rows are NaN and other
// rows of its item take them (against the row path, NaN for NaN).
func TestFlashAttnSmallMaskedNaN(t *testing.T) {
	needAVX2(t)
	for _, d := range []int64{8, 16} {
		c := faCase{d: d, dv: d, nQ: 24, nKV: 90, nHead: 2, nHeadKV: 1, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1, params: ops.FlashAttnParams{Scale: 0.125}}
		t.Run(fmt.Sprintf("d%d", d), func(t *testing.T) {
			faMaskedNaN(t, c, []int64{70, 71, 72, 73, 88, 89}, [2]quant.Type{quant.F16, quant.F16})
		})
	}
}

// TestFlashAttnSmallNonFinite plants a NaN or Inf in Q, K, V, the mask
// or a sink of a causal GQA prefill at head size 8 and checks that the
// small-head kernels give NaN and Inf where the row path does, and
// close values elsewhere.
func TestFlashAttnSmallNonFinite(t *testing.T) {
	needAVX2(t)
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	c := faCase{d: 8, dv: 8, nQ: 20, nKV: 40, nHead: 4, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1, sinks: true, params: ops.FlashAttnParams{Scale: 0.3}}
	plants := []struct {
		name string
		src  int
		i    int64 // element index in the source
		v    float32
	}{
		{"q NaN", ops.FAQ, 8*20*1 + 8*5 + 3, nan}, // head 1, query 5
		{"k NaN", ops.FAK, 8*30 + 2, nan},         // key 30, K/V head 0
		{"v Inf", ops.FAV, 8*40 + 8*12 + 4, inf},  // key 12, K/V head 1
		{"v NaN", ops.FAV, 8*7 + 1, nan},          // key 7, K/V head 0
		{"mask NaN", ops.FAMask, 40*9 + 3, nan},   // query 9, key 3
		{"sink NaN", ops.FASinks, 2, nan},         // head 2
		{"sink Inf", ops.FASinks, 3, inf},         // head 3
		{"k NaN late", ops.FAK, 8*39 + 1, nan},    // key 39: seen by the last query only
	}
	for _, pl := range plants {
		t.Run(pl.name, func(t *testing.T) {
			var outs [2][]float32
			for i, rows := range []bool{true, false} {
				faNoBlock = rows
				b, err := NewWithOptions(Options{Threads: 2, Tier: "avx2"})
				if err != nil {
					t.Fatal(err)
				}
				node := faBuild(t, b, rand.New(rand.NewPCG(87, 88)), c, quant.F16, quant.F16)
				src := node.Src[pl.src]
				raw, err := src.HostBytes()
				if err != nil {
					t.Fatal(err)
				}
				if src.Type == quant.F16 {
					h := quant.FP32ToFP16(pl.v)
					raw[2*pl.i], raw[2*pl.i+1] = byte(h), byte(h>>8)
				} else {
					f32s(raw, 0, src.NumElements())[pl.i] = pl.v
				}
				if err := mxCompute(t, b, node); err != nil {
					t.Fatal(err)
				}
				if !rows && b.fa.small == nil {
					t.Fatal("small-head kernels not used")
				}
				outs[i] = append([]float32(nil), f32s(mem(node), 0, node.NumElements())...)
				b.Close()
			}
			faNoBlock = false
			special := 0
			for i := range outs[0] {
				a, b := outs[0][i], outs[1][i]
				if a != a || math.IsInf(float64(a), 0) {
					special++
				}
				if sameFloat(a, b) || a == a && b == b && math.Abs(float64(a)-float64(b)) <= 1e-5*max(1, math.Abs(float64(a))) {
					continue
				}
				t.Fatalf("element %d: small-head %g, row path %g", i, b, a)
			}
			if special == 0 {
				t.Fatal("no NaN or Inf at all: the planted value was not seen")
			}
		})
	}
}

// TestFlashAttnSmallNoAllocs checks that the small-head path allocates
// nothing once its scratch has grown (prefill and decode).
func TestFlashAttnSmallNoAllocs(t *testing.T) {
	needAVX2(t)
	if testing.Short() {
		t.Skip("AllocsPerRun is slow under -short")
	}
	b, err := NewWithOptions(Options{Threads: 2, Tier: "avx2"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, c := range []faCase{faSmallCases[0], faSmallCases[5]} {
		c.params.Scale = 0.3
		node := faBuild(t, b, rand.New(rand.NewPCG(83, 84)), c, quant.F16, quant.F16)
		mxAlloc(t, b, node, 0)
		if err := b.Compute(node); err != nil {
			t.Fatal(err)
		}
		if b.fa.small == nil {
			t.Fatalf("%s: small-head kernels not used", c.name)
		}
		if a := testing.AllocsPerRun(10, func() {
			if err := b.Compute(node); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%s: %v allocations per Compute, want 0", c.name, a)
		}
	}
}

// BenchmarkFlashAttnSmall compares FLASH_ATTN_EXT at head sizes 8 and 16
// with the block kernels and with the small-head kernels (interleaved
// sub-benchmarks), f16 K/V, 8 query heads over 4 K/V heads, the causal
// f16 mask of prefill (stories260K's attention at pp512, and a longer
// prompt after 256 cached tokens) and decode, one thread. GFLOP/s counts 4*d per (query, head, key), masked keys
// included.
func BenchmarkFlashAttnSmall(b *testing.B) {
	shapes := []struct{ nQ, nKV int64 }{{512, 512}, {1536, 1792}, {1, 512}}
	const nHead, nHeadKV = 8, 4
	for _, d := range []int64{8, 16} {
		for _, s := range shapes {
			for _, path := range []string{"block", "small"} {
				b.Run(fmt.Sprintf("d%d/n%d_kv%d/%s", d, s.nQ, s.nKV, path), func(b *testing.B) {
					be, err := NewWithOptions(Options{Tier: "avx2", Threads: 1})
					if err != nil {
						b.Skip(err)
					}
					defer be.Close()
					faNoSmall = path == "block"
					defer func() { faNoSmall = false }()
					c := faCase{d: d, dv: d, nQ: s.nQ, nKV: s.nKV, nHead: nHead, nHeadKV: nHeadKV, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1, params: ops.FlashAttnParams{Scale: 0.35}}
					node := faBuild(b, be, rand.New(rand.NewPCG(1, 2)), c, quant.F16, quant.F16)
					benchCompute(b, be, node, float64(4*d*s.nQ*nHead*s.nKV))
				})
			}
		}
	}
}
