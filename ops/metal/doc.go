// Package metal is the Metal backend: kernels written in the Metal
// Shading Language (kernels/*.metal, embedded), compiled at run time and
// dispatched through Metal's command buffers, with no cgo: on macOS the
// Objective-C runtime and Metal.framework are reached through
// github.com/ebitengine/purego/objc.
//
// It registers as "metal" with two variants. "metal-gpu" (what "metal"
// alone opens) is the Mac's default Metal device: buffers in shared
// storage (read-only weights in a model file's mapping wrapped with
// newBufferWithBytesNoCopy, page by page, as llama.cpp does), one library
// per kernel file compiled by newLibraryWithSource with MSL 3.0 and safe
// math (fast math off), a pipeline cache by kernel name, and command
// buffers whose GPU start and end times time each node. "metal-emu" runs
// the same host code against the SIMT emulator (package simt): buffers are
// the emulator's device memory, a library is the module it builds from the
// same .metal file, a dispatch is a Kernel.Launch with the same buffer
// bindings, threadgroup memory lengths and geometry, and a kernel's race,
// out-of-bounds access or divergent barrier is the command buffer's error
// (a *simt.Fault). metal-emu is never the default, and its times are the
// emulator's, not a GPU's (Backend.Emulated).
//
// The host code is one Backend over an internal device interface
// (device.go): device_darwin.go implements it with Metal, device_emu.go
// with the emulator. Compute encodes a node into a command buffer and
// commits it; Synchronize, and reading a buffer, wait. ComputeGraph
// (ops.GraphComputer) commits one command buffer per node, each with a
// debug group named after the node, so NodeTimes (ops.DeviceTimer) gives
// each node's GPU time.
//
// Each op's kernels are a file of kernels/ and a Go file (op_*.go) that
// registers the op's support check and encoding. Kernel arguments are a
// struct in a constant buffer (setBytes at index 0) whose bytes the Go
// side lays out with C's rules (args.go). An op without kernels is
// refused by Supports, so a graph scheduler runs it on another backend.
package metal
