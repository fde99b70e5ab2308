package graphs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kernbench/kernbench/ops"
)

// Options tune how a Scheduler plans memory.
type Options struct {
	// NoReuse gives every intermediate bytes of its own for the whole
	// run: the plan's baseline, for checking it and for finding a kernel
	// that writes outside its tensor.
	NoReuse bool
	// NoInPlace never computes a node in the storage of its source.
	NoInPlace bool
}

// A Scheduler runs graphs on one or more backends, given in order of
// preference: each node goes to the first backend that supports it
// (Backend.Supports), so a backend that lacks some ops, such as a GPU
// backend before it has every glue kernel, runs a whole model with a CPU
// backend listed after it. Where a node reads a tensor that lives in
// another backend's memory, the plan copies the tensor's bytes into a
// buffer of the node's backend first (through Buffer.ReadAt and WriteAt,
// so device memory works as well as host memory); a node that writes into
// another backend's storage (a CPY into a KV cache) writes a copy that is
// copied back. Copies are reused until the tensor is written again.
//
// Leaves (weights, inputs) and computed nodes that already have storage
// are taken to live in the first backend's memory. The intermediates of a
// graph get storage from one Arena per backend, by the liveness plan
// described in the package documentation.
//
// A Scheduler is not safe for concurrent use.
type Scheduler struct {
	backends []ops.Backend
	arenas   []*Arena
	opts     Options
}

// NewScheduler returns a scheduler over backends (at least one, distinct,
// the first preferred) with one new arena each.
func NewScheduler(opts Options, backends ...ops.Backend) (*Scheduler, error) {
	if len(backends) == 0 {
		return nil, errors.New("graphs: a scheduler needs at least one backend")
	}
	s := &Scheduler{opts: opts}
	for i, b := range backends {
		if b == nil {
			return nil, fmt.Errorf("graphs: backend %d is nil", i)
		}
		for _, c := range s.backends {
			if c == b {
				return nil, fmt.Errorf("graphs: backend %s is listed twice", b.Name())
			}
		}
		s.backends = append(s.backends, b)
		s.arenas = append(s.arenas, NewArena(b))
	}
	return s, nil
}

// Backends returns the scheduler's backends in order of preference.
func (s *Scheduler) Backends() []ops.Backend { return append([]ops.Backend(nil), s.backends...) }

// Options returns the scheduler's options.
func (s *Scheduler) Options() Options { return s.opts }

// Arena returns the arena holding b's intermediates, or nil when b is not
// one of the scheduler's backends.
func (s *Scheduler) Arena(b ops.Backend) *Arena {
	for i, x := range s.backends {
		if x == b {
			return s.arenas[i]
		}
	}
	return nil
}

// Compute runs g: it plans g (reusing the plan of g's last run on s when
// g has not grown since) and runs the plan. It stops at the first error,
// which names the node, or when ctx is done.
func (s *Scheduler) Compute(ctx context.Context, g *Graph) error {
	p := g.plan
	if p == nil || p.sched != s || p.nodes != len(g.nodes) {
		var err error
		if p, err = s.Plan(g); err != nil {
			return err
		}
	}
	return p.Run(ctx)
}

// MemoryStats describe a plan's intermediates on one backend. Only
// storage the plan gives out is counted: not leaves, and not nodes that
// had storage before.
type MemoryStats struct {
	// Backend is the backend's name.
	Backend string
	// Size is the bytes of arena the plan needs: its peak, fragmentation
	// included.
	Size int64
	// PeakLive is the most bytes of intermediates live at one step: the
	// least any plan in this order could need.
	PeakLive int64
	// Total is the sum of every intermediate's bytes: what the graph
	// needs without reuse.
	Total int64
	// Tensors counts the intermediates (copies between backends
	// included) and InPlace the nodes computed in their source's bytes.
	Tensors, InPlace int
}

// A Plan is how a graph runs on a scheduler's backends: the backend of
// each node, the copies between backends, and where each intermediate
// lives. Its storage stays assigned until the arenas are given to another
// plan, so it can be run again as long as no other graph is placed in
// them in between.
type Plan struct {
	g     *Graph
	sched *Scheduler
	nodes int

	steps     []step
	backendOf map[*ops.Tensor]int
	values    []*value
	mem       []MemoryStats
	copies    int
	copyBytes int64
	scratch   []byte
	records   []Record
	batch     []*ops.Tensor // the nodes of a split computed in one call
}

