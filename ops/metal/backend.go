package metal

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// Backend computes ops with Metal kernels on one device: a Mac's GPU, or
// the SIMT emulator, with the same host code. It implements ops.Backend
// and, for the GPU's queued execution, ops.Synchronizer, ops.GraphComputer
// (a split's nodes encoded into a few command buffers with concurrent
// dispatch, see encode.go) and ops.DeviceTimer (when asked with
// SetNodeTiming, the GPU start and end times of each node's command
// buffer). Calls on one backend are serialized.
type Backend struct {
	name string
	dev  device
	emu  bool

	mu     sync.Mutex
	closed bool
	// resMu guards res and the making of device memory while several
	// goroutines encode a split.
	resMu sync.Mutex
	// res holds read-only host buffers (weights in a model file's
	// mapping) made device memory once, wrapped without a copy where the
	// device can, else copied; and the temporaries released at the next
	// synchronization (copies of writable host tensors for queued work,
	// tables and scratch memory of a node's kernels).
	res gpu.Resident[*mapping]
	// viewsMade counts the views of read-only host buffers made.
	viewsMade int
	// pending are command buffers committed and not yet waited for.
	pending []commands
	// status holds statusSlots word pairs: kernels that check their
	// input data write an error code and a detail to their node's slot;
	// checks are the nodes queued with a slot, read at synchronization.
	status devBuffer
	checks []pendingCheck
	// timeNodes asks ComputeGraph for a command buffer per node, so that
	// each node has GPU times (SetNodeTiming).
	timeNodes bool
	// graph holds the command buffers of the last ComputeGraph when it
	// timed its nodes, one per node, for NodeTimes; nil when it did not.
	graph []commands
	// encoded is what the command buffers of the last ComputeGraph or
	// Compute hold, for tests.
	encoded []encodedBuffer
	// dropBarriers, for a test, leaves out the barriers between nodes
	// (they are still recorded in encoded).
	dropBarriers bool

	gcMu sync.Mutex
	// collected are buffers whose Buffer the program dropped, released
	// at the next synchronization.
	collected []devBuffer
}

// view is a place in device memory: a buffer and a byte offset in it.
type view struct {
	buf devBuffer
	off int64
}

func newBackend(name string, dev device, emu bool) (*Backend, error) {
	b := &Backend{name: name, dev: dev, emu: emu}
	b.res.Release = (*mapping).release
	st, err := dev.newBuffer(statusSlots * gpu.StatusBytes)
	if err != nil {
		dev.close()
		return nil, err
	}
	b.status = st
	return b, nil
}

// Name returns the backend's name: "metal-gpu" for the Mac's GPU,
// "metal-emu" for the emulated device.
func (b *Backend) Name() string { return b.name }

// Describe says what the backend runs on, for reports.
func (b *Backend) Describe() string { return b.name + " (" + b.dev.describe() + ")" }

// Emulated reports whether the backend runs on the SIMT emulator: its
// results are validated like a GPU's, but its times are not a GPU's and
// must never be presented as performance.
func (b *Backend) Emulated() bool { return b.emu }

// enter locks the backend; the returned function unlocks it.
func (b *Backend) enter() (func(), error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errors.New("metal: backend is closed")
	}
	return b.mu.Unlock, nil
}

// Close waits for the queued work and releases the backend's memory and
// device.
func (b *Backend) Close() error {
	leave, err := b.enter()
	if err != nil {
		return nil // already closed
	}
	defer leave()
	b.sync()
	b.res.ReleaseAll()
	b.status.release()
	b.dev.close()
	b.closed = true
	return nil
}

// ---------------------------------------------------------------------
// Memory.

// buffer is device memory of a backend, in shared storage.
type buffer struct {
	b     *Backend
	d     devBuffer
	size  int64
	freed *atomic.Bool
}

