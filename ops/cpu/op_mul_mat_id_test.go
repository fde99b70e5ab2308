package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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
		// By expert (mul_mat_id_gemm.go): experts 0-2 have idGemmMinPairs
		// pairs or more, expert 3 fewer; f32 input rows, b1 = 1 and 2.
		{name: "by-expert", blocks: 2, m: 19, nExpert: 5, nUsed: 2, nTokens: 40, b1: 2, pick: []int32{0, 1, 2, 0, 1, 2, 3}, bType: quant.F32},
		{name: "by-expert-b1=1", blocks: 1, m: 8, nExpert: 4, nUsed: 2, nTokens: 24, b1: 1, pick: []int32{2, 0, 1}, bType: quant.F32},
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
	b := newTestBackend(t, 1)
	defer b.Close()
	// ids [n_used=2, n_tokens=3]: token 0 -> {2, 0}, 1 -> {0, 2}, 2 -> {2, 2}.
	ids := mxIDs(t, b, "ids", []int32{2, 0, 0, 2, 2, 2}, 2, 3)
	var j mulMatIDJob
	// Group twice: the second call reuses the first one's buffers.
	for range 2 {
		if err := j.groupByExpert(ids, 4); err != nil {
			t.Fatal(err)
		}
	}
	pairs, start := j.pairs, j.start
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
	j.m = 20
	j.expertTiles(2)
	tiles := j.tiles
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

// TestMulMatIDNoAllocs checks that computing a MUL_MAT_ID node again
// allocates nothing, on every tier, for weight types with and without a
// four-row kernel, one token and several.
func TestMulMatIDNoAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("AllocsPerRun is slow under -short")
	}
	forEachTier(t, func(t *testing.T, ks *kernelSet) {
		b, err := NewWithOptions(Options{Threads: 2, Tier: ks.name})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		rng := rand.New(rand.NewPCG(61, 62))
		for _, wt := range []quant.Type{quant.F32, quant.F16, quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q6_K, quant.IQ4_XS} {
			// 40 tokens: by expert (mul_mat_id_gemm.go).
			for _, nTok := range []int64{1, 8, 40} {
				w := mxLeaf(t, b, rng, "experts", wt, 512, 36, 4)
				x := mxLeaf(t, b, rng, "b", quant.F32, 512, 2, nTok)
				vals := make([]int32, 2*nTok)
				for i := range vals {
					vals[i] = int32((i*5 + i/3) % 4)
				}
				ids := mxIDs(t, b, "ids", vals, 2, nTok)
				node, err := ops.MulMatID(w, x, ids)
				if err != nil {
					t.Fatal(err)
				}
				mxAlloc(t, b, node, 0)
				if err := b.Compute(node); err != nil {
					t.Fatal(err)
				}
				allocs := testing.AllocsPerRun(20, func() {
					if err := b.Compute(node); err != nil {
						t.Fatal(err)
					}
				})
				if allocs != 0 {
					t.Errorf("%v tokens=%d: %v allocations per Compute", wt, nTok, allocs)
				}
			}
		}
	})
}

// BenchmarkMulMatID measures MUL_MAT_ID with 8 experts of 1024 x 4096
// weights, 2 used per token, for 1 and 64 tokens (GFLOP/s counts 2*k*m
// per (slot, token) pair).
func BenchmarkMulMatID(b *testing.B) {
	const k, m, nExpert, nUsed = 4096, 1024, 8, 2
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q6_K} {
		for _, nTok := range []int64{1, 64} {
			for _, ks := range benchTiers() {
				b.Run(fmt.Sprintf("%v/tokens%d/%s", wt, nTok, ks.name), func(b *testing.B) {
					be, err := NewWithOptions(Options{Tier: ks.name})
					if err != nil {
						b.Fatal(err)
					}
					defer be.Close()
					rng := rand.New(rand.NewPCG(3, 4))
					w, err := ops.NewTensor("experts", wt, k, m, nExpert)
					if err != nil {
						b.Fatal(err)
					}
					mxAlloc(b, be, w, 0)
					raw, _ := w.HostBytes()
					rowBytes, _ := wt.RowSize(k)
					row := make([]byte, rowBytes)
					if err := quant.QuantizeRow(wt, mxRandom(rng, k), row); err != nil {
						b.Fatal(err)
					}
					for r := range int64(m * nExpert) {
						copy(raw[r*rowBytes:], row)
					}
					x := benchLeaf(b, be, rng, quant.F32, k, nUsed*nTok)
					xv, err := ops.Reshape(x, k, nUsed, nTok)
					if err != nil {
						b.Fatal(err)
					}
					vals := make([]int32, nUsed*nTok)
					for i := range vals {
						vals[i] = int32((i*5 + i/3) % nExpert)
					}
					ids := mxIDs(b, be, "ids", vals, nUsed, nTok)
					node, err := ops.MulMatID(w, xv, ids)
					if err != nil {
						b.Fatal(err)
					}
					benchCompute(b, be, node, float64(2*k*m*nUsed*nTok))
				})
			}
		}
	}
}

