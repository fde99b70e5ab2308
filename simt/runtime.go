package simt

import (
	"errors"
	"fmt"
	"path/filepath"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/kernbench/kernbench/internal/dynlib"
)

// Dim3 is a grid or block size, or a block or thread index.
type Dim3 struct{ X, Y, Z uint32 }

func (d Dim3) String() string { return fmt.Sprintf("(%d,%d,%d)", d.X, d.Y, d.Z) }

// count returns X*Y*Z.
func (d Dim3) count() uint64 { return uint64(d.X) * uint64(d.Y) * uint64(d.Z) }

// The structures below mirror runtime.cc's; loadRuntime checks their
// sizes against the runtime's.

// cResult is kbs_result.
type cResult struct {
	Code        int32
	Write       [2]int32
	Msg         [2048]byte
	PC          [2]uint64
	Addr        uint64
	Size        uint64
	BufBase     uint64
	BufSize     uint64
	SmemOffset  int64
	Aux         int64
	Block       Dim3
	Thread      [2]Dim3
	Races       uint64
	Blocks      uint64
	Switches    uint64
	Barriers    uint64
	Collectives uint64
	Accesses    uint64
}

// cLaunchDesc is kbs_launch_desc.
type cLaunchDesc struct {
	Grid, Block Dim3
	DynShared   uint64
	ArgBlob     unsafe.Pointer
	ArgOffsets  unsafe.Pointer
	NParams     int32
	Checks      int32
	Buffers     [31]unsafe.Pointer
	TgLen       [8]uint64
	Workers     int32
	Pad         int32
	Timeout     float64
}

// cKernelDesc is kbs_kernel_desc.
type cKernelDesc struct {
	Name        unsafe.Pointer
	Dialect     int32
	NParams     int32
	Entry       unsafe.Pointer
	ParamSizes  unsafe.Pointer
	ParamAligns unsafe.Pointer
	Binds       unsafe.Pointer
	File        unsafe.Pointer
	Line        int32
	ABI         int32
}

// Check flags of a launch (runtime.cc's KBS_CHECK_*).
const (
	checkMemory = 1
	checkPoison = 2
)

// rtFuncs are the runtime library's functions.
type rtFuncs struct {
	init         func(workers int32) int32
	abi          func() int32
	sizes        func(out *[4]uint64)
	alloc        func(size uint64) unsafe.Pointer
	free         func(p unsafe.Pointer) int32
	moduleLoad   func(path string, err *byte, errlen int32) unsafe.Pointer
	moduleN      func(mod unsafe.Pointer) int32
	moduleKernel func(mod unsafe.Pointer, i int32) unsafe.Pointer
	moduleBase   func(mod unsafe.Pointer) uint64
	modulePath   func(mod unsafe.Pointer) unsafe.Pointer
	moduleChecks func(mod unsafe.Pointer) int32
	launch       func(mod unsafe.Pointer, k int32, d *cLaunchDesc, r *cResult) int32
	lastFault    func(r *cResult, mod *unsafe.Pointer, kernel *int32) int32
	profStart    func(sample uint64)
	profStop     func() int32
	profGet      func(i int32, out *cProf, bufs *cProfBuf, statics *uint64) int32
	profSizes    func(out *[3]uint64)
}

// A loadError is the dynamic loader's refusal of a library of the cache.
type loadError struct {
	path, msg string
}

func (e *loadError) Error() string { return "simt: load " + e.path + ": " + e.msg }

// openRuntime builds the runtime library (or takes it from the cache),
// opens it and starts its workers. A library the loader refuses is
// evicted from the cache and rebuilt once; a second refusal is the error.
func openRuntime(tc Toolchain, workers int) (string, *rtFuncs, int, error) {
	for attempt := 0; ; attempt++ {
		lib, err := runtimeLib(tc)
		if err != nil {
			return "", nil, 0, err
		}
		rt, n, err := loadRuntime(lib, workers)
		var le *loadError
		if err == nil {
			return lib, rt, n, nil
		} else if attempt > 0 || !errors.As(err, &le) {
			return "", nil, 0, err
		}
		evict(filepath.Dir(lib), "the loader refused it: "+le.msg)
	}
}

