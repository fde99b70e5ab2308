package metal

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/simt"
)

// emuDevice is the emulated Metal device: buffers are the SIMT emulator's
// device memory, a library is a module the emulator builds from the same
// .metal file (with its headers), a pipeline is one of its kernels, and a
// command buffer runs its dispatches in order through Kernel.Launch when
// committed. A kernel's fault (a race, an out-of-bounds access, a
// divergent barrier) is the command buffer's error, a *simt.Fault.
type emuDevice struct {
	dev  *simt.Device
	mode simt.Mode
	// patch, when set, rewrites each source file before it is built
	// (tests inject bugs with it).
	patch func(name string, src []byte) []byte

	mu    sync.Mutex
	libs  map[string]*simt.Module
	pipes map[string]*emuPipeline
}

// emuMaxThreads is the most threads the emulator gives a threadgroup; a
// Mac's pipelines report at most 1024 too.
const emuMaxThreads = 1024

// emuThreadgroupMemory is what the backend lets a dispatch use: the 32 KiB
// of Apple GPUs (the emulator has more), so that a kernel that fits here
// fits a Mac.
const emuThreadgroupMemory = 32 << 10

func openEmu(mode simt.Mode) (*emuDevice, error) {
	dev, err := simt.Open()
	if err != nil {
		return nil, err
	}
	return &emuDevice{dev: dev, mode: mode, libs: map[string]*simt.Module{}, pipes: map[string]*emuPipeline{}}, nil
}

func (d *emuDevice) describe() string {
	return fmt.Sprintf("SIMT emulator, Metal dialect, %s build (%s)", d.mode, d.dev.Toolchain().Version)
}

func (d *emuDevice) maxThreadgroupMemory() int { return emuThreadgroupMemory }

func (d *emuDevice) close() {}

// emuBuffer is emulator device memory.
type emuBuffer struct{ b *simt.Buffer }

func (d *emuDevice) newBuffer(size int64) (devBuffer, error) {
	b, err := d.dev.Alloc(size)
	if err != nil {
		return nil, err
	}
	return emuBuffer{b}, nil
}

func (e emuBuffer) contents() []byte { return e.b.Bytes() }
func (e emuBuffer) release()         { e.b.Free() }

// wrapHost: the emulator's buffers are its own allocations (with red
// zones the checks watch), so host memory is always copied.
func (d *emuDevice) wrapHost([]byte) (devBuffer, int64, bool) { return nil, 0, false }

// emuPipeline is a kernel of a loaded module.
type emuPipeline struct{ k *simt.Kernel }

func (p *emuPipeline) name() string    { return p.k.Name }
func (p *emuPipeline) maxThreads() int { return emuMaxThreads }

func (d *emuDevice) pipeline(file, name string) (pipeline, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p, ok := d.pipes[name]; ok {
		return p, nil
	}
	mod, ok := d.libs[file]
	if !ok {
		main, headers, err := program(file)
		if err != nil {
			return nil, err
		}
		if d.patch != nil {
			main = d.patch(file, main)
			for n, h := range headers {
				headers[n] = d.patch(n, h)
			}
		}
		p := simt.Program{Dialect: simt.Metal, Main: simt.Source{Name: file, Text: main}}
		for _, n := range gpu.SortedNames(headers) {
			p.Headers = append(p.Headers, simt.Source{Name: n, Text: headers[n]})
		}
		if mod, err = d.dev.Load(p, d.mode); err != nil {
			return nil, fmt.Errorf("metal-emu: building %s: %w", file, err)
		}
		d.libs[file] = mod
	}
	k, err := mod.Kernel(name)
	if err != nil {
		return nil, fmt.Errorf("metal-emu: %s: %w", file, err)
	}
	p := &emuPipeline{k}
	d.pipes[name] = p
	return p, nil
}

// emuCommands records dispatches and runs them when committed.
type emuCommands struct {
	d        *emuDevice
	list     []dispatch
	groups   []string // the open debug groups
	labels   []string // the debug group path of each dispatch
	err      error
	elapsed  time.Duration
	commited bool
}

func (d *emuDevice) newCommands() (commands, error) { return &emuCommands{d: d}, nil }

func (c *emuCommands) pushGroup(label string) { c.groups = append(c.groups, label) }

func (c *emuCommands) popGroup() {
	if len(c.groups) > 0 {
		c.groups = c.groups[:len(c.groups)-1]
	}
}

func (c *emuCommands) encode(d dispatch) error {
	if c.commited {
		return errors.New("metal-emu: encoding into a committed command buffer")
	}
	if _, ok := d.pipe.(*emuPipeline); !ok {
		return fmt.Errorf("metal-emu: a pipeline of another device (%T)", d.pipe)
	}
	// setBytes copies at encoding time.
	bs := make([]binding, len(d.buffers))
	for i, b := range d.buffers {
		bs[i] = b
		if b.bytes != nil {
			bs[i].bytes = append([]byte(nil), b.bytes...)
		}
	}
	d.buffers = bs
	d.threadgroup = append([]int(nil), d.threadgroup...)
	c.list = append(c.list, d)
	label := ""
	if len(c.groups) > 0 {
		label = c.groups[len(c.groups)-1]
	}
	c.labels = append(c.labels, label)
	return nil
}

// commit runs the dispatches in order, stopping at the first that fails.
func (c *emuCommands) commit() {
	if c.commited {
		return
	}
	c.commited = true
	start := time.Now()
	for i, d := range c.list {
		l := simt.Launch{
			Grid:        simt.Dim3{X: uint32(d.groups[0]), Y: uint32(d.groups[1]), Z: uint32(d.groups[2])},
			Block:       simt.Dim3{X: uint32(d.threads[0]), Y: uint32(d.threads[1]), Z: uint32(d.threads[2])},
			Threadgroup: d.threadgroup,
		}
		for _, b := range d.buffers {
			sb := simt.Binding{Index: b.index, Offset: b.off, Bytes: b.bytes}
			if b.buf != nil {
				sb.Buf = b.buf.(emuBuffer).b
			}
			l.Buffers = append(l.Buffers, sb)
		}
		if _, err := d.pipe.(*emuPipeline).k.Launch(l); err != nil {
			if c.labels[i] != "" {
				err = fmt.Errorf("%s: %w", c.labels[i], err)
			}
			c.err = err
			break
		}
	}
	c.elapsed = time.Since(start)
	c.list = nil
}

func (c *emuCommands) wait() error {
	if !c.commited {
		return errors.New("metal-emu: waiting for a command buffer never committed")
	}
	return c.err
}

// gpuTime is the wall time the emulator took: not a GPU's time.
func (c *emuCommands) gpuTime() time.Duration { return c.elapsed }
