// kbsimt_host.h: the emulator runtime's host-side interface: what the Go
// package (simt/runtime.go mirrors these structures) and the emulated CUDA
// driver (driver.cc) call. Device code does not include it.
#ifndef KBSIMT_HOST_H
#define KBSIMT_HOST_H

#include "kbsimt_abi.h"

#define KBS_API extern "C" __attribute__((visibility("default")))

enum {
	KBS_OK = 0,
	KBS_E_ARG = 1,       // bad launch arguments
	KBS_E_OOB = 2,       // access outside a device buffer or shared memory
	KBS_E_RACE = 3,      // shared-memory race (the launch completed)
	KBS_E_BARRIER = 4,   // a barrier not reached by every thread
	KBS_E_WARP = 5,      // a warp collective used wrongly
	KBS_E_DEADLOCK = 6,  // threads wait for each other forever
	KBS_E_TRAP = 7,      // device code stopped the launch (assert, __trap)
	KBS_E_TIMEOUT = 8,   // the launch ran past its time limit
	KBS_E_STACK = 9,     // a thread overflowed its stack
	KBS_E_NULL = 10,     // a null pointer access
	KBS_E_MISALIGNED = 11, // an access at an address not a multiple of its alignment
};

// Check flags of a launch.
enum {
	KBS_CHECK_MEMORY = 1, // the module is instrumented: races and bounds
	KBS_CHECK_POISON = 2, // fill shared memory with 0xff at block start
};

struct kbs_result {
	int32_t code;
	int32_t write[2];     // the accesses: 1 for a write
	char msg[2048];
	uint64_t pc[2];       // code addresses of the accesses (race, bounds)
	uint64_t addr;        // the faulting address
	uint64_t size;        // bytes accessed
	uint64_t buf_base;    // the buffer it belongs to (bounds)
	uint64_t buf_size;
	int64_t smem_offset;  // offset in the module's shared memory (race, bounds)
	int64_t aux;          // the red zone's offset, for an overrun of a shared array
	kbs_dim3 block;       // the block of the fault
	kbs_dim3 thread[2];   // the threads involved
	uint64_t races;       // racing accesses seen
	uint64_t blocks;      // blocks run
	uint64_t switches;    // fiber switches
	uint64_t barriers;    // barriers released
	uint64_t collectives; // warp collectives completed
	uint64_t accesses;    // memory accesses checked
};

struct kbs_launch_desc {
	kbs_dim3 grid, block;
	uint64_t dyn_shared;          // CUDA: dynamic shared memory bytes
	const uint8_t* arg_blob;      // CUDA: parameter values, packed
	const uint32_t* arg_offsets;  // CUDA: each parameter's offset in the blob
	int32_t nparams;
	int32_t checks;               // KBS_CHECK_*
	void* buffers[KBS_MAX_BUFFERS];
	uint64_t tg_len[KBS_MAX_TG];  // Metal: threadgroup memory lengths
	int32_t workers;              // 0: all
	int32_t pad;
	double timeout_s;             // <= 0: none
};


// Profile counters of a launch (kbs_prof.c), each summed over the blocks
// the launch ran. A request is one warp-level memory instruction: the
// accesses of the lanes of one warp at one static site (the code address
// of the access) and one dynamic instance (the n-th time each lane got
// there), as the hardware issues them.
enum {
	KBS_PC_BLOCKS,       // blocks of the grid
	KBS_PC_BLOCKS_RUN,   // blocks run (and counted)
	KBS_PC_INSTRUMENTED, // 1: the module is instrumented, memory counters are valid
	KBS_PC_WARPS,        // warps run
	KBS_PC_GLD_REQ,      // global loads: requests
	KBS_PC_GLD_SECTORS,  // 32-byte sectors they touch
	KBS_PC_GLD_BYTES,    // bytes the lanes asked for
	KBS_PC_GLD_LANES,    // active lanes, summed over requests
	KBS_PC_GST_REQ,      // global stores, the same four
	KBS_PC_GST_SECTORS,
	KBS_PC_GST_BYTES,
	KBS_PC_GST_LANES,
	KBS_PC_ATOM_REQ,     // global atomics
	KBS_PC_ATOM_SECTORS,
	KBS_PC_ATOM_LANES,
	KBS_PC_ATOM_SAME,    // lanes that hit an address another lane of the request hit first
	KBS_PC_SLD_REQ,      // shared loads: requests
	KBS_PC_SLD_WAVES,    // wavefronts under 32 banks of 4 bytes
	KBS_PC_SLD_IDEAL,    // wavefronts without bank conflicts
	KBS_PC_SLD_LANES,
	KBS_PC_SST_REQ,      // shared stores, the same four
	KBS_PC_SST_WAVES,
	KBS_PC_SST_IDEAL,
	KBS_PC_SST_LANES,
	KBS_PC_SATOM_REQ,    // shared atomics
	KBS_PC_SATOM_LANES,
	KBS_PC_BARRIERS,     // block barriers released
	KBS_PC_COLLECTIVES,  // warp collectives completed
	KBS_PC_MMA,          // KBS_MMA_KINDS counters: matrix products by kind (KBS_MMA_*)
	KBS_PC_N = KBS_PC_MMA + KBS_MMA_KINDS
};

// One profiled launch.
typedef struct kbs_prof {
	const char* kernel;
	void* module;
	kbs_dim3 grid, block;
	uint32_t pad;
	uint64_t dyn_shared;
	uint64_t nbufs;     // buffers touched (kbs_profile_buffers)
	uint64_t nstatic;   // 16-byte chunks of static shared memory touched (kbs_profile_static)
	uint64_t c[KBS_PC_N];
} kbs_prof;

// The traffic of one launch to one device buffer: unique 32-byte sectors
// read and written.
typedef struct kbs_prof_buf {
	uint64_t base, size, read_sectors, write_sectors;
} kbs_prof_buf;

KBS_API int kbs_init(int workers);
KBS_API void* kbs_alloc(uint64_t size);
KBS_API int kbs_free(void* ptr);
KBS_API void* kbs_module_load(const char* path, char* err, int errlen);
KBS_API int kbs_module_nkernels(void* mod);
KBS_API const kbs_kernel_desc* kbs_module_kernel(void* mod, int i);
KBS_API int kbs_module_checks(void* mod);
KBS_API int kbs_launch(void* mod, int k, const kbs_launch_desc* d, kbs_result* res);

#endif