// A step of a plan.
type step struct {
	kind StepKind
	be   int
	// node is the graph node computed or copied; run is the tensor the
	// backend computes (node itself, or a twin reading copies).
	node, run *ops.Tensor
	// Copies: from backend from, src's bytes into dst's, serving user.
	from     int
	src, dst *ops.Tensor
	user     *ops.Tensor
	bytes    int64
}

// A value is a tensor the plan gives storage: a computed node that owns
// its bytes, or a copy in another backend's memory.
type value struct {
	t         *ops.Tensor
	be        int
	size      int64
	def, last int
	output    bool
	donated   bool // its bytes went to a node computed in place
	node      bool // a graph node (not a copy)
	off       int64
}

// owner returns the tensor that owns t's storage.
func owner(t *ops.Tensor) *ops.Tensor {
	for t.ViewOf != nil {
		t = t.ViewOf
	}
	return t
}

// viewOffset returns the byte offset of t in its owner's storage.
func viewOffset(t *ops.Tensor) int64 {
	off := int64(0)
	for t.ViewOf != nil {
		off += t.Offset
		t = t.ViewOf
	}
	return off
}

type copyKey struct {
	t  *ops.Tensor
	be int
}

// Plan assigns each computed node of g to a backend, inserts the copies at
// the boundaries, plans the memory of the intermediates and gives them
// storage in the scheduler's arenas. Every leaf must have storage.
func (s *Scheduler) Plan(g *Graph) (*Plan, error) {
	p, err := s.plan(g)
	if err != nil {
		return nil, err
	}
	if err := p.bind(); err != nil {
		return nil, err
	}
	g.plan = p
	return p, nil
}

