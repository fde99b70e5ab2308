package cuda

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/simt"
)

// Backend computes ops with CUDA kernels on one device: an NVIDIA GPU
// through its driver, or the SIMT emulator through its emulated driver,
// with the same host code. It implements ops.Backend, and for the GPU's
// queued execution ops.Synchronizer, ops.GraphComputer (a split's nodes
// captured into a CUDA graph and launched as one) and ops.DeviceTimer
// with ops.NodeTimingSwitch (CUDA events around each launch, when asked).
// Calls on one backend are serialized.
type Backend struct {
	name string
	api  *driverAPI
	emu  *simt.Device // the emulated device, or nil for a GPU
	comp compiler
	info deviceInfo
	ctx  uintptr
	strm uintptr

	mu      sync.Mutex
	closed  bool
	modules map[string]uintptr // kernel file -> CUmodule
	funcs   map[string]*function
	// res holds the copies of read-only host buffers (weights in a model
	// file's mapping), made once, and the temporaries released at the
	// next synchronization (copies of writable host tensors for queued
	// work, from copies; replaced scratch memory).
	res    gpu.Resident[*deviceBuffer]
	copies copyPool
	// pinned is the pinned host memory uploads pass through.
	pinned staging
	// collected is device memory whose Buffer the program dropped,
	// freed at the next call that holds the context.
	collected []uint64
	// status holds the status word pairs, statusSlots a block, one for
	// each node queued since the last synchronization whose kernels check
	// their input data (see statusFor); pending are those nodes.
	status  []statusBlock
	pending []pendingCheck
	// scratch is device memory for kernels' intermediate data, by slot
	// (see scratchBuffer): grown, never shrunk.
	scratch map[int]*deviceBuffer
	// timeNodes makes ComputeGraph time each node (SetNodeTiming).
	timeNodes bool
	// events of the last timed ComputeGraph: a start and an end per
	// node; timed is how many nodes it timed (0: the last ComputeGraph
	// was not timed).
	events []uintptr
	timed  int
	// eventsQueued says the events of the last ComputeGraph may not have
	// happened yet: no synchronization succeeded since it.
	eventsQueued bool
	// graphs makes ComputeGraph capture its nodes into a CUDA graph
	// (SetGraphs; see graph.go), and capturing says a capture is under
	// way.
	graphs    bool
	capturing bool
	cap       captured
	// graphChunk is how a split is cut into graphs: chunkGrowing, 0 for
	// the whole split, or a chunk size in nodes (see chunkEnd).
	graphChunk int
	// faKernel is the FLASH_ATTN_EXT kernel $KERNBENCH_CUDA_FA asks for
	// (faAuto: faKernelFor's choice).
	faKernel faKernel
	// dry says the emulated device runs no kernels (DryRun).
	dry bool
	// tiles is the tiled products' forced tiles, read from the
	// environment when the backend opens.
	tiles tileForce
	// argBytes, argOffs and argPtrs are launch's buffers for a kernel's
	// parameters: their bytes, each one's offset, and their addresses.
	argBytes []byte
	argOffs  []int
	argPtrs  []uintptr
}

// function is a loaded kernel.
type function struct {
	h      uintptr
	shared int // the dynamic shared memory it is allowed
	// launches counts its launches (tests check which kernels ran).
	launches int
}

// open creates a backend over api's device ordinal dev.
func open(name string, api *driverAPI, emu *simt.Device, comp compiler, info deviceInfo) (*Backend, error) {
	graphs, chunk, err := parseGraphMode(os.Getenv(graphsEnv))
	if err != nil {
		return nil, err
	}
	fa, err := parseFAKernel(os.Getenv(faKernelEnv))
	if err != nil {
		return nil, err
	}
	b := &Backend{name: name, api: api, emu: emu, comp: comp, info: info,
		modules: map[string]uintptr{}, funcs: map[string]*function{}, graphs: graphs, graphChunk: chunk, faKernel: fa,
		tiles: tileForceFromEnv(os.Getenv)}
	b.res.Release = b.releaseBuffer
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var dev int32
	if err := api.check("cuDeviceGet", api.cuDeviceGet(&dev, int32(info.Ordinal))); err != nil {
		return nil, err
	}
	if err := api.check("cuDevicePrimaryCtxRetain", api.cuDevicePrimaryCtxRetain(&b.ctx, dev)); err != nil {
		return nil, err
	}
	if err := api.check("cuCtxSetCurrent", api.cuCtxSetCurrent(b.ctx)); err != nil {
		return nil, err
	}
	if err := api.check("cuStreamCreate", api.cuStreamCreate(&b.strm, 0)); err != nil {
		return nil, err
	}
	st, err := b.newStatusBlock()
	if err != nil {
		return nil, err
	}
	b.status = append(b.status, st)
	return b, nil
}