// loadLibrary loads the module library at path into the runtime; its
// error is a *loadError. d.mu is held.
func (d *Device) loadLibrary(path string) (unsafe.Pointer, error) {
	var msg [1024]byte
	h := d.rt.moduleLoad(path, &msg[0], int32(len(msg)))
	if h == nil {
		return nil, &loadError{path: path, msg: cString(msg[:])}
	}
	return h, nil
}

// loadRuntime opens the runtime library at path and starts its workers.
func loadRuntime(path string, workers int) (*rtFuncs, int, error) {
	h, err := dynlib.Open(path, dynlib.Global)
	if le := (*dynlib.LoadError)(nil); errors.As(err, &le) {
		return nil, 0, &loadError{path: path, msg: le.Err.Error()}
	} else if err != nil {
		return nil, 0, err
	}
	var f rtFuncs
	for _, r := range []struct {
		ptr  any
		name string
	}{
		{&f.init, "kbs_init"}, {&f.abi, "kbs_abi_version"}, {&f.sizes, "kbs_sizes"},
		{&f.alloc, "kbs_alloc"}, {&f.free, "kbs_free"},
		{&f.moduleLoad, "kbs_module_load"}, {&f.moduleN, "kbs_module_nkernels"},
		{&f.moduleKernel, "kbs_module_kernel"}, {&f.moduleBase, "kbs_module_base"},
		{&f.modulePath, "kbs_module_path"}, {&f.moduleChecks, "kbs_module_checks"},
		{&f.launch, "kbs_launch"}, {&f.lastFault, "kbs_driver_last_fault"},
		{&f.profStart, "kbs_profile_start"}, {&f.profStop, "kbs_profile_stop"},
		{&f.profGet, "kbs_profile_get"}, {&f.profSizes, "kbs_profile_sizes"},
	} {
		sym, err := dynlib.Sym(h, r.name)
		if err != nil {
			return nil, 0, fmt.Errorf("simt: runtime %s lacks %s: %w", path, r.name, err)
		}
		purego.RegisterFunc(r.ptr, sym)
	}
	if v := f.abi(); v != abiVersion {
		return nil, 0, fmt.Errorf("simt: runtime %s has ABI %d, the package needs %d", path, v, abiVersion)
	}
	var sz [4]uint64
	f.sizes(&sz)
	want := [3]uint64{uint64(unsafe.Sizeof(cResult{})), uint64(unsafe.Sizeof(cLaunchDesc{})), uint64(unsafe.Sizeof(cKernelDesc{}))}
	if sz[0] != want[0] || sz[1] != want[1] || sz[2] != want[2] {
		return nil, 0, fmt.Errorf("simt: runtime structure sizes %v differ from the package's %v", sz[:3], want)
	}
	var psz [3]uint64
	f.profSizes(&psz)
	if psz != [3]uint64{uint64(unsafe.Sizeof(cProf{})), uint64(unsafe.Sizeof(cProfBuf{})), pcN} {
		return nil, 0, fmt.Errorf("simt: runtime profile structure sizes %v differ from the package's", psz)
	}
	n := f.init(int32(workers))
	if n <= 0 {
		return nil, 0, fmt.Errorf("simt: the runtime could not start its worker threads")
	}
	return &f, int(n), nil
}

// goString copies the C string at p.
func goString(p unsafe.Pointer) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(p, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(p), n))
}

// cString returns the bytes of b up to its first NUL.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// uint32At reads the i-th uint32 of the C array at p.
func uint32At(p unsafe.Pointer, i int) uint32 {
	return *(*uint32)(unsafe.Add(p, 4*i))
}
