// Package simt is a SIMT emulator: it runs GPU kernels written in CUDA C++
// or the Metal Shading Language on the CPU, with the semantics of the
// device, so that kernels are validated in CI on machines with no GPU.
// The CUDA and Metal backends (ops/cuda, ops/metal) run their kernel
// sources through it unchanged.
//
// # How a kernel runs
//
// Device.Load builds a Program with the system's g++ into a shared library
// (cached by source hash under the user cache directory, or
// $KERNBENCH_SIMT_CACHE; each entry's files are checked against the sizes
// and hashes recorded when it was built, and a damaged entry is rebuilt)
// and loads it beside the emulator's runtime, a
// second library built from csrc/runtime.cc; both are loaded with purego,
// so every Go package still builds with CGO_ENABLED=0. The build is:
//
//  1. g++ -E with a compatibility header per dialect (csrc/include:
//     kbsimt_cuda.h, kbsimt_metal.h, and <metal_stdlib>, <cuda_fp16.h> and
//     the like that include them);
//  2. the translator rewrites the preprocessed source token by token,
//     keeping every line in place: CUDA's __global__ and __shared__
//     (translate_cuda.go), Metal's kernel functions, [[attributes]],
//     address spaces and half literals (translate_metal.go); it lists
//     each kernel with how its parameters are bound and appends the
//     module's kernel table (translate.go, with what both share);
//  3. g++ compiles and links the result against the runtime.
//
// A launch runs the grid's blocks in parallel on the runtime's worker
// threads (one per CPU). Within a block every thread is a fiber with a
// stack of its own; the worker runs the block's fibers in turn, each
// until it finishes or waits at a barrier or a warp collective, so:
//
//   - __syncthreads and threadgroup_barrier are real barriers;
//   - warp and simdgroup collectives (shuffles, votes, reductions, scans,
//     simdgroup matrix products) exchange values among the 32 lanes:
//     lanes arrive with their data, and the last to arrive computes every
//     lane's result. CUDA *_sync intrinsics take exactly their mask's
//     lanes; Metal's simd_* functions take the active lanes (those that
//     have not exited, or, when lanes wait at different places, the lanes
//     at one place);
//   - __shared__ and threadgroup variables become thread_local: all
//     fibers of a block share the worker's OS thread, so thread-local
//     storage is per block. Dynamic shared memory (extern __shared__,
//     [[threadgroup(i)]] arguments) is a thread-local array of 228 KiB;
//   - atomics are GCC atomic builtins (blocks do run concurrently);
//   - half and bfloat16 round to nearest even; arithmetic between two
//     halves rounds each result to half;
//   - math functions are libm's; a Metal source built with the define
//     KBS_METAL_FAST_MATH gets Metal's fast single-precision functions
//     (exp, exp2, log, log2, sqrt, rsqrt, sin, cos, tanh, pow) modeled at
//     the worst error the Metal Shading Language specification's fast math
//     table allows (the correctly rounded value moved by the whole bound,
//     up or down by a hash of the argument; those the table defines by a
//     formula, such as tanh, are computed by it), and precise:: keeps
//     libm's. Reassociation is not modeled.
//
// Kernels are found by name: a CUDA kernel's extern "C" name, a Metal
// kernel's function name or [[host_name]] (template instantiations such
// as `template [[host_name("k_f16")]] kernel k_t k<half>;` are parsed).
// Inline device assembly (PTX mma, ldmatrix, cp.async) must sit in a
// device function with an emulator implementation under #ifdef
// __KBSIMT__ (kbsimt_cuda.h implements ldmatrix, cp.async with its
// commit and wait groups, mma.sync m16n8k32 s8 and m16n8k8 tf32 and
// cvt.rna.tf32 as __kbsimt_* functions for those branches to call);
// bare asm is refused by the translator, as are other
// unsupported constructs (textures, function constants, templates
// launched by name, extern __shared__ at file scope), each with a message
// naming the construct and its place.
//
// # Checks
//
// In every mode the runtime reports, as a *Fault naming the kernel, the
// block, the threads and the source place:
//
//   - a barrier not reached by every thread of the block (a divergent
//     __syncthreads, or threads that returned before it);
//   - warp collectives used wrongly: a mask naming a lane that has exited
//     or does not exist, a lane calling with a mask that leaves it out;
//   - deadlocks: threads waiting for each other at different barriers or
//     collectives;
//   - device-side assert failures and __trap.
//
// A module built in Checked mode (the default in tests) is compiled with
// GCC's thread-sanitizer instrumentation, with the runtime providing the
// __tsan_* hooks itself (libtsan is never linked): every load and store
// of device code reaches the runtime first. That finds what only a GPU
// sanitizer finds on a device:
//
//   - shared-memory races: two threads touching the same byte between
//     two barriers, at least one writing, where lanes of one warp are
//     ordered by __syncwarp or simdgroup_barrier (compute-sanitizer's
//     racecheck); reported with both threads, both source lines and the
//     __shared__ variable;
//   - global-memory races: two threads of one launch touching the same
//     bytes of a device buffer, at least one writing, that no barrier
//     (or, within a warp, warp fence) orders; blocks that use a fence or
//     a global atomic are exempt across blocks (the checker does not
//     follow those orders), atomics are not tracked, separate launches
//     never race, and a conflicting store is reported only when it
//     changes the bytes (threads storing the same value are benign).
//     compute-sanitizer's racecheck covers shared memory only;
//   - an access to shared memory a cp.async writes before the issuing
//     thread's cp.async.wait_group has let the copy's group go, by any
//     thread, the issuer included (the copy may land at any time until
//     then); after the wait the bytes are the issuer's write, which other
//     threads read after a barrier;
//   - accesses outside a device buffer (each has 4 KiB red zones; the
//     access is stopped before it happens), past a __shared__ or
//     threadgroup array (a red zone follows each), outside the dynamic
//     shared memory or threadgroup regions the launch gave, and through
//     null pointers;
//   - stack overflows and launches that run past their time limit.
//
// # Profiling
//
// Device.StartProfile counts every launch that follows (by Launch or
// through the emulated CUDA driver) until StopProfile returns a
// KernelProfile per launch: what it asks of the memory system, the way an
// NVIDIA GPU serves it. In a checked module every access reaches the
// runtime, and the lanes of a warp run one after another, so the runtime
// files each access under its warp, its static site (the code address of
// the access) and its dynamic instance (the n-th time that lane got
// there): one such group is one warp-level request, as the hardware
// issues it. Groups are complete, and counted, when every lane has passed
// them: at each barrier, at the end of the block, and at a collective all
// the warp's live lanes join. Per launch:
//
//   - global loads, stores and atomics: requests, 32-byte sectors touched
//     (4 a request for 32 lanes reading consecutive floats, 32 for lanes
//     128 bytes apart), bytes asked for, active lanes; atomics' lanes
//     that hit an address another lane of the request hit;
//   - per device buffer, the unique sectors read and written over the
//     launch: a lower bound of its DRAM traffic;
//   - shared memory: requests and wavefronts under 32 banks of 4 bytes
//     (8-byte accesses by half-warps, 16-byte by quarter-warps, lanes of
//     one word a broadcast), and the ideal wavefronts, so that bank
//     conflicts are the difference;
//   - warp efficiency: active lanes per memory request over 32 (the
//     emulator sees memory instructions, not arithmetic);
//   - barriers, collectives and matrix products by shape (Metal's
//     simdgroup products; a CUDA kernel's emulation of mma.sync reports
//     each product with __kbsimt_mma);
//   - geometry: grid, block, dynamic shared memory and the static shared
//     variables the kernel touched.
//
// With ProfileOptions.SampleBlocks, a large launch runs only a
// deterministic sample of its blocks (the grid's corners and blocks spread
// evenly over it), for speed: its output is then not the kernel's, and
// KernelProfile.Extrapolate scales the counters to the grid. Profiling is
// device-wide: every launch while it is on is counted (and sampled).
// The counters are properties of the access pattern, never a time.
//
// Shared memory is filled with 0xff bytes at each block's start in
// Checked mode, so a read of shared memory nobody wrote shows up as NaN
// or -1. Fast mode compiles with -O2 and no instrumentation, for speed.
// Emulated runs validate logic, never speed: their timings are not GPU
// performance.
//
// # Limits
//
// The emulator runs on linux/amd64 and linux/arm64 with GCC (Available
// says why not elsewhere). Blocks have at most 1024 threads and 228 KiB of
// dynamic shared memory; a thread's stack is 128 KiB. A function-scope
// __shared__ or threadgroup array is followed by a 64-byte red zone, so
// an overrun of it is reported with the array's name; an overrun of a
// file-scope shared variable or of several declared together (float
// a[4], b[4]) is not, nor one that jumps past the red zone into the next
// variable. A CUDA *_sync shuffle that reads a lane
// outside its mask gives the reader's own value (the device's result is
// undefined); a Metal simd_* or quad_* shuffle that reads a lane that is
// not active (one that has returned, or that a partial simdgroup lacks)
// is a warp-misuse fault. simdgroup_matrix::thread_elements is refused: the
// lane layout of Apple's simdgroup matrices is not documented, so the
// emulator's (lane l holds elements 2l and 2l+1) must not leak.
package simt
