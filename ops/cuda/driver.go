package cuda

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/kernbench/kernbench/internal/dynlib"
	"github.com/kernbench/kernbench/ops"
)

// DriverLibrary is the NVIDIA driver library the backend loads on a GPU.
const DriverLibrary = "libcuda.so.1"

// driverAPI is the subset of the CUDA driver API the backend calls, bound
// at run time from a library: the NVIDIA driver (libcuda.so.1), or the
// SIMT emulator's library, which exports the same functions. Handles
// (contexts, streams, modules, functions, events) are opaque words.
type driverAPI struct {
	lib string
	// emulated marks the SIMT emulator's driver, whose contexts are lost
	// only to an illegal or misaligned address (see stickyCode).
	emulated bool

	cuInit                    func(flags uint32) int32
	cuDriverGetVersion        func(v *int32) int32
	cuDeviceGetCount          func(n *int32) int32
	cuDeviceGet               func(d *int32, ordinal int32) int32
	cuDeviceGetName           func(name *byte, n int32, d int32) int32
	cuDeviceGetAttribute      func(v *int32, attr int32, d int32) int32
	cuDeviceTotalMem          func(bytes *uint64, d int32) int32
	cuDevicePrimaryCtxRetain  func(ctx *uintptr, d int32) int32
	cuDevicePrimaryCtxRelease func(d int32) int32
	cuCtxSetCurrent           func(ctx uintptr) int32
	cuStreamCreate            func(s *uintptr, flags uint32) int32
	cuStreamDestroy           func(s uintptr) int32
	cuStreamSynchronize       func(s uintptr) int32
	cuMemAlloc                func(p *uint64, size uint64) int32
	cuMemFree                 func(p uint64) int32
	cuMemHostAlloc            func(p *unsafe.Pointer, size uint64, flags uint32) int32
	cuMemFreeHost             func(p unsafe.Pointer) int32
	cuMemcpyHtoDAsync         func(dst uint64, src unsafe.Pointer, n uint64, s uintptr) int32
	cuMemcpyDtoHAsync         func(dst unsafe.Pointer, src uint64, n uint64, s uintptr) int32
	cuMemcpyDtoDAsync         func(dst, src uint64, n uint64, s uintptr) int32
	cuMemsetD8Async           func(dst uint64, v uint8, n uint64, s uintptr) int32
	cuModuleLoadData          func(mod *uintptr, image unsafe.Pointer) int32
	cuModuleGetFunction       func(fn *uintptr, mod uintptr, name string) int32
	cuFuncSetAttribute        func(fn uintptr, attr int32, v int32) int32
	cuLaunchKernel            func(fn uintptr, gx, gy, gz, bx, by, bz, shared uint32, s uintptr, params unsafe.Pointer, extra unsafe.Pointer) int32
	cuEventCreate             func(ev *uintptr, flags uint32) int32
	cuEventDestroy            func(ev uintptr) int32
	cuEventRecord             func(ev, s uintptr) int32
	cuEventSynchronize        func(ev uintptr) int32
	cuEventElapsedTime        func(ms *float32, start, end uintptr) int32
	cuStreamBeginCapture      func(s uintptr, mode int32) int32
	cuStreamEndCapture        func(s uintptr, g *uintptr) int32
	cuGraphInstantiate        func(e *uintptr, g uintptr, flags uint64) int32
	cuGraphLaunch             func(e, s uintptr) int32
	cuGraphDestroy            func(g uintptr) int32
	cuGraphExecDestroy        func(e uintptr) int32
	cuGetErrorName            func(e int32, s *unsafe.Pointer) int32
	cuGetErrorString          func(e int32, s *unsafe.Pointer) int32

	// Optional: nil where the library lacks them.
	//
	// cuGraphExecUpdate (CUDA 12's _v2) gives an instantiated graph a
	// captured graph's parameters; without it a changed graph is
	// instantiated again.
	cuGraphExecUpdate func(e, g uintptr, info *graphUpdateInfo) int32
	// lastGraphNode is the emulated driver's index of the graph node
	// whose replay failed in the last failed cuGraphLaunch (-1: none).
	lastGraphNode func() int32
	// setExec is the emulated driver's switch of kernel execution
	// (kbs_driver_set_exec; see emuExecOff).
	setExec func(on int32)

	// calls counts the calls that synchronize the host, allocate memory,
	// launch kernels and graphs, capture and record events (see
	// countCalls).
	calls [numCallKinds]atomic.Int64
	// trace, when set (by tests), is told of each counted call, in order.
	trace func(callKind)
	// capturing is how many streams are being captured; captured counts
	// the stream operations captured (launches, memsets, copies: a
	// graph's nodes, in order).
	capturing atomic.Int32
	captured  atomic.Int64
}

