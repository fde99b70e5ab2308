package simt

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
	"weak"
)

// A Device is the emulated GPU of this process: the runtime library,
// its worker threads (one per CPU; blocks of a launch run in parallel on
// them), device memory and loaded modules. There is one per process.
type Device struct {
	tc      Toolchain
	rt      *rtFuncs
	lib     string
	workers int

	mu      sync.Mutex
	modules map[string]*Module
	// driverModules are the libraries the emulated driver loaded, by
	// path, for naming the places of their faults.
	driverModules map[string]*Module
	buffers       map[uintptr]weak.Pointer[Buffer]
}

var (
	devOnce sync.Once
	dev     *Device
	devErr  error
)

// Open returns the process's emulated device, building its runtime the
// first time (into the cache; see Program). The error says why the
// emulator cannot run here: no g++, or an OS or CPU it does not support.
func Open() (*Device, error) {
	devOnce.Do(func() { dev, devErr = open() })
	return dev, devErr
}

// Available returns nil when the emulator can run here, else the reason
// (an unknown $KERNBENCH_SIMT_MODE among them).
func Available() error {
	if _, err := DefaultMode(); err != nil {
		return err
	}
	_, err := Open()
	return err
}

func open() (*Device, error) {
	tc, err := FindToolchain()
	if err != nil {
		return nil, err
	}
	pruneCache()
	lib, rt, n, err := openRuntime(tc, runtime.GOMAXPROCS(0))
	if err != nil {
		return nil, err
	}
	return &Device{tc: tc, rt: rt, lib: lib, workers: n, modules: map[string]*Module{}, driverModules: map[string]*Module{}, buffers: map[uintptr]weak.Pointer[Buffer]{}}, nil
}

// Workers returns how many blocks the device runs at once.
func (d *Device) Workers() int { return d.workers }

// Toolchain returns the compiler the device builds modules with.
func (d *Device) Toolchain() Toolchain { return d.tc }

// ---------------------------------------------------------------------
// Memory.

// A Buffer is device memory: host memory with red zones around it that
// the checks watch. Its address is what a kernel's pointer holds. Free
// releases it; one that becomes unreachable unfreed is released by the
// garbage collector.
type Buffer struct {
	dev   *Device
	ptr   unsafe.Pointer
	size  int64
	freed *atomic.Bool
	// Label names the buffer in fault messages, such as a tensor's name.
	Label string
}

// Alloc returns a zeroed buffer of size bytes.
func (d *Device) Alloc(size int64) (*Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("simt: negative buffer size %d", size)
	}
	p := d.rt.alloc(uint64(size))
	if p == nil {
		return nil, fmt.Errorf("simt: out of memory for a %d-byte buffer", size)
	}
	b := &Buffer{dev: d, ptr: p, size: size, freed: new(atomic.Bool)}
	d.mu.Lock()
	d.buffers[uintptr(p)] = weak.Make(b)
	d.mu.Unlock()
	runtime.AddCleanup(b, func(freed *atomic.Bool) {
		if freed.CompareAndSwap(false, true) {
			d.release(p)
		}
	}, b.freed)
	return b, nil
}

// release returns p's memory to the runtime.
func (d *Device) release(p unsafe.Pointer) error {
	d.mu.Lock()
	delete(d.buffers, uintptr(p))
	d.mu.Unlock()
	if d.rt.free(p) != 0 {
		return fmt.Errorf("simt: free of an unknown buffer")
	}
	return nil
}

// buffer returns the live buffer at device address addr, or nil.
func (d *Device) buffer(addr uintptr) *Buffer {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.buffers[addr].Value()
}

// liveBuffer reports whether the runtime still holds memory at addr.
func (d *Device) liveBuffer(addr uintptr) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.buffers[addr]
	return ok
}

// Bytes returns the buffer's memory. It is valid until Free.
func (b *Buffer) Bytes() []byte {
	if b.freed.Load() || b.size == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(b.ptr), b.size)
}

// Size returns the buffer's size in bytes.
func (b *Buffer) Size() int64 { return b.size }

