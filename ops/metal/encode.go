package metal

import (
	"fmt"
	"sync"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// Encoding a split, as ggml-metal does: its nodes go into a few command
// buffers, enqueued in order (so they run in that order whatever order
// they are committed in) and encoded at once by one goroutine each, each
// with a compute encoder of concurrent dispatch type
// (MTLDispatchTypeConcurrent): the dispatches between two memory barriers
// (memoryBarrierWithScope: MTLBarrierScopeBuffers) may run at the same
// time and in any order. A barrier goes before a node only where the node
// reads memory that a node of the same encoder since the last barrier
// writes, or writes memory such a node reads or writes (a read-after-write,
// write-after-read or write-after-write hazard on the nodes' byte ranges);
// between the dispatches of one node there is always one. Command buffers
// of one queue are ordered by Metal's tracking of shared buffers, so a
// new command buffer needs no barrier for what the previous one wrote.
// metal-emu runs this same code, and runs the dispatches between two
// barriers in a seeded shuffled order (device_emu.go), so a missing
// barrier shows as a wrong result there.

const (
	// maxCommandBuffers is the most command buffers a split is encoded
	// into (and goroutines encoding them).
	maxCommandBuffers = 4
	// minNodesPerCommandBuffer is the fewest nodes worth a command
	// buffer (and a goroutine) of their own.
	minNodesPerCommandBuffer = 32
	// statusSlots is how many status word pairs the backend keeps: one
	// for each node that checks its input data queued since the last
	// synchronization, which reads them all. A split with more checks
	// than that waits once for the slots in the middle.
	statusSlots = 256
)

// A memRange is bytes [lo, hi) of a device buffer.
type memRange struct {
	buf    devBuffer
	lo, hi int64
}

func (r memRange) overlaps(o memRange) bool {
	return r.buf == o.buf && r.lo < o.hi && o.lo < r.hi
}

// nodeRanges returns the device memory node t reads (its sources in the
// backend's buffers) and writes (its output). Sources in host memory are
// left out: read-only ones (weights) are never written, and writable ones
// are copied into memory of their own for each node.
func (b *Backend) nodeRanges(t *ops.Tensor) (reads []memRange, write memRange, ok bool) {
	r := func(x *ops.Tensor) (memRange, bool) {
		buf, off := x.Storage()
		m, isDev := buf.(*buffer)
		if !isDev || m.b != b || x.NumElements() == 0 {
			return memRange{}, false
		}
		return memRange{m.d, off, off + x.Extent()}, true
	}
	for _, s := range t.Src {
		if s == nil {
			continue
		}
		if x, ok := r(s); ok {
			reads = append(reads, x)
		}
	}
	write, ok = r(t)
	return reads, write, ok
}

// hazards are the byte ranges the nodes of an encoder read and write
// since its last barrier.
type hazards struct {
	reads, writes []memRange
}

// conflicts reports whether a node reading reads and writing write must
// wait for the nodes recorded: it reads what they write, or writes what
// they read or write.
func (h *hazards) conflicts(reads []memRange, write memRange, hasWrite bool) bool {
	for _, r := range reads {
		for _, w := range h.writes {
			if r.overlaps(w) {
				return true
			}
		}
	}
	if hasWrite {
		for _, x := range [][]memRange{h.reads, h.writes} {
			for _, o := range x {
				if write.overlaps(o) {
					return true
				}
			}
		}
	}
	return false
}

func (h *hazards) add(reads []memRange, write memRange, hasWrite bool) {
	h.reads = append(h.reads, reads...)
	if hasWrite {
		h.writes = append(h.writes, write)
	}
}

func (h *hazards) reset() { h.reads, h.writes = h.reads[:0], h.writes[:0] }

// An encodedNode is a node as a command buffer holds it: whether a
// barrier went before it (for a hazard with a node since the last one),
// and how many dispatches and barriers between them it has.
type encodedNode struct {
	node       *ops.Tensor
	barrier    bool
	dispatches int
	inner      int
}

// An encodedBuffer is what a command buffer of the last ComputeGraph (or
// Compute) holds, in order.
type encodedBuffer []encodedNode

// Barriers counts the barriers in the command buffer: before nodes, and
// between the dispatches of one node.
func (e encodedBuffer) barriers() (before, inner int) {
	for _, n := range e {
		if n.barrier {
			before++
		}
		inner += n.inner
	}
	return before, inner
}

// commandBuffers returns how many command buffers n nodes are encoded
// into: one per minNodesPerCommandBuffer nodes, at least one and at most
// maxCommandBuffers.
func commandBuffers(n int) int {
	return min(max((n+minNodesPerCommandBuffer-1)/minNodesPerCommandBuffer, 1), maxCommandBuffers)
}

// chunks cuts nodes into k runs of as equal lengths as can be, in order.
func chunks(nodes []*ops.Tensor, k int) [][]*ops.Tensor {
	out := make([][]*ops.Tensor, 0, k)
	for i := range k {
		lo, hi := i*len(nodes)/k, (i+1)*len(nodes)/k
		out = append(out, nodes[lo:hi])
	}
	return out
}

// A pendingCheck is a queued node whose kernels report bad input data in
// status slot i of the backend's pending checks (i its index).
type pendingCheck struct {
	t        *ops.Tensor
	describe func(code, detail int32) error
}

// submit encodes nodes and commits them: each in a command buffer of its
// own when perNode (so that each has its own GPU times), else in a few
// (commandBuffers) encoded in parallel. It returns the command buffers,
// which are pending. A node whose kernels check their input data gets a
// status slot, read at the next synchronization; when the slots run out
// submit synchronizes first.
func (b *Backend) submit(nodes []*ops.Tensor, perNode bool) ([]commands, error) {
	var all []commands
	b.encoded = b.encoded[:0]
	for len(nodes) > 0 {
		free := statusSlots - len(b.checks)
		n, used := 0, 0
		for ; n < len(nodes); n++ {
			if b.checked(nodes[n]) != nil {
				if used == free {
					break
				}
				used++
			}
		}
		if n == 0 {
			if err := b.sync(); err != nil {
				return all, err
			}
			continue
		}
		cbs, err := b.submitBatch(nodes[:n], perNode)
		all = append(all, cbs...)
		if err != nil {
			return all, err
		}
		nodes = nodes[n:]
	}
	return all, nil
}

// checked returns the status description of t's kernels when they check
// their input data, else nil.
func (b *Backend) checked(t *ops.Tensor) func(t *ops.Tensor, code, detail int32) error {
	if t.NumElements() == 0 {
		return nil
	}
	k, _ := kernelsByOp.Kernel(t.Op)
	return k.Checked
}

// submitBatch encodes nodes, whose checks fit the free status slots, into
// command buffers enqueued in order, one goroutine each, and commits each
// once encoded. Every command buffer is committed, even after an
// encoding error (a queue must not wait for one never committed).
func (b *Backend) submitBatch(nodes []*ops.Tensor, perNode bool) ([]commands, error) {
	slots := make([]int, len(nodes))
	for i, t := range nodes {
		slots[i] = -1
		if describe := b.checked(t); describe != nil {
			slots[i] = len(b.checks)
			b.checks = append(b.checks, pendingCheck{t, func(code, detail int32) error { return describe(t, code, detail) }})
		}
	}
	k := commandBuffers(len(nodes))
	if perNode {
		k = len(nodes)
	}
	parts := chunks(nodes, k)
	cbs := make([]commands, 0, k)
	for range parts {
		c, err := b.dev.newCommands()
		if err != nil {
			for _, c := range cbs {
				c.commit()
			}
			b.pending = append(b.pending, cbs...)
			return cbs, err
		}
		c.enqueue()
		cbs = append(cbs, c)
	}
	logs := make([]encodedBuffer, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	at := 0
	for i, part := range parts {
		first := at
		at += len(part)
		run := func() {
			logs[i], errs[i] = b.encodeNodes(cbs[i], part, slots[first:first+len(part)])
			cbs[i].commit()
		}
		if i == len(parts)-1 || perNode {
			run()
		} else {
			wg.Go(run)
		}
	}
	wg.Wait()
	b.pending = append(b.pending, cbs...)
	b.encoded = append(b.encoded, logs...)
	for _, err := range errs {
		if err != nil {
			return cbs, err
		}
	}
	return cbs, nil
}

// encodeNodes encodes nodes into cmds, each in a debug group named after
// it, with a barrier before a node only where it has a hazard with a node
// since the last barrier.
func (b *Backend) encodeNodes(cmds commands, nodes []*ops.Tensor, slots []int) (encodedBuffer, error) {
	var h hazards
	log := make(encodedBuffer, 0, len(nodes))
	for i, t := range nodes {
		if t.NumElements() == 0 {
			continue
		}
		reads, write, hasWrite := b.nodeRanges(t)
		en := encodedNode{node: t}
		if h.conflicts(reads, write, hasWrite) {
			if !b.dropBarriers {
				cmds.barrier()
			}
			en.barrier = true
			h.reset()
		}
		h.add(reads, write, hasWrite)
		e := &encoder{b: b, cmds: cmds, node: t, slot: slots[i]}
		cmds.pushGroup(nodeLabel(t))
		k, _ := kernelsByOp.Kernel(t.Op)
		err := k.Run(e, t)
		cmds.popGroup()
		en.dispatches, en.inner = e.dispatches, max(e.dispatches-1, 0)
		log = append(log, en)
		if err != nil {
			return log, fmt.Errorf("metal: %s (%v): %w", t.Name, t.Op, err)
		}
	}
	return log, nil
}

// readChecks, after the command buffers are done, returns the error of
// the first pending check whose kernels set their status words, clears
// the words and forgets the checks. ok false (the work failed) forgets
// them, clearing the words, without reading them.
func (b *Backend) readChecks(ok bool) error {
	n := len(b.checks)
	if n == 0 {
		return nil
	}
	w := b.status.contents()[:gpu.StatusBytes*n]
	var first error
	for i, c := range b.checks {
		if !ok {
			break
		}
		if code, detail := gpu.StatusAt(w, i); code != 0 && first == nil {
			first = fmt.Errorf("metal: %s (%v): %w", c.t.Name, c.t.Op, c.describe(code, detail))
		}
	}
	clear(w)
	clear(b.checks)
	b.checks = b.checks[:0]
	return first
}