// Alloc returns a zeroed buffer of size bytes in device memory.
func (b *Backend) Alloc(size int64) (ops.Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("metal: negative buffer size %d", size)
	}
	leave, err := b.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	d, err := b.dev.newBuffer(max(size, 1))
	if err != nil {
		return nil, fmt.Errorf("metal: allocating %d bytes: %w", size, err)
	}
	buf := &buffer{b: b, d: d, size: size, freed: new(atomic.Bool)}
	runtime.AddCleanup(buf, func(freed *atomic.Bool) {
		if freed.CompareAndSwap(false, true) {
			b.gcMu.Lock()
			b.collected = append(b.collected, d)
			b.gcMu.Unlock()
		}
	}, buf.freed)
	return buf, nil
}

// Size returns the buffer's size in bytes.
func (m *buffer) Size() int64 { return m.size }

// ReadAt copies len(p) bytes at off to p, after the work queued before.
func (m *buffer) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > m.size {
		return 0, fmt.Errorf("metal: read of %d bytes at %d outside a %d-byte buffer", len(p), off, m.size)
	}
	leave, err := m.b.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	if err := m.b.sync(); err != nil {
		return 0, err
	}
	return copy(p, m.d.contents()[off:]), nil
}

// WriteAt copies p into the buffer at off, after the work queued before.
func (m *buffer) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > m.size {
		return 0, fmt.Errorf("metal: write of %d bytes at %d outside a %d-byte buffer", len(p), off, m.size)
	}
	leave, err := m.b.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	if err := m.b.sync(); err != nil {
		return 0, err
	}
	return copy(m.d.contents()[off:], p), nil
}

// CopyFrom copies n bytes at srcOff of src to the buffer at off: from a
// buffer of the same backend or from host memory, straight into the
// shared storage.
func (m *buffer) CopyFrom(src ops.Buffer, srcOff, off, n int64) error {
	var from []byte
	leave, err := m.b.enter()
	if err != nil {
		return err
	}
	defer leave()
	switch s := src.(type) {
	case *buffer:
		if s.b != m.b {
			return ops.ErrCopyUnsupported
		}
		if srcOff < 0 || srcOff+n > s.size {
			return fmt.Errorf("metal: copy of %d bytes from %d outside a %d-byte buffer", n, srcOff, s.size)
		}
		from = s.d.contents()
	case *ops.HostBuffer:
		if srcOff < 0 || srcOff+n > s.Size() {
			return fmt.Errorf("metal: copy of %d bytes from %d outside a %d-byte host buffer", n, srcOff, s.Size())
		}
		from = s.Bytes()
	default:
		return ops.ErrCopyUnsupported
	}
	if off < 0 || off+n > m.size {
		return fmt.Errorf("metal: copy of %d bytes to %d outside a %d-byte buffer", n, off, m.size)
	}
	if err := m.b.sync(); err != nil {
		return err
	}
	copy(m.d.contents()[off:off+n], from[srcOff:srcOff+n])
	return nil
}

// at returns where t's first byte is in device memory. A tensor in host
// memory is made device memory: a read-only host buffer (a model's
// weights) in views of at most the device's maxBufferLength, each wrapped
// without a copy where the device can, made as tensors need them and
// kept (hostmem.go); a writable one copied for this computation.
func (b *Backend) at(t *ops.Tensor) (view, error) {
	buf, off := t.Storage()
	switch m := buf.(type) {
	case *buffer:
		if m.b != b {
			return view{}, fmt.Errorf("metal: %s lives in the memory of another backend (%s)", t.Name, m.b.name)
		}
		return view{m.d, off}, nil
	case *ops.HostBuffer:
		b.resMu.Lock()
		defer b.resMu.Unlock()
		mp, at, err := b.res.Host(m, off, t.Extent(), b.hostMapping, b.hostCopy)
		if err != nil {
			return view{}, fmt.Errorf("metal: %s: %w", t.Name, err)
		}
		v, err := b.viewOf(mp, at, t.Extent())
		if err != nil {
			return view{}, fmt.Errorf("metal: %s: %w", t.Name, err)
		}
		return v, nil
	case nil:
		return view{}, fmt.Errorf("metal: %s has no storage", t.Name)
	}
	return view{}, fmt.Errorf("metal: %s lives in %T memory, which the Metal backend cannot read", t.Name, buf)
}