func (s *Scheduler) plan(g *Graph) (*Plan, error) {
	p := &Plan{g: g, sched: s, nodes: len(g.nodes), backendOf: map[*ops.Tensor]int{}}
	vals := map[*ops.Tensor]*value{}
	homeOf := func(t *ops.Tensor) int {
		if v := vals[owner(t)]; v != nil {
			return v.be
		}
		return 0
	}
	newValue := func(t *ops.Tensor, be int, node bool) (*value, error) {
		e := t.Extent()
		if e < 0 {
			return nil, fmt.Errorf("graphs: %s has a negative extent %d", t.Label(), e)
		}
		size, err := alignUp(e)
		if err != nil {
			return nil, err
		}
		v := &value{t: t, be: be, size: size, def: len(p.steps), node: node}
		vals[t] = v
		p.values = append(p.values, v)
		return v, nil
	}

	cache := map[copyKey]*ops.Tensor{}
	cachedBy := map[*ops.Tensor][]copyKey{}
	// local returns t as backend be can read it: t itself when it lives
	// in be's memory, else a copy made now (or earlier and still valid).
	local := func(t *ops.Tensor, be int, user *ops.Tensor) (*ops.Tensor, error) {
		from := homeOf(t)
		if from == be {
			return t, nil
		}
		k := copyKey{t, be}
		if c := cache[k]; c != nil {
			return c, nil
		}
		c := &ops.Tensor{Name: t.Label() + "@" + s.backends[be].Name(), Type: t.Type, Ne: t.Ne, Nb: t.Nb}
		if _, err := newValue(c, be, false); err != nil {
			return nil, err
		}
		p.steps = append(p.steps, step{kind: KindCopy, be: be, from: from, node: t, src: t, dst: c, user: user, bytes: t.Extent()})
		cache[k] = c
		o := owner(t)
		cachedBy[o] = append(cachedBy[o], k)
		return c, nil
	}
	written := func(t *ops.Tensor) {
		o := owner(t)
		for _, k := range cachedBy[o] {
			delete(cache, k)
		}
		delete(cachedBy, o)
	}

	for i, n := range g.nodes {
		if n.Op == ops.OpNone {
			if buf, _ := n.Storage(); buf == nil {
				return nil, fmt.Errorf("graphs: leaf %d %s has no storage (inputs must be allocated and set before Compute)", i, n.Label())
			}
			continue
		}
		if !computes(n) {
			continue
		}
		be, err := s.assign(i, n)
		if err != nil {
			return nil, err
		}
		p.backendOf[n] = be
		if g.needsStorage(n) {
			if _, err := newValue(n, be, true); err != nil {
				return nil, err
			}
			// def is set when the compute step is appended, below.
		}

		// The node's output: its own storage when that is in be's
		// memory, else a copy of the storage it writes, copied back
		// after.
		var target, temp *ops.Tensor
		if homeOf(n) != be {
			target = n.ViewOf
			if target == nil {
				target = n
			}
			if temp, err = local(target, be, n); err != nil {
				return nil, err
			}
		}
		var src []*ops.Tensor
		for j, x := range n.Src {
			if x == nil {
				continue
			}
			y, err := local(x, be, n)
			if err != nil {
				return nil, err
			}
			if y != x {
				if src == nil {
					src = append([]*ops.Tensor(nil), n.Src...)
				}
				src[j] = y
			}
		}
		run := n
		if src != nil || temp != nil {
			twin := *n
			if src != nil {
				twin.Src = src
			}
			switch {
			case temp != nil && n.ViewOf == nil:
				twin.ViewOf, twin.Offset, twin.Buffer = temp, 0, nil
			case temp != nil:
				twin.ViewOf = temp
			case n.ViewOf == nil:
				twin.ViewOf, twin.Offset, twin.Buffer = n, 0, nil
			}
			run = &twin
		}
		if v := vals[n]; v != nil {
			v.def = len(p.steps)
		}
		p.steps = append(p.steps, step{kind: KindCompute, be: be, node: n, run: run})
		if temp != nil {
			p.steps = append(p.steps, step{kind: KindCopy, be: homeOf(n), from: be, node: n, src: temp, dst: target, user: n, bytes: target.Extent()})
		}
		written(n)
	}

	// Liveness: a value lives from the step that defines it to the last
	// step that reads or writes it; outputs live to the end.
	for _, v := range p.values {
		v.last = v.def
	}
	use := func(t *ops.Tensor, i int) {
		if v := vals[owner(t)]; v != nil && i > v.last {
			v.last = i
		}
	}
	for i, st := range p.steps {
		if st.kind == KindCopy {
			use(st.src, i)
			use(st.dst, i)
			p.copies++
			p.copyBytes += st.bytes
			continue
		}
		use(st.run, i)
		for _, x := range st.run.Src {
			if x != nil {
				use(x, i)
			}
		}
	}
	for _, o := range g.outputs {
		if v := vals[owner(o)]; v != nil {
			v.output = true
		}
	}
	return p, p.allocate(vals)
}

// assign returns the index of the first backend that supports n.
func (s *Scheduler) assign(i int, n *ops.Tensor) (int, error) {
	var why []string
	for be, b := range s.backends {
		err := b.Supports(n)
		if err == nil {
			return be, nil
		}
		if len(s.backends) == 1 {
			return 0, &UnsupportedError{Index: i, Node: n, Err: err}
		}
		why = append(why, b.Name()+": "+err.Error())
	}
	return 0, &UnsupportedError{Index: i, Node: n, Err: fmt.Errorf("no backend supports it (%s)", strings.Join(why, "; "))}
}

// An UnsupportedError reports a node that no backend of a scheduler
// supports, as when a model needs an op its one backend lacks.
type UnsupportedError struct {
	Index int         // the node's index in its graph
	Node  *ops.Tensor // the node
	Err   error       // why: the backend's Supports error, or every backend's
}

// Error names the node (index, label, op, type and shape) and the reason.
func (e *UnsupportedError) Error() string {
	return nodeErr(e.Index, e.Node, e.Err).Error()
}

// Unwrap returns the reason.
func (e *UnsupportedError) Unwrap() error { return e.Err }

