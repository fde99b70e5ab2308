package metal

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/simt"
)

// emuDevice is the emulated Metal device: buffers are the SIMT emulator's
// device memory, a library is a module the emulator builds from the same
// .metal file (with its headers), a pipeline is one of its kernels, and a
// command buffer runs its dispatches through Kernel.Launch when waited
// for, after those enqueued before it, each run of dispatches between two
// barriers in a seeded shuffled order. A kernel's fault (a race, an out-of-bounds access, a
// divergent barrier) is the command buffer's error, a *simt.Fault.
type emuDevice struct {
	dev  *simt.Device
	mode simt.Mode
	// patch, when set, rewrites each source file before it is built
	// (tests inject bugs with it).
	patch func(name string, src []byte) []byte

	// seed orders the dispatches between two barriers
	// ($KERNBENCH_METAL_EMU_SEED, default 1).
	seed uint64
	// maxBuf is the largest buffer it makes
	// ($KERNBENCH_METAL_EMU_MAX_BUFFER, default emuMaxBufferLength), so
	// that tests can spread weights over several views.
	maxBuf int64

	mu    sync.Mutex
	libs  map[string]*simt.Module
	pipes map[string]*emuPipeline

	// qmu guards the queue: command buffers enqueued and not yet run,
	// in order, and the count of command buffers made.
	qmu    sync.Mutex
	queue  []*emuCommands
	serial uint64
}

// emuMaxThreads is the most threads the emulator gives a threadgroup; a
// Mac's pipelines report at most 1024 too.
const emuMaxThreads = 1024

// emuThreadgroupMemory is what the backend lets a dispatch use: the 32 KiB
// of Apple GPUs (the emulator has more), so that a kernel that fits here
// fits a Mac.
const emuThreadgroupMemory = 32 << 10

// The environment variables that set metal-emu's order of concurrent
// dispatches and its maxBufferLength.
const (
	seedEnv      = "KERNBENCH_METAL_EMU_SEED"
	maxBufferEnv = "KERNBENCH_METAL_EMU_MAX_BUFFER"
)

// emuMaxBufferLength is metal-emu's maxBufferLength unless
// $KERNBENCH_METAL_EMU_MAX_BUFFER says another: 16 GiB, more than any
// test allocates.
const emuMaxBufferLength = 16 << 30

func openEmu(mode simt.Mode) (*emuDevice, error) {
	seed := uint64(1)
	if v := os.Getenv(seedEnv); v != "" {
		n, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			return nil, fmt.Errorf("$%s=%q: want an unsigned integer", seedEnv, v)
		}
		seed = n
	}
	maxBuf := int64(emuMaxBufferLength)
	if v := os.Getenv(maxBufferEnv); v != "" {
		n, err := strconv.ParseInt(v, 0, 64)
		if err != nil || n < 2*pageSlack {
			return nil, fmt.Errorf("$%s=%q: want a byte count of at least %d", maxBufferEnv, v, 2*pageSlack)
		}
		maxBuf = n
	}
	dev, err := simt.Open()
	if err != nil {
		return nil, err
	}
	return &emuDevice{dev: dev, mode: mode, seed: seed, maxBuf: maxBuf, libs: map[string]*simt.Module{}, pipes: map[string]*emuPipeline{}}, nil
}

func (d *emuDevice) describe() string {
	return fmt.Sprintf("SIMT emulator, Metal dialect, %s build (%s), fast math functions modeled at their worst for %s", d.mode, d.dev.Toolchain().Version, fastMathNames())
}

func (d *emuDevice) maxThreadgroupMemory() int { return emuThreadgroupMemory }

func (d *emuDevice) close() {}

// emuBuffer is emulator device memory.
type emuBuffer struct{ b *simt.Buffer }

func (d *emuDevice) maxBufferLength() int64 { return d.maxBuf }

