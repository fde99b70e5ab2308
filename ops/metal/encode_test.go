package metal

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/internal/shareddata"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu/gputest"
	"github.com/kernbench/kernbench/quant"
)

// fakeBuffer is a devBuffer for the hazard rule's tests.
type fakeBuffer struct{ id int }

func (*fakeBuffer) contents() []byte { return nil }
func (*fakeBuffer) release()         {}

func TestHazards(t *testing.T) {
	a, b := &fakeBuffer{1}, &fakeBuffer{2}
	rg := func(buf devBuffer, lo, hi int64) memRange { return memRange{buf, lo, hi} }
	for _, tc := range []struct {
		name          string
		reads, writes []memRange // recorded since the last barrier
		read          []memRange // the new node's
		write         memRange
		want          bool
	}{
		{"read after write", nil, []memRange{rg(a, 0, 64)}, []memRange{rg(a, 32, 48)}, rg(b, 0, 16), true},
		{"write after read", []memRange{rg(a, 0, 64)}, nil, nil, rg(a, 60, 80), true},
		{"write after write", nil, []memRange{rg(a, 0, 64)}, nil, rg(a, 0, 8), true},
		{"reads of one range", []memRange{rg(a, 0, 64)}, nil, []memRange{rg(a, 0, 64)}, rg(b, 0, 16), false},
		{"adjacent ranges", nil, []memRange{rg(a, 0, 64)}, []memRange{rg(a, 64, 128)}, rg(a, 128, 192), false},
		{"another buffer", []memRange{rg(a, 0, 64)}, []memRange{rg(a, 64, 128)}, []memRange{rg(b, 0, 128)}, rg(b, 128, 256), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h hazards
			h.reads, h.writes = tc.reads, tc.writes
			if got := h.conflicts(tc.read, tc.write, true); got != tc.want {
				t.Errorf("conflicts = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCommandBufferCount(t *testing.T) {
	for _, tc := range []struct{ nodes, want int }{{1, 1}, {32, 1}, {33, 2}, {100, 4}, {1000, 4}} {
		if got := commandBuffers(tc.nodes); got != tc.want {
			t.Errorf("commandBuffers(%d) = %d, want %d", tc.nodes, got, tc.want)
		}
		nodes := make([]*ops.Tensor, tc.nodes)
		n := 0
		for _, c := range chunks(nodes, commandBuffers(tc.nodes)) {
			n += len(c)
			if len(c) == 0 {
				t.Errorf("%d nodes: an empty command buffer", tc.nodes)
			}
		}
		if n != tc.nodes {
			t.Errorf("chunks of %d nodes hold %d", tc.nodes, n)
		}
	}
}

// chain returns n SCALE nodes on metal-emu, each adding 1 to the one
// before (the first to x, zeros), each in a buffer of its own: every node
// needs the one before it.
func chain(t *testing.T, b *Backend, n, size int) []*ops.Tensor {
	t.Helper()
	x, err := ops.NewTensor("x", quant.F32, int64(size))
	if err != nil {
		t.Fatal(err)
	}
	if err := ops.AllocTensor(b, x, 0); err != nil {
		t.Fatal(err)
	}
	var nodes []*ops.Tensor
	prev := x
	for i := range n {
		y, err := ops.Scale(prev, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		y.Name = fmt.Sprintf("y%d", i)
		if err := ops.AllocTensor(b, y, 0); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, y)
		prev = y
	}
	return nodes
}

func readF32(t *testing.T, x *ops.Tensor) []float32 {
	t.Helper()
	p := make([]byte, x.Extent())
	if _, err := x.Buffer.ReadAt(p, x.Offset); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(p)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
	}
	return out
}

// TestDroppedBarrierFails: a chain of dependent nodes in one split is
// right with its barriers, and wrong without them, because metal-emu runs
// the dispatches between two barriers in a shuffled order (as a GPU may
// run them at once).
func TestDroppedBarrierFails(t *testing.T) {
	b := emulated(t)
	const n = 8
	nodes := chain(t, b, n, 256)
	last := nodes[n-1]
	for seed := uint64(1); seed <= 3; seed++ {
		b.dev.(*emuDevice).seed = seed
		for _, drop := range []bool{false, true} {
			b.dropBarriers = drop
			for _, y := range nodes { // not the last run's results
				if _, err := y.Buffer.WriteAt(make([]byte, y.Extent()), y.Offset); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.ComputeGraph(nodes); err != nil {
				t.Fatal(err)
			}
			got := readF32(t, last)
			var before int
			for _, cb := range b.encoded {
				bf, _ := cb.barriers()
				before += bf
			}
			if len(b.encoded) != 1 || before != n-1 {
				t.Errorf("seed %d: %d command buffers with %d barriers between nodes, want 1 and %d", seed, len(b.encoded), before, n-1)
			}
			right := true
			for _, v := range got {
				right = right && v == n
			}
			switch {
			case !drop && !right:
				t.Errorf("seed %d: the chain computed %v with its barriers, want %d", seed, got[0], n)
			case drop && right:
				t.Errorf("seed %d: the chain computed the right result with its barriers dropped: the emulator ran its dispatches in order", seed)
			}
		}
	}
	b.dropBarriers = false
	// Independent nodes need no barrier: eight SCALEs of one source.
	x := nodes[0].Src[0]
	var free []*ops.Tensor
	for range n {
		y, _ := ops.Scale(x, 2, 0)
		if err := ops.AllocTensor(b, y, 0); err != nil {
			t.Fatal(err)
		}
		free = append(free, y)
	}
	if err := b.ComputeGraph(free); err != nil {
		t.Fatal(err)
	}
	if err := b.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if bf, inner := b.encoded[0].barriers(); len(b.encoded) != 1 || bf+inner != 0 {
		t.Errorf("independent nodes: %d command buffers, %d barriers, want 1 and none", len(b.encoded), bf+inner)
	}
}

// TestNodeTimingOnlyWhenAsked: a split's nodes get GPU times in a command
// buffer each only after SetNodeTiming(true).
func TestNodeTimingOnlyWhenAsked(t *testing.T) {
	b := emulated(t)
	nodes := chain(t, b, 3, 64)
	for _, on := range []bool{false, true} {
		b.SetNodeTiming(on)
		if err := b.ComputeGraph(nodes); err != nil {
			t.Fatal(err)
		}
		times, err := b.NodeTimes()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case on && (len(times) != 3 || len(b.encoded) != 3):
			t.Errorf("timing on: %d times, %d command buffers, want 3 and 3", len(times), len(b.encoded))
		case !on && (times != nil || len(b.encoded) != 1):
			t.Errorf("timing off: times %v, %d command buffers, want nil and 1", times, len(b.encoded))
		}
		if got := readF32(t, nodes[2]); got[0] != 3 {
			t.Errorf("timing %v: %v, want 3", on, got[0])
		}
	}
}

// span is where a tensor's bytes are, for the test's own hazard check.
type span struct {
	buf    ops.Buffer
	lo, hi int64
}

func spanOf(x *ops.Tensor) (span, bool) {
	buf, off := x.Storage()
	if _, ok := buf.(*buffer); !ok || x.NumElements() == 0 {
		return span{}, false
	}
	return span{buf, off, off + x.Extent()}, true
}

func (s span) overlaps(o span) bool { return s.buf == o.buf && s.lo < o.hi && o.lo < s.hi }

// dependent reports whether node n must run after m: it reads what m
// writes, or writes what m reads or writes.
func dependent(m, n *ops.Tensor) bool {
	mw, okm := spanOf(m)
	nw, okn := spanOf(n)
	var mr, nr []span
	for _, s := range m.Src {
		if s != nil {
			if x, ok := spanOf(s); ok {
				mr = append(mr, x)
			}
		}
	}
	for _, s := range n.Src {
		if s != nil {
			if x, ok := spanOf(s); ok {
				nr = append(nr, x)
			}
		}
	}
	for _, r := range nr {
		if okm && r.overlaps(mw) {
			return true
		}
	}
	if okn {
		for _, r := range mr {
			if nw.overlaps(r) {
				return true
			}
		}
		if okm && nw.overlaps(mw) {
			return true
		}
	}
	return false
}

// TestDecodedTokenEncoding decodes tokens of stories260K on metal-emu and
// checks how the third token's split is encoded: a few command buffers,
// a barrier before a node only where it depends on a node since the last
// barrier (by the tensors' bytes), no two dependent nodes between two
// barriers, nodes that run concurrently; and the same logits as with a
// command buffer per node (SetNodeTiming).
func TestDecodedTokenEncoding(t *testing.T) {
	b := emulated(t)
	m, err := model.Load(shareddata.Path(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	logits := func(timed bool) []float32 {
		b.SetNodeTiming(timed)
		defer b.SetNodeTiming(false)
		ctx, err := m.NewContext(b, model.ContextParams{NCtx: 32, NBatch: 8, NUBatch: 8, KVType: quant.F16, NSeqMax: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer ctx.Close()
		for i, tok := range []int32{1, 30, 60} {
			if err := ctx.Decode(model.SimpleBatch([]int32{tok}, int32(i), 0)); err != nil {
				t.Fatalf("token %d: %v", i, err)
			}
		}
		return append([]float32(nil), ctx.Logits(-1)...)
	}
	got := logits(false)
	nodes, barriers, inner, concurrent := 0, 0, 0, 0
	for i, cb := range b.encoded {
		var since []*ops.Tensor // the nodes since the last barrier
		for _, en := range cb {
			nodes++
			inner += en.inner
			if en.barrier {
				barriers++
				needed := false
				for _, m := range since {
					needed = needed || dependent(m, en.node)
				}
				if !needed {
					t.Errorf("command buffer %d: a barrier before %s, which depends on none of the %d nodes since the last", i, nodeLabel(en.node), len(since))
				}
				since = since[:0]
			}
			for _, m := range since {
				if dependent(m, en.node) {
					t.Errorf("command buffer %d: %s runs beside %s, which it depends on, with no barrier", i, nodeLabel(en.node), nodeLabel(m))
				}
			}
			since = append(since, en.node)
			if len(since) == 2 {
				concurrent++
			}
		}
	}
	t.Logf("decoded token: %d nodes in %d command buffers, %d barriers between nodes, %d inside nodes, %d runs of concurrent nodes", nodes, len(b.encoded), barriers, inner, concurrent)
	if len(b.encoded) < 1 || len(b.encoded) > maxCommandBuffers || nodes < 20 {
		t.Errorf("%d nodes in %d command buffers, want at most %d", nodes, len(b.encoded), maxCommandBuffers)
	}
	if barriers >= nodes || concurrent == 0 {
		t.Errorf("%d barriers between %d nodes and %d runs of concurrent nodes: nothing ran concurrently", barriers, nodes, concurrent)
	}
	want := logits(true)
	timed := 0
	for _, cb := range b.encoded {
		if len(cb) > 1 {
			t.Errorf("with node timing: %d nodes in a command buffer", len(cb))
		}
		timed += len(cb)
	}
	if timed != nodes {
		t.Errorf("with node timing: %d nodes, %d without", timed, nodes)
	}
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("%d and %d logits", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("logit %d: %v concurrent, %v with a command buffer per node", i, got[i], want[i])
		}
	}
}

// TestStatusReadAtSplitEnd: GET_ROWS nodes of one ComputeGraph each
// write a status slot of their own; the split's Synchronize returns the
// bad node's error, by name, and the slots are clear for the next split.
func TestStatusReadAtSplitEnd(t *testing.T) {
	b := emulated(t)
	table, err := ops.NewTensor("table", quant.F32, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := ops.NewTensor("good ids", quant.I32, 2)
	bad, _ := ops.NewTensor("bad ids", quant.I32, 2)
	for _, x := range []*ops.Tensor{table, good, bad} {
		if err := ops.AllocTensor(b, x, 0); err != nil {
			t.Fatal(err)
		}
	}
	gputest.WriteI32(t, good, 0, 2)
	gputest.WriteI32(t, bad, 1, 7)
	nodes := gputest.GetRowsNodes(t, b, table, good, bad, good)
	for _, tc := range []struct {
		nodes   []*ops.Tensor
		wantErr string
	}{
		{nodes, "rows1 (GET_ROWS): GET_ROWS: row id 7 outside the table's 3 rows"},
		{[]*ops.Tensor{nodes[0], nodes[2]}, ""},
	} {
		if err := b.ComputeGraph(tc.nodes); err != nil {
			t.Fatalf("ComputeGraph: %v", err)
		}
		if len(b.checks) != len(tc.nodes) {
			t.Errorf("%d pending checks after %d GET_ROWS, want one each", len(b.checks), len(tc.nodes))
		}
		err := b.Synchronize()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("Synchronize after good ids: %v", err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("Synchronize: %v, want an error with %q", err, tc.wantErr)
		}
	}
	// Compute of a checked node waits: a bad id is its error.
	if err := b.Compute(nodes[1]); err == nil || !strings.Contains(err.Error(), "row id 7") {
		t.Errorf("Compute of GET_ROWS with a bad id: %v", err)
	}
}

// TestFastMathModeled: with elementwise.metal built as a fast math file,
// metal-emu's SILU has the error Metal's fast exp may have (up to
// 3 + floor(2|x|) ulp, modeled at its worst): for x in [-8, -1], where
// 1 + exp(-x) passes exp's relative error on, results differ from the
// correctly rounded ones by more than a precise exp and a division could
// (a few ulp), and stay within 1e-5 relative. (elementwise.metal keeps
// safe math: with fast exp SILU's NMSE passes its limit, see fastMath.)
func TestFastMathModeled(t *testing.T) {
	was := fastMath["elementwise.metal"]
	fastMath["elementwise.metal"] = true
	defer func() { fastMath["elementwise.metal"] = was }()
	b := emulated(t)
	const n = 256
	x, _ := ops.NewTensor("x", quant.F32, n)
	if err := ops.AllocTensor(b, x, 0); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 4*n)
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = -8 + 7*float32(i)/n
		binary.LittleEndian.PutUint32(p[4*i:], math.Float32bits(xs[i]))
	}
	if _, err := x.Buffer.WriteAt(p, 0); err != nil {
		t.Fatal(err)
	}
	y, _ := ops.Silu(x)
	if err := ops.AllocTensor(b, y, 0); err != nil {
		t.Fatal(err)
	}
	if err := b.Compute(y); err != nil {
		t.Fatal(err)
	}
	got := readF32(t, y)
	worstUlps, worstRel := 0.0, 0.0
	for i, v := range xs {
		want := float64(v) / (1 + math.Exp(-float64(v)))
		ulp := float64(math.Nextafter32(float32(math.Abs(want)), float32(math.Inf(1)))) - float64(float32(math.Abs(want)))
		worstUlps = max(worstUlps, math.Abs(float64(got[i])-want)/ulp)
		worstRel = max(worstRel, math.Abs(float64(got[i])-want)/math.Abs(want))
	}
	t.Logf("SILU on [-8, -1]: worst %.1f ulp, %.2g relative", worstUlps, worstRel)
	if worstUlps < 6 {
		t.Errorf("SILU is within %.1f ulp of the correctly rounded values: fast exp is not modeled", worstUlps)
	}
	if worstRel > 1e-5 {
		t.Errorf("SILU's relative error %.2g is more than fast exp's bound allows", worstRel)
	}
}