// Addr returns the buffer's device address.
func (b *Buffer) Addr() uint64 { return uint64(uintptr(b.ptr)) }

// Free releases the buffer. Freeing twice is an error.
func (b *Buffer) Free() error {
	if !b.freed.CompareAndSwap(false, true) {
		return fmt.Errorf("simt: buffer freed twice")
	}
	return b.dev.release(b.ptr)
}

// live reports whether b can be used as an argument.
func (b *Buffer) live() bool { return b != nil && !b.freed.Load() }

// At returns a pointer argument off bytes into the buffer.
func (b *Buffer) At(off int64) Ptr { return Ptr{Buf: b, Off: off} }

// A Ptr is a device pointer argument: a buffer and a byte offset in it.
type Ptr struct {
	Buf *Buffer
	Off int64
}

// ---------------------------------------------------------------------
// Modules and kernels.

// A Module is a compiled program loaded into the device.
type Module struct {
	dev     *Device
	handle  unsafe.Pointer
	path    string
	base    uint64
	mode    Mode
	dialect Dialect
	kernels []*Kernel

	symOnce sync.Once
	tls     []tlsSym
}

// Load builds p in mode m (or takes it from the cache) and loads it.
// Source errors come back as a *SourceError or a *CompileError carrying
// the compiler's messages, which name the original file and line.
func (d *Device) Load(p Program, m Mode) (*Module, error) {
	lib, err := runtimeLib(d.tc)
	if err != nil {
		return nil, err
	}
	path, meta, err := buildModule(d.tc, lib, p, m)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if mod, ok := d.modules[path]; ok {
		return mod, nil
	}
	h, err := d.loadLibrary(path)
	if err != nil {
		// A library the loader refuses is rebuilt once (see evict).
		d.mu.Unlock()
		evict(filepath.Dir(path), "the loader refused it: "+err.(*loadError).msg)
		path, meta, err = buildModule(d.tc, lib, p, m)
		d.mu.Lock()
		if err != nil {
			return nil, err
		}
		if mod, ok := d.modules[path]; ok {
			return mod, nil
		}
		if h, err = d.loadLibrary(path); err != nil {
			return nil, err
		}
	}
	mod := &Module{dev: d, handle: h, path: path, base: d.rt.moduleBase(h), mode: m, dialect: p.Dialect}
	n := int(d.rt.moduleN(h))
	if n != len(meta.Kernels) {
		return nil, fmt.Errorf("simt: module %s has %d kernels, its translation found %d", path, n, len(meta.Kernels))
	}
	for i := 0; i < n; i++ {
		kd := (*cKernelDesc)(d.rt.moduleKernel(h, int32(i)))
		info := meta.Kernels[i]
		k := &Kernel{Name: goString(kd.Name), Dialect: Dialect(kd.Dialect), File: info.File, Line: info.Line, mod: mod, index: i}
		if k.Name != info.Name || int(kd.NParams) != len(info.Params) {
			return nil, fmt.Errorf("simt: module %s: kernel %d is %s with %d parameters, its translation says %s with %d",
				path, i, k.Name, kd.NParams, info.Name, len(info.Params))
		}
		k.Params = append([]Param(nil), info.Params...)
		if k.Dialect == CUDA {
			for j := range k.Params {
				k.Params[j].Size = int(uint32At(kd.ParamSizes, j))
				k.Params[j].Align = int(uint32At(kd.ParamAligns, j))
			}
		}
		mod.kernels = append(mod.kernels, k)
	}
	d.modules[path] = mod
	return mod, nil
}

// Mode returns the mode the module was built in.
func (m *Module) Mode() Mode { return m.mode }

// Kernels returns the module's kernels.
func (m *Module) Kernels() []*Kernel { return append([]*Kernel(nil), m.kernels...) }

