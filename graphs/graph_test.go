package graphs

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/reference"
)

func must(t *testing.T) func(*ops.Tensor, error) *ops.Tensor {
	return func(x *ops.Tensor, err error) *ops.Tensor {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
}

// leaf returns an allocated leaf of type typ and shape ne holding vals.
func leaf(t *testing.T, b ops.Backend, name string, typ quant.Type, ne []int64, vals []float32) *ops.Tensor {
	t.Helper()
	x := must(t)(ops.NewTensor(name, typ, ne...))
	if err := ops.AllocTensor(b, x, 0); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		if typ == quant.I32 {
			binary.LittleEndian.PutUint32(raw[4*i:], uint32(int32(v)))
		} else {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
		}
	}
	if _, err := x.Buffer.WriteAt(raw, 0); err != nil {
		t.Fatal(err)
	}
	return x
}

func ramp(n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = scale * float32((i*7)%11-5)
	}
	return v
}

// checkOrder fails unless every node comes after its sources and views.
func checkOrder(t *testing.T, g *Graph) {
	t.Helper()
	for i, n := range g.Nodes() {
		if g.Index(n) != i {
			t.Fatalf("Index(%s) = %d, want %d", n.Label(), g.Index(n), i)
		}
		for _, s := range append(append([]*ops.Tensor{}, n.Src...), n.ViewOf) {
			if s == nil {
				continue
			}
			if j := g.Index(s); j < 0 || j >= i {
				t.Fatalf("node %d %s: dependency %s at %d", i, n.Label(), s.Label(), j)
			}
		}
	}
}

// mlp builds norm(x)*w, a matmul, a residual add and a silu.
func mlp(t *testing.T, b ops.Backend) (x, out *ops.Tensor) {
	m := must(t)
	x = leaf(t, b, "x", quant.F32, []int64{8, 3}, ramp(24, 0.25))
	w := leaf(t, b, "w", quant.F32, []int64{8}, ramp(8, 0.5))
	a := leaf(t, b, "a", quant.F32, []int64{8, 8}, ramp(64, 0.125))
	n := m(ops.RMSNorm(x, 1e-5)).SetName("norm")
	nw := m(ops.Mul(n, w)).SetName("norm_w")
	mm := m(ops.MulMat(a, nw)).SetName("mm")
	res := m(ops.Add(mm, x)).SetName("res")
	out = m(ops.Silu(res)).SetName("out")
	return x, out
}

func TestOrderIsTopologicalAndDeterministic(t *testing.T) {
	b := cputest.New(t, 1)
	defer b.Close()
	_, out := mlp(t, b)
	ga, err := New(out)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := New(out)
	if err != nil {
		t.Fatal(err)
	}
	checkOrder(t, ga)
	if ga.Len() != 8 {
		t.Errorf("graph has %d nodes, want 8 (3 leaves, 5 ops)", ga.Len())
	}
	for i := range ga.Nodes() {
		if ga.Nodes()[i] != gb.Nodes()[i] {
			t.Fatalf("order differs at %d: %s vs %s", i, ga.Nodes()[i].Label(), gb.Nodes()[i].Label())
		}
	}
	// x is used twice (norm and residual) and appears once.
	seen := map[*ops.Tensor]int{}
	for _, n := range ga.Nodes() {
		seen[n]++
	}
	for n, c := range seen {
		if c != 1 {
			t.Errorf("%s appears %d times", n.Label(), c)
		}
	}
	if got := len(ga.Leaves()); got != 3 {
		t.Errorf("%d leaves, want 3", got)
	}
	if got := len(ga.Computed()); got != 5 {
		t.Errorf("%d computed nodes, want 5", got)
	}
	if len(ga.Outputs()) != 1 || ga.Outputs()[0] != out {
		t.Errorf("outputs %v", ga.Outputs())
	}
}

