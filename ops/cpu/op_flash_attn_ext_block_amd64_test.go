//go:build amd64 && !purego

package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// faBlockCases are FLASH_ATTN_EXT shapes that take the block kernels:
// causal prefill (whole tiles skipped, keys masked for part of a group),
// GQA, rows left over after the groups of three, scattered masks with a
// fully masked query and sinks, softcap and ALiBi, and head sizes that
// use the kernels' runs of 8.
var faBlockCases = []faCase{
	{name: "causal", d: 128, dv: 128, nQ: 40, nKV: 200, nHead: 2, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1},
	{name: "causal-gqa", d: 64, dv: 64, nQ: 13, nKV: 77, nHead: 8, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1},
	{name: "scattered-sinks", d: 64, dv: 64, nQ: 10, nKV: 133, nHead: 2, nHeadKV: 1, q3: 1, k3: 1, mask: quant.F16, maskedQuery: 4, sinks: true},
	{name: "softcap-alibi", d: 96, dv: 96, nQ: 7, nKV: 66, nHead: 4, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F32, maskedQuery: -1, params: ops.FlashAttnParams{Scale: 0.125, Softcap: 5, MaxBias: 8}},
	{name: "d40-dv24", d: 40, dv: 24, nQ: 9, nKV: 70, nHead: 2, nHeadKV: 1, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1},
	{name: "short-tiles", d: 64, dv: 64, nQ: 6, nKV: 130, nHead: 1, nHeadKV: 1, q3: 1, k3: 1, mask: quant.F16, maskedQuery: -1},
	{name: "three-keys", d: 64, dv: 64, nQ: 3, nKV: 3, nHead: 2, nHeadKV: 2, q3: 1, k3: 1, noMask: true, maskedQuery: -1},
	{name: "decode", d: 128, dv: 128, nQ: 1, nKV: 150, nHead: 4, nHeadKV: 4, q3: 1, k3: 1, mask: quant.F16, maskedQuery: -1},
	{name: "decode-two-keys", d: 64, dv: 64, nQ: 1, nKV: 2, nHead: 2, nHeadKV: 2, q3: 1, k3: 1, noMask: true, maskedQuery: -1, sinks: true},
	{name: "prefill-d256", d: 256, dv: 256, nQ: 4, nKV: 96, nHead: 2, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1},
	{name: "decode-gqa4", d: 128, dv: 128, nQ: 1, nKV: 150, nHead: 8, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, maskedQuery: -1},
	{name: "decode-gqa2-sinks", d: 64, dv: 64, nQ: 1, nKV: 70, nHead: 4, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F32, maskRows: 2, maskedQuery: -1, sinks: true},
	{name: "nomask-dim3", d: 32, dv: 32, nQ: 6, nKV: 65, nHead: 2, nHeadKV: 1, q3: 2, k3: 1, noMask: true, maskedQuery: -1},
}

// faBlockTypes are the K/V type pairs the block kernels take.
var faBlockTypes = [][2]quant.Type{{quant.F16, quant.F16}, {quant.Q8_0, quant.Q8_0}, {quant.F16, quant.Q8_0}, {quant.Q8_0, quant.F16}}