// BenchmarkMulMatIDPrefill measures MUL_MAT_ID at the shape of
// ggml-side's MoE point (128 experts of 768 x 2048 weights, 8 used per
// token, 512 tokens; each token's experts drawn at random, as
// test-backend-ops draws them, so an expert meets about 32 tokens) on
// the default tier (GFLOP/s counts 2*k*m per (slot, token) pair).
func BenchmarkMulMatIDPrefill(b *testing.B) {
	const k, m, nExpert, nUsed, nTok = 2048, 768, 128, 8, 512
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q4_K, quant.Q6_K} {
		b.Run(wt.String(), func(b *testing.B) {
			be, err := NewWithOptions(Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			rng := rand.New(rand.NewPCG(5, 6))
			w := benchLeaf(b, be, rng, wt, k, m*nExpert)
			w3, err := ops.Reshape(w, k, m, nExpert)
			if err != nil {
				b.Fatal(err)
			}
			x := benchLeaf(b, be, rng, quant.F32, k, nUsed*nTok)
			xv, err := ops.Reshape(x, k, nUsed, nTok)
			if err != nil {
				b.Fatal(err)
			}
			vals := make([]int32, 0, nUsed*nTok)
			for range nTok {
				for _, e := range rng.Perm(nExpert)[:nUsed] {
					vals = append(vals, int32(e))
				}
			}
			ids := mxIDs(b, be, "ids", vals, nUsed, nTok)
			node, err := ops.MulMatID(w3, xv, ids)
			if err != nil {
				b.Fatal(err)
			}
			benchCompute(b, be, node, float64(2*k*m*nUsed*nTok))
		})
	}
}

// TestMulMatIDHomeParts checks that MUL_MAT_ID with one token gives the
// same outputs, bit for bit, whether its tiles go out through the pool's
// counter or in home parts (gemvHomeRows): the same kernels compute
// every output, only the threads differ.
func TestMulMatIDHomeParts(t *testing.T) {
	defer func(on bool) { gemvHomeRows = on }(gemvHomeRows)
	for _, ks := range kernelSets() {
		b, err := NewWithOptions(Options{Threads: 2, Tier: ks.name})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(81, 82))
		for _, wt := range []quant.Type{quant.Q4_0, quant.Q4_K, quant.Q8_0} {
			w := mxLeaf(t, b, rng, "experts", wt, 256, 70, 6)
			x := mxLeaf(t, b, rng, "b", quant.F32, 256, 3, 1)
			ids := mxIDs(t, b, "ids", []int32{4, 0, 5}, 3, 1)
			node := mustNode(t)(ops.MulMatID(w, x, ids))
			mxAlloc(t, b, node, 0)
			var outs [2][]float32
			for i, on := range []bool{false, true} {
				gemvHomeRows = on
				if err := b.Compute(node); err != nil {
					t.Fatal(err)
				}
				raw, _ := node.HostBytes()
				outs[i] = slices.Clone(f32s(raw, 0, node.NumElements()))
			}
			for i := range outs[0] {
				if !sameFloat(outs[0][i], outs[1][i]) {
					t.Fatalf("%s %v: output %d: %g with the counter, %g with home parts", ks.name, wt, i, outs[0][i], outs[1][i])
				}
			}
		}
		b.Close()
	}
}

