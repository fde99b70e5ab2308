package graphs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kernbench/kernbench/ops"
)

// A NodeHook is called after each node a graph computes, with the times
// just before and just after the backend computed it. Views and leaves,
// which compute nothing, are not reported.
type NodeHook func(n *ops.Tensor, start, end time.Time)

// A Recorder receives the execution record of each step of a run: each
// node computed and each copy between backends.
type Recorder func(Record)

// A Graph is a set of tensors in an order in which each one comes after
// every node it depends on. The zero value is an empty graph ready for
// Expand.
type Graph struct {
	nodes   []*ops.Tensor
	index   map[*ops.Tensor]int
	outputs []*ops.Tensor
	after   map[*ops.Tensor][]*ops.Tensor
	scopes  map[*ops.Tensor]scope
	// owned marks the nodes a plan gave storage, which a new plan may
	// place again.
	owned map[*ops.Tensor]bool
	plan  *Plan
	// arena and single serve Compute and ComputeIn.
	arena  *Arena
	single *Scheduler

	// Hook, when set, is called after each computed node.
	Hook NodeHook
	// Recorder, when set, is called after each step of a run.
	Recorder Recorder
	// Stepwise makes a run compute each node alone and wait for it
	// (ops.Synchronizer) before its hook and record, even on an
	// ops.GraphComputer: a Recorder then reads every node's finished
	// output before a later node can reuse its bytes (the memory plan's
	// liveness reuse). It is for inspecting a run (finding the node
	// behind a NaN), not for timing one.
	Stepwise bool
}

// New returns the graph of outputs: every node they depend on, in
// dependency order (see Expand).
func New(outputs ...*ops.Tensor) (*Graph, error) {
	g := &Graph{}
	if err := g.Expand(outputs...); err != nil {
		return nil, err
	}
	return g, nil
}

// After declares that t must be computed after each of deps, although no
// source edge says so (t reads storage that deps write, for example). It
// must be called before t is expanded into the graph.
func (g *Graph) After(t *ops.Tensor, deps ...*ops.Tensor) error {
	if t == nil {
		return errors.New("graphs: After of a nil tensor")
	}
	if _, in := g.index[t]; in {
		return fmt.Errorf("graphs: %s is already in the graph; declare its dependencies before expanding it", t.Label())
	}
	for i, d := range deps {
		if d == nil {
			return fmt.Errorf("graphs: dependency %d of %s is nil", i, t.Label())
		}
	}
	if g.after == nil {
		g.after = map[*ops.Tensor][]*ops.Tensor{}
	}
	g.after[t] = append(g.after[t], deps...)
	return nil
}

// Expand adds each of ts, in turn, with every node it depends on that is
// not yet in the graph. Dependencies are its sources (in Src order, nil
// ones skipped), the tensor whose storage it views (ViewOf) and those
// declared with After; each is placed before its dependents. The walk is
// depth-first, so the order is deterministic. Each of ts is recorded as an
// output of the graph.
func (g *Graph) Expand(ts ...*ops.Tensor) error {
	if g.index == nil {
		g.index = map[*ops.Tensor]int{}
	}
	for i, t := range ts {
		if t == nil {
			return fmt.Errorf("graphs: output %d is nil", i)
		}
		if err := g.visit(t); err != nil {
			return err
		}
		g.outputs = append(g.outputs, t)
	}
	return nil
}

// Deps returns what t depends on in g, in walk order: its sources, the
// tensor whose storage it views, and the nodes it was declared to follow
// with After.
func (g *Graph) Deps(t *ops.Tensor) []*ops.Tensor {
	var d []*ops.Tensor
	for _, s := range t.Src {
		if s != nil {
			d = append(d, s)
		}
	}
	if t.ViewOf != nil {
		d = append(d, t.ViewOf)
	}
	return append(d, g.after[t]...)
}

// visit places t and its missing dependencies, depth first, without
// recursion so that long chains cannot exhaust the stack.
func (g *Graph) visit(root *ops.Tensor) error {
	if _, done := g.index[root]; done {
		return nil
	}
	type frame struct {
		t    *ops.Tensor
		deps []*ops.Tensor
		next int
	}
	onStack := map[*ops.Tensor]bool{root: true}
	stack := []frame{{t: root, deps: g.Deps(root)}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next < len(f.deps) {
			d := f.deps[f.next]
			f.next++
			if _, done := g.index[d]; done {
				continue
			}
			if onStack[d] {
				return fmt.Errorf("graphs: dependency cycle through %s", d.Label())
			}
			onStack[d] = true
			stack = append(stack, frame{t: d, deps: g.Deps(d)})
			continue
		}
		g.index[f.t] = len(g.nodes)
		g.nodes = append(g.nodes, f.t)
		delete(onStack, f.t)
		stack = stack[:len(stack)-1]
	}
	return nil
}

