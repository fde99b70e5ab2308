// kbsimt_abi.h: the contract between the SIMT emulator's runtime
// (runtime.cc, one shared library per process) and the device code of a
// kernel module (the compat headers plus the translated kernel source).
// Plain C types only: the Go package reads some of these structures too.
#ifndef KBSIMT_ABI_H
#define KBSIMT_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KBS_ABI_VERSION 1

// Dialects of a kernel.
enum { KBS_CUDA = 1, KBS_METAL = 2 };

// The lanes of a warp (CUDA) or simdgroup (Metal).
#define KBS_WARP 32
// Largest block (threadgroup) the emulator runs.
#define KBS_MAX_THREADS 1024
// Bytes of dynamic shared (threadgroup) memory a block may ask for:
// the 227 KiB an NVIDIA H100 allows, rounded up to 228 KiB.
#define KBS_DYN_SHARED_MAX (228 * 1024)
// Threadgroup memory indices ([[threadgroup(i)]]) a Metal kernel may use.
#define KBS_MAX_TG 8
// Buffer indices ([[buffer(i)]]) a Metal kernel may use.
#define KBS_MAX_BUFFERS 31
// Each thread runs on a fiber stack of this size, aligned to it; the top
// KBS_FIBER_HDR bytes hold the runtime's record of the thread, which
// starts with its kbs_thread.
#define KBS_STACK_SIZE (128 * 1024)
#define KBS_FIBER_HDR 512

typedef struct kbs_dim3 {
	uint32_t x, y, z;
} kbs_dim3;

// What device code knows of the thread it runs as. It lives at the top of
// the thread's fiber stack, so device code finds it from its own stack
// pointer (stacks are aligned to their size).
typedef struct kbs_thread {
	kbs_dim3 tid;       // thread index in the block
	kbs_dim3 bid;       // block index in the grid
	kbs_dim3 bdim;      // block size
	kbs_dim3 gdim;      // grid size, in blocks
	uint32_t linear;    // tid.x + tid.y*bdim.x + tid.z*bdim.x*bdim.y
	uint32_t lane;      // linear % 32
	uint32_t warp;      // linear / 32
	uint32_t nwarps;    // warps in the block
	uint32_t nthreads;  // threads in the block
	uint32_t magic;     // KBS_THREAD_MAGIC
	const struct kbs_launch_ctx* ctx;
} kbs_thread;

#define KBS_THREAD_MAGIC 0x6b627374u

// The arguments of one launch, as the kernel's entry reads them.
typedef struct kbs_launch_ctx {
	// CUDA: a pointer to each parameter's value, as cuLaunchKernel takes.
	void* const* params;
	// Metal: the address bound at each [[buffer(i)]] index (buffer base
	// plus offset), and each [[threadgroup(i)]] region's address.
	void* buffers[KBS_MAX_BUFFERS];
	void* tg[KBS_MAX_TG];
	uint64_t tg_len[KBS_MAX_TG];
} kbs_launch_ctx;

// Bindings of a Metal kernel's parameters.
enum {
	KBS_BIND_BUFFER = 1,      // [[buffer(i)]]
	KBS_BIND_THREADGROUP = 2, // [[threadgroup(i)]]
	KBS_BIND_BUILTIN = 3      // an index attribute; index is a KBS_BI_*
};

// Metal built-in index attributes.
enum {
	KBS_BI_THREAD_POSITION_IN_GRID = 1,
	KBS_BI_THREAD_POSITION_IN_THREADGROUP,
	KBS_BI_THREADGROUP_POSITION_IN_GRID,
	KBS_BI_THREADS_PER_THREADGROUP,
	KBS_BI_THREADGROUPS_PER_GRID,
	KBS_BI_THREADS_PER_GRID,
	KBS_BI_THREAD_INDEX_IN_THREADGROUP,
	KBS_BI_THREAD_INDEX_IN_SIMDGROUP,
	KBS_BI_SIMDGROUP_INDEX_IN_THREADGROUP,
	KBS_BI_THREADS_PER_SIMDGROUP,
	KBS_BI_SIMDGROUPS_PER_THREADGROUP,
	KBS_BI_THREAD_INDEX_IN_QUADGROUP,
	KBS_BI_QUADGROUP_INDEX_IN_THREADGROUP,
	KBS_BI_THREAD_EXECUTION_WIDTH
};

typedef struct kbs_bind {
	int32_t kind;  // KBS_BIND_*
	int32_t index; // buffer or threadgroup index, or KBS_BI_*
} kbs_bind;

