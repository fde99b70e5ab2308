package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// BenchmarkFlashAttnCausal measures FLASH_ATTN_EXT on the AVX2 tier with
// f16 K/V and the causal f16 mask of the op sweep (the nQ queries are the
// last ones of the nKV keys), head size 128, 32 query heads over 8 K/V
// heads, at 1 and 2 threads. GFLOP/s counts 4*d per (query, head, key),
// masked keys included, as the sweep does; cpu-GFLOP/s divides by the
// process CPU time, steadier on a shared machine.
func BenchmarkFlashAttnCausal(b *testing.B) {
	shapes := []struct{ nQ, nKV int64 }{{1, 512}, {1, 4096}, {512, 512}, {512, 4096}}
	const d, nHead, nHeadKV = 128, 32, 8
	for _, s := range shapes {
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("n%d_kv%d/t%d", s.nQ, s.nKV, th), func(b *testing.B) {
				be, err := NewWithOptions(Options{Tier: "avx2", Threads: th})
				if err != nil {
					b.Skip(err)
				}
				defer be.Close()
				rng := rand.New(rand.NewPCG(1, 2))
				q := mxLeaf(b, be, rng, "q", quant.F32, d, s.nQ, nHead, 1)
				k := mxLeaf(b, be, rng, "k", quant.F16, d, s.nKV, nHeadKV, 1)
				v := mxLeaf(b, be, rng, "v", quant.F16, d, s.nKV, nHeadKV, 1)
				m, err := ops.NewTensor("mask", quant.F16, s.nKV, s.nQ)
				if err != nil {
					b.Fatal(err)
				}
				mxAlloc(b, be, m, 0)
				vals := make([]float32, s.nKV*s.nQ)
				for i := range vals {
					if j, iq := int64(i)%s.nKV, int64(i)/s.nKV; j > iq+s.nKV-s.nQ {
						vals[i] = float32(math.Inf(-1))
					}
				}
				mxFill(b, m, vals)
				node, err := ops.FlashAttnExt(q, k, v, m, nil, ops.FlashAttnParams{Scale: 0.088})
				if err != nil {
					b.Fatal(err)
				}
				benchCompute(b, be, node, float64(4*d*s.nQ*nHead*s.nKV))
			})
		}
	}
}