// allocate gives each value an offset in its backend's arena, walking the
// steps in order: values defined at a step are placed (in their source's
// bytes where the node may compute in place), then values whose last use
// is the step are freed.
func (p *Plan) allocate(vals map[*ops.Tensor]*value) error {
	nb := len(p.sched.backends)
	opts := p.sched.opts
	allocs := make([]allocator, nb)
	live := make([]int64, nb)
	p.mem = make([]MemoryStats, nb)
	for i, b := range p.sched.backends {
		p.mem[i].Backend = b.Name()
	}
	defs := make([][]*value, len(p.steps))
	lasts := make([][]*value, len(p.steps))
	for _, v := range p.values {
		defs[v.def] = append(defs[v.def], v)
		lasts[v.last] = append(lasts[v.last], v)
	}
	for i, st := range p.steps {
		for _, v := range defs[i] {
			m := &p.mem[v.be]
			m.Tensors++
			m.Total += v.size
			if !opts.NoReuse && !opts.NoInPlace && st.kind == KindCompute {
				if o := inPlaceSource(st, v, i, vals); o != nil {
					v.off = o.off
					o.donated = true
					m.InPlace++
					continue
				}
			}
			off, err := allocs[v.be].alloc(v.size)
			if err != nil {
				return err
			}
			v.off = off
			live[v.be] += v.size
			m.PeakLive = max(m.PeakLive, live[v.be])
		}
		if opts.NoReuse {
			continue
		}
		for _, v := range lasts[i] {
			if v.output || v.donated {
				continue
			}
			allocs[v.be].release(v.off, v.size)
			live[v.be] -= v.size
		}
	}
	for i := range p.mem {
		p.mem[i].Size = allocs[i].end
	}
	return nil
}

// inPlaceOps are the ops a node may compute in the bytes of its first
// source: each output element depends only on the source elements at the
// same index, so a backend computing one with dst aliasing Src[0] reads
// each element before it writes it.
var inPlaceOps = map[ops.Op]bool{
	ops.OpAdd: true, ops.OpMul: true, ops.OpScale: true,
	ops.OpSilu: true, ops.OpGelu: true, ops.OpSwiGLU: true,
}

// inPlaceSource returns the value whose bytes v, defined by compute step
// st at index i, can take: that of the node's first source, when the op is
// elementwise, the source dies at this step, lives on the same backend,
// is no output, and is seen by the node exactly as the node will lay out
// its result, with no other source reading those bytes another way.
func inPlaceSource(st step, v *value, i int, vals map[*ops.Tensor]*value) *value {
	n := st.run
	if !inPlaceOps[n.Op] || len(n.Src) == 0 || n.Src[0] == nil || v.t != st.node {
		return nil
	}
	s0 := n.Src[0]
	o := vals[owner(s0)]
	if o == nil || o == v || o.be != v.be || o.output || o.donated || o.last != i || o.size != v.size {
		return nil
	}
	if s0.Type != n.Type || s0.Ne != n.Ne || !s0.IsContiguous() || !n.IsContiguous() || viewOffset(s0) != 0 {
		return nil
	}
	for _, x := range n.Src[1:] {
		if x == nil || x == s0 || owner(x) != o.t {
			continue
		}
		if x.Type != s0.Type || x.Ne != s0.Ne || x.Nb != s0.Nb || viewOffset(x) != 0 {
			return nil
		}
	}
	return o
}

// bind gives every value its storage in its backend's arena.
func (p *Plan) bind() error {
	for be, b := range p.sched.backends {
		var buf ops.Buffer
		for _, v := range p.values {
			if v.be != be {
				continue
			}
			if buf == nil {
				var err error
				if buf, err = p.sched.arenas[be].reserve(b, p.mem[be].Size); err != nil {
					return err
				}
			}
			v.t.Buffer, v.t.Offset = buf, v.off
			if v.node {
				if p.g.owned == nil {
					p.g.owned = map[*ops.Tensor]bool{}
				}
				p.g.owned[v.t] = true
			}
		}
	}
	return nil
}