// Kernel returns the kernel called name (its extern "C" name, or its
// Metal host name).
func (m *Module) Kernel(name string) (*Kernel, error) {
	names := make([]string, len(m.kernels))
	for i, k := range m.kernels {
		if k.Name == name {
			return k, nil
		}
		names[i] = k.Name
	}
	sort.Strings(names)
	return nil, fmt.Errorf("simt: %w %q (the module has: %s)", errNoKernel, name, strings.Join(names, ", "))
}

// A Kernel is one entry point of a module.
type Kernel struct {
	Name    string
	Dialect Dialect
	// Params are its parameters; for CUDA with their sizes, for Metal
	// with their bindings.
	Params []Param
	// File and Line are where it is defined.
	File string
	Line int

	mod   *Module
	index int
}

// ---------------------------------------------------------------------
// Launches.

// A Binding binds a Metal kernel's [[buffer(Index)]]: a buffer at an
// offset, or bytes copied for the launch (setBytes).
type Binding struct {
	Index  int
	Buf    *Buffer
	Offset int64
	Bytes  []byte
}

// A Launch is one kernel launch.
type Launch struct {
	// Grid is the number of blocks (threadgroups) in each dimension,
	// Block the threads of each.
	Grid, Block Dim3
	// Args are a CUDA kernel's arguments, one per parameter: *Buffer or
	// Ptr for pointers; int8 to int64, uint8 to uint64, float32,
	// float64 and bool for scalars (int and uint take the parameter's
	// size); []byte for a struct passed by value, laid out as C does.
	Args []any
	// SharedBytes is a CUDA launch's dynamic shared memory.
	SharedBytes int
	// Buffers bind a Metal kernel's buffer arguments.
	Buffers []Binding
	// Threadgroup holds the lengths of a Metal kernel's threadgroup
	// memory arguments, by index.
	Threadgroup []int
	// Workers caps the worker threads (0: all of them); 1 runs the
	// blocks one after another, in order.
	Workers int
	// Timeout stops a checked launch that runs longer (0: one minute;
	// negative: none).
	Timeout time.Duration
}

// Stats count what a launch did.
type Stats struct {
	Blocks      uint64 // blocks run
	Switches    uint64 // fiber switches between threads
	Barriers    uint64 // block barriers released
	Collectives uint64 // warp collectives completed
	Accesses    uint64 // memory accesses checked (checked modules)
	Races       uint64 // racing shared-memory accesses seen
}

// Launch runs the kernel and waits for it. A fault of the kernel (a race,
// an access out of bounds, a divergent barrier...) comes back as a
// *Fault; after a race the launch has still run to the end.
func (k *Kernel) Launch(l Launch) (Stats, error) {
	d := k.mod.dev
	desc := new(cLaunchDesc)
	desc.Grid, desc.Block = l.Grid, l.Block
	if l.Grid.count() == 0 || l.Block.count() == 0 {
		return Stats{}, fmt.Errorf("simt: launch of %s: empty grid %v of blocks %v", k.Name, l.Grid, l.Block)
	}
	var keep []*Buffer // buffers made for this launch
	defer func() {
		for _, b := range keep {
			b.Free()
		}
	}()
	var blob []byte
	var offsets []uint32
	switch k.Dialect {
	case CUDA:
		if len(l.Buffers) > 0 || len(l.Threadgroup) > 0 {
			return Stats{}, fmt.Errorf("simt: launch of CUDA kernel %s: Buffers and Threadgroup are for Metal kernels; pass Args", k.Name)
		}
		if l.SharedBytes < 0 {
			return Stats{}, fmt.Errorf("simt: launch of %s: negative shared memory %d", k.Name, l.SharedBytes)
		}
		var err error
		blob, offsets, err = k.packArgs(l.Args)
		if err != nil {
			return Stats{}, err
		}
		desc.DynShared = uint64(l.SharedBytes)
		desc.NParams = int32(len(offsets))
		if len(blob) > 0 {
			desc.ArgBlob = unsafe.Pointer(&blob[0])
			desc.ArgOffsets = unsafe.Pointer(&offsets[0])
		}
	case Metal:
		if len(l.Args) > 0 || l.SharedBytes != 0 {
			return Stats{}, fmt.Errorf("simt: launch of Metal kernel %s: Args and SharedBytes are for CUDA kernels; bind Buffers and Threadgroup", k.Name)
		}
		made, err := k.bindMetal(l, desc)
		keep = made
		if err != nil {
			return Stats{}, err
		}
	}
	if k.mod.mode == Checked {
		desc.Checks = checkMemory | checkPoison
		switch {
		case l.Timeout == 0:
			desc.Timeout = 60
		case l.Timeout > 0:
			desc.Timeout = l.Timeout.Seconds()
		}
	}
	desc.Workers = int32(l.Workers)
	var res cResult
	d.rt.launch(k.mod.handle, int32(k.index), desc, &res)
	runtime.KeepAlive(blob)
	runtime.KeepAlive(offsets)
	runtime.KeepAlive(desc)
	runtime.KeepAlive(l.Args) // the buffers the kernel reads and writes
	runtime.KeepAlive(l.Buffers)
	st := Stats{Blocks: res.Blocks, Switches: res.Switches, Barriers: res.Barriers, Collectives: res.Collectives, Accesses: res.Accesses, Races: res.Races}
	if res.Code == 0 {
		return st, nil
	}
	return st, k.fault(&res)
}

