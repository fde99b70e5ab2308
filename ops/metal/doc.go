// Package metal is the Metal backend: kernels written in the Metal
// Shading Language (kernels/*.metal, embedded), compiled at run time and
// dispatched through Metal's command buffers, with no cgo: on macOS the
// Objective-C runtime and Metal.framework are reached through
// github.com/ebitengine/purego/objc.
//
// It registers as "metal" with two variants. "metal-gpu" (what "metal"
// alone opens) is the Mac's default Metal device: buffers in shared
// storage (read-only weights in a model file's mapping wrapped with
// newBufferWithBytesNoCopy, page by page, as llama.cpp does, in views of
// at most maxBufferLength that each hold whole tensors), one library
// per kernel file compiled by newLibraryWithSource with MSL 3.0 and safe
// math (fast math off; relaxed math with the fast functions on macOS 15
// for the files of fastMath, whose cases pass on metal-emu with the fast
// functions modeled at their worst: unverified on a Mac), a pipeline
// cache by kernel name, and command
// buffers with concurrent-dispatch encoders. "metal-emu" runs
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
// (ops.GraphComputer) encodes a split as ggml-metal does (encode.go): a
// few command buffers, enqueued in order and encoded at once by a
// goroutine each, with concurrent-dispatch compute encoders and a memory
// barrier only before a node that depends on one since the last barrier
// (by the byte ranges it reads and writes); each node is a debug group
// named after it. Per-node GPU times (NodeTimes, ops.DeviceTimer) need a
// command buffer per node, which ComputeGraph uses only after
// SetNodeTiming(true). metal-emu runs the dispatches between two barriers
// in a seeded shuffled order, so a missing barrier shows there.
//
// Each op's kernels are a file of kernels/ and a Go file, both named by
// ggml's op name (op_mul_mat_id.go, kernels/mul_mat_id.metal; the
// element-wise ops share kernels/elementwise.metal), whose init adds the
// op's support check and encoding to the op table (kernelsByOp, a
// gpu.Table). Kernel arguments are a struct in a constant buffer
// (setBytes at index 0) whose bytes the Go side lays out with C's rules
// (gpu.CStruct). What the backend shares with CUDA is package
// ops/internal/gpu (the op table, the element-wise support checks, the
// kernel-source bundle with blocks.h, argument packing, device copies of
// host memory, the status words); this package keeps the device, command
// buffers and encoders. An op without kernels is refused by Supports, so
// a graph scheduler runs it on another backend.
//
// The kernels, for every op and type the CPU backend takes:
//
//   - quants.h: a dequantizer per type (kb_value, kb_deq8), each
//     element's value in package quant's float order, over the type
//     numbers, block sizes and decoding helpers of the shared blocks.h;
//   - dequant.h: whole-block decoders (kb_dq16, kb_row16), 16 contiguous
//     values of a block per call, bit for bit quants.h's values, from
//     device or (the types the tile copies raw) threadgroup memory;
//   - iqgrids.h: the IQ1/IQ2/IQ3 codebooks and sign table, written from
//     package quant's tables (TestIQGridsHeader checks them byte for
//     byte);
//   - mm.h, mv.h, mul_mat.metal, mul_mat_id.metal: MUL_MAT's
//     matrix-vector for up to eight activation columns (mv.h: two or four
//     weight rows per simdgroup by type, each block decoded a piece a lane
//     in registers and read once for all the columns; the legacy types
//     and the K-quants from a raw copy of the simdgroup's rows that it
//     makes in threadgroup memory with 16-byte loads, the float types
//     with 16-byte loads, the formats of issue 26 through kb_dq16,
//     kb_mv_dq; MUL_MAT_ID's, mm.h:
//     four rows per simdgroup, a column at a time), else 64x32 output
//     tiles (four simdgroups of 32x16) of 8x8 simdgroup products, half
//     (float for f32, bf16, q8_1, q8_K) with float accumulators, over
//     weights decoded block-wise (the legacy types and q2_K..q6_K from a
//     raw copy of 256 elements of each row that the threadgroup makes
//     with 16-byte loads, kb_mm_wload) and activations read as vectors
//     into threadgroup memory; MUL_MAT_ID per pair for few tokens, else
//     grouped by expert (a map of each expert's pairs, then tiles);
//   - flash_attn_ext.metal: from 4 queries per head (head sizes a
//     multiple of 8) kb_fa_pre: 8 query rows a simdgroup, up to 4 a
//     threadgroup, 32 keys a step through K/V tiles of half in
//     threadgroup memory (float for f32; q8_0 and q4_0 dequantized into
//     them), Q·K^T and P·V as simdgroup_half8x8 products into float,
//     an online softmax per row (kb_fa_mm, 8x8 float tiles, where its
//     threadgroup memory does not fit: f32 K/V of head size 256); else
//     (decode) kb_fa_vec: the query rows of a
//     K/V head's GQA group together (a simdgroup each), 32 keys a step
//     through K/V tiles in threadgroup memory (half4/float4 loads, a
//     lane per key for q·k, one simd_max and simd_sum per step), the
//     keys split where the KV is long and kb_fa_combine merging the
//     splits with the sink; f32,
//     f16, q8_0 and q4_0 K and V in any pairing, head sizes up to 256,
//     masks, ALiBi, softcap; keys masked for every row are never read;
//   - soft_max.metal, rope.metal (angles in double-float, reduced mod 2*pi
//     before sin and cos: no double on the GPU), rms_norm.metal,
//     sum_rows.metal (double-float sums), get_rows.metal, ssm_conv.metal,
//     ssm_scan.metal, argsort.metal (bitonic ARGSORT, in threadgroup memory or, for long
//     rows, in device memory), cpy.metal, kquants.h and newquants.h (CPY
//     with ggml's reference quantizers, the K formats and MXFP4, IQ4_NL,
//     IQ4_XS, TQ1_0, TQ2_0 included, so the bytes are
//     quant.QuantizeRow's; CONT), elementwise.metal.
//
// What metal-emu cannot show: a real GPU's compiler and precision (it
// models the fast functions of fastMath's files by their specified
// worst error, not reassociation). The other
// kernels assume MSL's precise math (fast math off) gives correctly
// rounded division and square roots and that products are not contracted
// into FMAs where cpy.metal turns contraction off; exp, sin and cos of a
// few ulps are within the tolerances.
package metal
