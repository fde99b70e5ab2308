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


KBS_API int kbs_init(int workers);
KBS_API void* kbs_alloc(uint64_t size);
KBS_API int kbs_free(void* ptr);
KBS_API void* kbs_module_load(const char* path, char* err, int errlen);
KBS_API int kbs_module_nkernels(void* mod);
KBS_API const kbs_kernel_desc* kbs_module_kernel(void* mod, int i);
KBS_API int kbs_module_checks(void* mod);
KBS_API int kbs_launch(void* mod, int k, const kbs_launch_desc* d, kbs_result* res);

#endif
