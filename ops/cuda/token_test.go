package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/internal/shareddata"
	"github.com/kernbench/kernbench/internal/testmodel"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu/gputest"
	"github.com/kernbench/kernbench/ops/registry"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/simt"
)

// TestDecodedTokenDriverCalls decodes tokens of small synthetic models on
// cuda-emu (dense llama with flash attention on and off, MoE: Mixtral-style
// and gpt-oss, Mamba and Mamba-2), with CUDA graphs in growing chunks (the
// default), graphs of whole splits, and no graphs, and counts the driver
// calls of the third token, after two that warm up the scratch memory and
// the graphs: no allocation of device or pinned memory, no event recorded
// (nothing asked for node times), at most two waits for the device (the
// split's end, which reads the status words of the nodes that check their
// ids, and the read of the logits), none inside a split; with graphs, each
// chunk of a split (one for a whole split; 8, 16, 32, 64, 64 ... nodes in
// growing chunks) is one capture, one update of its kept graph and one
// cuGraphLaunch, and no kernel is launched outside a capture. The logits
// are the same in every mode.
func TestDecodedTokenDriverCalls(t *testing.T) {
	b := emulated(t)
	defer b.SetGraphs(true)
	defer b.SetGraphChunk(chunkGrowing)
	vocab := shareddata.Path(t, "stories260K.gguf")
	for _, tc := range []struct {
		arch  string
		flash bool
	}{
		{"llama", false}, {"llama", true}, {"mixtral", false}, {"gpt-oss", true}, {"mamba", false}, {"mamba2", false},
	} {
		arch, flash := tc.arch, tc.flash
		t.Run(fmt.Sprintf("%s,flash=%v", arch, flash), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), arch+".gguf")
			if err := testmodel.Write(path, arch, vocab); err != nil {
				t.Fatal(err)
			}
			m, err := model.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			var logits [3][]float32
			for gi, mode := range []struct {
				graphs bool
				chunk  int
			}{{true, chunkGrowing}, {true, 0}, {false, 0}} {
				graphs := mode.graphs
				b.SetGraphs(graphs)
				b.SetGraphChunk(mode.chunk)
				sc := &splitCounter{Backend: b}
				ctx, err := m.NewContext(sc, model.ContextParams{NCtx: 32, NBatch: 8, NUBatch: 8, KVType: quant.F16, FlashAttn: flash, NSeqMax: 1})
				if err != nil {
					t.Fatal(err)
				}
				tokens := []int32{1, 30, 60}
				var got callCounts
				for i, tok := range tokens {
					sc.splits = sc.splits[:0]
					before := b.api.counts()
					if err := ctx.Decode(model.SimpleBatch([]int32{tok}, int32(i), 0)); err != nil {
						t.Fatalf("graphs=%v, token %d: %v", graphs, i, err)
					}
					got = b.api.counts().sub(before)
					t.Logf("graphs=%v, chunk %d, token %d, %d splits: %v", graphs, mode.chunk, i, len(sc.splits), got)
				}
				logits[gi] = append([]float32(nil), ctx.Logits(0)...)
				ctx.Close()
				checkTokenCalls(t, graphs, mode.chunk, got, sc.splits)
			}
			for gi := range 2 {
				if len(logits[gi]) == 0 || !slices.Equal(logits[gi], logits[2]) {
					t.Errorf("logits with graphs (mode %d) differ from those without (or are missing): %v vs %v", gi, head(logits[gi]), head(logits[2]))
				}
			}
		})
	}
}

