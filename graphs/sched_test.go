package graphs

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/graphs/graphstest"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
	"github.com/kernbench/kernbench/quant"
)

// fallbackGraph builds a graph mixing ops the fake has (MUL_MAT, ADD) and
// ops it lacks, with a CPY into a cache leaf and readers of the cache on
// both backends.
func fallbackGraph(t *testing.T, b ops.Backend) (*Graph, *ops.Tensor) {
	m := must(t)
	x := leaf(t, b, "x", quant.F32, []int64{8, 3}, ramp(24, 0.25))
	w := leaf(t, b, "w", quant.F32, []int64{8}, ramp(8, 0.5))
	a := leaf(t, b, "a", quant.F32, []int64{8, 8}, ramp(64, 0.125))
	cache := leaf(t, b, "cache", quant.F32, []int64{8, 4}, make([]float32, 32))
	n := m(ops.RMSNorm(x, 1e-5)).SetName("norm") // cpu: copy x
	nw := m(ops.Mul(n, w)).SetName("norm_w")     // cpu: copy w
	mm := m(ops.MulMat(a, nw)).SetName("mm")     // fake: copy nw
	mm2 := m(ops.MulMat(a, nw)).SetName("mm2")   // fake: nw's copy reused
	res := m(ops.Add(mm, x)).SetName("res")      // fake
	both := m(ops.Add(res, mm2)).SetName("both") // fake
	act := m(ops.Silu(both)).SetName("act")      // cpu: copy both
	all := m(ops.View(cache, []int64{8, 4}, []int64{0, cache.Nb[1]}, 0)).SetName("all")
	pre := m(ops.SumRows(all)).SetName("pre_sum") // cpu, before the store: copy the cache view
	slot := m(ops.View(cache, []int64{8, 3}, []int64{0, cache.Nb[1]}, cache.Nb[1])).SetName("slot")
	store := m(ops.Cpy(act, slot)).SetName("store")                                     // cpu: copy the slot in, and back
	kq := m(ops.MulMat(all, nw)).SetName("kq")                                          // fake: reads the cache where it lives
	soft := m(ops.SoftMax(kq, nil, nil, ops.SoftMaxParams{Scale: 0.5})).SetName("soft") // cpu: copy kq
	sum := m(ops.SumRows(all)).SetName("cache_sum")                                     // cpu: copy the cache view again: the store wrote it
	g := &Graph{}
	if err := g.After(kq, store); err != nil {
		t.Fatal(err)
	}
	if err := g.After(sum, store); err != nil {
		t.Fatal(err)
	}
	if err := g.Expand(pre, store, soft, sum); err != nil {
		t.Fatal(err)
	}
	return g, cache
}

func TestSchedulerFallback(t *testing.T) {
	ref := cputest.New(t, 1)
	defer ref.Close()
	// Pure CPU.
	gw, cw := fallbackGraph(t, ref)
	if err := gw.Compute(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
	want := outputBytes(t, gw)
	wantCache, _ := cw.HostBytes()

	// The fake with MUL_MAT and ADD, the CPU behind it.
	c1, c2 := cputest.New(t, 1), cputest.New(t, 1)
	defer c1.Close()
	defer c2.Close()
	primary := graphstest.NewFake("fake", c1, true, ops.OpMulMat, ops.OpAdd)
	fallback := graphstest.NewFake("cpu", c2, false)
	s, err := NewScheduler(Options{}, primary, fallback)
	if err != nil {
		t.Fatal(err)
	}
	g, cache := fallbackGraph(t, ref)
	p, err := s.Plan(g)
	if err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		if run == 1 {
			// Running again must give the same, with the cache reset.
			if _, err := cache.Buffer.WriteAt(make([]byte, 128), 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := outputBytes(t, g)
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("run %d: output %s differs from the CPU's", run, g.Outputs()[i].Label())
			}
		}
		gotCache, _ := cache.HostBytes()
		if !bytes.Equal(gotCache, wantCache) {
			t.Errorf("run %d: the cache differs from the CPU's", run)
		}
	}
	if primary.Computed[ops.OpMulMat] != 2*3 || primary.Computed[ops.OpAdd] != 2*2 {
		t.Errorf("fake computed %v, want 3 MUL_MAT and 2 ADD per run", primary.Computed)
	}
	for _, n := range g.Computed() {
		wantB := ops.Backend(fallback)
		if n.Op == ops.OpMulMat || n.Op == ops.OpAdd {
			wantB = primary
		}
		if p.Backend(n) != wantB {
			t.Errorf("%s ran on %v, want %s", n.Label(), p.Backend(n), wantB.Name())
		}
	}

	// The cache view for pre_sum, x, w, nw (once for both matmuls), both,
	// the cache slot in and back, kq, and the cache view again once the
	// store has written the cache.
	var copies []string
	for _, st := range p.Steps() {
		if st.Kind == KindCopy {
			copies = append(copies, fmt.Sprintf("%s:%s->%s", st.Node.Label(), st.From.Name(), st.Backend.Name()))
		}
	}
	wantCopies := []string{"all:fake->cpu", "x:fake->cpu", "w:fake->cpu", "norm_w:cpu->fake", "both:fake->cpu", "slot:fake->cpu", "store:cpu->fake", "kq:fake->cpu", "all:fake->cpu"}
	if strings.Join(copies, " ") != strings.Join(wantCopies, " ") {
		t.Errorf("copies\n%v\nwant\n%v", copies, wantCopies)
	}
	n, nbytes := p.Copies()
	wantBytes := int64(128 + 96 + 32 + 96 + 96 + 2*96 + 48 + 128)
	if n != len(wantCopies) || nbytes != wantBytes {
		t.Errorf("Copies() = %d, %d bytes; want %d, %d", n, nbytes, len(wantCopies), wantBytes)
	}
	recs := p.Records()
	if len(recs) != len(p.Steps()) {
		t.Fatalf("%d records for %d steps", len(recs), len(p.Steps()))
	}
	ncopy := 0
	for _, r := range recs {
		if r.End.Before(r.Start) {
			t.Errorf("%s ends before it starts", r.Label())
		}
		if r.Kind == KindCopy {
			ncopy++
			if r.Cost.Bytes != 2*r.Bytes || !strings.HasPrefix(r.Label(), "COPY(") {
				t.Errorf("copy record %+v", r)
			}
		} else if r.Cost != ops.CostOf(r.Node) {
			t.Errorf("%s: cost %+v, want %+v", r.Node.Label(), r.Cost, ops.CostOf(r.Node))
		}
	}
	if ncopy != len(wantCopies) {
		t.Errorf("%d copy records, want %d", ncopy, len(wantCopies))
	}
	for _, m := range p.Memory() {
		if m.Tensors == 0 || m.Size == 0 {
			t.Errorf("memory %+v: nothing on this backend", m)
		}
	}
}