// One kernel of a module: the translator writes a table of these.
typedef struct kbs_kernel_desc {
	const char* name;   // extern "C" name (CUDA) or host name (Metal)
	int32_t dialect;    // KBS_CUDA or KBS_METAL
	int32_t nparams;
	// entry runs the kernel as the calling fiber's thread.
	void (*entry)(const kbs_thread* t);
	const uint32_t* param_sizes;  // CUDA: sizeof of each parameter
	const uint32_t* param_aligns; // CUDA: alignof of each parameter
	const kbs_bind* binds;        // Metal: how each parameter is bound
	const char* file;             // where the kernel is defined
	int32_t line;
	int32_t abi;                  // KBS_ABI_VERSION
} kbs_kernel_desc;

// A collective's completion: data holds each arrived lane's pointer (nil
// for lanes that did not arrive), active the mask of those lanes.
typedef void (*kbs_coll_fn)(void** data, uint32_t active);

// Collective flags.
enum {
	// The lanes are exactly the mask (CUDA *_sync): each must arrive;
	// a lane of the mask that has exited is an error.
	KBS_COLL_MASKED = 1,
	// The lanes are the active ones (Metal simd_*): every lane of the
	// simdgroup that has not exited, or, where lanes wait at different
	// places, those that wait at the same place.
	KBS_COLL_ACTIVE = 2,
	// The collective orders memory between the lanes (__syncwarp,
	// simdgroup_barrier): the race checker treats it as a warp barrier.
	KBS_COLL_FENCE = 4
};

// Kinds of matrix products the profiler counts (kbs_prof_mma).
enum {
	KBS_MMA_M16N8K16_F16,  // mma.sync m16n8k16, f16 inputs
	KBS_MMA_M16N8K16_BF16, // mma.sync m16n8k16, bf16 inputs
	KBS_MMA_M16N8K16_S8,   // mma.sync m16n8k16, s8 inputs
	KBS_MMA_M16N8K32_S8,   // mma.sync m16n8k32, s8 inputs
	KBS_MMA_M16N8K8_TF32,  // mma.sync m16n8k8, tf32 inputs
	KBS_MMA_SG8_F32,       // Metal simdgroup 8x8x8, float inputs
	KBS_MMA_SG8_F16,       // Metal simdgroup 8x8x8, half or bfloat inputs
	KBS_MMA_KINDS = 8
};

// Runtime functions device code calls.
void kbs_collective(const char* what, uint32_t mask, int32_t flags, void* data,
                    kbs_coll_fn fn, const char* file, int32_t line);
// kbs_barrier waits until every thread of the block reaches the same
// barrier; fn, when not nil, runs once over every thread's data before
// they go on (__syncthreads_count and friends).
void kbs_barrier(const char* what, void* data, void (*fn)(void** data, uint32_t n),
                 const char* file, int32_t line);
// kbs_redzone marks n bytes at p, in the block's shared memory, as a red
// zone: an access to them is out of bounds (checked builds).
void kbs_redzone(const void* p, uint64_t n);
// kbs_prof_mma counts one warp-wide matrix product of a kind (KBS_MMA_*)
// for the profiler; any lane may call it, once per product.
void kbs_prof_mma(int32_t kind);
// kbs_coll_misuse reports a misused warp collective (a Metal shuffle that
// reads a lane that does not take part) from its completion; the launch
// stops with a warp-misuse fault naming the collective's place.
void kbs_coll_misuse(const char* why);
// kbs_in_shared reports whether [p, p+n) lies in the calling block's
// shared memory.
int32_t kbs_in_shared(const void* p, uint64_t n);
// cp.async in checked modules: kbs_cp_async writes n bytes of data (the
// source, already read) to dst in shared memory and marks them pending
// until the calling thread's kbs_cp_async_wait lets the copy's group go
// (an access to pending bytes is a race); kbs_cp_async_commit closes the
// thread's open group; kbs_cp_async_wait(keep) completes its committed
// groups but the newest keep.
void kbs_cp_async(void* dst, const void* data, uint32_t n);
void kbs_cp_async_commit(void);
void kbs_cp_async_wait(uint32_t keep);
// kbs_clock64 counts nanoseconds (clock64 in device code).
uint64_t kbs_clock64(void);
// kbs_trap stops the launch with an error naming the place and the reason.
void kbs_trap(const char* why, const char* file, int32_t line) __attribute__((noreturn));
// kbs_misaligned stops the launch with a misaligned-address fault (a GPU's
// CUDA_ERROR_MISALIGNED_ADDRESS): an access of width bytes at addr, which
// is not a multiple of width; what names the access ("cp.async
// destination").
void kbs_misaligned(const void* addr, uint32_t width, const char* what, const char* file, int32_t line)
	__attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#endif
