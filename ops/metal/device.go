package metal

import (
	"bytes"
	"embed"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// The backend's host code runs against a device: what it needs of Metal,
// reduced to buffers, pipelines found by kernel name and command buffers
// of compute dispatches. Two devices implement it: a Mac's GPU through
// the Objective-C runtime (device_darwin.go) and the SIMT emulator
// (device_emu.go), so the backend's logic (pipeline lookup, binding by
// buffer index, threadgroup geometry and memory) is the same on both and
// is exercised in CI on the emulator.

// A device is a Metal device with its command queue.
type device interface {
	// describe says what the device is and how its kernels are built
	// (language version, math mode), for reports.
	describe() string
	// newBuffer returns a zeroed buffer of size bytes in storage that
	// the host sees (MTLResourceStorageModeShared), at most
	// maxBufferLength.
	newBuffer(size int64) (devBuffer, error)
	// maxBufferLength is the largest buffer the device makes or wraps
	// (MTLDevice's maxBufferLength).
	maxBufferLength() int64
	// wrapHost returns a buffer over host memory without copying it
	// (newBufferWithBytesNoCopy over whole pages) and the offset of
	// p[0] in it; ok is false where the device cannot, and the caller
	// then copies p into a new buffer.
	wrapHost(p []byte) (b devBuffer, off int64, ok bool)
	// pipeline returns the compute pipeline of kernel name in kernel
	// file (a .metal file of kernels/), building the file's library on
	// first use; pipelines are cached by name.
	pipeline(file, name string) (pipeline, error)
	// newCommands starts a command buffer on the device's queue, with a
	// compute encoder of concurrent dispatch type
	// (MTLDispatchTypeConcurrent): its dispatches between two barriers
	// may run at once and in any order.
	newCommands() (commands, error)
	// maxThreadgroupMemory is the most threadgroup memory a dispatch
	// may use, in bytes.
	maxThreadgroupMemory() int
	// close releases the queue and the device's objects.
	close()
}

// A devBuffer is an MTLBuffer in shared storage.
type devBuffer interface {
	// contents is the buffer's memory as the host sees it; valid until
	// release, and only while no queued work writes it.
	contents() []byte
	// release frees the buffer.
	release()
}

// A pipeline is a compute pipeline state for one kernel.
type pipeline interface {
	// name is the kernel's name.
	name() string
	// maxThreads is the most threads a threadgroup of it may have.
	maxThreads() int
}

// A binding binds a kernel's [[buffer(index)]] argument: a buffer at an
// offset (setBuffer:offset:atIndex:), or bytes copied into the command
// buffer (setBytes:length:atIndex:).
type binding struct {
	index int
	buf   devBuffer
	off   int64
	bytes []byte
}

// A dispatch is one compute dispatch: a pipeline, its buffer bindings, the
// lengths of its [[threadgroup(i)]] memory arguments by index, and its
// geometry (dispatchThreadgroups:threadsPerThreadgroup:).
type dispatch struct {
	pipe        pipeline
	buffers     []binding
	threadgroup []int
	groups      [3]int
	threads     [3]int
}

// commands is a command buffer with one compute encoder of concurrent
// dispatch type.
type commands interface {
	// enqueue reserves the command buffer's place in its queue: command
	// buffers run in the order they were enqueued, whatever the order
	// they are committed in (commit enqueues one not enqueued).
	enqueue()
	// pushGroup and popGroup bracket the dispatches of one node in a
	// debug group named label (what a GPU capture shows).
	pushGroup(label string)
	popGroup()
	// encode adds a dispatch.
	encode(d dispatch) error
	// barrier adds a memory barrier on buffers
	// (memoryBarrierWithScope: MTLBarrierScopeBuffers): the dispatches
	// after it start once those before it are done and see their
	// writes.
	barrier()
	// commit ends encoding and submits the command buffer.
	commit()
	// wait waits for it to complete and returns the error its work met.
	wait() error
	// gpuTime returns how long the GPU took to run it, from its GPU
	// start and end times; valid after wait.
	gpuTime() time.Duration
}

// ---------------------------------------------------------------------
// Math modes.

// fastMath lists the kernel files whose library is compiled with Metal's
// fast single-precision math functions (exp, tanh, log, rsqrt, ... to the
// accuracy of the Metal Shading Language specification's Table 8.2) in
// relaxed math mode, which honors Inf and NaN: those whose every case
// passes on metal-emu with the fast functions modeled at their worst
// (-DKBS_METAL_FAST_MATH, package simt). That is rms_norm.metal (rsqrt
// within 2 ulp) alone. With the model, the files that call exp fail
// their tolerances: soft_max.metal (NMSE 1.1e-13 to 1.7e-13 against
// 1e-13), flash_attn_ext.metal (4.5e-11 against 2e-11 at 256 keys, 1e-8
// at 4096), ssm_scan.metal (up to 3.5e-12 against 5e-13) and
// elementwise.metal (SILU 1.03e-13 against 1e-13; GELU's tanh, computed
// as (t - 1)/(t + 1) with t = exp(2x), is NaN past x = 44). The others
// keep safe math and the precise functions: cpy.metal's quantizers must
// give quant's bytes, rope.metal and sum_rows.metal compute in
// double-float, which reassociation would break, and the rest call no
// function fast math changes. Safe math is the only mode before macOS 15
// (fastMathEnabled there means fast math mode, which assumes no Inf or
// NaN). On a Mac this is unverified: no Mac has run it.
var fastMath = map[string]bool{
	"rms_norm.metal": true,
}

// fastMathNames lists fastMath's files, sorted, for reports.
func fastMathNames() string {
	var names []string
	for f := range fastMath {
		names = append(names, f)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// ---------------------------------------------------------------------
// Kernel sources.

// kernelFS holds the kernel sources: each .metal file is a library, built
// on first use; the .h files are headers the libraries include.
//
//go:embed kernels/*.metal kernels/*.h
var kernelFS embed.FS

// kernelSources returns the kernel files by name.
var kernelSources = sync.OnceValues(func() (map[string][]byte, error) { return gpu.ReadSources(kernelFS, "kernels") })

// program returns kernel file with the headers it may include: those of
// kernels/ and the shared ones (gpu.SharedHeaders).
func program(file string) (main []byte, headers map[string][]byte, err error) {
	return gpu.Sources{Backend: "metal", Main: ".metal", Header: ".h", Files: kernelSources}.Program(file)
}

// inlineIncludes returns src with each `#include "name"` of a header in
// headers replaced by the header's text (itself expanded), each header
// once: newLibraryWithSource compiles one string and has no include path.
// System includes (<metal_stdlib>) stay.
func inlineIncludes(file string, src []byte, headers map[string][]byte) ([]byte, error) {
	done := map[string]bool{}
	var expand func(name string, src []byte, depth int) ([]byte, error)
	expand = func(name string, src []byte, depth int) ([]byte, error) {
		if depth > 16 {
			return nil, fmt.Errorf("metal: includes nested too deep at %s", name)
		}
		var out bytes.Buffer
		for i, line := range bytes.SplitAfter(src, []byte("\n")) {
			t := strings.TrimSpace(string(line))
			if t == "#pragma once" {
				out.WriteString("\n")
				continue
			}
			rest, ok := strings.CutPrefix(t, "#include")
			rest = strings.TrimSpace(rest)
			if !ok || !strings.HasPrefix(rest, `"`) {
				out.Write(line)
				continue
			}
			inc := strings.Trim(rest, `"`)
			h, ok := headers[inc]
			if !ok {
				return nil, fmt.Errorf("metal: %s:%d includes %q, which is not a header of kernels/", name, i+1, inc)
			}
			if !done[inc] {
				done[inc] = true
				x, err := expand(inc, h, depth+1)
				if err != nil {
					return nil, err
				}
				fmt.Fprintf(&out, "#line 1 %q\n", inc)
				out.Write(x)
			}
			fmt.Fprintf(&out, "#line %d %q\n", i+2, name)
		}
		return out.Bytes(), nil
	}
	return expand(file, src, 0)
}