func TestComputeMatchesReference(t *testing.T) {
	b := cputest.New(t, 2)
	defer b.Close()
	_, out := mlp(t, b)
	g, err := New(out)
	if err != nil {
		t.Fatal(err)
	}
	var hooked []*ops.Tensor
	g.Hook = func(n *ops.Tensor, start, end time.Time) {
		if end.Before(start) {
			t.Errorf("%s: end before start", n.Label())
		}
		hooked = append(hooked, n)
	}
	// Without reuse every intermediate keeps its data for the check below.
	s, err := NewScheduler(Options{NoReuse: true}, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Compute(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	comp := g.Computed()
	if len(hooked) != len(comp) {
		t.Fatalf("hook called %d times for %d computed nodes", len(hooked), len(comp))
	}
	for i := range comp {
		if hooked[i] != comp[i] {
			t.Errorf("hook %d got %s, want %s", i, hooked[i].Label(), comp[i].Label())
		}
	}
	// Each node against the reference computed from its (backend) sources.
	for _, n := range comp {
		want, err := reference.Compute(n)
		if err != nil {
			t.Fatal(err)
		}
		got, err := reference.Read(n)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if d := math.Abs(got[i] - want[i]); d > 1e-4*(1+math.Abs(want[i])) {
				t.Fatalf("%s[%d] = %v, reference %v", n.Label(), i, got[i], want[i])
			}
		}
	}
	// A second run reuses the plan and the arena: nothing moves.
	a := s.Arena(b)
	size, off, plan := a.Size(), out.Offset, g.Plan()
	if err := s.Compute(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	if a.Size() != size || out.Offset != off || g.Plan() != plan {
		t.Errorf("second run replanned: size %d -> %d, offset %d -> %d", size, a.Size(), off, out.Offset)
	}
}

// TestAfterOrdersSideEffects checks the KV-cache pattern: a CPY writes into
// a cache leaf, a view of the cache is read by a later op with no source
// edge to the CPY. After (or expanding the CPY first) puts the copy first.
func TestAfterOrdersSideEffects(t *testing.T) {
	m := must(t)
	for _, useAfter := range []bool{true, false} {
		b := cputest.New(t, 1)
		cache := leaf(t, b, "cache", quant.F32, []int64{4, 2}, make([]float32, 8))
		src := leaf(t, b, "src", quant.F32, []int64{4}, []float32{1, 2, 3, 4})
		slot := m(ops.View(cache, []int64{4}, []int64{0}, 16))
		cp := m(ops.Cpy(src, slot)).SetName("store")
		read := m(ops.View(cache, []int64{4, 2}, []int64{0, 16}, 0))
		sum := m(ops.SumRows(read)).SetName("sum")
		g := &Graph{}
		if useAfter {
			if err := g.After(sum, cp); err != nil {
				t.Fatal(err)
			}
			if err := g.Expand(sum); err != nil {
				t.Fatal(err)
			}
		} else if err := g.Expand(cp, sum); err != nil {
			t.Fatal(err)
		}
		checkOrder(t, g)
		if g.Index(cp) < 0 || g.Index(cp) > g.Index(sum) {
			t.Fatalf("after=%v: store at %d, sum at %d", useAfter, g.Index(cp), g.Index(sum))
		}
		if err := g.Compute(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		got, err := reference.Read(sum)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != 0 || got[1] != 10 {
			t.Errorf("after=%v: row sums %v, want [0 10]", useAfter, got)
		}
		b.Close()
	}
}

func TestGraphErrors(t *testing.T) {
	m := must(t)
	b := cputest.New(t, 1)
	defer b.Close()

	if _, err := New(nil); err == nil || !strings.Contains(err.Error(), "nil") {
		t.Errorf("nil output: %v", err)
	}

	// A cycle made with After.
	x := leaf(t, b, "x", quant.F32, []int64{4}, ramp(4, 1))
	s1 := m(ops.Silu(x)).SetName("s1")
	s2 := m(ops.Silu(s1)).SetName("s2")
	g := &Graph{}
	if err := g.After(s1, s2); err != nil {
		t.Fatal(err)
	}
	if err := g.Expand(s2); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("cycle: %v", err)
	}

	// After on a node already placed.
	g2 := must3(t)(New(s2))
	if err := g2.After(s2, x); err == nil {
		t.Error("After on an expanded node succeeded")
	}

	// A leaf without storage is named.
	in := m(ops.NewTensor("tokens_in", quant.F32, 4))
	g3 := must3(t)(New(m(ops.Silu(in))))
	if err := g3.Compute(context.Background(), b); err == nil || !strings.Contains(err.Error(), "tokens_in") {
		t.Errorf("unallocated leaf: %v", err)
	}

	// A failing node is named.
	table := leaf(t, b, "table", quant.F32, []int64{4, 3}, ramp(12, 1))
	ids := leaf(t, b, "ids", quant.I32, []int64{2}, []float32{1, 7})
	rows := m(ops.GetRows(table, ids)).SetName("gather_bad")
	g4 := must3(t)(New(rows))
	if err := g4.Compute(context.Background(), b); err == nil || !strings.Contains(err.Error(), "gather_bad") {
		t.Errorf("failing node: %v", err)
	}

	// A cancelled context stops before the first node.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g5 := must3(t)(New(m(ops.Silu(x))))
	if err := g5.Compute(ctx, b); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if err := g5.Compute(context.Background(), nil); err == nil {
		t.Error("nil backend accepted")
	}
}

func must3(t *testing.T) func(*Graph, error) *Graph {
	return func(g *Graph, err error) *Graph {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
}

func TestArenaSharedAndGrows(t *testing.T) {
	m := must(t)
	b := cputest.New(t, 1)
	defer b.Close()
	a := NewArena(b)
	x := leaf(t, b, "x", quant.F32, []int64{16}, ramp(16, 1))
	small := must3(t)(New(m(ops.Silu(x))))
	if err := small.ComputeIn(context.Background(), b, a); err != nil {
		t.Fatal(err)
	}
	if a.Size() != Align || a.Used() != Align {
		t.Errorf("after a 64-byte node: size %d used %d, want %d", a.Size(), a.Used(), Align)
	}
	// SCALE computes in place in the SILU's bytes, which die there.
	y := leaf(t, b, "y", quant.F32, []int64{100}, ramp(100, 1))
	s := m(ops.Silu(y))
	big := must3(t)(New(m(ops.Scale(s, 2, 0))))
	if err := big.ComputeIn(context.Background(), b, a); err != nil {
		t.Fatal(err)
	}
	if want := int64(448); a.Size() != want || a.Used() != want {
		t.Errorf("arena size %d used %d, want %d (two 400-byte nodes aligned to 448, one in place)", a.Size(), a.Used(), want)
	}
	if mem := big.Plan().Memory()[0]; mem.InPlace != 1 || mem.Total != 2*448 {
		t.Errorf("memory %+v, want 1 in place of 896 bytes", mem)
	}
	for _, n := range big.Computed() {
		if n.Offset%Align != 0 || n.Buffer == nil {
			t.Errorf("%s at offset %d", n.Label(), n.Offset)
		}
	}
	other := cputest.New(t, 1)
	defer other.Close()
	z := must3(t)(New(m(ops.Silu(x))))
	if err := z.ComputeIn(context.Background(), other, a); err == nil {
		t.Error("arena of one backend used by another")
	}
}
