//go:build darwin

package metal

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"
)

// The Mac's GPU through Metal, with no cgo: Metal.framework and Foundation
// are loaded with purego, MTLCreateSystemDefaultDevice is called as a C
// function, and every other call is an Objective-C message sent through
// purego/objc. Objects the backend keeps are retained (new* methods return
// them retained; others are retained explicitly), and each call that may
// autorelease runs inside an autorelease pool on a locked OS thread.

// Metal's constants (MTLResourceOptions, MTLLanguageVersion, ...).
const (
	mtlResourceStorageModeShared = 0 << 4
	mtlLanguageVersion3_0        = 3<<16 | 0
	mtlMathModeSafe              = 0
	mtlMathModeRelaxed           = 1
	mtlMathFunctionsFast         = 0 // MTLMathFloatingPointFunctionsFast
	mtlMathFunctionsPrecise      = 1
	mtlCommandBufferStatusError  = 5
	mtlGPUFamilyApple7           = 1007
	mtlDispatchTypeConcurrent    = 1
	mtlBarrierScopeBuffers       = 1
	nsUTF8StringEncoding         = 4
	// mslVersion names mtlLanguageVersion3_0 in reports.
	mslVersion = "MSL 3.0"
)

// mtlSize is MTLSize: three NSUIntegers.
type mtlSize struct{ Width, Height, Depth uint64 }

// metalAPI holds what is loaded from the system once per process.
type metalAPI struct {
	createDevice func() objc.ID
	poolPush     func() uintptr
	poolPop      func(uintptr)
}

var (
	loadAPI = sync.OnceValues(func() (*metalAPI, error) {
		if _, err := purego.Dlopen("/System/Library/Frameworks/Foundation.framework/Foundation", purego.RTLD_GLOBAL|purego.RTLD_NOW); err != nil {
			return nil, fmt.Errorf("cannot load Foundation: %w", err)
		}
		h, err := purego.Dlopen("/System/Library/Frameworks/Metal.framework/Metal", purego.RTLD_GLOBAL|purego.RTLD_NOW)
		if err != nil {
			return nil, fmt.Errorf("cannot load Metal.framework: %w", err)
		}
		api := &metalAPI{}
		sym, err := purego.Dlsym(h, "MTLCreateSystemDefaultDevice")
		if err != nil {
			return nil, fmt.Errorf("Metal.framework lacks MTLCreateSystemDefaultDevice: %w", err)
		}
		purego.RegisterFunc(&api.createDevice, sym)
		objcLib, err := purego.Dlopen("/usr/lib/libobjc.A.dylib", purego.RTLD_GLOBAL|purego.RTLD_NOW)
		if err != nil {
			return nil, err
		}
		purego.RegisterLibFunc(&api.poolPush, objcLib, "objc_autoreleasePoolPush")
		purego.RegisterLibFunc(&api.poolPop, objcLib, "objc_autoreleasePoolPop")
		return api, nil
	})

	// sel caches selectors by name.
	selMu    sync.Mutex
	selCache = map[string]objc.SEL{}
)

func sel(name string) objc.SEL {
	selMu.Lock()
	defer selMu.Unlock()
	s, ok := selCache[name]
	if !ok {
		s = objc.RegisterName(name)
		selCache[name] = s
	}
	return s
}

// inPool runs f on a locked OS thread inside an autorelease pool.
func inPool(api *metalAPI, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p := api.poolPush()
	defer api.poolPop(p)
	f()
}

// nsString returns an autoreleased NSString of s.
func nsString(s string) objc.ID {
	b := append([]byte(s), 0)
	str := objc.ID(objc.GetClass("NSString")).Send(sel("alloc")).Send(sel("initWithBytes:length:encoding:"),
		unsafe.Pointer(&b[0]), uint64(len(s)), uint64(nsUTF8StringEncoding))
	runtime.KeepAlive(b)
	return str.Send(sel("autorelease"))
}

// goString returns an NSString's text.
func goString(s objc.ID) string {
	if s == 0 {
		return ""
	}
	return objc.Send[string](s, sel("UTF8String"))
}

// nsError describes an NSError.
func nsError(e objc.ID) error {
	if e == 0 {
		return errors.New("unknown error")
	}
	return errors.New(goString(e.Send(sel("localizedDescription"))))
}

