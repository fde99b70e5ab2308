package cpu

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func TestSSMConv(t *testing.T) {
	type build = func(e *rowOpEnv) *ops.Tensor
	conv := func(sx, c build) build {
		return func(e *rowOpEnv) *ops.Tensor { return mustNode(e.t)(ops.SSMConv(sx(e), c(e))) }
	}
	f32 := func(ne ...int64) build {
		return func(e *rowOpEnv) *ops.Tensor { return e.f32(ne...) }
	}
	runRowOpCases(t, tolSSMConv, []rowOpCase{
		{"prompt", conv(f32(3+5, 16, 2), f32(4, 16))},
		{"generate", conv(f32(3+1, 32, 3), f32(4, 32))},
		{"d-conv-1", conv(f32(6, 8, 2), f32(1, 8))},
		{"one-channel", conv(f32(3+7, 1, 1), f32(4, 1))},
		{"permuted-sx", conv(func(e *rowOpEnv) *ops.Tensor { return e.permuted([]int64{12, 3 + 6, 2}, 1, 0, 2, 3) }, f32(4, 12))},
		{"strided-c", conv(f32(3+4, 6, 2), func(e *rowOpEnv) *ops.Tensor { return e.strided([4]int64{4, 6, 1, 1}, 2, 1) })},
		{"no-tokens", conv(f32(3, 8, 2), f32(4, 8))},
		{"no-sequences", conv(f32(3+2, 8, 0), f32(4, 8))},
		{"tiles", conv(f32(3+21, 20, 2), f32(4, 20))},
		{"tiles-d-conv-3", conv(f32(2+16, 16, 1), f32(3, 16))},
		{"tiles-permuted-sx", conv(func(e *rowOpEnv) *ops.Tensor { return e.permuted([]int64{16, 3 + 9, 1}, 1, 0, 2, 3) }, f32(4, 16))},
		{"tiles-strided-c", conv(f32(3+16, 8, 2), func(e *rowOpEnv) *ops.Tensor { return e.strided([4]int64{4, 8, 1, 1}, 2, 1) })},
	})
}

// TestSSMConvTiers checks that every tier computes SSM_CONV bit for bit as
// the generic loop (the twin of the tiled kernels), NaN and infinities
// included, over shapes with whole tiles of 8 channels by 8 tokens and
// ragged edges.
func TestSSMConvTiers(t *testing.T) {
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 3e38}
	for _, sh := range [][3]int64{{8, 8, 1}, {24, 17, 2}, {13, 9, 1}, {64, 40, 3}, {16, 1, 2}, {32, 5, 1}} {
		ch, nTok, nSeq := sh[0], sh[1], sh[2]
		var want []uint32
		forEachTier(t, func(t *testing.T, ks *kernelSet) {
			b, err := NewWithOptions(Options{Threads: 2, Tier: ks.name})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			r := rand.New(rand.NewPCG(uint64(ch), uint64(nTok)))
			leaf := func(name string, ne ...int64) *ops.Tensor {
				x := mxLeaf(t, b, r, name, quant.F32, ne...)
				v := mxRandom(r, x.NumElements())
				for i := range v {
					if r.IntN(50) == 0 {
						v[i] = special[r.IntN(len(special))]
					}
				}
				mxFill(t, x, v)
				return x
			}
			node := mustNode(t)(ops.SSMConv(leaf("sx", 3+nTok, ch, nSeq), leaf("c", 4, ch)))
			mxAlloc(t, b, node, 0)
			if err := b.Compute(node); err != nil {
				t.Fatal(err)
			}
			raw, err := node.HostBytes()
			if err != nil {
				t.Fatal(err)
			}
			got := make([]uint32, node.NumElements())
			for i := range got {
				got[i] = binary.LittleEndian.Uint32(raw[4*i:])
			}
			if want == nil {
				want = got
				return
			}
			for i := range got {
				if got[i] != want[i] && !(math.IsNaN(float64(math.Float32frombits(got[i]))) && math.IsNaN(float64(math.Float32frombits(want[i])))) {
					t.Fatalf("shape %v: [%d] = %#x, generic %#x", sh, i, got[i], want[i])
				}
			}
		})
	}
}