// statusSlots is how many status word pairs a block of them holds: one
// for each node that checks its input data (see statusFor) queued since
// the last synchronization. A split with more checks than that adds a
// block.
const (
	statusSlots      = 256
	statusBlockBytes = gpu.StatusBytes * statusSlots
)

// A pendingCheck is a queued node whose kernels report bad input data in
// status slot i of the backend's pending checks.
type pendingCheck struct {
	t        *ops.Tensor
	describe func(code, detail int32) error
}

// statusFor returns the device address of a status word pair for node t's
// kernels (an error code and a detail such as a bad index; code 0 is no
// error), which the next synchronization reads, with those of every node
// queued since the last: describe makes the error of a code that is set,
// which that synchronization returns. Ops whose input data can be bad (ids
// out of range) call it, so that the check costs no wait of its own.
func (b *Backend) statusFor(t *ops.Tensor, describe func(code, detail int32) error) (uint64, error) {
	i := len(b.pending)
	if i/statusSlots == len(b.status) {
		st, err := b.newStatusBlock()
		if err != nil {
			return 0, err
		}
		b.status = append(b.status, st)
	}
	b.pending = append(b.pending, pendingCheck{t, describe})
	return b.status[i/statusSlots].dev.ptr + uint64(gpu.StatusBytes*(i%statusSlots)), nil
}

// readStatus queues the copy of the pending checks' status words to the
// host, a copy per block; checkStatus reads them once the stream is done.
func (b *Backend) readStatus() error {
	for i := 0; i < len(b.pending); i += statusSlots {
		st := b.status[i/statusSlots]
		n := gpu.StatusBytes * min(statusSlots, len(b.pending)-i)
		if err := b.api.check("cuMemcpyDtoHAsync_v2", b.api.cuMemcpyDtoHAsync(unsafe.Pointer(&st.host[0]), st.dev.ptr, uint64(n), b.strm)); err != nil {
			return err
		}
	}
	return nil
}