// graphUpdateInfo is CUgraphExecUpdateResultInfo, which the driver
// fills: the result (int32), the node that failed the update and the node
// it came from (pointers). The backend reads only the call's status (a
// failed update re-instantiates), so the fields are blank: the struct
// gives the driver its memory.
type graphUpdateInfo struct {
	_    int32
	_, _ uintptr
}

// captureModeRelaxed is CU_STREAM_CAPTURE_MODE_RELAXED: allocation (a
// scratch slot that grows, a pooled copy's first use) may happen during a
// capture.
const captureModeRelaxed = 2

// errCaptureInvalidated is CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: the
// capture ended without a graph, a call during it having been refused.
const errCaptureInvalidated = 901

// A callKind is a kind of driver call the binding counts.
type callKind int

// The counted kinds. The binding has no synchronous copies
// (cuMemcpyHtoD/DtoH without Async) and no cuCtxSynchronize: those
// counts stay zero, and are here so that a test states they are.
const (
	callLaunch         callKind = iota // cuLaunchKernel run at once (outside a capture)
	callCapturedLaunch                 // cuLaunchKernel captured into a graph
	callGraphLaunch                    // cuGraphLaunch
	callCapture                        // cuStreamBeginCapture_v2
	callInstantiate                    // cuGraphInstantiateWithFlags
	callGraphUpdate                    // cuGraphExecUpdate_v2 that succeeded
	callAlloc                          // cuMemAlloc_v2
	callFree                           // cuMemFree_v2
	callHostAlloc                      // cuMemHostAlloc
	callEventRecord                    // cuEventRecord
	callStreamSync                     // cuStreamSynchronize
	callEventSync                      // cuEventSynchronize
	callCtxSync                        // cuCtxSynchronize (not bound)
	callSyncCopy                       // cuMemcpyHtoD/DtoH (not bound)
	numCallKinds
)

// callCounts is a snapshot of the counted driver calls, by kind.
type callCounts [numCallKinds]int64

// counts returns the calls counted so far.
func (d *driverAPI) counts() callCounts {
	var c callCounts
	for i := range c {
		c[i] = d.calls[i].Load()
	}
	return c
}

// sub returns the calls counted in c and not in the earlier o.
func (c callCounts) sub(o callCounts) callCounts {
	for i := range c {
		c[i] -= o[i]
	}
	return c
}

// syncs returns the calls that make the host wait for the device.
func (c callCounts) syncs() int64 {
	return c[callStreamSync] + c[callEventSync] + c[callCtxSync] + c[callSyncCopy]
}

func (c callCounts) String() string {
	return fmt.Sprintf("%d launches (%d captured), %d graph launches (%d captures, %d instantiations, %d updates), "+
		"%d allocations, %d frees, %d pinned allocations, %d event records, "+
		"%d stream syncs, %d event syncs, %d context syncs, %d synchronous copies",
		c[callLaunch], c[callCapturedLaunch], c[callGraphLaunch], c[callCapture], c[callInstantiate], c[callGraphUpdate],
		c[callAlloc], c[callFree], c[callHostAlloc], c[callEventRecord],
		c[callStreamSync], c[callEventSync], c[callCtxSync], c[callSyncCopy])
}

// count counts a call of kind k.
func (d *driverAPI) count(k callKind) {
	d.calls[k].Add(1)
	if d.trace != nil {
		d.trace(k)
	}
}