// packArgs lays out a CUDA launch's arguments as the kernel's parameters
// are laid out, checking each one's size.
func (k *Kernel) packArgs(args []any) ([]byte, []uint32, error) {
	if len(args) != len(k.Params) {
		return nil, nil, fmt.Errorf("simt: kernel %s takes %d arguments (%s), the launch gives %d", k.Name, len(k.Params), k.paramList(), len(args))
	}
	var blob []byte
	offsets := make([]uint32, len(args))
	for i, a := range args {
		p := k.Params[i]
		b, err := argBytes(a, p.Size)
		if err != nil {
			return nil, nil, fmt.Errorf("simt: kernel %s argument %d (%s): %w", k.Name, i, p.Decl, err)
		}
		if len(b) != p.Size {
			return nil, nil, fmt.Errorf("simt: kernel %s argument %d (%s) is %d bytes, the parameter is %d", k.Name, i, p.Decl, len(b), p.Size)
		}
		align := max(p.Align, 1)
		for len(blob)%align != 0 {
			blob = append(blob, 0)
		}
		offsets[i] = uint32(len(blob))
		blob = append(blob, b...)
	}
	return blob, offsets, nil
}

func (k *Kernel) paramList() string {
	s := make([]string, len(k.Params))
	for i, p := range k.Params {
		s[i] = p.Decl
	}
	return strings.Join(s, ", ")
}