// dst returns where the node's output is, which must be the backend's
// memory.
func (b *Backend) dst(t *ops.Tensor) (view, error) {
	buf, off := t.Storage()
	m, ok := buf.(*buffer)
	if !ok || m.b != b {
		return view{}, fmt.Errorf("metal: the output %s must be in the backend's memory, not %T", t.Name, buf)
	}
	return view{m.d, off}, nil
}

// ---------------------------------------------------------------------
// Computing.

// kernelsByOp holds the backend's kernels by op; each op's file adds its
// op from init. Ops whose kernels check their input data are added with
// AddChecked: after them the work is waited for, and a bad input is
// Compute's error.
var kernelsByOp = gpu.NewTable[func(e *encoder, t *ops.Tensor) error]("metal")

// Supports reports whether the backend can compute t.
func (b *Backend) Supports(t *ops.Tensor) error { return kernelsByOp.Supports(t) }

// Compute encodes t's computation into a command buffer and commits it:
// it may return before the work is done (Synchronize waits for it;
// reading a buffer waits too). Ops that check their input data wait, so
// that a bad input is Compute's error.
func (b *Backend) Compute(t *ops.Tensor) error {
	if err := b.Supports(t); err != nil {
		return err
	}
	return gpu.Locked(b.enter, func() error { return b.compute(t) })
}

func (b *Backend) compute(t *ops.Tensor) error {
	b.graph = nil
	if _, err := b.submit([]*ops.Tensor{t}, true); err != nil {
		return err
	}
	if b.checked(t) != nil {
		return b.sync()
	}
	return nil
}

// nodeLabel names a node as the dot dumps do (graphs/dot): its label
// and its op with the type it reads, "blk.0.attn_q MUL_MAT(q4_0)".
func nodeLabel(t *ops.Tensor) string {
	typ := t.Type.String()
	if len(t.Src) > 0 && t.Src[0] != nil {
		typ = t.Src[0].Type.String()
		if t.Op == ops.OpCpy {
			typ += "->" + t.Type.String()
		}
	}
	return fmt.Sprintf("%s %v(%s)", t.Label(), t.Op, typ)
}

// ComputeGraph encodes nodes in order into a few command buffers with
// concurrent dispatch and barriers only between dependent nodes (see
// encode.go), or, when SetNodeTiming asked for times, each node in a
// command buffer of its own, so that each node's GPU start and end times
// time it (NodeTimes reads them once the work is done). It returns once
// the work is queued; the errors of nodes that check their input data
// come from the next synchronization.
func (b *Backend) ComputeGraph(nodes []*ops.Tensor) error {
	if err := kernelsByOp.SupportsAll(nodes); err != nil {
		return err
	}
	return gpu.Locked(b.enter, func() error { return b.computeGraph(nodes) })
}

func (b *Backend) computeGraph(nodes []*ops.Tensor) error {
	cbs, err := b.submit(nodes, b.timeNodes)
	b.graph = nil
	if b.timeNodes && err == nil {
		b.graph = cbs
	}
	return err
}

// SetNodeTiming asks later ComputeGraph calls for each node's GPU time
// (on), which costs a command buffer per node, or for a split in a few
// command buffers with concurrent dispatch (off, the default), whose
// NodeTimes are nil (ops.NodeTimingSwitch).
func (b *Backend) SetNodeTiming(on bool) {
	b.mu.Lock()
	b.timeNodes = on
	b.mu.Unlock()
}

