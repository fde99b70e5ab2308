package ops

import (
	"errors"
	"time"
)

// Optional interfaces: what a GPU backend implements on top of Backend, so
// that the CPU backend stays simple. graphs.Scheduler and the harness use
// each where a backend has it and do without where it does not.
//
// Moving bytes needs no interface of its own: a backend's Buffer is the
// upload (WriteAt) and download (ReadAt) of len(p) bytes at an explicit
// offset, and both order after work queued on the buffer, so a caller may
// read results without synchronizing first. BufferCopier adds copies that
// do not pass through host memory.

// A GraphComputer is a backend that computes a run of nodes in one
// submission, as a GPU backend encodes the launches of a whole split of a
// graph into one command buffer instead of paying a submission per node.
// graphs.Scheduler gives each split it places on such a backend to one
// ComputeGraph call.
type GraphComputer interface {
	// ComputeGraph computes nodes in order, each as Compute would: every
	// node and its sources are allocated in the backend's buffers, and a
	// node's sources are leaves or earlier nodes. A node may compute in
	// place as Compute documents. An error names the node it stopped
	// at. On a Synchronizer, ComputeGraph may return once the work is
	// queued, and errors of the queued work come from Synchronize.
	ComputeGraph(nodes []*Tensor) error
}

// A Synchronizer is a backend whose Compute (and ComputeGraph) may return
// once the work is queued, before it is done, as a GPU's do.
// graphs.Scheduler synchronizes at the end of each split it runs on one,
// before bytes cross to another backend or the run returns, and the
// harness's wall-clock timer synchronizes before it reads the clock.
type Synchronizer interface {
	// Synchronize waits until all work queued on the backend is done
	// and returns the first error that work met.
	Synchronize() error
}

// A DeviceTimer is a backend that times each node it launches on the
// device (CUDA events around each launch, Metal GPU timestamps), so that
// per-node times leave out the host's overhead and the queueing. It is
// the graph-level counterpart of harness.TimerSource, which times one
// node computed again and again.
type DeviceTimer interface {
	// NodeTimes returns the device time of each node of the last
	// ComputeGraph call, in order, once that work is done (after
	// Synchronize); nil when the backend did not time it.
	NodeTimes() ([]time.Duration, error)
}

// A NodeTimingSwitch is a DeviceTimer whose per-node times cost the
// device something (CUDA: events around each launch, and the launches
// one by one rather than as one CUDA graph; Metal: a command buffer per
// node instead of a few per split, with no concurrency between nodes),
// so it times the nodes of ComputeGraph only when asked; until then
// NodeTimes returns nil. graphs.Scheduler asks for the runs whose
// records someone reads: a graph with a Hook or a Recorder.
type NodeTimingSwitch interface {
	DeviceTimer
	// SetNodeTiming turns the timing of later ComputeGraph calls on or
	// off.
	SetNodeTiming(on bool)
}

// A BufferCopier is a Buffer that can fill part of itself straight from
// another buffer: device to device, or from host memory the device can
// read, with no staging copy on the host.
type BufferCopier interface {
	// CopyFrom copies n bytes at srcOff of src into the buffer at off.
	// It returns an error wrapping ErrCopyUnsupported, having copied
	// nothing, when it cannot read src directly; the caller then moves
	// the bytes through host memory with ReadAt and WriteAt.
	CopyFrom(src Buffer, srcOff, off, n int64) error
}

// ErrCopyUnsupported is what BufferCopier.CopyFrom returns for a source it
// cannot read directly.
var ErrCopyUnsupported = errors.New("ops: buffer cannot copy from this source directly")

// ErrKernelBuild is wrapped by a GPU backend's error when the kernels of
// a node could not be built or loaded (the compiler refused a source, the
// driver or the emulator refused a module): the fault is in the build,
// not in what a kernel computed, and reports say so.
var ErrKernelBuild = errors.New("the kernels could not be built or loaded")

// ErrContextLost is wrapped by a backend's error when the device can
// compute nothing more: a CUDA context after a sticky fault (a kernel's
// illegal or misaligned address, a device-side assert, a launch failure),
// which fails every later call on it. The backend must be closed and a
// new one opened (harness.Session does so); the node that failed is not
// the only one whose results are lost.
var ErrContextLost = errors.New("the device context is lost")

// An Emulator is a backend that runs a device's kernels on an emulator
// rather than the device (cuda-emu, metal-emu: package simt). Its results
// are validated like the device's, but its times are the emulator's on
// the host's CPU: they are never the device's performance, and the
// measuring tools (bench's sweeps, go test -bench, run -bench) do not
// present them as performance.
type Emulator interface {
	// Emulated reports whether the backend runs on an emulator.
	Emulated() bool
}

// IsEmulated reports whether b is an Emulator that says it is emulated.
func IsEmulated(b Backend) bool {
	e, ok := b.(Emulator)
	return ok && e.Emulated()
}

// A DryRunner is a backend that can run dry: it does the host's work of
// each computation (its launches, captures and copies) but computes
// nothing on its device (cuda-emu with $KERNBENCH_CUDA_EMU_EXEC=off), so
// that the host path can be profiled and timed alone. Its results are
// garbage: validation refuses it, and the tools that time it say that
// the times are the host's alone.
type DryRunner interface {
	// DryRun reports whether the backend runs dry.
	DryRun() bool
}

// IsDryRun reports whether b is a DryRunner that runs dry.
func IsDryRun(b Backend) bool {
	d, ok := b.(DryRunner)
	return ok && d.DryRun()
}

// A RepeatTimer is a backend that times a node computed n times back to
// back by the device's own clock (a GPU's timestamps of each command
// buffer), leaving out the host's overhead and the queueing: the
// measuring tools (bench.TimerFor) prefer it to the wall clock.
type RepeatTimer interface {
	// TimeRepeated computes node n times and returns the device time
	// the n computations took together.
	TimeRepeated(node *Tensor, n int) (time.Duration, error)
	// RepeatClock names the clock, for the records.
	RepeatClock() string
}