// countCalls wraps the bound functions of the counted kinds, and the
// stream operations a capture takes.
func (d *driverAPI) countCalls() {
	launch, alloc, free, hostAlloc := d.cuLaunchKernel, d.cuMemAlloc, d.cuMemFree, d.cuMemHostAlloc
	streamSync, eventSync, record := d.cuStreamSynchronize, d.cuEventSynchronize, d.cuEventRecord
	begin, end, inst, graphLaunch := d.cuStreamBeginCapture, d.cuStreamEndCapture, d.cuGraphInstantiate, d.cuGraphLaunch
	htod, dtoh, dtod, memset := d.cuMemcpyHtoDAsync, d.cuMemcpyDtoHAsync, d.cuMemcpyDtoDAsync, d.cuMemsetD8Async
	// op counts a stream operation that succeeded: a node of the graph
	// if a capture is under way.
	op := func(r int32) int32 {
		if r == 0 && d.capturing.Load() > 0 {
			d.captured.Add(1)
		}
		return r
	}
	d.cuLaunchKernel = func(fn uintptr, gx, gy, gz, bx, by, bz, shared uint32, s uintptr, params unsafe.Pointer, extra unsafe.Pointer) int32 {
		if d.capturing.Load() > 0 {
			d.count(callCapturedLaunch)
		} else {
			d.count(callLaunch)
		}
		return op(launch(fn, gx, gy, gz, bx, by, bz, shared, s, params, extra))
	}
	d.cuMemcpyHtoDAsync = func(dst uint64, src unsafe.Pointer, n uint64, s uintptr) int32 { return op(htod(dst, src, n, s)) }
	d.cuMemcpyDtoHAsync = func(dst unsafe.Pointer, src uint64, n uint64, s uintptr) int32 { return op(dtoh(dst, src, n, s)) }
	d.cuMemcpyDtoDAsync = func(dst, src uint64, n uint64, s uintptr) int32 { return op(dtod(dst, src, n, s)) }
	d.cuMemsetD8Async = func(dst uint64, v uint8, n uint64, s uintptr) int32 { return op(memset(dst, v, n, s)) }
	d.cuStreamBeginCapture = func(s uintptr, mode int32) int32 {
		d.count(callCapture)
		r := begin(s, mode)
		if r == 0 {
			d.capturing.Add(1)
		}
		return r
	}
	d.cuStreamEndCapture = func(s uintptr, g *uintptr) int32 {
		r := end(s, g)
		if r == 0 || r == errCaptureInvalidated {
			// Ended, with or without a graph.
			d.capturing.Add(-1)
		}
		return r
	}
	d.cuGraphInstantiate = func(e *uintptr, g uintptr, flags uint64) int32 {
		d.count(callInstantiate)
		return inst(e, g, flags)
	}
	if update := d.cuGraphExecUpdate; update != nil {
		d.cuGraphExecUpdate = func(e, g uintptr, info *graphUpdateInfo) int32 {
			r := update(e, g, info)
			if r == 0 {
				d.count(callGraphUpdate)
			}
			return r
		}
	}
	d.cuGraphLaunch = func(e, s uintptr) int32 {
		d.count(callGraphLaunch)
		return graphLaunch(e, s)
	}
	d.cuMemHostAlloc = func(p *unsafe.Pointer, size uint64, flags uint32) int32 {
		d.count(callHostAlloc)
		return hostAlloc(p, size, flags)
	}
	d.cuEventRecord = func(ev, s uintptr) int32 {
		d.count(callEventRecord)
		return record(ev, s)
	}
	d.cuMemAlloc = func(p *uint64, size uint64) int32 {
		d.count(callAlloc)
		return alloc(p, size)
	}
	d.cuMemFree = func(p uint64) int32 {
		d.count(callFree)
		return free(p)
	}
	d.cuStreamSynchronize = func(s uintptr) int32 {
		d.count(callStreamSync)
		return streamSync(s)
	}
	d.cuEventSynchronize = func(ev uintptr) int32 {
		d.count(callEventSync)
		return eventSync(ev)
	}
}

// Device attributes the backend reads (CUdevice_attribute).
const (
	attrMaxThreadsPerBlock        = 1
	attrWarpSize                  = 10
	attrMultiprocessorCount       = 16
	attrComputeCapabilityMajor    = 75
	attrComputeCapabilityMinor    = 76
	attrMaxSharedMemPerBlockOptin = 97
)

// funcAttrMaxDynamicSharedSize is CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
const funcAttrMaxDynamicSharedSize = 8