// NodeTimes returns the GPU time of each node of the last ComputeGraph,
// waiting for the work to finish. On metal-emu these are the emulator's
// wall times, which are not a GPU's.
func (b *Backend) NodeTimes() ([]time.Duration, error) {
	leave, err := b.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	if err := b.sync(); err != nil {
		return nil, err
	}
	if b.graph == nil {
		return nil, nil
	}
	out := make([]time.Duration, len(b.graph))
	for i, c := range b.graph {
		out[i] = c.gpuTime()
	}
	return out, nil
}

// Synchronize waits for the queued work and returns its first error.
func (b *Backend) Synchronize() error { return gpu.Locked(b.enter, b.sync) }

// sync waits for the committed command buffers, reads the status slots of
// the nodes that check their input data, then releases the copies made
// for their work and the buffers the program dropped.
func (b *Backend) sync() error {
	var first error
	for _, c := range b.pending {
		if err := c.wait(); err != nil && first == nil {
			first = err
		}
	}
	clear(b.pending)
	b.pending = b.pending[:0]
	if err := b.readChecks(first == nil); err != nil {
		first = err
	}
	b.res.ReleaseTemps()
	b.gcMu.Lock()
	for _, d := range b.collected {
		d.release()
	}
	b.collected = b.collected[:0]
	b.gcMu.Unlock()
	return first
}

// A capturer is a device that can record its work in a GPU capture.
type capturer interface {
	// startCapture starts capturing the device's work into a GPU trace
	// document at path; stop ends the capture.
	startCapture(path string) (stop func() error, err error)
}

// StartCapture starts a Metal GPU capture (MTLCaptureManager, destination a
// GPU trace document) of everything the backend runs until stop, written
// to path (a new .gputrace). Each node is a debug group named as in the
// dot dumps. Only a Mac's GPU captures: on metal-emu, and off macOS, it is
// an error saying why.
func (b *Backend) StartCapture(path string) (stop func() error, err error) {
	leave, err := b.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	c, ok := b.dev.(capturer)
	if !ok {
		return nil, fmt.Errorf("metal: %s cannot make a GPU capture: captures need a Mac's GPU and MTLCaptureManager, and the SIMT emulator has neither", b.name)
	}
	if err := b.sync(); err != nil {
		return nil, err
	}
	end, err := c.startCapture(path)
	if err != nil {
		return nil, err
	}
	return func() error {
		leave, err := b.enter()
		if err != nil {
			return err
		}
		defer leave()
		serr := b.sync()
		if err := end(); err != nil {
			return err
		}
		return serr
	}, nil
}

// ---------------------------------------------------------------------
// Encoding.

// An encoder encodes one node's dispatches, with a barrier between two
// of them.
type encoder struct {
	b    *Backend
	cmds commands
	node *ops.Tensor
	// slot is the node's status slot, -1 for a node that checks nothing.
	slot int
	// dispatches counts the node's dispatches so far.
	dispatches int
}

// src returns a binding of t (a source) at buffer index i.
func (e *encoder) src(i int, t *ops.Tensor) (binding, error) {
	v, err := e.b.at(t)
	if err != nil {
		return binding{}, err
	}
	return binding{index: i, buf: v.buf, off: v.off}, nil
}

// out returns a binding of the node's output at buffer index i.
func (e *encoder) out(i int, t *ops.Tensor) (binding, error) {
	v, err := e.b.dst(t)
	if err != nil {
		return binding{}, err
	}
	return binding{index: i, buf: v.buf, off: v.off}, nil
}

// statusAt binds the node's status words at buffer index i.
func (e *encoder) statusAt(i int) binding {
	return binding{index: i, buf: e.b.status, off: int64(max(e.slot, 0) * gpu.StatusBytes)}
}

// args binds a kernel's argument struct at buffer index 0 (setBytes).
func args(s *gpu.CStruct) binding { return binding{index: 0, bytes: s.Bytes()} }