// argBytes encodes one CUDA argument; size is the parameter's, used for
// int and uint.
func argBytes(a any, size int) ([]byte, error) {
	le := binary.LittleEndian
	switch v := a.(type) {
	case *Buffer:
		if !v.live() {
			return nil, fmt.Errorf("nil or freed buffer")
		}
		return le.AppendUint64(nil, v.Addr()), nil
	case Ptr:
		if !v.Buf.live() {
			return nil, fmt.Errorf("nil or freed buffer")
		}
		if v.Off < 0 || v.Off > v.Buf.size {
			return nil, fmt.Errorf("offset %d outside a %d-byte buffer", v.Off, v.Buf.size)
		}
		return le.AppendUint64(nil, v.Buf.Addr()+uint64(v.Off)), nil
	case bool:
		if v {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	case int8:
		return []byte{byte(v)}, nil
	case uint8:
		return []byte{v}, nil
	case int16:
		return le.AppendUint16(nil, uint16(v)), nil
	case uint16:
		return le.AppendUint16(nil, v), nil
	case int32:
		return le.AppendUint32(nil, uint32(v)), nil
	case uint32:
		return le.AppendUint32(nil, v), nil
	case int64:
		return le.AppendUint64(nil, uint64(v)), nil
	case uint64:
		return le.AppendUint64(nil, v), nil
	case float32:
		return le.AppendUint32(nil, math.Float32bits(v)), nil
	case float64:
		return le.AppendUint64(nil, math.Float64bits(v)), nil
	case int:
		switch size {
		case 4:
			if v < math.MinInt32 || v > math.MaxInt32 {
				return nil, fmt.Errorf("%d does not fit the 4-byte parameter", v)
			}
			return le.AppendUint32(nil, uint32(int32(v))), nil
		case 8:
			return le.AppendUint64(nil, uint64(v)), nil
		}
		return nil, fmt.Errorf("an int for a %d-byte parameter", size)
	case uint:
		switch size {
		case 4:
			if v > math.MaxUint32 {
				return nil, fmt.Errorf("%d does not fit the 4-byte parameter", v)
			}
			return le.AppendUint32(nil, uint32(v)), nil
		case 8:
			return le.AppendUint64(nil, uint64(v)), nil
		}
		return nil, fmt.Errorf("a uint for a %d-byte parameter", size)
	case []byte:
		return v, nil
	}
	return nil, fmt.Errorf("unsupported argument type %T", a)
}

// bindMetal fills desc's buffers and threadgroup lengths from l, checking
// that every parameter of the kernel is bound. It returns the buffers it
// made for Bytes bindings.
func (k *Kernel) bindMetal(l Launch, desc *cLaunchDesc) ([]*Buffer, error) {
	var made []*Buffer
	bound := map[int]bool{}
	for _, b := range l.Buffers {
		if b.Index < 0 || b.Index >= len(desc.Buffers) {
			return made, fmt.Errorf("simt: launch of %s: buffer index %d outside 0..%d", k.Name, b.Index, len(desc.Buffers)-1)
		}
		if bound[b.Index] {
			return made, fmt.Errorf("simt: launch of %s: buffer(%d) bound twice", k.Name, b.Index)
		}
		bound[b.Index] = true
		buf, off := b.Buf, b.Offset
		if b.Bytes != nil {
			if buf != nil {
				return made, fmt.Errorf("simt: launch of %s: buffer(%d) has both Buf and Bytes", k.Name, b.Index)
			}
			nb, err := k.mod.dev.Alloc(int64(len(b.Bytes)))
			if err != nil {
				return made, err
			}
			nb.Label = fmt.Sprintf("bytes of buffer(%d)", b.Index)
			made = append(made, nb)
			copy(nb.Bytes(), b.Bytes)
			buf, off = nb, 0
		}
		if !buf.live() {
			return made, fmt.Errorf("simt: launch of %s: buffer(%d) is nil or freed", k.Name, b.Index)
		}
		if off < 0 || off > buf.size {
			return made, fmt.Errorf("simt: launch of %s: buffer(%d) offset %d outside a %d-byte buffer", k.Name, b.Index, off, buf.size)
		}
		desc.Buffers[b.Index] = unsafe.Add(buf.ptr, off)
	}
	if len(l.Threadgroup) > len(desc.TgLen) {
		return made, fmt.Errorf("simt: launch of %s: %d threadgroup lengths, at most %d", k.Name, len(l.Threadgroup), len(desc.TgLen))
	}
	for i, n := range l.Threadgroup {
		if n < 0 {
			return made, fmt.Errorf("simt: launch of %s: negative threadgroup(%d) length %d", k.Name, i, n)
		}
		desc.TgLen[i] = uint64(n)
	}
	for _, p := range k.Params {
		switch p.Bind {
		case BindBuffer:
			if !bound[p.Index] {
				return made, fmt.Errorf("simt: launch of %s: [[buffer(%d)]] %s is not bound", k.Name, p.Index, p.Name)
			}
		case BindThreadgroup:
			if p.Index >= len(l.Threadgroup) || l.Threadgroup[p.Index] == 0 {
				return made, fmt.Errorf("simt: launch of %s: [[threadgroup(%d)]] %s has no length", k.Name, p.Index, p.Name)
			}
		}
	}
	return made, nil
}

// ---------------------------------------------------------------------
// Faults.

// A FaultKind classifies a Fault.
type FaultKind int

// Fault kinds, numbered as runtime.cc's KBS_E_*.
const (
	BadLaunch        FaultKind = 1
	OutOfBounds      FaultKind = 2
	Race             FaultKind = 3
	DivergentBarrier FaultKind = 4
	WarpMisuse       FaultKind = 5
	Deadlock         FaultKind = 6
	Trap             FaultKind = 7
	Timeout          FaultKind = 8
	StackOverflow    FaultKind = 9
	NullPointer      FaultKind = 10
	// Misaligned is an access at an address that is not a multiple of
	// its width (a type's alignment, a cp.async's or ldmatrix's size):
	// a GPU's CUDA_ERROR_MISALIGNED_ADDRESS.
	Misaligned FaultKind = 11
)

var faultNames = map[FaultKind]string{
	BadLaunch: "bad launch", OutOfBounds: "out of bounds", Race: "shared-memory race",
	DivergentBarrier: "divergent barrier", WarpMisuse: "warp collective misuse", Deadlock: "deadlock",
	Trap: "trap", Timeout: "timeout", StackOverflow: "stack overflow", NullPointer: "null pointer",
	Misaligned: "misaligned address",
}

func (k FaultKind) String() string {
	if s, ok := faultNames[k]; ok {
		return s
	}
	return fmt.Sprintf("FaultKind(%d)", int(k))
}

// A Fault is an error of a kernel found by the emulator.
type Fault struct {
	Kind   FaultKind
	Kernel string
	// Msg is the runtime's description.
	Msg string
	// Where lists the source lines of the accesses involved (a race's
	// two, an out-of-bounds access), when the module has them.
	Where []string
	// Buffer is the buffer an out-of-bounds access was near, and Offset
	// the access's byte offset from its start.
	Buffer *Buffer
	Offset int64
	// Block and Threads locate the fault in the grid.
	Block   Dim3
	Threads []Dim3
	// Races counts the racing accesses the launch made.
	Races uint64
	// Addr and Width are a misaligned access's address and the
	// alignment it needed (16 for a 16-byte load or cp.async).
	Addr  uint64
	Width int
}

func (f *Fault) Error() string {
	var b strings.Builder
	b.WriteString("simt: ")
	b.WriteString(f.Msg)
	if f.Buffer != nil && f.Buffer.Label != "" {
		fmt.Fprintf(&b, " (buffer %q)", f.Buffer.Label)
	}
	if len(f.Where) > 0 {
		b.WriteString(" [")
		b.WriteString(strings.Join(f.Where, "; "))
		b.WriteString("]")
	}
	if f.Kind == Race && f.Races > 1 {
		fmt.Fprintf(&b, " (%d racing accesses in all)", f.Races)
	}
	return b.String()
}

// Is lets errors.Is match a Fault by kind: errors.Is(err, &Fault{Kind: Race}).
func (f *Fault) Is(target error) bool {
	t, ok := target.(*Fault)
	return ok && t.Kind == f.Kind && t.Msg == ""
}

func (k *Kernel) fault(r *cResult) error { return k.mod.fault(k.Name, r) }

// fault turns the runtime's record of a failed launch of kernel in m into
// a *Fault, naming source lines and shared variables from m's library.
func (m *Module) fault(kernel string, r *cResult) error {
	f := &Fault{Kind: FaultKind(r.Code), Kernel: kernel, Msg: cString(r.Msg[:]), Block: r.Block, Races: r.Races}
	switch f.Kind {
	case Race:
		f.Threads = []Dim3{r.Thread[0], r.Thread[1]}
		if r.BufBase != 0 {
			// A global-memory race: the runtime names the buffer offset;
			// only the second access's place is known.
			f.Buffer = m.dev.buffer(uintptr(r.BufBase))
			f.Offset = int64(r.Addr - r.BufBase)
			f.Where = m.where([]uint64{r.PC[1]}, []bool{r.Write[1] != 0})
			break
		}
		if r.Aux == 1 {
			// The first access is a cp.async whose wait_group had not
			// come: no barrier orders it, only the issuer's wait.
			f.Msg += ", in " + m.sharedVar(r.SmemOffset)
		} else {
			f.Msg += " of " + m.sharedVar(r.SmemOffset) + ", with no barrier between"
		}
		f.Where = m.where([]uint64{r.PC[0], r.PC[1]}, []bool{r.Write[0] != 0, r.Write[1] != 0})
	case OutOfBounds, NullPointer:
		f.Threads = []Dim3{r.Thread[0]}
		if r.Aux > 0 {
			f.Msg += ": " + m.arrayOverrun(r.SmemOffset, r.Aux)
		}
		f.Where = m.where([]uint64{r.PC[0]}, []bool{r.Write[0] != 0})
		if r.BufBase != 0 {
			f.Buffer = m.dev.buffer(uintptr(r.BufBase))
			f.Offset = int64(r.Addr - r.BufBase)
		}
	case Misaligned:
		f.Threads = []Dim3{r.Thread[0]}
		f.Addr, f.Width = r.Addr, int(r.Size)
	default:
		f.Threads = []Dim3{r.Thread[0]}
	}
	return f
}

// ---------------------------------------------------------------------
// The emulated CUDA driver.

// DriverLibrary returns the path of the library that emulates the CUDA
// driver: the runtime's, which exports the driver API subset kernbench's
// CUDA backend calls (cuInit, cuMemAlloc_v2, cuModuleLoadData,
// cuLaunchKernel, cuEventRecord, ...). Host code loads it in place of
// libcuda.so.1 and runs unchanged; it is already loaded in this process,
// so loading it again shares this device.
func (d *Device) DriverLibrary() string { return d.lib }

// imageMagic starts a module image of the emulated driver.
const imageMagic = "KBSIMT-MODULE\x00"

// ModuleImage builds p (a CUDA program) in mode m, or takes it from the
// cache, and returns the image the emulated driver's cuModuleLoadData
// takes for it: the counterpart of the PTX or cubin NVRTC gives for a GPU.
func (d *Device) ModuleImage(p Program, m Mode) ([]byte, error) {
	if p.Dialect != CUDA {
		return nil, fmt.Errorf("simt: a driver module image is for a CUDA program, not %v", p.Dialect)
	}
	lib, err := runtimeLib(d.tc)
	if err != nil {
		return nil, err
	}
	path, _, err := buildModule(d.tc, lib, p, m)
	if err != nil {
		return nil, err
	}
	return []byte(imageMagic + path + "\x00"), nil
}

// LastDriverFault returns the fault of the last launch through the
// emulated driver that failed (a *Fault naming the kernel, threads and
// source lines), or nil when there is none to report. It forgets the
// fault once returned.
func (d *Device) LastDriverFault() error {
	var r cResult
	var h unsafe.Pointer
	var k int32
	if d.rt.lastFault(&r, &h, &k) == 0 {
		return nil
	}
	if h == nil {
		return fmt.Errorf("simt: %s", cString(r.Msg[:]))
	}
	m := d.moduleOf(h)
	name := ""
	if kd := (*cKernelDesc)(d.rt.moduleKernel(h, k)); kd != nil {
		name = goString(kd.Name)
	}
	return m.fault(name, &r)
}

// moduleOf returns the Module of a library the runtime has loaded (by the
// driver, or by Load), for naming the places of its faults.
func (d *Device) moduleOf(h unsafe.Pointer) *Module {
	path := goString(d.rt.modulePath(h))
	d.mu.Lock()
	defer d.mu.Unlock()
	if m, ok := d.modules[path]; ok {
		return m
	}
	if m, ok := d.driverModules[path]; ok {
		return m
	}
	mode := Fast
	if d.rt.moduleChecks(h) != 0 {
		mode = Checked
	}
	m := &Module{dev: d, handle: h, path: path, base: d.rt.moduleBase(h), mode: mode, dialect: CUDA}
	d.driverModules[path] = m
	return m
}