// gpuAvailable says why there is no usable Metal GPU here, or nil.
var gpuAvailable = sync.OnceValue(func() error {
	api, err := loadAPI()
	if err != nil {
		return err
	}
	var why error
	inPool(api, func() {
		dev := api.createDevice()
		if dev == 0 {
			why = errors.New("no Metal device (MTLCreateSystemDefaultDevice returned nil)")
			return
		}
		defer dev.Send(sel("release"))
		if !objc.Send[bool](dev, sel("supportsFamily:"), int64(mtlGPUFamilyApple7)) {
			why = fmt.Errorf("%s is not an Apple7-family GPU (M1 or later): the kernels need simdgroup matrices", goString(dev.Send(sel("name"))))
		}
	})
	return why
})

// gpuDevice is the Mac's default Metal device and a command queue on it.
type gpuDevice struct {
	api    *metalAPI
	dev    objc.ID
	queue  objc.ID
	name   string
	tgMem  int
	maxBuf int64
	math   string

	mu    sync.Mutex
	libs  map[string]objc.ID
	pipes map[string]*gpuPipeline
}

func openGPU() (device, error) {
	api, err := loadAPI()
	if err != nil {
		return nil, err
	}
	g := &gpuDevice{api: api, libs: map[string]objc.ID{}, pipes: map[string]*gpuPipeline{}}
	inPool(api, func() {
		g.dev = api.createDevice()
		if g.dev == 0 {
			err = errors.New("metal: no Metal device")
			return
		}
		g.queue = g.dev.Send(sel("newCommandQueue"))
		if g.queue == 0 {
			err = errors.New("metal: newCommandQueue failed")
			return
		}
		g.name = goString(g.dev.Send(sel("name")))
		g.tgMem = int(objc.Send[uint64](g.dev, sel("maxThreadgroupMemoryLength")))
		g.maxBuf = int64(objc.Send[uint64](g.dev, sel("maxBufferLength")))
	})
	if err != nil {
		g.close()
		return nil, err
	}
	return g, nil
}

func (g *gpuDevice) describe() string {
	return fmt.Sprintf("%s, kernels compiled at run time as %s, %s", g.name, mslVersion, g.mathMode())
}

// mathMode says how libraries are compiled: where the OS has math modes
// (macOS 15), MTLMathModeSafe with the precise functions, and for the
// files of fastMath MTLMathModeRelaxed with the fast functions; else
// fastMathEnabled = NO.
func (g *gpuDevice) mathMode() string {
	if g.math == "" {
		g.math = "fast math off"
		inPool(g.api, func() {
			opts := objc.ID(objc.GetClass("MTLCompileOptions")).Send(sel("alloc")).Send(sel("init"))
			defer opts.Send(sel("release"))
			if objc.Send[bool](opts, sel("respondsToSelector:"), sel("setMathMode:")) {
				g.math = "math mode safe (relaxed with fast functions for " + fastMathNames() + ")"
			}
		})
	}
	return g.math
}

func (g *gpuDevice) maxThreadgroupMemory() int { return g.tgMem }

func (g *gpuDevice) close() {
	inPool(g.api, func() {
		for _, p := range g.pipes {
			p.pso.Send(sel("release"))
		}
		for _, l := range g.libs {
			l.Send(sel("release"))
		}
		if g.queue != 0 {
			g.queue.Send(sel("release"))
		}
		if g.dev != 0 {
			g.dev.Send(sel("release"))
		}
	})
	g.pipes, g.libs, g.queue, g.dev = nil, nil, 0, 0
}

// gpuBuffer is an MTLBuffer in shared storage.
type gpuBuffer struct {
	api  *metalAPI
	id   objc.ID
	mem  []byte
	host []byte // the host memory a no-copy buffer wraps, kept alive
}

func (b *gpuBuffer) contents() []byte { return b.mem }

func (b *gpuBuffer) release() {
	if b.id != 0 {
		inPool(b.api, func() { b.id.Send(sel("release")) })
		b.id, b.mem, b.host = 0, nil, nil
	}
}

func (g *gpuDevice) maxBufferLength() int64 { return g.maxBuf }

func (g *gpuDevice) newBuffer(size int64) (devBuffer, error) {
	if size > g.maxBuf {
		return nil, fmt.Errorf("metal: a buffer of %d bytes is larger than the device's maxBufferLength (%d)", size, g.maxBuf)
	}
	var id objc.ID
	inPool(g.api, func() {
		id = g.dev.Send(sel("newBufferWithLength:options:"), uint64(max(size, 1)), uint64(mtlResourceStorageModeShared))
	})
	if id == 0 {
		return nil, fmt.Errorf("metal: newBufferWithLength %d failed", size)
	}
	p := objc.Send[unsafe.Pointer](id, sel("contents"))
	mem := unsafe.Slice((*byte)(p), max(size, 1))[:size:size]
	clear(mem)
	return &gpuBuffer{api: g.api, id: id, mem: mem}, nil
}