// dispatch encodes kernel name of file over groups threadgroups of
// threads threads, with threadgroup memory lengths tg by index. It checks
// the geometry against the pipeline and the device.
func (e *encoder) dispatch(file, name string, groups, threads [3]int, tg []int, bs ...binding) error {
	p, err := e.b.dev.pipeline(file, name)
	if err != nil {
		return err
	}
	n := threads[0] * threads[1] * threads[2]
	if n < 1 || n > p.maxThreads() {
		return fmt.Errorf("metal: %s with %v threads per threadgroup (the pipeline takes at most %d)", name, threads, p.maxThreads())
	}
	total := 0
	for _, l := range tg {
		total += l
	}
	if total > e.b.dev.maxThreadgroupMemory() {
		return fmt.Errorf("metal: %s with %d bytes of threadgroup memory (at most %d)", name, total, e.b.dev.maxThreadgroupMemory())
	}
	for _, g := range groups {
		if g < 1 || g > 1<<31-1 {
			return fmt.Errorf("metal: %s over %v threadgroups", name, groups)
		}
	}
	if e.dispatches > 0 {
		// A node's dispatches pass data through memory in order.
		e.cmds.barrier()
	}
	e.dispatches++
	return e.cmds.encode(dispatch{pipe: p, buffers: bs, threadgroup: tg, groups: groups, threads: threads})
}

// newTemp returns device memory of n bytes released at the next
// synchronization.
func (e *encoder) newTemp(n int64) (devBuffer, error) {
	e.b.resMu.Lock()
	defer e.b.resMu.Unlock()
	d, err := e.b.dev.newBuffer(max(n, 1))
	if err != nil {
		return nil, err
	}
	e.b.res.AddTemp(&mapping{views: []mappedView{{buf: d}}})
	return d, nil
}

// table binds read-only data the host computed (a few KiB at most,
// usually) at buffer index i: copied into the command buffer with
// setBytes up to Metal's 4 KiB, else in a buffer released at the next
// synchronization.
func (e *encoder) table(i int, p []byte) (binding, error) {
	if len(p) == 0 {
		p = make([]byte, 16)
	}
	if len(p) <= 4096 {
		return binding{index: i, bytes: p}, nil
	}
	d, err := e.newTemp(int64(len(p)))
	if err != nil {
		return binding{}, err
	}
	copy(d.contents(), p)
	return binding{index: i, buf: d}, nil
}

// scratch returns a binding of n bytes of device memory for the node's
// kernels to pass data between them, released at the next
// synchronization; its index is the caller's to set.
func (e *encoder) scratch(n int64) (binding, error) {
	d, err := e.newTemp(n)
	if err != nil {
		return binding{}, err
	}
	return binding{buf: d}, nil
}

// TimeRepeated computes t n times, each in a command buffer of its own,
// and returns the sum of their GPU times (GPUEndTime - GPUStartTime):
// the device's time, without the host's encoding and the gaps between
// command buffers (ops.RepeatTimer). On metal-emu these are the
// emulator's wall times, which are not a GPU's (the measuring tools do
// not time an emulated backend).
func (b *Backend) TimeRepeated(t *ops.Tensor, n int) (time.Duration, error) {
	if err := b.Supports(t); err != nil {
		return 0, err
	}
	leave, err := b.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	if err := b.sync(); err != nil {
		return 0, err
	}
	b.graph = nil
	nodes := make([]*ops.Tensor, n)
	for i := range nodes {
		nodes[i] = t
	}
	runs, err := b.submit(nodes, true)
	if err != nil {
		return 0, err
	}
	if err := b.sync(); err != nil {
		return 0, err
	}
	var total time.Duration
	for _, c := range runs {
		total += c.gpuTime()
	}
	return total, nil
}

// RepeatClock names TimeRepeated's clock.
func (b *Backend) RepeatClock() string {
	if b.emu {
		return "SIMT emulator wall time per command buffer (not a GPU's)"
	}
	return "Metal GPU timestamps (GPUStartTime to GPUEndTime of each command buffer)"
}
