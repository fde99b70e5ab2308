//go:build amd64 && !purego

package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// TestFlashAttnTierFAKernels checks, for every tier this CPU runs, that
// FLASH_ATTN_EXT with the tier's block and small-head kernels gives the
// same bits as with the avx2 tier's (the tier's other kernels in both):
// the avx512 tier's zmm kernels are the AVX2 ones' sums bit for bit.
func TestFlashAttnTierFAKernels(t *testing.T) {
	needAVX2(t)
	forEachTier(t, func(t *testing.T, ks *kernelSet) {
		if ks.fa == nil || avx2Kernels.fa == nil {
			t.Skip("no block kernels")
		}
		ref := ks.extend(ks.name + "-avx2-fa")
		ref.fa = avx2Kernels.fa
		out := func(ks *kernelSet, c faCase, seed uint64, kt, vt quant.Type) []float32 {
			t.Helper()
			b, err := NewWithOptions(Options{Threads: 2, Tier: "avx2"})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			b.kern = ks
			node := faBuild(t, b, rand.New(rand.NewPCG(seed, 7)), c, kt, vt)
			if err := mxCompute(t, b, node); err != nil {
				t.Fatal(err)
			}
			return append([]float32(nil), f32s(mem(node), 0, node.NumElements())...)
		}
		rng := rand.New(rand.NewPCG(67, 68))
		type kc struct {
			c      faCase
			kt, vt quant.Type
		}
		var cases []kc
		for _, c := range faBlockCases {
			for _, kv := range faBlockTypes {
				if (kv[0] == quant.Q8_0 || kv[1] == quant.Q8_0) && (c.d%32 != 0 || c.dv%32 != 0) {
					continue
				}
				cases = append(cases, kc{c, kv[0], kv[1]})
			}
		}
		for _, c := range faSmallCases {
			cases = append(cases, kc{c, quant.F16, quant.F16})
		}
		for _, k := range cases {
			if k.c.params.Scale == 0 {
				k.c.params.Scale = 0.125
			}
			seed := rng.Uint64()
			got, want := out(ks, k.c, seed, k.kt, k.vt), out(ref, k.c, seed, k.kt, k.vt)
			for i := range want {
				if !sameFloat(got[i], want[i]) {
					t.Fatalf("%s k=%v v=%v: element %d: %g, with the avx2 fa kernels %g", k.c.name, k.kt, k.vt, i, got[i], want[i])
				}
			}
		}
	})
}