// faComputeOut computes case c (operands from seed) on a fresh AVX2
// backend with the given threads and returns a copy of the output; it
// fails the test unless the block kernels were used exactly when
// faNoBlock is off.
func faComputeOut(t *testing.T, c faCase, seed uint64, threads int, kt, vt quant.Type) []float32 {
	t.Helper()
	b, err := NewWithOptions(Options{Threads: threads, Tier: "avx2"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	node := faBuild(t, b, rand.New(rand.NewPCG(seed, 7)), c, kt, vt)
	if err := mxCompute(t, b, node); err != nil {
		t.Fatal(err)
	}
	if used := b.fa.blk != nil; used == faNoBlock {
		t.Fatalf("block kernels used: %v, faNoBlock %v", used, faNoBlock)
	}
	return append([]float32(nil), f32s(mem(node), 0, node.NumElements())...)
}

// TestFlashAttnBlockExact checks that FLASH_ATTN_EXT with the block
// kernels gives the same bits at 1, 2 and 3 threads (which group the rows
// differently into items and groups of three), the same bits as without
// them (each row alone through the row kernels) for q8_0 keys, and stays
// within the reference tolerance. (f16 keys are summed in the block
// order, not dot2F16's, so there only the tolerance applies.)
func TestFlashAttnBlockExact(t *testing.T) {
	needAVX2(t)
	if avx2Kernels.fa == nil {
		t.Skip("no block kernels")
	}
	rng := rand.New(rand.NewPCG(65, 66))
	for _, c := range faBlockCases {
		if c.params.Scale == 0 {
			c.params.Scale = 0.125
		}
		seed := rng.Uint64()
		for _, kv := range faBlockTypes {
			if (kv[0] == quant.Q8_0 || kv[1] == quant.Q8_0) && (c.d%32 != 0 || c.dv%32 != 0) {
				continue
			}
			t.Run(c.name+"/k="+kv[0].String()+",v="+kv[1].String(), func(t *testing.T) {
				want, what := faComputeOut(t, c, seed, 1, kv[0], kv[1]), "1 thread"
				if kv[0] == quant.Q8_0 {
					faNoBlock = true
					want, what = faComputeOut(t, c, seed, 2, kv[0], kv[1]), "one row"
					faNoBlock = false
				}
				for _, threads := range []int{1, 2, 3} {
					got := faComputeOut(t, c, seed, threads, kv[0], kv[1])
					for i := range want {
						if !sameFloat(got[i], want[i]) {
							t.Fatalf("threads %d: element %d: block %g, %s %g", threads, i, got[i], what, want[i])
						}
					}
				}
				b, err := NewWithOptions(Options{Threads: 2, Tier: "avx2"})
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				node := faBuild(t, b, rand.New(rand.NewPCG(seed, 7)), c, kv[0], kv[1])
				mxCheck(t, b, node, faTol(kv[0]))
			})
		}
	}
}

// TestFlashAttnBlockMaskedNaN checks that keys masked for a row do not
// reach it through the block kernels even when their K and V rows are
// NaN and other rows of its group take them: causal prefill with NaN keys
// and values that only the later queries see. The result must match the
// row path's (bit for bit for q8_0 keys, closely and NaN for NaN for f16
// keys, whose block order differs).
func TestFlashAttnBlockMaskedNaN(t *testing.T) {
	needAVX2(t)
	c := faCase{d: 64, dv: 64, nQ: 24, nKV: 90, nHead: 2, nHeadKV: 1, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1, params: ops.FlashAttnParams{Scale: 0.125}}
	poison := []int64{70, 71, 72, 73, 88, 89} // seen from queries 4..7 and 22, 23 on
	for _, kv := range faBlockTypes {
		t.Run("k="+kv[0].String()+",v="+kv[1].String(), func(t *testing.T) {
			faMaskedNaN(t, c, poison, kv)
		})
	}
}

// faMaskedNaN runs TestFlashAttnBlockMaskedNaN's case c with K/V types
// kv, the keys poison NaN (every f16 element, or every q8_0 scale).
func faMaskedNaN(t *testing.T, c faCase, poison []int64, kv [2]quant.Type) {
	var outs [2][]float32
	for i, off := range []bool{true, false} {
		faNoBlock = off
		b, err := NewWithOptions(Options{Threads: 2, Tier: "avx2"})
		if err != nil {
			t.Fatal(err)
		}
		node := faBuild(t, b, rand.New(rand.NewPCG(71, 72)), c, kv[0], kv[1])
		for _, x := range []*ops.Tensor{node.Src[ops.FAK], node.Src[ops.FAV]} {
			raw, err := x.HostBytes()
			if err != nil {
				t.Fatal(err)
			}
			n, step := x.Ne[0], int64(2) // f16: every element
			if x.Type == quant.Q8_0 {
				n, step = x.Ne[0]/32, simd.BytesQ8_0 // q8_0: every block's scale
			}
			for _, ik := range poison {
				row := raw[ik*x.Nb[1]:]
				for e := range n {
					row[e*step], row[e*step+1] = 0x00, 0x7e // f16 NaN
				}
			}
		}
		if err := mxCompute(t, b, node); err != nil {
			t.Fatal(err)
		}
		outs[i] = append([]float32(nil), f32s(mem(node), 0, node.NumElements())...)
		b.Close()
	}
	faNoBlock = false
	nans := 0
	for i := range outs[0] {
		// f16 keys: the block order's scores differ from the row path's
		// in the last bits, so there the NaNs must match and the rest
		// agree closely; q8_0 keys: the same bits.
		a, b := outs[0][i], outs[1][i]
		same := sameFloat(a, b)
		if kv[0] == quant.F16 && !same && a == a && b == b {
			same = math.Abs(float64(a)-float64(b)) <= 1e-5*max(1, math.Abs(float64(a)))
		}
		if !same {
			t.Fatalf("element %d: block %g, one row %g", i, b, a)
		}
		if outs[1][i] != outs[1][i] {
			nans++
			if iq := int64(i) / (c.dv * c.nHead); iq < 4 {
				t.Fatalf("query %d, element %d: NaN from a masked key", iq, i)
			}
		}
	}
	if nans == 0 {
		t.Fatal("no NaN at all: the poisoned keys were not seen")
	}
}

// TestFlashAttnBlockNoAllocs checks that the block path allocates nothing
// once the scratch has grown: causal prefill (groups of three and a row
// left alone), one-row decode and GQA decode (four rows scored together).
func TestFlashAttnBlockNoAllocs(t *testing.T) {
	needAVX2(t)
	if testing.Short() {
		t.Skip("AllocsPerRun is slow under -short")
	}
	b, err := NewWithOptions(Options{Threads: 2, Tier: "avx2"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, c := range []faCase{faBlockCases[0], faBlockCases[1], faBlockCases[7], faBlockCases[10]} {
		c.params.Scale = 0.125
		node := faBuild(t, b, rand.New(rand.NewPCG(67, 68)), c, quant.F16, quant.F16)
		mxAlloc(t, b, node, 0)
		if err := b.Compute(node); err != nil {
			t.Fatal(err)
		}
		if b.fa.blk == nil {
			t.Fatalf("%s: block kernels not used", c.name)
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

// BenchmarkFlashAttnBlock compares FLASH_ATTN_EXT with and without the
// block kernels (interleaved sub-benchmarks) at head size 128, 32 query
// heads, f16 and q8_0 K/V, with a causal mask as in prefill. GFLOP/s
// counts 4*d per (query, head, key), masked keys included.
func BenchmarkFlashAttnBlock(b *testing.B) {
	shapes := []struct{ nQ, nKV, nHeadKV int64 }{{512, 512, 32}, {512, 512, 8}, {64, 512, 8}, {1, 512, 32}, {1, 512, 8}}
	const d, nHead = 128, 32
	for _, typ := range []quant.Type{quant.F16, quant.Q8_0} {
		for _, s := range shapes {
			for _, path := range []string{"rows", "block"} {
				b.Run(fmt.Sprintf("%v/n%d_kv%d_kvheads%d/%s", typ, s.nQ, s.nKV, s.nHeadKV, path), func(b *testing.B) {
					be, err := NewWithOptions(Options{Tier: "avx2"})
					if err != nil {
						b.Skip(err)
					}
					defer be.Close()
					faNoBlock = path == "rows"
					defer func() { faNoBlock = false }()
					c := faCase{d: d, dv: d, nQ: s.nQ, nKV: s.nKV, nHead: nHead, nHeadKV: s.nHeadKV, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1, params: ops.FlashAttnParams{Scale: 0.088}}
					node := faBuild(b, be, rand.New(rand.NewPCG(1, 2)), c, typ, typ)
					benchCompute(b, be, node, float64(4*d*s.nQ*nHead*s.nKV))
				})
			}
		}
	}
}