func (d *emuDevice) newBuffer(size int64) (devBuffer, error) {
	if size > d.maxBuf {
		return nil, fmt.Errorf("metal-emu: a buffer of %d bytes is larger than the device's maxBufferLength (%d)", size, d.maxBuf)
	}
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
		if fastMath[file] {
			p.Defines = append(p.Defines, "KBS_METAL_FAST_MATH")
		}
		for _, n := range gpu.SortedNames(headers) {
			p.Headers = append(p.Headers, simt.Source{Name: n, Text: headers[n]})
		}
		if mod, err = d.dev.Load(p, d.mode); err != nil {
			return nil, fmt.Errorf("metal-emu: building %s: %w: %w", file, ops.ErrKernelBuild, err)
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

// emuCommands records dispatches, in runs between barriers. The queue
// runs a committed command buffer when the host waits for it (or for one
// enqueued after it), after those enqueued before it, and the dispatches
// of each run in an order shuffled by the device's seed and the command
// buffer's number: a GPU may run them concurrently, so a kernel that
// needs another's output must be behind a barrier.
type emuCommands struct {
	d        *emuDevice
	serial   uint64
	runs     [][]dispatch
	labels   [][]string // the debug group of each dispatch
	groups   []string   // the open debug groups
	enqueued bool
	commited bool
	done     bool
	err      error
	elapsed  time.Duration
}

func (d *emuDevice) newCommands() (commands, error) {
	d.qmu.Lock()
	d.serial++
	n := d.serial
	d.qmu.Unlock()
	return &emuCommands{d: d, serial: n, runs: [][]dispatch{nil}, labels: [][]string{nil}}, nil
}

func (c *emuCommands) enqueue() {
	c.d.qmu.Lock()
	defer c.d.qmu.Unlock()
	if !c.enqueued {
		c.enqueued = true
		c.d.queue = append(c.d.queue, c)
	}
}

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
	last := len(c.runs) - 1
	c.runs[last] = append(c.runs[last], d)
	label := ""
	if len(c.groups) > 0 {
		label = c.groups[len(c.groups)-1]
	}
	c.labels[last] = append(c.labels[last], label)
	return nil
}

func (c *emuCommands) barrier() {
	if last := len(c.runs) - 1; len(c.runs[last]) > 0 {
		c.runs = append(c.runs, nil)
		c.labels = append(c.labels, nil)
	}
}

// commit ends encoding; the queue runs the command buffer when waited
// for.
func (c *emuCommands) commit() {
	c.enqueue()
	c.d.qmu.Lock()
	c.commited = true
	c.d.qmu.Unlock()
}

// wait runs the queue up to c: each command buffer in the order
// enqueued, all committed.
func (c *emuCommands) wait() error {
	d := c.d
	d.qmu.Lock()
	defer d.qmu.Unlock()
	if !c.commited {
		return errors.New("metal-emu: waiting for a command buffer never committed")
	}
	for !c.done {
		if len(d.queue) == 0 {
			return errors.New("metal-emu: a committed command buffer is not in the queue")
		}
		head := d.queue[0]
		if !head.commited {
			return errors.New("metal-emu: waiting for a command buffer queued behind one never committed")
		}
		d.queue[0] = nil
		d.queue = d.queue[1:]
		head.run()
	}
	return c.err
}

// run runs the dispatches, each run between barriers in a shuffled
// order, stopping at the first that fails.
func (c *emuCommands) run() {
	c.done = true
	start := time.Now()
	r := rand.New(rand.NewPCG(c.d.seed, c.serial))
	for i, run := range c.runs {
		order := r.Perm(len(run))
		for _, j := range order {
			if err := c.launch(run[j]); err != nil {
				if c.labels[i][j] != "" {
					err = fmt.Errorf("%s: %w", c.labels[i][j], err)
				}
				c.err = err
				break
			}
		}
		if c.err != nil {
			break
		}
	}
	c.elapsed = time.Since(start)
	c.runs, c.labels = nil, nil
}

func (c *emuCommands) launch(d dispatch) error {
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
	_, err := d.pipe.(*emuPipeline).k.Launch(l)
	return err
}

// gpuTime is the wall time the emulator took: not a GPU's time.
func (c *emuCommands) gpuTime() time.Duration { return c.elapsed }