// Run computes the plan's steps in order, calling the graph's Hook after
// each node and its Recorder after each step. It stops at the first
// error, which names the node, or when ctx is done.
//
// Consecutive nodes on one backend form a split. A split on an
// ops.GraphComputer is computed by one ComputeGraph call; on other
// backends each node is a Compute call. A split on an ops.Synchronizer
// ends with Synchronize, so its results are done before bytes cross to
// another backend and before Run returns. The records (and hooks) of a
// split computed in one call come after it: with per-node device times
// (ops.DeviceTimer) they are laid end to end from the submission's start,
// each with its Device time; without, each spans the whole submission. A
// node computed alone is recorded around its Compute call (on a
// Synchronizer that is no GraphComputer, around the queueing only). A
// Stepwise graph computes every node alone, and on a Synchronizer waits
// for each before recording it.
func (p *Plan) Run(ctx context.Context) error {
	p.records = p.records[:0]
	g := p.g
	for i := 0; i < len(p.steps); {
		st := p.steps[i]
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("graphs: stopped before node %d %s: %w", g.Index(st.node), st.node.Label(), err)
		}
		if st.kind == KindCopy {
			if err := p.runCopy(st); err != nil {
				return err
			}
			i++
			continue
		}
		j := i + 1
		for j < len(p.steps) && p.steps[j].kind == KindCompute && p.steps[j].be == st.be {
			j++
		}
		if err := p.runSplit(p.steps[i:j]); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// runCopy runs a copy step and records it.
func (p *Plan) runCopy(st step) error {
	g := p.g
	b := p.sched.backends[st.be]
	start := time.Now()
	if err := p.copy(st); err != nil {
		return fmt.Errorf("graphs: copying %s from %s to %s for %s: %w", st.node.Label(), p.sched.backends[st.from].Name(), b.Name(), st.user.Label(), err)
	}
	r := Record{Step: Step{Kind: st.kind, Node: st.node, Backend: b, For: st.user, Bytes: st.bytes}}
	r.From = p.sched.backends[st.from]
	r.Cost = ops.Cost{Bytes: 2 * st.bytes}
	r.Layer, r.Block = g.Scope(st.user)
	r.Start, r.End = start, time.Now()
	p.emit(r)
	return nil
}

// runSplit computes a split: compute steps, in order, on one backend.
func (p *Plan) runSplit(split []step) error {
	b := p.sched.backends[split[0].be]
	if gc, ok := b.(ops.GraphComputer); ok && !p.g.Stepwise {
		return p.runBatch(gc, b, split)
	}
	// Nodes are timed only for a Hook or Recorder: a decoded token of a
	// small model runs hundreds of nodes of a few microseconds, and two
	// clock reads per node showed in its profile. Untimed records keep
	// zero times.
	timed := p.g.Hook != nil || p.g.Recorder != nil
	for _, st := range split {
		var start, end time.Time
		if timed {
			start = time.Now()
		}
		if err := b.Compute(st.run); err != nil {
			return nodeErr(p.g.Index(st.node), st.node, err)
		}
		if p.g.Stepwise {
			if err := synchronize(b); err != nil {
				return nodeErr(p.g.Index(st.node), st.node, fmt.Errorf("%s: %w", b.Name(), err))
			}
		}
		if timed {
			end = time.Now()
		}
		p.emit(p.computeRecord(st, b, start, end))
	}
	if err := synchronize(b); err != nil {
		return p.splitErr(split, b, err)
	}
	return nil
}

// runBatch computes a split in one ComputeGraph call, waits for it on a
// Synchronizer, and records its nodes.
func (p *Plan) runBatch(gc ops.GraphComputer, b ops.Backend, split []step) error {
	p.batch = p.batch[:0]
	for _, st := range split {
		p.batch = append(p.batch, st.run)
	}
	// A run whose records someone reads times its nodes; otherwise the
	// backend keeps the setting its owner gave it (off by default).
	if ts, ok := b.(ops.NodeTimingSwitch); ok && (p.g.Hook != nil || p.g.Recorder != nil) {
		ts.SetNodeTiming(true)
		defer ts.SetNodeTiming(false)
	}
	start := time.Now()
	if err := gc.ComputeGraph(p.batch); err != nil {
		return p.splitErr(split, b, err)
	}
	if err := synchronize(b); err != nil {
		return p.splitErr(split, b, err)
	}
	end := time.Now()
	var times []time.Duration
	if dt, ok := b.(ops.DeviceTimer); ok {
		ts, err := dt.NodeTimes()
		if err != nil {
			return p.splitErr(split, b, fmt.Errorf("device times: %w", err))
		}
		if ts != nil && len(ts) != len(split) {
			return p.splitErr(split, b, fmt.Errorf("%d device times for %d nodes", len(ts), len(split)))
		}
		times = ts
	}
	at := start
	for k, st := range split {
		if times == nil {
			p.emit(p.computeRecord(st, b, start, end))
			continue
		}
		r := p.computeRecord(st, b, at, at.Add(times[k]))
		r.Device = times[k]
		at = r.End
		p.emit(r)
	}
	return nil
}

// synchronize waits for b's queued work when b is a Synchronizer.
func synchronize(b ops.Backend) error {
	if s, ok := b.(ops.Synchronizer); ok {
		return s.Synchronize()
	}
	return nil
}

// splitErr names a split's nodes and backend in err.
func (p *Plan) splitErr(split []step, b ops.Backend, err error) error {
	first, last := split[0].node, split[len(split)-1].node
	if len(split) == 1 {
		return nodeErr(p.g.Index(first), first, fmt.Errorf("%s: %w", b.Name(), err))
	}
	return fmt.Errorf("graphs: nodes %d %s to %d %s on %s: %w", p.g.Index(first), first.Label(), p.g.Index(last), last.Label(), b.Name(), err)
}

// computeRecord returns the record of compute step st on b.
func (p *Plan) computeRecord(st step, b ops.Backend, start, end time.Time) Record {
	r := Record{Step: Step{Kind: st.kind, Node: st.node, Backend: b, For: st.user, Bytes: st.bytes}}
	r.Cost = ops.CostOf(st.node)
	r.Layer, r.Block = p.g.Scope(st.node)
	r.Start, r.End = start, end
	return r
}

// emit keeps r and hands it to the graph's Hook (for a node) and
// Recorder.
func (p *Plan) emit(r Record) {
	p.records = append(p.records, r)
	g := p.g
	if r.Kind == KindCompute && g.Hook != nil {
		g.Hook(r.Node, r.Start, r.End)
	}
	if g.Recorder != nil {
		g.Recorder(r)
	}
}

// copy moves a copy step's bytes: straight from buffer to buffer where the
// destination is an ops.BufferCopier that can read the source, else
// through host memory.
func (p *Plan) copy(st step) error {
	n := st.bytes
	sb, so := st.src.Storage()
	db, do := st.dst.Storage()
	if sb == nil || db == nil {
		return errors.New("no storage")
	}
	if c, ok := db.(ops.BufferCopier); ok {
		err := c.CopyFrom(sb, so, do, n)
		if !errors.Is(err, ops.ErrCopyUnsupported) {
			return err
		}
	}
	if h, ok := db.(*ops.HostBuffer); ok && do >= 0 && do <= h.Size()-n {
		_, err := sb.ReadAt(h.Bytes()[do:do+n], so)
		return err
	}
	if h, ok := sb.(*ops.HostBuffer); ok && so >= 0 && so <= h.Size()-n {
		_, err := db.WriteAt(h.Bytes()[so:so+n], do)
		return err
	}
	if int64(cap(p.scratch)) < n {
		p.scratch = make([]byte, n)
	}
	buf := p.scratch[:n]
	if _, err := sb.ReadAt(buf, so); err != nil {
		return err
	}
	_, err := db.WriteAt(buf, do)
	return err
}

// Graph returns the graph the plan runs.
func (p *Plan) Graph() *Graph { return p.g }

// Backend returns the backend that computes n, or nil when n is a leaf, a
// view or not in the graph.
func (p *Plan) Backend(n *ops.Tensor) ops.Backend {
	if be, ok := p.backendOf[n]; ok {
		return p.sched.backends[be]
	}
	return nil
}

// Steps returns the plan's steps in run order.
func (p *Plan) Steps() []Step {
	out := make([]Step, len(p.steps))
	for i, st := range p.steps {
		out[i] = Step{Kind: st.kind, Node: st.node, Backend: p.sched.backends[st.be], For: st.user, Bytes: st.bytes}
		if st.kind == KindCopy {
			out[i].From = p.sched.backends[st.from]
		}
	}
	return out
}

// Memory returns the plan's memory statistics, one entry per backend of
// the scheduler, in its order.
func (p *Plan) Memory() []MemoryStats { return append([]MemoryStats(nil), p.mem...) }

// Copies returns the number of copies between backends one run makes and
// the bytes they move.
func (p *Plan) Copies() (n int, bytes int64) { return p.copies, p.copyBytes }

// Records returns the execution records of the plan's last run, one per
// step in order. The slice is the plan's own and is reused by the next
// run. A CPU-side compute step's Start and End are set only when the
// graph has a Hook or Recorder (zero otherwise).
func (p *Plan) Records() []Record { return p.records }