// wrapHost wraps the pages that hold p (a model file's mapping) in a
// buffer without copying them, as llama.cpp maps weights: from the page
// where p starts to the end of its last page.
func (g *gpuDevice) wrapHost(p []byte) (devBuffer, int64, bool) {
	if len(p) == 0 {
		return nil, 0, false
	}
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(&p[0]))
	base := start &^ (page - 1)
	end := (start + uintptr(len(p)) + page - 1) &^ (page - 1)
	if int64(end-base) > g.maxBuf {
		return nil, 0, false
	}
	off := int64(start - base)
	ptr := unsafe.Add(unsafe.Pointer(&p[0]), -off)
	var id objc.ID
	inPool(g.api, func() {
		id = g.dev.Send(sel("newBufferWithBytesNoCopy:length:options:deallocator:"),
			ptr, uint64(end-base), uint64(mtlResourceStorageModeShared), uintptr(0))
	})
	if id == 0 {
		return nil, 0, false
	}
	mem := unsafe.Slice((*byte)(ptr), end-base)[off : off+int64(len(p))]
	return &gpuBuffer{api: g.api, id: id, mem: mem, host: p}, off, true
}

// gpuPipeline is an MTLComputePipelineState.
type gpuPipeline struct {
	pso    objc.ID
	kernel string
	max    int
}

func (p *gpuPipeline) name() string    { return p.kernel }
func (p *gpuPipeline) maxThreads() int { return p.max }

// library returns the library of kernel file, compiling it from its
// source with the headers inlined.
func (g *gpuDevice) library(file string) (objc.ID, error) {
	if l, ok := g.libs[file]; ok {
		return l, nil
	}
	main, headers, err := program(file)
	if err != nil {
		return 0, err
	}
	src, err := inlineIncludes(file, main, headers)
	if err != nil {
		return 0, err
	}
	var lib objc.ID
	inPool(g.api, func() {
		opts := objc.ID(objc.GetClass("MTLCompileOptions")).Send(sel("alloc")).Send(sel("init"))
		defer opts.Send(sel("release"))
		opts.Send(sel("setLanguageVersion:"), uint64(mtlLanguageVersion3_0))
		if objc.Send[bool](opts, sel("respondsToSelector:"), sel("setMathMode:")) {
			if fastMath[file] {
				opts.Send(sel("setMathMode:"), int64(mtlMathModeRelaxed))
				opts.Send(sel("setMathFloatingPointFunctions:"), int64(mtlMathFunctionsFast))
			} else {
				opts.Send(sel("setMathMode:"), int64(mtlMathModeSafe))
				opts.Send(sel("setMathFloatingPointFunctions:"), int64(mtlMathFunctionsPrecise))
			}
		} else {
			opts.Send(sel("setFastMathEnabled:"), false)
		}
		var nserr objc.ID
		lib = g.dev.Send(sel("newLibraryWithSource:options:error:"), nsString(string(src)), opts, unsafe.Pointer(&nserr))
		if lib == 0 {
			err = fmt.Errorf("metal: compiling %s: %w", file, nsError(nserr))
		}
	})
	if err != nil {
		return 0, err
	}
	g.libs[file] = lib
	return lib, nil
}

func (g *gpuDevice) pipeline(file, name string) (pipeline, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p, ok := g.pipes[name]; ok {
		return p, nil
	}
	lib, err := g.library(file)
	if err != nil {
		return nil, err
	}
	var p *gpuPipeline
	inPool(g.api, func() {
		fn := lib.Send(sel("newFunctionWithName:"), nsString(name))
		if fn == 0 {
			err = fmt.Errorf("metal: %s has no kernel %s", file, name)
			return
		}
		defer fn.Send(sel("release"))
		var nserr objc.ID
		pso := g.dev.Send(sel("newComputePipelineStateWithFunction:error:"), fn, unsafe.Pointer(&nserr))
		if pso == 0 {
			err = fmt.Errorf("metal: pipeline of %s: %w", name, nsError(nserr))
			return
		}
		p = &gpuPipeline{pso: pso, kernel: name, max: int(objc.Send[uint64](pso, sel("maxTotalThreadsPerThreadgroup")))}
	})
	if err != nil {
		return nil, err
	}
	g.pipes[name] = p
	return p, nil
}

// gpuCommands is a command buffer with its compute encoder, of
// concurrent dispatch type.
type gpuCommands struct {
	g        *gpuDevice
	cb, enc  objc.ID
	commited bool
	waited   bool
	err      error
	elapsed  time.Duration
}

