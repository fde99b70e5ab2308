package graphs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kernbench/kernbench/graphs/graphstest"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
)

// gpu is a fake with a GPU backend's optional interfaces: it computes a
// split in one ComputeGraph call (through the fake, so operands must be in
// its memory), treats the work as queued until Synchronize, and reports a
// device time per node. What it is asked to do goes to its log.
type gpu struct {
	*graphstest.Fake
	log     []string
	pending bool // work queued since the last Synchronize
	graphs  int  // ComputeGraph calls
	nodes   int  // nodes computed through ComputeGraph
	syncs   int
	last    int   // nodes of the last ComputeGraph call
	syncErr error // what Synchronize returns
}

var (
	_ ops.GraphComputer = (*gpu)(nil)
	_ ops.Synchronizer  = (*gpu)(nil)
	_ ops.DeviceTimer   = (*gpu)(nil)
)

// Compute must not be called: a GraphComputer's splits are submitted
// whole.
func (g *gpu) Compute(t *ops.Tensor) error {
	g.log = append(g.log, "compute "+t.Label())
	return g.Fake.Compute(t)
}

func (g *gpu) ComputeGraph(nodes []*ops.Tensor) error {
	var names []string
	for _, n := range nodes {
		if err := g.Fake.Compute(n); err != nil {
			return err
		}
		names = append(names, n.Label())
	}
	g.log = append(g.log, "graph "+strings.Join(names, ","))
	g.graphs++
	g.nodes += len(nodes)
	g.last = len(nodes)
	g.pending = true
	return nil
}

func (g *gpu) Synchronize() error {
	g.log = append(g.log, "sync")
	g.syncs++
	g.pending = false
	return g.syncErr
}

// deviceTime is the time gpu reports for the k-th node of a call.
func deviceTime(k int) time.Duration { return time.Duration(k+1) * time.Millisecond }

func (g *gpu) NodeTimes() ([]time.Duration, error) {
	if g.pending {
		return nil, errors.New("device times read before Synchronize")
	}
	ts := make([]time.Duration, g.last)
	for k := range ts {
		ts[k] = deviceTime(k)
	}
	return ts, nil
}

// splits counts the runs of consecutive compute steps of p on b.
func splits(p *Plan, b ops.Backend) int {
	n, in := 0, false
	for _, st := range p.Steps() {
		on := st.Kind == KindCompute && st.Backend == b
		if on && !in {
			n++
		}
		in = on
	}
	return n
}

// TestSchedulerUsesGPUInterfaces runs the fallback graph with a GPU-like
// backend first: each of its splits must be one ComputeGraph call ending
// with Synchronize before any copy reads its results, its nodes must carry
// the device times end to end, and the outputs must be the CPU's.
func TestSchedulerUsesGPUInterfaces(t *testing.T) {
	ref := cputest.New(t, 1)
	gw, _ := fallbackGraph(t, ref)
	if err := gw.Compute(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
	want := outputBytes(t, gw)

	c1, c2 := cputest.New(t, 1), cputest.New(t, 1)
	primary := &gpu{Fake: graphstest.NewFake("fake", c1, true, ops.OpMulMat, ops.OpAdd)}
	s, err := NewScheduler(Options{}, primary, graphstest.NewFake("cpu", c2, false))
	if err != nil {
		t.Fatal(err)
	}
	g, _ := fallbackGraph(t, ref)
	g.Recorder = func(r Record) {
		if r.Kind == KindCopy && r.From == ops.Backend(primary) {
			if primary.pending {
				t.Errorf("copy of %s from the gpu before it synchronized", r.Node.Label())
			}
			primary.log = append(primary.log, "copy "+r.Node.Label())
		}
	}
	var hooked int
	g.Hook = func(*ops.Tensor, time.Time, time.Time) { hooked++ }
	p, err := s.Plan(g)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := outputBytes(t, g)
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("output %s differs from the CPU's", g.Outputs()[i].Label())
		}
	}
	n := splits(p, primary)
	if primary.graphs != n || primary.syncs != n || primary.nodes != 5 || n < 2 {
		t.Errorf("%d ComputeGraph calls, %d syncs, %d nodes; want one call and one sync for each of %d splits, 5 nodes", primary.graphs, primary.syncs, primary.nodes, n)
	}
	for _, l := range primary.log {
		if strings.HasPrefix(l, "compute ") {
			t.Errorf("the scheduler called Compute on a GraphComputer: %s", l)
		}
	}
	t.Logf("gpu log: %s", strings.Join(primary.log, "; "))
	if hooked != len(g.Computed()) {
		t.Errorf("hook called %d times for %d nodes", hooked, len(g.Computed()))
	}

	// The gpu's records carry its device times, laid end to end within a
	// split.
	recs := p.Records()
	for i, r := range recs {
		if r.Kind != KindCompute || r.Backend != ops.Backend(primary) {
			if r.Device != 0 {
				t.Errorf("%s on %s has a device time", r.Label(), r.BackendName())
			}
			continue
		}
		k := 0
		for i-k-1 >= 0 && recs[i-k-1].Kind == KindCompute && recs[i-k-1].Backend == r.Backend {
			k++
		}
		if r.Device != deviceTime(k) || r.Duration() != r.Device || r.End.Sub(r.Start) != r.Device {
			t.Errorf("%s, node %d of its split: device %v, duration %v, span %v; want %v", r.Node.Label(), k, r.Device, r.Duration(), r.End.Sub(r.Start), deviceTime(k))
		}
		if k > 0 && !r.Start.Equal(recs[i-1].End) {
			t.Errorf("%s starts at %v, not where the node before it ends (%v)", r.Node.Label(), r.Start, recs[i-1].End)
		}
	}

	// On the GPU alone, the whole graph is one submission.
	c3 := cputest.New(t, 1)
	alone := &gpu{Fake: graphstest.NewFake("fake", c3, true)}
	ga, _ := fallbackGraph(t, ref)
	if err := ga.Compute(context.Background(), alone); err != nil {
		t.Fatal(err)
	}
	if alone.graphs != 1 || alone.syncs != 1 || alone.nodes != len(ga.Computed()) {
		t.Errorf("alone: %d calls, %d syncs, %d of %d nodes; want the whole graph in one call", alone.graphs, alone.syncs, alone.nodes, len(ga.Computed()))
	}
	for i, b := range outputBytes(t, ga) {
		if !bytes.Equal(b, want[i]) {
			t.Errorf("alone: output %s differs from the CPU's", ga.Outputs()[i].Label())
		}
	}

	// An error of the queued work names the split.
	failing := &gpu{Fake: graphstest.NewFake("fake", cputest.New(t, 1), true), syncErr: errors.New("launch failed")}
	gf, _ := fallbackGraph(t, ref)
	err = gf.Compute(context.Background(), failing)
	if err == nil || !strings.Contains(err.Error(), "launch failed") || !strings.Contains(err.Error(), "on fake") || !strings.Contains(err.Error(), " to ") {
		t.Errorf("failed sync: %v", err)
	}
}