// loadDriver binds the driver API from the library at path.
func loadDriver(path string) (*driverAPI, error) {
	h, err := dlopen(path)
	if err != nil {
		return nil, err
	}
	d := &driverAPI{lib: path}
	for _, f := range []struct {
		ptr  any
		name string
	}{
		{&d.cuInit, "cuInit"}, {&d.cuDriverGetVersion, "cuDriverGetVersion"},
		{&d.cuDeviceGetCount, "cuDeviceGetCount"}, {&d.cuDeviceGet, "cuDeviceGet"},
		{&d.cuDeviceGetName, "cuDeviceGetName"}, {&d.cuDeviceGetAttribute, "cuDeviceGetAttribute"},
		{&d.cuDeviceTotalMem, "cuDeviceTotalMem_v2"},
		{&d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"}, {&d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"},
		{&d.cuCtxSetCurrent, "cuCtxSetCurrent"},
		{&d.cuStreamCreate, "cuStreamCreate"}, {&d.cuStreamDestroy, "cuStreamDestroy_v2"}, {&d.cuStreamSynchronize, "cuStreamSynchronize"},
		{&d.cuMemAlloc, "cuMemAlloc_v2"}, {&d.cuMemFree, "cuMemFree_v2"},
		{&d.cuMemHostAlloc, "cuMemHostAlloc"}, {&d.cuMemFreeHost, "cuMemFreeHost"},
		{&d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"}, {&d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"},
		{&d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"}, {&d.cuMemsetD8Async, "cuMemsetD8Async"},
		{&d.cuModuleLoadData, "cuModuleLoadData"}, {&d.cuModuleGetFunction, "cuModuleGetFunction"},
		{&d.cuFuncSetAttribute, "cuFuncSetAttribute"}, {&d.cuLaunchKernel, "cuLaunchKernel"},
		{&d.cuEventCreate, "cuEventCreate"}, {&d.cuEventDestroy, "cuEventDestroy_v2"},
		{&d.cuEventRecord, "cuEventRecord"}, {&d.cuEventSynchronize, "cuEventSynchronize"},
		{&d.cuEventElapsedTime, "cuEventElapsedTime"},
		{&d.cuStreamBeginCapture, "cuStreamBeginCapture_v2"}, {&d.cuStreamEndCapture, "cuStreamEndCapture"},
		{&d.cuGraphInstantiate, "cuGraphInstantiateWithFlags"}, {&d.cuGraphLaunch, "cuGraphLaunch"},
		{&d.cuGraphDestroy, "cuGraphDestroy"}, {&d.cuGraphExecDestroy, "cuGraphExecDestroy"},
		{&d.cuGetErrorName, "cuGetErrorName"}, {&d.cuGetErrorString, "cuGetErrorString"},
	} {
		sym, err := dynlib.Sym(h, f.name)
		if err != nil {
			return nil, fmt.Errorf("%s lacks %s: %w", path, f.name, err)
		}
		purego.RegisterFunc(f.ptr, sym)
	}
	for _, f := range []struct {
		ptr  any
		name string
	}{
		{&d.cuGraphExecUpdate, "cuGraphExecUpdate_v2"}, {&d.lastGraphNode, "kbs_driver_last_graph_node"},
		{&d.setExec, "kbs_driver_set_exec"},
	} {
		if sym, err := dynlib.Sym(h, f.name); err == nil {
			purego.RegisterFunc(f.ptr, sym)
		}
	}
	if err := d.bindDirect(h); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d.countCalls()
	return d, nil
}

// bindDirect rebinds the calls made for every node (cuLaunchKernel) and
// every chunk of a graph (cuStreamBeginCapture_v2, cuGraphLaunch) to call
// the library through purego.SyscallN: purego.RegisterFunc's functions go
// through reflection, which costs more than the call's own work in the
// host path of a decoded token. Their arguments are words, and the
// pointers among them point to memory that stays put for the call (the
// backend's parameter buffers on the heap).
func (d *driverAPI) bindDirect(h uintptr) error {
	launch, err := dynlib.Sym(h, "cuLaunchKernel")
	if err != nil {
		return err
	}
	begin, err := dynlib.Sym(h, "cuStreamBeginCapture_v2")
	if err != nil {
		return err
	}
	graphLaunch, err := dynlib.Sym(h, "cuGraphLaunch")
	if err != nil {
		return err
	}
	d.cuLaunchKernel = func(fn uintptr, gx, gy, gz, bx, by, bz, shared uint32, s uintptr, params unsafe.Pointer, extra unsafe.Pointer) int32 {
		r, _, _ := purego.SyscallN(launch, fn, uintptr(gx), uintptr(gy), uintptr(gz), uintptr(bx), uintptr(by), uintptr(bz),
			uintptr(shared), s, uintptr(params), uintptr(extra))
		return int32(r)
	}
	d.cuStreamBeginCapture = func(s uintptr, mode int32) int32 {
		r, _, _ := purego.SyscallN(begin, s, uintptr(mode))
		return int32(r)
	}
	d.cuGraphLaunch = func(e, s uintptr) int32 {
		r, _, _ := purego.SyscallN(graphLaunch, e, s)
		return int32(r)
	}
	return nil
}

// dlopen loads a library whose symbols stay its own.
func dlopen(path string) (uintptr, error) {
	return dynlib.Open(path, dynlib.Local)
}

// A DriverError is a CUDA driver call that failed.
type DriverError struct {
	Call string // the driver function
	Code int32  // its CUresult
	Name string // CUDA_ERROR_...
	Msg  string // the driver's description
	// Fault is the emulator's account of a failed launch (which thread,
	// which access, which source line), on the emulated device.
	Fault error
	// Sticky says the error left the context unusable (stickyCode):
	// errors.Is(err, ops.ErrContextLost) is then true.
	Sticky bool
}

func (e *DriverError) Error() string {
	s := fmt.Sprintf("cuda: %s: %s (%s, %d)", e.Call, e.Msg, e.Name, e.Code)
	if e.Fault != nil {
		s += ": " + e.Fault.Error()
	}
	return s
}

func (e *DriverError) Unwrap() error { return e.Fault }

// Is makes errors.Is(err, ops.ErrContextLost) true for an error that left
// the context unusable (Sticky).
func (e *DriverError) Is(target error) bool { return target == ops.ErrContextLost && e.Sticky }

// LostReason names the sticky error for reports of the lost context
// (harness.Result.ContextLost): "CUDA_ERROR_MISALIGNED_ADDRESS".
func (e *DriverError) LostReason() string { return e.Name }

// stickyCode reports whether a CUresult is one of the driver's sticky
// errors, after which every call on the context fails with it until the
// context is destroyed: an illegal or misaligned address, a device-side
// assert, an illegal instruction, a hardware stack error, an invalid
// address space or program counter, a launch failure or timeout. The
// emulated driver makes only the two address faults sticky (its own
// findings, races and traps, leave the context usable).
func stickyCode(code int32, emulated bool) bool {
	switch code {
	case 700, 716: // CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_MISALIGNED_ADDRESS
		return true
	case 702, 710, 714, 715, 717, 718, 719: // LAUNCH_TIMEOUT, ASSERT, HARDWARE_STACK_ERROR, ILLEGAL_INSTRUCTION, INVALID_ADDRESS_SPACE, INVALID_PC, LAUNCH_FAILED
		return !emulated
	}
	return false
}

// check turns a CUresult into nil or a *DriverError.
func (d *driverAPI) check(call string, code int32) error {
	if code == 0 {
		return nil
	}
	e := &DriverError{Call: call, Code: code, Name: "CUDA_ERROR_UNKNOWN", Msg: "unknown error", Sticky: stickyCode(code, d.emulated)}
	var s unsafe.Pointer
	if d.cuGetErrorName(code, &s) == 0 {
		e.Name = cString(s)
	}
	if d.cuGetErrorString(code, &s) == 0 {
		e.Msg = cString(s)
	}
	return e
}

// cString copies the C string at p.
func cString(p unsafe.Pointer) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(p, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(p), n))
}