// moeDecodeShapes are the MUL_MAT_ID products of one decoded token of the
// issue-25 MoE model (mkmodel's moe-100m: 8 experts of ff 320, 2 used,
// embd 768): the gate and up experts (k 768, m 320, one input row for
// both slots) and the down experts (k 320, m 768, each slot its row).
var moeDecodeShapes = []struct {
	name     string
	k, m, b1 int64
}{{"gate", 768, 320, 1}, {"down", 320, 768, 2}}

// BenchmarkMulMatIDDecode measures one token's MUL_MAT_ID on the MoE
// model's shapes (moeDecodeShapes, 8 experts, 2 used, q4_0) with the
// weights in a buffer marked as holding weights (so the x8 copy is read,
// as from a GGUF file) and cold: it cycles through enough expert tensors
// (128 MiB together, four times a 32 MiB L3) that none is in cache when
// read again, and the experts chosen change from call to call. "dense"
// is a plain one-row MUL_MAT of the same bytes (both experts' rows as one
// matrix), the bandwidth MUL_MAT_ID's weight stream should reach; MB/s
// counts the weight bytes a call reads (two experts), so the ratio of
// the two speeds is MUL_MAT_ID's cost beyond streaming its weights,
// readable even on a busy machine when both run in one invocation. The
// "-hot" variants compute one node again and again, its weights in cache:
// there the per-call costs (activations, side data, tiles, the pool's
// hand-off, the threads' imbalance) weigh more.
func BenchmarkMulMatIDDecode(b *testing.B) {
	const total = 128 << 20
	const nExpert, nUsed = 8, 2
	wt := quant.Q4_0
	for _, s := range moeDecodeShapes {
		for _, kind := range []string{"id", "dense", "id-hot", "dense-hot"} {
			b.Run(s.name+"/"+kind, func(b *testing.B) {
				hot := strings.HasSuffix(kind, "-hot")
				kind = strings.TrimSuffix(kind, "-hot")
				be, err := NewWithOptions(Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer be.Close()
				rowBytes, err := wt.RowSize(s.k)
				if err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(7, 8))
				row := make([]byte, rowBytes)
				if err := quant.QuantizeRow(wt, mxRandom(rng, s.k), row); err != nil {
					b.Fatal(err)
				}
				rows := s.m * nUsed
				if kind == "id" {
					rows = s.m * nExpert
				}
				copies := max(2, total/(rowBytes*rows))
				if hot {
					copies = 1
				}
				x := mxLeaf(b, be, rng, "x", quant.F32, s.k, s.b1, 1)
				xd := mxLeaf(b, be, rng, "x", quant.F32, s.k, 1)
				nodes := make([]*ops.Tensor, copies)
				for i := range nodes {
					w, err := ops.NewTensor("w", wt, s.k, rows)
					if kind == "id" {
						w, err = ops.NewTensor("experts", wt, s.k, s.m, nExpert)
					}
					if err != nil {
						b.Fatal(err)
					}
					mxAlloc(b, be, w, 0)
					raw, _ := w.HostBytes()
					for r := range rows {
						copy(raw[r*rowBytes:], row)
					}
					w.Buffer.(*ops.HostBuffer).MarkWeights()
					if kind == "id" {
						// Two distinct experts, a different pair each
						// copy.
						e0 := int32(i % nExpert)
						e1 := (e0 + 1 + int32(i/nExpert)%(nExpert-1)) % nExpert
						ids := mxIDs(b, be, "ids", []int32{e0, e1}, nUsed, 1)
						nodes[i], err = ops.MulMatID(w, x, ids)
					} else {
						nodes[i], err = ops.MulMat(w, xd)
					}
					if err != nil {
						b.Fatal(err)
					}
					mxAlloc(b, be, nodes[i], 0)
					if err := be.Compute(nodes[i]); err != nil {
						b.Fatal(err)
					}
				}
				b.SetBytes(rowBytes * s.m * nUsed)
				benchRotate(b, be, nodes)
			})
		}
	}
}