// copier is a host buffer that copies from other host buffers itself and
// refuses anything else, counting what it copies.
type copier struct {
	*ops.HostBuffer
	copied int64
}

func (c *copier) CopyFrom(src ops.Buffer, srcOff, off, n int64) error {
	h, ok := src.(*ops.HostBuffer)
	if !ok {
		return fmt.Errorf("copier: %T: %w", src, ops.ErrCopyUnsupported)
	}
	copy(c.Bytes()[off:off+n], h.Bytes()[srcOff:srcOff+n])
	c.copied += n
	return nil
}

// other is a buffer that is neither a host buffer nor a copier.
type other struct{ ops.Buffer }

// TestCopyUsesBufferCopier checks that a copy between backends goes
// straight through an ops.BufferCopier destination when it takes the
// source, and through host memory when it refuses it.
func TestCopyUsesBufferCopier(t *testing.T) {
	host := func(vals ...byte) *ops.HostBuffer {
		h, err := ops.NewHostBuffer(int64(len(vals)))
		if err != nil {
			t.Fatal(err)
		}
		copy(h.Bytes(), vals)
		return h
	}
	tensor := func(buf ops.Buffer, off int64) *ops.Tensor {
		return &ops.Tensor{Buffer: buf, Offset: off}
	}
	p := &Plan{}
	for _, tc := range []struct {
		name   string
		src    ops.Buffer
		direct bool
	}{
		{"host source", host(1, 2, 3, 4, 5, 6), true},
		{"device source", other{host(1, 2, 3, 4, 5, 6)}, false},
	} {
		dst := &copier{HostBuffer: host(0, 0, 0, 0, 0, 0)}
		st := step{kind: KindCopy, src: tensor(tc.src, 1), dst: tensor(dst, 2), bytes: 3}
		if err := p.copy(st); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := dst.Bytes(); !bytes.Equal(got, []byte{0, 0, 2, 3, 4, 0}) {
			t.Errorf("%s: destination %v", tc.name, got)
		}
		if (dst.copied == 3) != tc.direct {
			t.Errorf("%s: the copier copied %d bytes itself; direct %v", tc.name, dst.copied, tc.direct)
		}
	}
}

// TestStepwise: a Stepwise graph on a GraphComputer that is a
// Synchronizer computes each node alone and waits for it before its
// record, so a Recorder reads every node's finished output, before the
// memory plan gives its bytes to a later node: the bytes the records see
// are the ones the CPU computes for each node.
func TestStepwise(t *testing.T) {
	ref := cputest.New(t, 1)
	nodeBytes := func(n *ops.Tensor) []byte {
		buf, off := n.Storage()
		b := make([]byte, n.Bytes())
		if _, err := buf.ReadAt(b, off); err != nil {
			t.Fatal(err)
		}
		return b
	}
	gw, _ := fallbackGraph(t, ref)
	want := map[int][]byte{}
	gw.Recorder = func(r Record) {
		if r.Kind == KindCompute {
			want[gw.Index(r.Node)] = nodeBytes(r.Node)
		}
	}
	if err := gw.Compute(context.Background(), ref); err != nil {
		t.Fatal(err)
	}

	for _, stepwise := range []bool{false, true} {
		dev := &gpu{Fake: graphstest.NewFake("fake", cputest.New(t, 1), true)}
		g, _ := fallbackGraph(t, ref)
		g.Stepwise = stepwise
		differ := 0
		g.Recorder = func(r Record) {
			if r.Kind != KindCompute {
				return
			}
			if stepwise && dev.pending {
				t.Errorf("record of %s before the device synchronized", r.Node.Label())
			}
			if !bytes.Equal(nodeBytes(r.Node), want[g.Index(r.Node)]) {
				differ++
				if stepwise {
					t.Errorf("stepwise: the record of %s reads bytes other than the CPU computed", r.Node.Label())
				}
			}
		}
		if err := g.Compute(context.Background(), dev); err != nil {
			t.Fatal(err)
		}
		n := len(g.Computed())
		switch {
		case stepwise && (dev.graphs != 0 || dev.syncs < n):
			t.Errorf("stepwise: %d ComputeGraph calls, %d syncs for %d nodes; want none and one per node at least", dev.graphs, dev.syncs, n)
		case !stepwise && (dev.graphs != 1 || differ == 0):
			t.Errorf("one submission: %d ComputeGraph calls, %d records that read reused bytes; want 1 and some (else this test shows nothing)", dev.graphs, differ)
		}
	}
}