func (g *gpuDevice) newCommands() (commands, error) {
	c := &gpuCommands{g: g}
	inPool(g.api, func() {
		c.cb = g.queue.Send(sel("commandBuffer"))
		if c.cb != 0 {
			c.cb.Send(sel("retain"))
			c.enc = c.cb.Send(sel("computeCommandEncoderWithDispatchType:"), uint64(mtlDispatchTypeConcurrent))
			if c.enc != 0 {
				c.enc.Send(sel("retain"))
			}
		}
	})
	if c.cb == 0 || c.enc == 0 {
		c.releaseAll()
		return nil, errors.New("metal: cannot make a command buffer and its compute encoder")
	}
	runtime.AddCleanup(c, func(ids [2]objc.ID) {
		// A command buffer dropped unencoded (an encoding error) or
		// never waited for is released here.
		inPool(g.api, func() {
			for _, id := range ids {
				if id != 0 {
					id.Send(sel("release"))
				}
			}
		})
	}, [2]objc.ID{c.cb, c.enc})
	return c, nil
}

// releaseAll is for a command buffer that could not be made whole; the
// cleanup releases the others.
func (c *gpuCommands) releaseAll() {
	inPool(c.g.api, func() {
		if c.enc != 0 {
			c.enc.Send(sel("release"))
		}
		if c.cb != 0 {
			c.cb.Send(sel("release"))
		}
	})
	c.enc, c.cb = 0, 0
}

func (c *gpuCommands) enqueue() {
	inPool(c.g.api, func() { c.cb.Send(sel("enqueue")) })
}

func (c *gpuCommands) barrier() {
	inPool(c.g.api, func() { c.enc.Send(sel("memoryBarrierWithScope:"), uint64(mtlBarrierScopeBuffers)) })
}

func (c *gpuCommands) pushGroup(label string) {
	inPool(c.g.api, func() { c.enc.Send(sel("pushDebugGroup:"), nsString(label)) })
}

func (c *gpuCommands) popGroup() {
	inPool(c.g.api, func() { c.enc.Send(sel("popDebugGroup")) })
}

func (c *gpuCommands) encode(d dispatch) error {
	if c.commited {
		return errors.New("metal: encoding into a committed command buffer")
	}
	p, ok := d.pipe.(*gpuPipeline)
	if !ok {
		return fmt.Errorf("metal: a pipeline of another device (%T)", d.pipe)
	}
	var err error
	inPool(c.g.api, func() {
		c.enc.Send(sel("setComputePipelineState:"), p.pso)
		for _, b := range d.buffers {
			switch {
			case b.bytes != nil:
				c.enc.Send(sel("setBytes:length:atIndex:"), unsafe.Pointer(&b.bytes[0]), uint64(len(b.bytes)), uint64(b.index))
				runtime.KeepAlive(b.bytes)
			case b.buf != nil:
				gb, ok := b.buf.(*gpuBuffer)
				if !ok {
					err = fmt.Errorf("metal: buffer(%d) is %T memory", b.index, b.buf)
					return
				}
				c.enc.Send(sel("setBuffer:offset:atIndex:"), gb.id, uint64(b.off), uint64(b.index))
			}
		}
		for i, n := range d.threadgroup {
			if n > 0 {
				c.enc.Send(sel("setThreadgroupMemoryLength:atIndex:"), uint64((n+15)&^15), uint64(i))
			}
		}
		c.enc.Send(sel("dispatchThreadgroups:threadsPerThreadgroup:"),
			mtlSize{uint64(d.groups[0]), uint64(d.groups[1]), uint64(d.groups[2])},
			mtlSize{uint64(d.threads[0]), uint64(d.threads[1]), uint64(d.threads[2])})
	})
	return err
}

func (c *gpuCommands) commit() {
	if c.commited {
		return
	}
	c.commited = true
	inPool(c.g.api, func() {
		c.enc.Send(sel("endEncoding"))
		c.cb.Send(sel("commit"))
	})
}

func (c *gpuCommands) wait() error {
	if !c.commited {
		return errors.New("metal: waiting for a command buffer never committed")
	}
	if c.waited {
		return c.err
	}
	c.waited = true
	inPool(c.g.api, func() {
		c.cb.Send(sel("waitUntilCompleted"))
		if objc.Send[int64](c.cb, sel("status")) == mtlCommandBufferStatusError {
			c.err = fmt.Errorf("metal: command buffer failed: %w", nsError(c.cb.Send(sel("error"))))
		}
		start := objc.Send[float64](c.cb, sel("GPUStartTime"))
		end := objc.Send[float64](c.cb, sel("GPUEndTime"))
		c.elapsed = time.Duration((end - start) * float64(time.Second))
	})
	return c.err
}

func (c *gpuCommands) gpuTime() time.Duration { return c.elapsed }
