package cuda

import (
	"fmt"
	"hash/fnv"
	"os"
	"strings"

	"github.com/kernbench/kernbench/ops"
)

// CUDA graphs: ComputeGraph captures a split's launches on the stream
// (cuStreamBeginCapture in relaxed mode, so that a scratch slot may still
// grow), then gives the graph to the instantiated graph kept for splits of
// the same ops (cuGraphExecUpdate), or instantiates it when that fails
// (the split changed shape: another kernel, another number of launches),
// and launches it with one cuGraphLaunch. The capture runs the host code
// of every node each time, so that the graph has this run's addresses and
// sizes; what it saves is the GPU's per-launch overhead.

// graphsByDefault says whether a backend captures graphs when it opens:
// yes, unless $KERNBENCH_CUDA_GRAPHS turns them off.
func graphsByDefault() bool {
	switch strings.ToLower(os.Getenv("KERNBENCH_CUDA_GRAPHS")) {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

// maxExecs bounds the instantiated graphs a backend keeps.
const maxExecs = 16

// captured is the backend's instantiated graphs, by the ops of their
// splits, and the nodes of the last capture, by where each one's stream
// operations start among the graph's nodes (to name the node of a fault).
type captured struct {
	execs map[uint64]uintptr
	order []uint64 // keys, oldest first
	nodes []*ops.Tensor
	start []int64
}

// graphKey identifies a split by its nodes' ops, in order.
func graphKey(nodes []*ops.Tensor) uint64 {
	h := fnv.New64a()
	var b [2]byte
	for _, t := range nodes {
		b[0], b[1] = byte(t.Op), byte(t.Op>>8)
		h.Write(b[:])
	}
	return h.Sum64()
}

// destroy frees the instantiated graphs.
func (c *captured) destroy(b *Backend) {
	for _, e := range c.execs {
		b.api.cuGraphExecDestroy(e)
	}
	c.execs, c.order = nil, nil
}

// computeCaptured queues nodes as one CUDA graph.
func (b *Backend) computeCaptured(nodes []*ops.Tensor) error {
	// Read-only host buffers (weights) are copied before the capture: the
	// first copy may wait for the staging memory, which a capture cannot.
	for _, t := range nodes {
		for _, s := range t.Src {
			if s == nil {
				continue
			}
			if m, _ := s.Storage(); m != nil {
				if h, ok := m.(*ops.HostBuffer); ok && h.ReadOnly() {
					if _, err := b.ptr(s); err != nil {
						return fmt.Errorf("cuda: %s (%v): %w", t.Name, t.Op, err)
					}
				}
			}
		}
	}
	g, err := b.capture(nodes)
	if err != nil {
		return err
	}
	defer b.api.cuGraphDestroy(g)
	exec, err := b.instantiated(graphKey(nodes), g)
	if err != nil {
		return fmt.Errorf("cuda: a graph of %d nodes: %w", len(nodes), err)
	}
	if err := b.api.check("cuGraphLaunch", b.api.cuGraphLaunch(exec, b.strm)); err != nil {
		return b.graphFault(err)
	}
	return nil
}

// capture records the launches of nodes into a new graph.
func (b *Backend) capture(nodes []*ops.Tensor) (uintptr, error) {
	c := &b.cap
	c.nodes = append(c.nodes[:0], nodes...)
	c.start = c.start[:0]
	if err := b.api.check("cuStreamBeginCapture_v2", b.api.cuStreamBeginCapture(b.strm, captureModeRelaxed)); err != nil {
		return 0, err
	}
	b.capturing = true
	base := b.api.captured.Load()
	var err error
	for _, t := range nodes {
		c.start = append(c.start, b.api.captured.Load()-base)
		if err = b.compute(t); err != nil {
			break
		}
	}
	var g uintptr
	eerr := b.api.check("cuStreamEndCapture", b.api.cuStreamEndCapture(b.strm, &g))
	b.capturing = false
	if err == nil && eerr != nil {
		err = fmt.Errorf("cuda: capturing a graph of %d nodes: %w", len(nodes), eerr)
	}
	if err != nil {
		if g != 0 {
			b.api.cuGraphDestroy(g)
		}
		return 0, err
	}
	return g, nil
}

// instantiated returns the instantiated graph for the splits of key with
// graph g's nodes: the one kept, updated, or a new one.
func (b *Backend) instantiated(key uint64, g uintptr) (uintptr, error) {
	c := &b.cap
	if e, ok := c.execs[key]; ok {
		var info graphUpdateInfo
		if b.api.cuGraphExecUpdate != nil && b.api.cuGraphExecUpdate(e, g, &info) == 0 {
			return e, nil
		}
		// Another shape: instantiate anew.
		b.api.cuGraphExecDestroy(e)
		delete(c.execs, key)
		for i, k := range c.order {
			if k == key {
				c.order = append(c.order[:i], c.order[i+1:]...)
				break
			}
		}
	}
	var e uintptr
	if err := b.api.check("cuGraphInstantiateWithFlags", b.api.cuGraphInstantiate(&e, g, 0)); err != nil {
		return 0, err
	}
	if len(c.order) == maxExecs {
		b.api.cuGraphExecDestroy(c.execs[c.order[0]])
		delete(c.execs, c.order[0])
		c.order = c.order[1:]
	}
	if c.execs == nil {
		c.execs = map[uint64]uintptr{}
	}
	c.execs[key] = e
	c.order = append(c.order, key)
	return e, nil
}

// graphFault wraps the error of a graph launch. The emulated driver says
// which graph node failed, so the error names the split's node as a
// launch's would; a GPU's names the split.
func (b *Backend) graphFault(err error) error {
	err = b.fail(err)
	c := &b.cap
	if b.api.lastGraphNode != nil {
		if k := int64(b.api.lastGraphNode()); k >= 0 {
			i := len(c.start) - 1
			for i > 0 && c.start[i] > k {
				i--
			}
			t := c.nodes[i]
			return fmt.Errorf("cuda: %s (%v): %w", t.Name, t.Op, err)
		}
	}
	first, last := c.nodes[0], c.nodes[len(c.nodes)-1]
	return fmt.Errorf("cuda: the graph of nodes %s to %s: %w", first.Name, last.Name, err)
}
