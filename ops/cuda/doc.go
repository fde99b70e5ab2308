// Package cuda is the CUDA backend: kernels written in CUDA C++
// (kernels/*.cu, embedded), launched through the CUDA driver API, which
// the backend loads at run time with purego (no cgo, no CUDA toolkit at
// build time).
//
// It registers as "cuda" with a variant per GPU ("cuda-0", ...) and
// "cuda-emu". On a GPU the driver is the NVIDIA driver's libcuda.so.1 and
// the kernels are compiled by NVRTC for the device's architecture on
// first use, cached on disk ($KERNBENCH_CUDA_CACHE) by source, options,
// NVRTC version and architecture. On cuda-emu the same host code calls
// the SIMT emulator's library, which exports the same driver functions,
// and the kernels are built by package simt: buffers, launch geometry and
// argument packing are exercised in CI, not only the kernel bodies, and a
// kernel's race, out-of-bounds access or divergent barrier comes back as
// the launch's error with the emulator's account of it (*simt.Fault).
//
// The backend keeps one stream: Compute queues the kernel and returns;
// Synchronize, and reading a buffer, wait. Tensors in host memory are
// copied to the device when a kernel reads them: a read-only host buffer
// (a model file's mapping) once, whole, and kept, so a model's weights go
// to the device once; a writable one for each computation, into device
// memory pooled by size. Uploads pass through pinned staging memory.
// Kernels' intermediate data live in scratch memory kept with the
// backend, and the status words of ops that check their ids are read
// once, at the next synchronization, so a split waits for the device only
// at its end. ComputeGraph captures a split into CUDA graphs, a chunk of
// nodes each, launching each chunk as soon as it is captured (see
// graph.go; $KERNBENCH_CUDA_GRAPHS=off or SetGraphs turns that off,
// "whole" or a chunk size changes the chunks), and times each node with
// CUDA events only after SetNodeTiming(true). With
// $KERNBENCH_CUDA_EMU_EXEC=off cuda-emu runs dry (Backend.DryRun): every
// launch is made, no kernel runs, so the host path can be profiled alone.
//
// Each op's kernels are a file of kernels/ and a Go file, both named by
// ggml's op name (op_mul_mat_id.go, kernels/mul_mat_id.cu; the
// element-wise ops share kernels/elementwise.cu), whose init adds the
// op's support check and launch to the op table (kernelsByOp, a
// gpu.Table). What the backend shares with Metal is package
// ops/internal/gpu: that table, the element-wise support checks, the
// kernel-source bundle with the shared header of type numbers and block
// sizes (blocks.h, which kernels/quants.cuh includes), struct argument
// packing, the bookkeeping of device copies of host memory and the status
// words; this package keeps the driver, the stream, events and modules.
// An op without kernels is refused by Supports, so a graph scheduler can
// run it on another backend.
package cuda