// checkTokenCalls checks the driver calls of a decoded token after
// warm-up, in all (got) and by split, with graphs in chunks of chunk
// nodes (graphChunk's values).
func checkTokenCalls(t *testing.T, graphs bool, chunk int, got callCounts, splits []splitCalls) {
	t.Helper()
	if len(splits) == 0 {
		t.Fatalf("graphs=%v: no split ran on the backend", graphs)
	}
	// Frees are not asserted: the garbage collector's cleanups hand the
	// backend memory of dropped buffers (another context's) to free at
	// any later call.
	if got[callAlloc] != 0 || got[callHostAlloc] != 0 {
		t.Errorf("graphs=%v: memory allocated while decoding a token after warm-up: %v", graphs, got)
	}
	if got[callEventRecord] != 0 {
		t.Errorf("graphs=%v: events recorded although no node times were asked for: %v", graphs, got)
	}
	if n := got.syncs(); n > 2 {
		t.Errorf("graphs=%v: %d waits for the device in one decoded token, want at most 2: %v", graphs, n, got)
	}
	if graphs {
		if got[callLaunch] != 0 || got[callCapturedLaunch] == 0 {
			t.Errorf("graphs on: want every launch captured, none outside a capture: %v", got)
		}
	} else if got[callLaunch] == 0 || got[callGraphLaunch] != 0 || got[callCapture] != 0 {
		t.Errorf("graphs off: want launches and no graph: %v", got)
	}
	for i, sp := range splits {
		in, end := sp.compute, sp.sync
		if in.syncs() != 0 || in[callAlloc] != 0 {
			t.Errorf("graphs=%v, split %d: ComputeGraph waited or allocated: %v", graphs, i, in)
		}
		if end.syncs() != 1 {
			t.Errorf("graphs=%v, split %d: its Synchronize waited %d times, want 1: %v", graphs, i, end.syncs(), end)
		}
		if !graphs {
			continue
		}
		// After warm-up every chunk's graph is kept: updated, never
		// instantiated anew.
		n := int64(len(chunkSizes(chunk, sp.nodes)))
		if in[callCapture] != n || in[callGraphLaunch] != n || in[callGraphUpdate] != n || in[callInstantiate] != 0 {
			t.Errorf("graphs on, split %d of %d nodes: want %d captures, updates and graph launches (chunks %v), no instantiation: %v",
				i, sp.nodes, n, chunkSizes(chunk, sp.nodes), in)
		}
	}
}

// splitCounter is a backend that counts the driver calls of each split
// (a ComputeGraph and the Synchronize that follows it).
type splitCounter struct {
	*Backend
	splits []splitCalls
}

type splitCalls struct {
	compute, sync callCounts
	nodes         int
}

func (s *splitCounter) ComputeGraph(nodes []*ops.Tensor) error {
	before := s.api.counts()
	err := s.Backend.ComputeGraph(nodes)
	s.splits = append(s.splits, splitCalls{compute: s.api.counts().sub(before), nodes: len(nodes)})
	return err
}

// chunkSizes returns the sizes of the chunks a split of n nodes is
// captured in, for graphChunk value chunk: growing from 8 (doubling) to
// 64, all n, or chunk each.
func chunkSizes(chunk, n int) []int {
	var out []int
	size := 8
	for n > 0 {
		s := n
		switch {
		case chunk > 0:
			s = min(chunk, n)
		case chunk < 0:
			s = min(size, n)
			size = min(2*size, 64)
		}
		out = append(out, s)
		n -= s
	}
	return out
}

func (s *splitCounter) Synchronize() error {
	before := s.api.counts()
	err := s.Backend.Synchronize()
	if n := len(s.splits); n > 0 {
		s.splits[n-1].sync = s.api.counts().sub(before)
	}
	return err
}

func head(v []float32) []float32 { return v[:min(len(v), 4)] }