// TestSchedulerRandomFallback runs random graphs on a fake that has only
// some ops and checks the outputs are those of the CPU alone.
func TestSchedulerRandomFallback(t *testing.T) {
	ref := cputest.New(t, 1)
	defer ref.Close()
	c1, c2 := cputest.New(t, 1), cputest.New(t, 1)
	defer c1.Close()
	defer c2.Close()
	for i, only := range [][]ops.Op{
		{ops.OpMulMat, ops.OpAdd},
		{ops.OpSilu, ops.OpRMSNorm, ops.OpCpy},
		{ops.OpMul, ops.OpScale, ops.OpCont, ops.OpSwiGLU},
	} {
		primary := graphstest.NewFake("fake", c1, true, only...)
		s, err := NewScheduler(Options{}, primary, graphstest.NewFake("cpu", c2, false))
		if err != nil {
			t.Fatal(err)
		}
		seed := uint64(10 + i)
		gw := randGraph(t, rand.New(rand.NewPCG(seed, 1)), ref, 30)
		if err := gw.Compute(context.Background(), ref); err != nil {
			t.Fatal(err)
		}
		want := outputBytes(t, gw)
		g := randGraph(t, rand.New(rand.NewPCG(seed, 1)), ref, 30)
		if err := s.Compute(context.Background(), g); err != nil {
			t.Fatal(err)
		}
		checkPlan(t, g.Plan())
		got := outputBytes(t, g)
		for j := range want {
			if !bytes.Equal(got[j], want[j]) {
				t.Errorf("fake with %v: output %s differs from the CPU's", only, g.Outputs()[j].Label())
			}
		}
		n, _ := g.Plan().Copies()
		if n == 0 || len(primary.Computed) == 0 {
			t.Errorf("fake with %v: %d copies, computed %v", only, n, primary.Computed)
		}
	}
}

func TestSchedulerErrors(t *testing.T) {
	b := cputest.New(t, 1)
	defer b.Close()
	if _, err := NewScheduler(Options{}); err == nil {
		t.Error("no backends accepted")
	}
	if _, err := NewScheduler(Options{}, b, nil); err == nil {
		t.Error("nil backend accepted")
	}
	if _, err := NewScheduler(Options{}, b, b); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate backend: %v", err)
	}
	// A node no backend supports is named, with each backend's reason.
	m := must(t)
	x := leaf(t, b, "x", quant.F32, []int64{4}, ramp(4, 1))
	g := must3(t)(New(m(ops.Silu(x)).SetName("act")))
	f1, f2 := graphstest.NewFake("f1", b, true, ops.OpAdd), graphstest.NewFake("f2", b, true, ops.OpMul)
	s, err := NewScheduler(Options{}, f1, f2)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Compute(context.Background(), g)
	if err == nil || !strings.Contains(err.Error(), "act") || !strings.Contains(err.Error(), "f1 has no SILU") || !strings.Contains(err.Error(), "f2 has no SILU") {
		t.Errorf("unsupported node: %v", err)
	}
	if s.Arena(f1) == nil || s.Arena(b) != nil {
		t.Error("Arena of a backend")
	}
}

// TestSchedulerPreallocated computes a node that already has storage in
// the first backend's memory on the fallback: it is computed into a copy
// and copied back.
func TestSchedulerPreallocated(t *testing.T) {
	m := must(t)
	ref := cputest.New(t, 1)
	defer ref.Close()
	x := leaf(t, ref, "x", quant.F32, []int64{8, 2}, ramp(16, 0.5))
	out := m(ops.Silu(x)).SetName("out")
	if err := ops.AllocTensor(ref, out, 0); err != nil {
		t.Fatal(err)
	}
	buf := out.Buffer
	primary := graphstest.NewFake("fake", ref, true, ops.OpAdd)
	fallback := graphstest.NewFake("cpu", ref, false)
	s, err := NewScheduler(Options{}, primary, fallback)
	if err != nil {
		t.Fatal(err)
	}
	g := must3(t)(New(out))
	if err := s.Compute(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	if out.Buffer != buf {
		t.Fatal("the node's own storage was replaced")
	}
	got, _ := out.HostBytes()
	for i, v := range ramp(16, 0.5) {
		want := v / (1 + expf(-v))
		if d := f32(got[4*i:]) - want; d > 1e-6 || d < -1e-6 {
			t.Fatalf("out[%d] = %v, want %v", i, f32(got[4*i:]), want)
		}
	}
	if n, _ := g.Plan().Copies(); n != 3 {
		t.Errorf("%d copies, want x in, out in and out back", n)
	}
}
