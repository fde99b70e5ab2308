package cpu

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// mxIDs returns an allocated i32 leaf of shape ne holding vals.
func mxIDs(t testing.TB, b *Backend, name string, vals []int32, ne ...int64) *ops.Tensor {
	t.Helper()
	x, err := ops.NewTensor(name, quant.I32, ne...)
	if err != nil {
		t.Fatal(err)
	}
	mxAlloc(t, b, x, 0)
	raw, err := x.HostBytes()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		copy(raw[4*i:], i32Bytes(v))
	}
	return x
}

func TestMulMatID(t *testing.T) {
	type shape struct {
		name           string
		blocks         int64
		m, nExpert     int64
		nUsed, nTokens int64
		b1             int64 // 1 or nUsed
		pick           []int32
		bType          quant.Type
	}
	shapes := []shape{
		// Expert 1 is never selected.
		{name: "unused-expert", blocks: 2, m: 6, nExpert: 4, nUsed: 2, nTokens: 5, b1: 2, pick: []int32{0, 2, 3}, bType: quant.F32},
		{name: "b1=1", blocks: 1, m: 5, nExpert: 4, nUsed: 2, nTokens: 3, b1: 1, pick: []int32{3, 0, 2, 1}, bType: quant.F32},
		{name: "one-token", blocks: 1, m: 33, nExpert: 8, nUsed: 4, nTokens: 1, b1: 4, pick: []int32{7, 1, 4, 5}, bType: quant.F32},
		{name: "many-tokens", blocks: 1, m: 9, nExpert: 3, nUsed: 2, nTokens: 40, b1: 2, pick: []int32{0, 1, 2}, bType: quant.F16},
	}
	mxEachBackend(t, func(t *testing.T, b *Backend) {
		rng := rand.New(rand.NewPCG(11, 12))
		for _, wt := range mxWeightTypes {
			for _, s := range shapes {
				t.Run(wt.String()+"/"+s.name, func(t *testing.T) {
					k := s.blocks * wt.BlockSize()
					w := mxLeaf(t, b, rng, "experts", wt, k, s.m, s.nExpert)
					x := mxLeaf(t, b, rng, "b", s.bType, k, s.b1, s.nTokens)
					vals := make([]int32, s.nUsed*s.nTokens)
					for i := range vals {
						vals[i] = s.pick[(i*7+i/3)%len(s.pick)]
					}
					ids := mxIDs(t, b, "ids", vals, s.nUsed, s.nTokens)
					node, err := ops.MulMatID(w, x, ids)
					if err != nil {
						t.Fatal(err)
					}
					mxCheck(t, b, node, mxMatTol(wt))
				})
			}
		}
	})
}

// TestMulMatIDBadIDs checks that an id out of range is an error reported
// before anything is written.
func TestMulMatIDBadIDs(t *testing.T) {
	for _, bad := range []int32{4, -1, 1 << 30} {
		mxEachBackend(t, func(t *testing.T, b *Backend) {
			rng := rand.New(rand.NewPCG(13, 14))
			w := mxLeaf(t, b, rng, "experts", quant.Q4_0, 32, 3, 4)
			x := mxLeaf(t, b, rng, "b", quant.F32, 32, 2, 3)
			ids := mxIDs(t, b, "ids", []int32{0, 1, 2, 3, bad, 0}, 2, 3)
			node, err := ops.MulMatID(w, x, ids)
			if err != nil {
				t.Fatal(err)
			}
			mxAlloc(t, b, node, 0)
			out := node.Buffer.(*ops.HostBuffer).Bytes()
			for i := range out {
				out[i] = 0x5a
			}
			err = b.Compute(node)
			if err == nil || !strings.Contains(err.Error(), "outside") {
				t.Fatalf("id %d: err = %v, want an out-of-range error", bad, err)
			}
			for i, v := range out {
				if v != 0x5a {
					t.Fatalf("id %d: output byte %d written before the error", bad, i)
				}
			}
		})
	}
}

func TestGroupByExpert(t *testing.T) {
	b := New(1)
	defer b.Close()
	// ids [n_used=2, n_tokens=3]: token 0 -> {2, 0}, 1 -> {0, 2}, 2 -> {2, 2}.
	ids := mxIDs(t, b, "ids", []int32{2, 0, 0, 2, 2, 2}, 2, 3)
	pairs, start, err := groupByExpert(ids, 4)
	if err != nil {
		t.Fatal(err)
	}
	wantStart := []int64{0, 2, 2, 6, 6}
	for i, s := range wantStart {
		if start[i] != s {
			t.Fatalf("start = %v, want %v", start, wantStart)
		}
	}
	want := []expertPair{{1, 0}, {0, 1}, {0, 0}, {1, 1}, {0, 2}, {1, 2}}
	for i, p := range want {
		if pairs[i] != p {
			t.Fatalf("pairs = %v, want %v", pairs, want)
		}
	}
	tiles := expertTiles(20, start, 2)
	covered := map[[2]int64]int{}
	for _, tl := range tiles {
		for i := tl.i0; i < tl.i1; i++ {
			for p := tl.p0; p < tl.p1; p++ {
				covered[[2]int64{i, p}]++
				if p < start[tl.expert] || p >= start[tl.expert+1] {
					t.Fatalf("tile %+v crosses experts", tl)
				}
			}
		}
	}
	if len(covered) != 20*6 {
		t.Fatalf("tiles cover %d (row, pair) cells, want %d", len(covered), 20*6)
	}
	for c, n := range covered {
		if n != 1 {
			t.Fatalf("cell %v covered %d times", c, n)
		}
	}
}