// TestStatusReadAtSplitEnd: GET_ROWS nodes queued by one ComputeGraph wait
// for nothing, also when they are more than a block of status words; the
// split's Synchronize reads their status words in one wait and returns
// the bad node's error, by name, and the words are clear for the next
// split.
func TestStatusReadAtSplitEnd(t *testing.T) {
	b := emulated(t)
	table, err := ops.NewTensor("table", quant.F32, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	good, bad := mustTensor(t, "good ids", 2), mustTensor(t, "bad ids", 2)
	for _, x := range []*ops.Tensor{table, good, bad} {
		if err := ops.AllocTensor(b, x, 0); err != nil {
			t.Fatal(err)
		}
	}
	gputest.WriteI32(t, good, 0, 2)
	gputest.WriteI32(t, bad, 1, 7)
	// Three nodes, the second bad; then more nodes than a block of status
	// words holds, the last bad.
	idsOf := []*ops.Tensor{good, bad, good}
	for range statusSlots + 40 {
		idsOf = append(idsOf, good)
	}
	idsOf = append(idsOf, bad)
	nodes := gputest.GetRowsNodes(t, b, table, idsOf...)
	for _, tc := range []struct {
		nodes   []*ops.Tensor
		wantErr string
	}{
		{nodes[:3], "rows1 (GET_ROWS): GET_ROWS: row id 7 outside the table's 3 rows"},
		{[]*ops.Tensor{nodes[0], nodes[2]}, ""},
		{nodes[2:], fmt.Sprintf("rows%d (GET_ROWS): GET_ROWS: row id 7", len(nodes)-1)},
		{nodes[2 : len(nodes)-1], ""},
	} {
		before := b.api.counts()
		if err := b.ComputeGraph(tc.nodes); err != nil {
			t.Fatalf("ComputeGraph: %v", err)
		}
		if n := b.api.counts().sub(before).syncs(); n != 0 {
			t.Errorf("ComputeGraph of %d GET_ROWS waited %d times, want none", len(tc.nodes), n)
		}
		err := b.Synchronize()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("Synchronize after good ids: %v", err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("Synchronize: %v, want an error with %q", err, tc.wantErr)
		}
		if n := b.api.counts().sub(before).syncs(); n != 1 {
			t.Errorf("the split waited %d times, want 1", n)
		}
	}
}

func mustTensor(t *testing.T, name string, n int64) *ops.Tensor {
	t.Helper()
	x, err := ops.NewTensor(name, quant.I32, n)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// graphOnly computes each node as a one-node CUDA graph (ComputeGraph,
// then Synchronize), so that the harness's cases run through capture and
// replay; it fails t if a kernel is launched outside a capture, or the
// graph is not launched.
type graphOnly struct {
	*Backend
	t *testing.T
}

func (g graphOnly) Compute(n *ops.Tensor) error {
	before := g.api.counts()
	if err := g.ComputeGraph([]*ops.Tensor{n}); err != nil {
		return err
	}
	if err := g.Synchronize(); err != nil {
		return err
	}
	// A node without elements launches nothing: its empty graph is not
	// launched.
	want := int64(1)
	if n.NumElements() == 0 {
		want = 0
	}
	if c := g.api.counts().sub(before); c[callLaunch] != 0 || c[callGraphLaunch] != want || c[callCapture] != 1 {
		g.t.Errorf("%s (%v) as a graph: %v", n.Name, n.Op, c)
	}
	return nil
}

// TestCasesAsGraphs runs every case of the matrix on cuda-emu with each
// node captured into a CUDA graph and replayed: the graphs compute what
// the launches do.
func TestCasesAsGraphs(t *testing.T) {
	b := emulated(t)
	g := graphOnly{b, t}
	pending, err := registry.Lookup("cuda")
	if err != nil {
		t.Fatal(err)
	}
	cases := harness.Cases()
	if testing.Short() {
		cases = cases[:0:0]
		seen := map[ops.Op]int{}
		for _, c := range harness.Cases() {
			if seen[c.Op]++; seen[c.Op] <= 2 {
				cases = append(cases, c)
			}
		}
	}
	for _, c := range cases {
		// As TestBackends: a pending type's case may be unsupported.
		if r := harness.Run(g, c); !r.Passed() && !(r.Unsupported() && pending.IsPending(c.Types)) {
			t.Errorf("%s: %s (%s)", c.ID(), r.Summary(), r.Err)
		}
	}
	t.Logf("%d cases", len(cases))
}

// TestHostInputsPooled computes a node whose input lives in writable host
// memory, again and again with new values, through a CUDA graph, one by
// one launches, and Compute: after the first round its copy to the
// device comes from the pool and the staging memory, allocating nothing,
// and each round sees the values written before it.
func TestHostInputsPooled(t *testing.T) {
	b := emulated(t)
	defer b.SetGraphs(true)
	const n = 300
	hb, err := ops.NewHostBuffer(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	x, err := ops.NewTensor("x", quant.F32, n)
	if err != nil {
		t.Fatal(err)
	}
	x.Buffer = hb
	y, err := ops.Scale(x, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := ops.AllocTensor(b, y, 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		run  func() error
	}{
		{"graph", func() error { b.SetGraphs(true); return b.ComputeGraph([]*ops.Tensor{y}) }},
		{"launches", func() error { b.SetGraphs(false); return b.ComputeGraph([]*ops.Tensor{y}) }},
		{"Compute", func() error { return b.Compute(y) }},
	} {
		for round := range 3 {
			for i := range n {
				binary.LittleEndian.PutUint32(hb.Bytes()[4*i:], math.Float32bits(float32(round*n+i)))
			}
			before := b.api.counts()
			if err := tc.run(); err != nil {
				t.Fatalf("%s, round %d: %v", tc.name, round, err)
			}
			if err := b.Synchronize(); err != nil {
				t.Fatalf("%s, round %d: %v", tc.name, round, err)
			}
			if c := b.api.counts().sub(before); round > 0 && (c[callAlloc] != 0 || c[callHostAlloc] != 0) {
				t.Errorf("%s, round %d: memory allocated for a host input seen before: %v", tc.name, round, c)
			}
			out := make([]byte, 4*n)
			if _, err := y.Buffer.ReadAt(out, y.Offset); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if v, want := f32of(out[4*i:]), 2*float32(round*n+i); v != want {
					t.Fatalf("%s, round %d: y[%d] = %v, want %v", tc.name, round, i, v, want)
				}
			}
		}
	}
}

// TestGraphUpdateOrInstantiate runs splits of one op sequence (a MUL_MAT
// then a SCALE) with other sizes: the same kernels update the kept graph,
// other kernels (mat-vec for 2 columns, tiled for 40) make a new one, and
// every run computes the product.
func TestGraphUpdateOrInstantiate(t *testing.T) {
	b := emulated(t)
	const k, m = 64, 24
	w := mustF32(t, b, "w", k, m)
	fill := func(x *ops.Tensor, f func(i int) float32) {
		p := make([]byte, x.NumElements()*4)
		for i := range x.NumElements() {
			binary.LittleEndian.PutUint32(p[4*i:], math.Float32bits(f(int(i))))
		}
		if _, err := x.Buffer.WriteAt(p, x.Offset); err != nil {
			t.Fatal(err)
		}
	}
	fill(w, func(i int) float32 { return float32(i%7) - 3 })
	for _, tc := range []struct {
		n           int64
		instantiate bool
	}{
		{2, true}, {3, false}, {40, true}, {48, false}, {2, true},
	} {
		x := mustF32(t, b, "x", k, tc.n)
		fill(x, func(i int) float32 { return float32(i%5) - 2 })
		y, err := ops.MulMat(w, x)
		if err != nil {
			t.Fatal(err)
		}
		z, err := ops.Scale(y, 0.5, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []*ops.Tensor{y, z} {
			if err := ops.AllocTensor(b, n, 0); err != nil {
				t.Fatal(err)
			}
		}
		before := b.api.counts()
		if err := b.ComputeGraph([]*ops.Tensor{y, z}); err != nil {
			t.Fatalf("n=%d: %v", tc.n, err)
		}
		if err := b.Synchronize(); err != nil {
			t.Fatalf("n=%d: %v", tc.n, err)
		}
		c := b.api.counts().sub(before)
		if got := c[callInstantiate] == 1 && c[callGraphUpdate] == 0; got != tc.instantiate || c[callInstantiate]+c[callGraphUpdate] != 1 || c[callGraphLaunch] != 1 {
			t.Errorf("n=%d: want a new graph %v, else an update, and one graph launch: %v", tc.n, tc.instantiate, c)
		}
		out := make([]byte, 4*m*tc.n)
		if _, err := z.Buffer.ReadAt(out, z.Offset); err != nil {
			t.Fatal(err)
		}
		for j := range int(tc.n) {
			for i := range m {
				var want float32
				for l := range k {
					want += (float32((i*k+l)%7) - 3) * (float32((j*k+l)%5) - 2)
				}
				if got := f32of(out[4*(j*m+i):]); got != want/2 {
					t.Fatalf("n=%d: z[%d, %d] = %v, want %v", tc.n, i, j, got, want/2)
				}
			}
		}
	}
}

// mustF32 returns an f32 tensor of shape ne in b's memory.
func mustF32(t *testing.T, b *Backend, name string, ne ...int64) *ops.Tensor {
	t.Helper()
	x, err := ops.NewTensor(name, quant.F32, ne...)
	if err != nil {
		t.Fatal(err)
	}
	if err := ops.AllocTensor(b, x, 0); err != nil {
		t.Fatal(err)
	}
	return x
}

// TestGraphChunks runs a split of 20 SCALE nodes, a chain, as CUDA graphs
// in chunks: the driver calls interleave captures and graph launches (a
// chunk is launched before the next is captured, so a GPU runs it while
// the host captures the next), the first run instantiates each chunk's
// graph and the next updates it, and the chain computes what it should.
// Then a node whose input lies past its memory's end, in the second chunk,
// fails the split with an error that names that node.
func TestGraphChunks(t *testing.T) {
	b := emulated(t)
	defer b.SetGraphChunk(chunkGrowing)
	defer func() { b.api.trace = nil }()
	const n, length = 20, 64
	x := mustF32(t, b, "x", length)
	one := make([]byte, 4*length)
	for i := range length {
		binary.LittleEndian.PutUint32(one[4*i:], math.Float32bits(1))
	}
	if _, err := x.Buffer.WriteAt(one, x.Offset); err != nil {
		t.Fatal(err)
	}
	nodes := make([]*ops.Tensor, n)
	for i := range nodes {
		src := x
		if i > 0 {
			src = nodes[i-1]
		}
		y, err := ops.Scale(src, 2, 0)
		if err != nil {
			t.Fatal(err)
		}
		y.Name = fmt.Sprintf("n%d", i)
		if err := ops.AllocTensor(b, y, 0); err != nil {
			t.Fatal(err)
		}
		nodes[i] = y
	}
	// calls spells the traced calls: C a capture, L a captured launch, I
	// an instantiation, U an update, G a graph launch.
	var calls strings.Builder
	b.api.trace = func(k callKind) {
		if c, ok := map[callKind]byte{callCapture: 'C', callCapturedLaunch: 'L', callInstantiate: 'I', callGraphUpdate: 'U', callGraphLaunch: 'G'}[k]; ok {
			calls.WriteByte(c)
		}
	}
	// spell is the calls of chunks of sizes, each graph instantiated (I)
	// or updated (U) as how says, chunk by chunk.
	spell := func(how string, sizes ...int) string {
		var s string
		for i, n := range sizes {
			s += "C" + strings.Repeat("L", n) + how[i:i+1] + "G"
		}
		return s
	}
	// A chunk's graph is kept by its place and ops: the first chunk of 8
	// SCALE nodes is the same for chunks of 8 and growing ones, a whole
	// split the same for chunks of 1000.
	for _, tc := range []struct {
		chunk int
		sizes []int
		first string // the first run's instantiations and updates
	}{
		{8, []int{8, 8, 4}, "III"}, {chunkGrowing, []int{8, 12}, "UI"}, {0, []int{20}, "I"}, {1000, []int{20}, "U"},
	} {
		b.SetGraphChunk(tc.chunk)
		for run, how := range []string{tc.first, "UUU"} {
			calls.Reset()
			if err := b.ComputeGraph(nodes); err != nil {
				t.Fatalf("chunk %d, run %d: %v", tc.chunk, run, err)
			}
			if err := b.Synchronize(); err != nil {
				t.Fatalf("chunk %d, run %d: %v", tc.chunk, run, err)
			}
			if want := spell(how, tc.sizes...); calls.String() != want {
				t.Errorf("chunk %d, run %d: driver calls\n%s, want\n%s", tc.chunk, run, calls.String(), want)
			}
			out := make([]byte, 4*length)
			if _, err := nodes[n-1].Buffer.ReadAt(out, nodes[n-1].Offset); err != nil {
				t.Fatal(err)
			}
			for i := range length {
				if v := f32of(out[4*i:]); v != 1<<n {
					t.Fatalf("chunk %d, run %d: out[%d] = %v, want %v", tc.chunk, run, i, v, 1<<n)
				}
			}
		}
	}

	if b.comp.(emuCompiler).mode != simt.Checked {
		t.Skip("the emulator's memory checks are off ($KERNBENCH_SIMT_MODE=fast): no fault to name")
	}
	// n13 reads 4096 bytes of which 16 are memory.
	small, err := b.Alloc(16)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := ops.NewTensor("bad", quant.F32, 1024)
	if err != nil {
		t.Fatal(err)
	}
	bad.Buffer = &deviceBuffer{b: b, ptr: small.(*deviceBuffer).ptr, size: 4096, freed: new(atomic.Bool)}
	faulty, err := ops.Scale(bad, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	faulty.Name = "n13"
	if err := ops.AllocTensor(b, faulty, 0); err != nil {
		t.Fatal(err)
	}
	split := slices.Clone(nodes)
	split[13] = faulty
	b.SetGraphChunk(8)
	calls.Reset()
	err = b.ComputeGraph(split)
	b.Synchronize()
	if err == nil || !strings.Contains(err.Error(), "n13 (SCALE)") || !strings.Contains(err.Error(), "out-of-bounds") {
		t.Errorf("a split with an out-of-bounds read in n13: %v, want the fault named with n13 (SCALE)", err)
	}
	// The first chunk ran; the second failed at its launch; the third
	// was never captured.
	if want := spell("UU", 8, 8); calls.String() != want {
		t.Errorf("driver calls of the faulty split\n%s, want\n%s", calls.String(), want)
	}
	runtime.KeepAlive(small)
}
