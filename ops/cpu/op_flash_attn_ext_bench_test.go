package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// BenchmarkFlashAttn measures FLASH_ATTN_EXT per tier at head size 128
// with 32 query heads, without a mask: GFLOP/s counts 4*d per (query,
// head, key) (the scores and the value accumulation); cpu-GFLOP/s divides
// by process CPU time, which is steadier on a shared machine.
func BenchmarkFlashAttn(b *testing.B) {
	shapes := []struct{ nQ, nKV, nHeadKV int64 }{{1, 512, 32}, {1, 4096, 8}, {64, 512, 8}, {512, 512, 32}}
	kv := [][2]quant.Type{{quant.F16, quant.F16}, {quant.F32, quant.F32}, {quant.Q8_0, quant.Q8_0}}
	const d, nHead = 128, 32
	for _, p := range kv {
		for _, s := range shapes {
			for _, ks := range benchTiers() {
				name := fmt.Sprintf("%v/n%d_kv%d_kvheads%d/%s", p[0], s.nQ, s.nKV, s.nHeadKV, ks.name)
				b.Run(name, func(b *testing.B) {
					be, err := NewWithOptions(Options{Tier: ks.name})
					if err != nil {
						b.Fatal(err)
					}
					defer be.Close()
					rng := rand.New(rand.NewPCG(1, 2))
					q := mxLeaf(b, be, rng, "q", quant.F32, d, s.nQ, nHead, 1)
					k := mxLeaf(b, be, rng, "k", p[0], d, s.nKV, s.nHeadKV, 1)
					v := mxLeaf(b, be, rng, "v", p[1], d, s.nKV, s.nHeadKV, 1)
					node, err := ops.FlashAttnExt(q, k, v, nil, nil, ops.FlashAttnParams{Scale: 0.088})
					if err != nil {
						b.Fatal(err)
					}
					benchCompute(b, be, node, float64(4*d*s.nQ*nHead*s.nKV))
				})
			}
		}
	}
}