// checkStatus, after the stream finished the copy readStatus queued,
// returns the error of the first pending check whose kernels set their
// status, clears the status words that are set, and forgets the checks.
// ok false (the stream failed) forgets them without reading the words.
func (b *Backend) checkStatus(ok bool) error {
	n := len(b.pending)
	if n == 0 {
		return nil
	}
	pending := b.pending
	b.pending = b.pending[:0]
	var first error
	for i, c := range pending {
		if !ok {
			break
		}
		code, detail := gpu.StatusAt(b.status[i/statusSlots].host, i%statusSlots)
		if code != 0 && first == nil {
			first = fmt.Errorf("cuda: %s (%v): %w", c.t.Name, c.t.Op, c.describe(code, detail))
		}
	}
	clear(pending)
	if first != nil || !ok {
		for i := 0; i < n; i += statusSlots {
			st := b.status[i/statusSlots]
			if err := b.api.check("cuMemsetD8Async", b.api.cuMemsetD8Async(st.dev.ptr, 0, uint64(gpu.StatusBytes*min(statusSlots, n-i)), b.strm)); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// Name returns the backend's name: "cuda-0" for the first GPU, "cuda-emu"
// for the emulated device.
func (b *Backend) Name() string { return b.name }

// Describe says what the backend runs on, for reports.
func (b *Backend) Describe() string {
	s := fmt.Sprintf("%s (%s, %s, %d SMs; kernels by %s)", b.name, b.info.Name, b.info.Arch(), b.info.SMs, b.comp)
	if b.dry {
		s += " DRY RUN: kernels not executed, results are garbage"
	}
	return s
}

// Emulated reports whether the backend runs on the SIMT emulator: its
// results are validated like a GPU's, but its times are not a GPU's.
func (b *Backend) Emulated() bool { return b.emu != nil }

// DryRun reports whether the backend runs no kernels: cuda-emu opened
// with $KERNBENCH_CUDA_EMU_EXEC=off, whose launches and graph launches do
// the host's work (packing the parameters, capturing, instantiating) and
// skip the kernels, so that a profile or a run's times show the host path
// alone. Its results are garbage: validation refuses it
// (ops.DryRunner).
func (b *Backend) DryRun() bool { return b.dry }

// enter locks the backend and makes its context current on this thread
// (goroutines move between threads; the driver's current context does
// not). The returned function undoes both.
func (b *Backend) enter() (func(), error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errors.New("cuda: backend is closed")
	}
	runtime.LockOSThread()
	leave := func() {
		runtime.UnlockOSThread()
		b.mu.Unlock()
	}
	if err := b.api.check("cuCtxSetCurrent", b.api.cuCtxSetCurrent(b.ctx)); err != nil {
		leave()
		return nil, err
	}
	for _, p := range b.collected {
		b.api.cuMemFree(p)
	}
	b.collected = b.collected[:0]
	return leave, nil
}

// fail wraps a driver error; on the emulated device it adds the
// emulator's account of a failed launch.
func (b *Backend) fail(err error) error {
	var de *DriverError
	if b.emu != nil && errors.As(err, &de) && de.Fault == nil {
		de.Fault = b.emu.LastDriverFault()
	}
	return err
}

// Close releases the backend's device memory, stream and context.
func (b *Backend) Close() error {
	leave, err := b.enter()
	if err != nil {
		return nil // already closed
	}
	defer leave()
	b.api.cuStreamSynchronize(b.strm)
	b.closed = true // releaseBuffer frees pooled copies now
	b.res.ReleaseAll()
	b.copies.releaseAll()
	b.freeStaging(true)
	for _, st := range b.status {
		st.free(b)
	}
	for _, d := range b.scratch {
		d.release()
	}
	for _, ev := range b.events {
		b.api.cuEventDestroy(ev)
	}
	b.cap.destroy(b)
	b.api.cuStreamDestroy(b.strm)
	b.api.cuDevicePrimaryCtxRelease(int32(b.info.Ordinal))
	b.closed = true
	return nil
}

// ---------------------------------------------------------------------
// Memory.

// deviceBuffer is device memory of a backend.
type deviceBuffer struct {
	b     *Backend
	ptr   uint64
	size  int64
	freed *atomic.Bool
	// pooled marks a copy of a writable host tensor, which goes back to
	// the backend's pool (see releaseBuffer).
	pooled bool
}

// Alloc returns a zeroed buffer of size bytes in device memory.
func (b *Backend) Alloc(size int64) (ops.Buffer, error) {
	leave, err := b.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	return b.alloc(size)
}

// alloc allocates with the context held.
func (b *Backend) alloc(size int64) (*deviceBuffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("cuda: negative buffer size %d", size)
	}
	var p uint64
	if err := b.api.check("cuMemAlloc_v2", b.api.cuMemAlloc(&p, uint64(max(size, 1)))); err != nil {
		return nil, fmt.Errorf("cuda: allocating %d bytes: %w", size, err)
	}
	if err := b.api.check("cuMemsetD8Async", b.api.cuMemsetD8Async(p, 0, uint64(max(size, 1)), b.strm)); err != nil {
		b.api.cuMemFree(p)
		return nil, err
	}
	d := &deviceBuffer{b: b, ptr: p, size: size, freed: new(atomic.Bool)}
	runtime.AddCleanup(d, func(freed *atomic.Bool) {
		if freed.CompareAndSwap(false, true) {
			b.mu.Lock()
			b.collected = append(b.collected, p)
			b.mu.Unlock()
		}
	}, d.freed)
	return d, nil
}

// release frees the buffer now; the context must be current.
func (d *deviceBuffer) release() {
	if d.freed.CompareAndSwap(false, true) {
		d.b.api.cuMemFree(d.ptr)
	}
}

// Size returns the buffer's size in bytes.
func (d *deviceBuffer) Size() int64 { return d.size }

// ReadAt copies len(p) bytes at off to p, after the work queued before.
func (d *deviceBuffer) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > d.size {
		return 0, fmt.Errorf("cuda: read of %d bytes at %d outside a %d-byte device buffer", len(p), off, d.size)
	}
	if len(p) == 0 {
		return 0, nil
	}
	b := d.b
	leave, err := b.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	var pin runtime.Pinner
	pin.Pin(&p[0])
	defer pin.Unpin()
	// One wait: the copy follows the queued work on the stream.
	if err := b.syncAfter(func() error {
		return b.api.check("cuMemcpyDtoHAsync_v2", b.api.cuMemcpyDtoHAsync(unsafe.Pointer(&p[0]), d.ptr+uint64(off), uint64(len(p)), b.strm))
	}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteAt copies p into the buffer at off, after the work queued before.
func (d *deviceBuffer) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > d.size {
		return 0, fmt.Errorf("cuda: write of %d bytes at %d outside a %d-byte device buffer", len(p), off, d.size)
	}
	if len(p) == 0 {
		return 0, nil
	}
	b := d.b
	leave, err := b.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	if err := b.upload(d.ptr+uint64(off), p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CopyFrom copies n bytes at srcOff of src to the buffer at off, device to
// device, when src is memory of the same backend.
func (d *deviceBuffer) CopyFrom(src ops.Buffer, srcOff, off, n int64) error {
	s, ok := src.(*deviceBuffer)
	if !ok || s.b != d.b {
		return ops.ErrCopyUnsupported
	}
	if srcOff < 0 || srcOff+n > s.size || off < 0 || off+n > d.size {
		return fmt.Errorf("cuda: copy of %d bytes from %d to %d outside the buffers (%d, %d bytes)", n, srcOff, off, s.size, d.size)
	}
	leave, err := d.b.enter()
	if err != nil {
		return err
	}
	defer leave()
	return d.b.api.check("cuMemcpyDtoDAsync_v2", d.b.api.cuMemcpyDtoDAsync(d.ptr+uint64(off), s.ptr+uint64(srcOff), uint64(n), d.b.strm))
}

// ptr returns the device address of t's first byte. A tensor in host
// memory is copied to the device: a read-only host buffer (a model's
// weights) once, whole, and kept; a writable one for this computation,
// into pooled memory (see hostCopy).
func (b *Backend) ptr(t *ops.Tensor) (uint64, error) {
	buf, off := t.Storage()
	switch m := buf.(type) {
	case *deviceBuffer:
		if m.b != b {
			return 0, fmt.Errorf("cuda: %s lives in the memory of another backend (%s)", t.Name, m.b.name)
		}
		return m.ptr + uint64(off), nil
	case *ops.HostBuffer:
		d, at, err := b.res.Host(m, off, t.Extent(), b.copyToDevice, b.hostCopy)
		if err != nil {
			return 0, err
		}
		return d.ptr + uint64(at), nil
	case nil:
		return 0, fmt.Errorf("cuda: %s has no storage", t.Name)
	}
	return 0, fmt.Errorf("cuda: %s lives in %T memory, which the CUDA backend cannot read", t.Name, buf)
}

// copyToDevice returns new device memory holding p.
func (b *Backend) copyToDevice(p []byte) (*deviceBuffer, error) {
	d, err := b.alloc(int64(len(p)))
	if err != nil {
		return nil, err
	}
	if len(p) > 0 {
		if err := b.upload(d.ptr, p); err != nil {
			d.release()
			return nil, err
		}
	}
	return d, nil
}

// dstPtr returns the device address of the node's output, which must be
// in the backend's memory.
func (b *Backend) dstPtr(t *ops.Tensor) (uint64, error) {
	buf, off := t.Storage()
	m, ok := buf.(*deviceBuffer)
	if !ok || m.b != b {
		return 0, fmt.Errorf("cuda: the output %s must be in the backend's memory, not %T", t.Name, buf)
	}
	return m.ptr + uint64(off), nil
}

// scratchBuffer returns the device address of scratch slot's memory,
// with room for size bytes; the context must be current. Work on the
// stream is ordered, so queued kernels share a slot safely; when it grows,
// the memory it replaces is freed at the next synchronization, after the
// work queued before that may still read it.
func (b *Backend) scratchBuffer(slot int, size int64) (uint64, error) {
	if d := b.scratch[slot]; d != nil && d.size >= size {
		return d.ptr, nil
	}
	d, err := b.alloc(max(size, 256))
	if err != nil {
		return 0, err
	}
	if old := b.scratch[slot]; old != nil {
		b.res.AddTemp(old)
	}
	if b.scratch == nil {
		b.scratch = map[int]*deviceBuffer{}
	}
	b.scratch[slot] = d
	return d.ptr, nil
}

// ---------------------------------------------------------------------
// Computing.

// kernelsByOp holds the backend's kernels by op; each op's file adds its
// op from init.
var kernelsByOp = gpu.NewTable[func(b *Backend, t *ops.Tensor) error]("cuda")

// Supports reports whether the backend can compute t.
func (b *Backend) Supports(t *ops.Tensor) error { return kernelsByOp.Supports(t) }

// Compute queues t's computation on the backend's stream: it may return
// before the work is done (Synchronize waits for it; reading a buffer
// waits too).
func (b *Backend) Compute(t *ops.Tensor) error {
	if err := b.Supports(t); err != nil {
		return err
	}
	return gpu.Locked(b.enter, func() error {
		if err := b.compute(t); err != nil {
			return err
		}
		if len(b.pending) > 0 {
			// A node alone is its own split: its checks are its error.
			return b.sync()
		}
		return nil
	})
}

func (b *Backend) compute(t *ops.Tensor) error {
	if t.NumElements() == 0 {
		return nil
	}
	k, _ := kernelsByOp.Kernel(t.Op)
	if err := k.Run(b, t); err != nil {
		return fmt.Errorf("cuda: %s (%v): %w", t.Name, t.Op, b.fail(err))
	}
	return nil
}

// ComputeGraph queues nodes in order: captured into a CUDA graph and
// launched as one (see graph.go), or launched one by one when graphs are
// off or nodes are timed (SetNodeTiming), each timed node between a pair
// of CUDA events that NodeTimes reads once the work is done.
func (b *Backend) ComputeGraph(nodes []*ops.Tensor) error {
	if err := kernelsByOp.SupportsAll(nodes); err != nil {
		return err
	}
	return gpu.Locked(b.enter, func() error { return b.computeGraph(nodes) })
}

func (b *Backend) computeGraph(nodes []*ops.Tensor) error {
	b.timed = 0
	switch {
	case len(nodes) == 0:
		return nil
	case b.timeNodes:
		return b.computeTimed(nodes)
	case b.graphs:
		return b.computeCaptured(nodes)
	}
	for _, t := range nodes {
		if err := b.compute(t); err != nil {
			return err
		}
	}
	return nil
}

// computeTimed queues nodes with a pair of events around each.
func (b *Backend) computeTimed(nodes []*ops.Tensor) error {
	for len(b.events) < 2*len(nodes) {
		var ev uintptr
		if err := b.api.check("cuEventCreate", b.api.cuEventCreate(&ev, 0)); err != nil {
			return err
		}
		b.events = append(b.events, ev)
	}
	b.eventsQueued = true
	for i, t := range nodes {
		if err := b.api.check("cuEventRecord", b.api.cuEventRecord(b.events[2*i], b.strm)); err != nil {
			return err
		}
		if err := b.compute(t); err != nil {
			return err
		}
		if err := b.api.check("cuEventRecord", b.api.cuEventRecord(b.events[2*i+1], b.strm)); err != nil {
			return err
		}
		b.timed = i + 1
	}
	return nil
}

// SetNodeTiming turns the timing of each node of ComputeGraph on or off
// (off when the backend opens). Timing records a pair of CUDA events
// around each node and launches the nodes one by one, not as a graph:
// graphs.Scheduler turns it on only for runs whose records are read.
func (b *Backend) SetNodeTiming(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.timeNodes = on
}

// SetGraphs turns the capture of ComputeGraph's nodes into CUDA graphs on
// or off. It is on when the backend opens unless $KERNBENCH_CUDA_GRAPHS
// is "off" (or "0", "false").
func (b *Backend) SetGraphs(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.graphs = on
}

// SetGraphChunk sets how many nodes of a split each CUDA graph captures:
// n > 0 nodes, 0 the whole split, a negative n chunks that grow from 8 to
// 64 nodes (as the backend opens, unless $KERNBENCH_CUDA_GRAPHS says
// otherwise).
func (b *Backend) SetGraphChunk(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.graphChunk = max(n, chunkGrowing)
}

// NodeTimes returns the device time of each node of the last
// ComputeGraph, waiting for the work to finish; nil when that
// ComputeGraph was not timed (see SetNodeTiming).
func (b *Backend) NodeTimes() ([]time.Duration, error) {
	leave, err := b.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	if b.timed == 0 {
		return nil, nil
	}
	if b.eventsQueued {
		// Not waited for yet (a split's Synchronize usually has).
		if err := b.sync(); err != nil {
			return nil, err
		}
	}
	out := make([]time.Duration, b.timed)
	for i := range out {
		var ms float32
		if err := b.api.check("cuEventElapsedTime", b.api.cuEventElapsedTime(&ms, b.events[2*i], b.events[2*i+1])); err != nil {
			return nil, err
		}
		out[i] = time.Duration(float64(ms) * float64(time.Millisecond))
	}
	return out, nil
}

// Synchronize waits for the queued work and returns its first error.
func (b *Backend) Synchronize() error { return gpu.Locked(b.enter, b.sync) }

// sync waits for the stream with the context held, then frees the
// uploads made for the work.
func (b *Backend) sync() error { return b.syncAfter(nil) }

// syncAfter queues queue's work (nil for none), then the copy of the
// pending checks' status words, and waits once for the stream: the
// synchronization point of a split (see statusFor). It returns the first
// error of queue, the stream or the checks, and frees the uploads made
// for the work.
func (b *Backend) syncAfter(queue func() error) error {
	var err error
	if queue != nil {
		err = queue()
	}
	if err == nil {
		err = b.readStatus()
	}
	if serr := b.api.check("cuStreamSynchronize", b.api.cuStreamSynchronize(b.strm)); serr != nil && err == nil {
		err = serr
	}
	// The stream is done (or failed): the staging memory is free.
	b.resetStaging()
	b.freeStaging(false)
	if err != nil {
		b.checkStatus(false)
		return b.fail(err)
	}
	b.res.ReleaseTemps()
	b.copies.age()
	b.eventsQueued = false
	return b.checkStatus(true)
}

// ---------------------------------------------------------------------
// Launches.

// dim3 is a grid or block size.
type dim3 struct{ x, y, z uint32 }

// function returns kernel name of the given file, loading the file's
// module on first use.
func (b *Backend) function(file, name string) (*function, error) {
	if f, ok := b.funcs[name]; ok {
		return f, nil
	}
	mod, ok := b.modules[file]
	if !ok {
		img, err := b.comp.image(file)
		if err != nil {
			return nil, fmt.Errorf("cuda: building %s: %w: %w", file, ops.ErrKernelBuild, err)
		}
		var pin runtime.Pinner
		pin.Pin(&img[0])
		err = b.api.check("cuModuleLoadData", b.api.cuModuleLoadData(&mod, unsafe.Pointer(&img[0])))
		pin.Unpin()
		if err != nil {
			return nil, fmt.Errorf("cuda: loading %s: %w: %w", file, ops.ErrKernelBuild, b.fail(err))
		}
		b.modules[file] = mod
	}
	var h uintptr
	if err := b.api.check("cuModuleGetFunction", b.api.cuModuleGetFunction(&h, mod, name)); err != nil {
		return nil, fmt.Errorf("cuda: kernel %s of %s: %w", name, file, err)
	}
	f := &function{h: h, shared: 48 * 1024}
	b.funcs[name] = f
	return f, nil
}

// launch queues kernel name of file over grid blocks of block threads
// with shared bytes of dynamic shared memory; args are the kernel's
// parameters, each as its bytes (see the arg helpers).
func (b *Backend) launch(file, name string, grid, block dim3, shared int, args ...[]byte) error {
	f, err := b.function(file, name)
	if err != nil {
		return err
	}
	if shared > f.shared {
		if err := b.api.check("cuFuncSetAttribute", b.api.cuFuncSetAttribute(f.h, funcAttrMaxDynamicSharedSize, int32(shared))); err != nil {
			return fmt.Errorf("cuda: %s with %d bytes of shared memory: %w", name, shared, err)
		}
		f.shared = shared
	}
	// The parameters' bytes go into one reused buffer, and their
	// addresses into another, kept with the backend (launches are
	// serialized); the driver copies the bytes before cuLaunchKernel
	// returns. Neither holds Go pointers, so nothing is pinned, and both
	// are heap memory, which does not move.
	buf := b.argBytes[:0]
	offs := b.argOffs[:0]
	for _, a := range args {
		for len(buf)%8 != 0 {
			buf = append(buf, 0)
		}
		offs = append(offs, len(buf))
		buf = append(buf, a...)
	}
	ptrs := b.argPtrs[:0]
	var params unsafe.Pointer
	if len(args) > 0 {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
		for _, o := range offs {
			ptrs = append(ptrs, base+uintptr(o))
		}
		params = unsafe.Pointer(unsafe.SliceData(ptrs))
	}
	b.argBytes, b.argOffs, b.argPtrs = buf, offs, ptrs
	code := b.api.cuLaunchKernel(f.h, grid.x, grid.y, grid.z, block.x, block.y, block.z, uint32(shared), b.strm, params, nil)
	f.launches++
	runtime.KeepAlive(buf)
	runtime.KeepAlive(ptrs)
	if code != 0 {
		return b.api.check("cuLaunchKernel "+name, code)
	}
	return nil
}
