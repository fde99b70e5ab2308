package cuda

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kernbench/kernbench/ops"
)

// CUDA graphs: ComputeGraph captures a split's launches on the stream
// (cuStreamBeginCapture in relaxed mode, so that a scratch slot may still
// grow), then gives the graph to the instantiated graph kept for that part
// of splits of the same ops (cuGraphExecUpdate), or instantiates it when
// that fails (the split changed shape: another kernel, another number of
// launches), and launches it with one cuGraphLaunch. The capture runs the
// host code of every node each time, so that the graph has this run's
// addresses and sizes; what it saves is the GPU's per-launch overhead.
//
// A split is captured and launched in chunks of nodes, so that the GPU
// runs one chunk while the host captures the next: a split captured whole
// keeps the GPU idle for all of the host's work, then the host idle while
// the GPU runs it (host time plus GPU time, where launches one by one
// give about the larger of the two). The chunks grow (chunkFirst nodes,
// then twice as many, up to chunkMax), so that the GPU starts early and
// the later chunks cost fewer graph launches; $KERNBENCH_CUDA_GRAPHS
// selects a fixed size, or the whole split as one graph, for measuring
// (see parseGraphMode).
//
// A graph whose capture would be the same as the last one's (the same
// kernels with the same arguments) is not detected: knowing it takes the
// nodes' host code, which is what a capture runs; and a decoded token's
// arguments change (the KV cache's length, positions).

// The default chunks: chunkFirst nodes, then twice as many each time, up
// to chunkMax.
const (
	chunkFirst = 8
	chunkMax   = 64
)

// chunkGrowing is graphChunk's value for chunks that grow from
// chunkFirst to chunkMax; 0 is the whole split, a positive size that
// many nodes a chunk.
const chunkGrowing = -1

// graphsEnv selects the backend's CUDA graphs (parseGraphMode).
const graphsEnv = "KERNBENCH_CUDA_GRAPHS"

// parseGraphMode reads a $KERNBENCH_CUDA_GRAPHS value: "off" (or "0",
// "false", "no") launches the nodes one by one; empty, "on" (or "true",
// "yes", "chunked") captures each split in growing chunks; "whole"
// captures each split as one graph; a number N > 0 captures chunks of N
// nodes. It returns whether graphs are on and the chunk size
// (graphChunk's values).
func parseGraphMode(v string) (on bool, chunk int, err error) {
	switch v = strings.ToLower(strings.TrimSpace(v)); v {
	case "off", "0", "false", "no":
		return false, 0, nil
	case "", "on", "true", "yes", "chunked":
		return true, chunkGrowing, nil
	case "whole":
		return true, 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return false, 0, fmt.Errorf("cuda: $%s=%q: want off, on, whole or a chunk size in nodes", graphsEnv, v)
	}
	return true, n, nil
}

// chunkEnd returns where the chunk of nodes starting at node i (of n)
// ends, its k-th (from 0), for chunk size mode (graphChunk).
func chunkEnd(mode, k, i, n int) int {
	size := n // the whole split
	switch {
	case mode > 0:
		size = mode
	case mode == chunkGrowing:
		size = chunkMax
		if k < 4 && chunkFirst<<k < chunkMax {
			size = chunkFirst << k
		}
	}
	return min(i+size, n)
}

// maxExecs bounds the instantiated graphs a backend keeps: a split's
// chunks each keep one (a 7B model's decoded token is about 580 nodes:
// 13 growing chunks, 73 of 8 nodes).
const maxExecs = 1024

// captured is the backend's instantiated graphs, by their chunks' place
// and ops, and the nodes of the last capture, by where each one's stream
// operations start among the graph's nodes (to name the node of a fault).
type captured struct {
	execs map[uint64]uintptr
	order []uint64 // keys, oldest first
	nodes []*ops.Tensor
	start []int64
}

// graphKey identifies a chunk by its first node's index in the split and
// its nodes' ops, in order.
func graphKey(first int, nodes []*ops.Tensor) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	mix := func(v uint64) {
		for range 8 {
			h = (h ^ v&0xff) * prime
			v >>= 8
		}
	}
	mix(uint64(first))
	mix(uint64(len(nodes)))
	for _, t := range nodes {
		mix(uint64(t.Op))
	}
	return h
}

// destroy frees the instantiated graphs.
func (c *captured) destroy(b *Backend) {
	for _, e := range c.execs {
		b.api.cuGraphExecDestroy(e)
	}
	c.execs, c.order = nil, nil
}

// computeCaptured queues nodes as CUDA graphs, a chunk of nodes each
// (see chunkEnd), each launched as soon as it is captured.
func (b *Backend) computeCaptured(nodes []*ops.Tensor) error {
	for k, i := 0, 0; i < len(nodes); k++ {
		j := chunkEnd(b.graphChunk, k, i, len(nodes))
		if err := b.computeChunk(i, nodes[i:j]); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// computeChunk captures the nodes of a split from its node first on,
// and launches them as one graph.
func (b *Backend) computeChunk(first int, nodes []*ops.Tensor) error {
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
	g, n, err := b.capture(nodes)
	if err != nil {
		return err
	}
	defer b.api.cuGraphDestroy(g)
	if n == 0 {
		return nil // nothing to run (nodes without elements)
	}
	exec, err := b.instantiated(graphKey(first, nodes), g)
	if err != nil {
		return fmt.Errorf("cuda: a graph of %d nodes: %w", len(nodes), err)
	}
	if code := b.api.cuGraphLaunch(exec, b.strm); code != 0 {
		return b.graphFault(b.api.check("cuGraphLaunch", code))
	}
	return nil
}

// capture records the launches of nodes into a new graph, and returns it
// with the number of stream operations it holds.
func (b *Backend) capture(nodes []*ops.Tensor) (uintptr, int64, error) {
	c := &b.cap
	c.nodes = append(c.nodes[:0], nodes...)
	c.start = c.start[:0]
	if err := b.api.check("cuStreamBeginCapture_v2", b.api.cuStreamBeginCapture(b.strm, captureModeRelaxed)); err != nil {
		return 0, 0, err
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
	n := b.api.captured.Load() - base
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
		return 0, 0, err
	}
	return g, n, nil
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
// launch's would; a GPU's names the chunk.
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
	// A GPU reports a fault at a later call: this chunk's launch, or a
	// later chunk's, so the fault is in this chunk or before it.
	first, last := c.nodes[0], c.nodes[len(c.nodes)-1]
	return fmt.Errorf("cuda: the graph of nodes %s to %s, or a graph before it: %w", first.Name, last.Name, err)
}