// TestMulMatIDJoinedTiles checks that MUL_MAT_ID's joined tiles (a
// worker's run of tiles of one expert computed by one doTile, see joins)
// give every output bit for bit as the tiles one at a time do, and that
// the outputs do not depend on the thread count (which decides where the
// runs break): with and without the x8 copy, weight types with the x8,
// side, four-row and tiled kernels and without, row counts that leave
// tails of the eight- and four-row groups, one token and a few.
func TestMulMatIDJoinedTiles(t *testing.T) {
	type shape struct{ m, nTok, b1 int64 }
	shapes := []shape{{70, 1, 1}, {70, 1, 3}, {13, 1, 3}, {37, 2, 1}, {21, 6, 3}}
	types := []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q6_K, quant.F16, quant.F32, quant.IQ4_XS}
	forEachTier(t, func(t *testing.T, ks *kernelSet) {
		var bs []*Backend
		for _, n := range []int{1, 2, 3} {
			b, err := NewWithOptions(Options{Threads: n, Tier: ks.name})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			bs = append(bs, b)
		}
		rng := rand.New(rand.NewPCG(83, 84))
		for _, wt := range types {
			for _, weights := range []bool{false, true} {
				for _, s := range shapes {
					name := fmt.Sprintf("%v/weights=%v/m=%d/tokens=%d/b1=%d", wt, weights, s.m, s.nTok, s.b1)
					k := 256
					w := mxLeaf(t, bs[0], rng, "experts", wt, int64(k), s.m, 6)
					if weights {
						w.Buffer.(*ops.HostBuffer).MarkWeights()
					}
					x := mxLeaf(t, bs[0], rng, "b", quant.F32, int64(k), s.b1, s.nTok)
					vals := make([]int32, 3*s.nTok)
					for i := range vals {
						// Tokens pick from experts 0-3 (some with four
						// pairs or more: the tiled kernel), 4 and 5 never.
						vals[i] = int32((i + i/3) % 4)
					}
					ids := mxIDs(t, bs[0], "ids", vals, 3, s.nTok)
					node := mustNode(t)(ops.MulMatID(w, x, ids))
					mxAlloc(t, bs[0], node, 0)
					raw, _ := node.HostBytes()
					out := f32s(raw, 0, node.NumElements())
					var runs [][]float32
					for _, b := range bs {
						for i := range out {
							out[i] = float32(math.NaN()) // a tile left out shows
						}
						if err := b.Compute(node); err != nil {
							t.Fatal(err)
						}
						runs = append(runs, slices.Clone(out))
					}
					// The tiles one at a time, on the one-thread
					// backend's job as its Compute left it.
					b := bs[0]
					if err := b.Compute(node); err != nil {
						t.Fatal(err)
					}
					for i := range out {
						out[i] = float32(math.NaN())
					}
					j := &b.mmid
					if int64(len(j.tiles)) < 2 {
						t.Fatalf("%s: %d tiles; the test needs several", name, len(j.tiles))
					}
					for _, tile := range j.tiles {
						j.doTile(0, tile)
					}
					for r, got := range runs {
						for i := range out {
							if !sameFloat(got[i], out[i]) {
								t.Fatalf("%s %s: threads=%d: output %d = %g, tile by tile %g", ks.name, name, r+1, i, got[i], out[i])
							}
						}
					}
				}
			}
		}
	})
}

// TestMulMatIDOneHandOff checks that one token's MUL_MAT_ID (decoding)
// hands work to the pool's threads once: the activations and their side
// data are prepared on the caller (one or a few rows) and every tile goes
// out in one region.
func TestMulMatIDOneHandOff(t *testing.T) {
	b, err := NewWithOptions(Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rng := rand.New(rand.NewPCG(85, 86))
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.F16} {
		for _, s := range moeDecodeShapes {
			if s.k%wt.BlockSize() != 0 {
				continue // q4_K's down experts: k 320
			}
			w := mxLeaf(t, b, rng, "experts", wt, s.k, s.m, 8)
			w.Buffer.(*ops.HostBuffer).MarkWeights()
			x := mxLeaf(t, b, rng, "b", quant.F32, s.k, s.b1, 1)
			ids := mxIDs(t, b, "ids", []int32{5, 2}, 2, 1)
			node := mustNode(t)(ops.MulMatID(w, x, ids))
			mxAlloc(t, b, node, 0)
			// The first Compute makes the x8 copy (a region of its own).
			if err := b.Compute(node); err != nil {
				t.Fatal(err)
			}
			seq := b.pool.seq
			if err := b.Compute(node); err != nil {
				t.Fatal(err)
			}
			if n := b.pool.seq - seq; n != 1 {
				t.Errorf("%v %s: %d pool regions, want 1", wt, s.name, n)
			}
		}
	}
}