// A deviceInfo describes one device.
type deviceInfo struct {
	Ordinal         int
	Name            string
	Major, Minor    int // compute capability
	SMs             int
	TotalMem        uint64
	MaxSharedOptin  int
	DriverVersion   int
	MaxThreadsBlock int
}

// Arch returns the device's architecture name, "sm_90".
func (i deviceInfo) Arch() string { return fmt.Sprintf("sm_%d%d", i.Major, i.Minor) }

// devices initializes the driver and describes its devices.
func (d *driverAPI) devices() ([]deviceInfo, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.check("cuInit", d.cuInit(0)); err != nil {
		return nil, err
	}
	var version, n int32
	if err := d.check("cuDriverGetVersion", d.cuDriverGetVersion(&version)); err != nil {
		return nil, err
	}
	if err := d.check("cuDeviceGetCount", d.cuDeviceGetCount(&n)); err != nil {
		return nil, err
	}
	out := make([]deviceInfo, 0, n)
	for i := int32(0); i < n; i++ {
		var dev int32
		if err := d.check("cuDeviceGet", d.cuDeviceGet(&dev, i)); err != nil {
			return nil, err
		}
		var name [256]byte
		if err := d.check("cuDeviceGetName", d.cuDeviceGetName(&name[0], int32(len(name)), dev)); err != nil {
			return nil, err
		}
		info := deviceInfo{Ordinal: int(i), Name: cString(unsafe.Pointer(&name[0])), DriverVersion: int(version)}
		for _, a := range []struct {
			attr int32
			v    *int
		}{
			{attrComputeCapabilityMajor, &info.Major}, {attrComputeCapabilityMinor, &info.Minor},
			{attrMultiprocessorCount, &info.SMs}, {attrMaxSharedMemPerBlockOptin, &info.MaxSharedOptin},
			{attrMaxThreadsPerBlock, &info.MaxThreadsBlock},
		} {
			var v int32
			if err := d.check("cuDeviceGetAttribute", d.cuDeviceGetAttribute(&v, a.attr, dev)); err != nil {
				return nil, err
			}
			*a.v = int(v)
		}
		if err := d.check("cuDeviceTotalMem_v2", d.cuDeviceTotalMem(&info.TotalMem, dev)); err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}