// Nodes returns every node of the graph (leaves, views and computed nodes)
// in dependency order. The slice is the graph's own: do not modify it.
func (g *Graph) Nodes() []*ops.Tensor { return g.nodes }

// Outputs returns the tensors expanded into the graph, in call order.
func (g *Graph) Outputs() []*ops.Tensor { return g.outputs }

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.nodes) }

// Index returns t's position in Nodes, or -1 when t is not in the graph.
func (g *Graph) Index(t *ops.Tensor) int {
	if i, ok := g.index[t]; ok {
		return i
	}
	return -1
}

// Leaves returns the nodes with no op (weights and inputs), in order.
func (g *Graph) Leaves() []*ops.Tensor {
	var out []*ops.Tensor
	for _, t := range g.nodes {
		if t.Op == ops.OpNone {
			out = append(out, t)
		}
	}
	return out
}

// Computed returns the nodes a backend computes (neither leaves nor
// views), in order.
func (g *Graph) Computed() []*ops.Tensor {
	var out []*ops.Tensor
	for _, t := range g.nodes {
		if computes(t) {
			out = append(out, t)
		}
	}
	return out
}

// computes reports whether a backend must compute t.
func computes(t *ops.Tensor) bool {
	return t.Op != ops.OpNone && !t.Op.IsView()
}

// needsStorage reports whether a plan gives t storage: a computed node
// that is not a view of another's storage (CPY writes into its
// destination) and has no buffer yet, or one an earlier plan placed.
func (g *Graph) needsStorage(t *ops.Tensor) bool {
	return computes(t) && t.ViewOf == nil && (t.Buffer == nil || g.owned[t])
}

// AfterOf returns the nodes t was declared to follow with After.
func (g *Graph) AfterOf(t *ops.Tensor) []*ops.Tensor { return g.after[t] }

// Plan returns the plan of the graph's last Compute, ComputeIn, Alloc or
// Scheduler.Plan, or nil before the first.
func (g *Graph) Plan() *Plan { return g.plan }

// Check verifies, before anything runs, that every leaf has storage and
// that b supports every computed node. The error names the first node at
// fault.
func (g *Graph) Check(b ops.Backend) error {
	for i, t := range g.nodes {
		if t.Op == ops.OpNone {
			if buf, _ := t.Storage(); buf == nil {
				return fmt.Errorf("graphs: leaf %d %s has no storage (inputs must be allocated and set before Compute)", i, t.Label())
			}
			continue
		}
		if !computes(t) {
			continue
		}
		if err := b.Supports(t); err != nil {
			return nodeErr(i, t, err)
		}
	}
	return nil
}

// scheduler returns the one-backend scheduler of Compute and ComputeIn:
// on b, with storage from a (nil: the graph's own arena).
func (g *Graph) scheduler(b ops.Backend, a *Arena) (*Scheduler, error) {
	if b == nil {
		return nil, errors.New("graphs: nil backend")
	}
	if a == nil {
		if g.arena == nil || g.arena.backend != b {
			g.arena = NewArena(b)
		}
		a = g.arena
	}
	if err := a.check(b); err != nil {
		return nil, err
	}
	if s := g.single; s != nil && s.backends[0] == b && s.arenas[0] == a {
		return s, nil
	}
	g.single = &Scheduler{backends: []ops.Backend{b}, arenas: []*Arena{a}}
	return g.single, nil
}

// Alloc plans the graph's memory on b and gives its intermediates storage
// in a (nil: the graph's own arena, kept for later runs), without
// computing anything. Every leaf must have storage already.
func (g *Graph) Alloc(b ops.Backend, a *Arena) error {
	s, err := g.scheduler(b, a)
	if err != nil {
		return err
	}
	_, err = s.Plan(g)
	return err
}

// Compute runs the graph on b: it checks that every leaf has storage and
// that b supports every node, plans the memory of the intermediates (in
// the graph's own arena, kept for later runs), then computes each node
// that is not a view or leaf in order, calling Hook after each. It stops
// at the first error, which names the node, or when ctx is done. Once it
// returns, only the outputs (the tensors expanded into the graph) and
// leaves hold their data: the bytes of other intermediates are reused.
func (g *Graph) Compute(ctx context.Context, b ops.Backend) error {
	return g.ComputeIn(ctx, b, nil)
}

// ComputeIn is Compute with storage taken from a (nil: the graph's own
// arena).
func (g *Graph) ComputeIn(ctx context.Context, b ops.Backend, a *Arena) error {
	s, err := g.scheduler(b, a)
	if err != nil {
		return err
	}
	return s.Compute(ctx, g)
}

func nodeErr(i int, t *ops.Tensor, err error) error {
	return fmt.Errorf("graphs: node %d %s (%v %v %v): %w", i, t.Label(), t.Op, t.Type, t.Ne, err)
}
