// driver.cc: the emulated CUDA driver. The emulator's runtime library
// exports the subset of the CUDA driver API that kernbench's CUDA backend
// calls, with the driver's names and C signatures, so the backend's host
// code loads this library in place of libcuda.so.1 and runs unchanged:
// contexts, streams, device memory, copies, modules, launches and events.
//
// The emulated device runs each launch to completion before the call
// returns (a stream is always idle). Device pointers are host addresses of
// emulator buffers, so the bounds checks of checked modules apply. A
// module image is not PTX or a cubin but "KBSIMT-MODULE\0" followed by the
// path of a module the simt package built. A kernel's fault makes the
// launch fail with the error code a GPU would give (an illegal address, an
// assert, a launch failure); kbs_driver_last_fault returns its details.
#include "kbsimt_host.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

// The driver's error codes this emulation returns.
enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_IMAGE = 200,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_ILLEGAL_ADDRESS = 700,
	CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
	CUDA_ERROR_LAUNCH_TIMEOUT = 702,
	CUDA_ERROR_ASSERT = 710,
	CUDA_ERROR_LAUNCH_FAILED = 719,
	CUDA_ERROR_NOT_SUPPORTED = 801,
	CUDA_ERROR_UNKNOWN = 999,
};

// Device attributes the emulation answers (CUdevice_attribute numbers).
enum {
	ATTR_MAX_THREADS_PER_BLOCK = 1,
	ATTR_MAX_BLOCK_DIM_X = 2,
	ATTR_MAX_BLOCK_DIM_Y = 3,
	ATTR_MAX_BLOCK_DIM_Z = 4,
	ATTR_MAX_GRID_DIM_X = 5,
	ATTR_MAX_GRID_DIM_Y = 6,
	ATTR_MAX_GRID_DIM_Z = 7,
	ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
	ATTR_WARP_SIZE = 10,
	ATTR_MULTIPROCESSOR_COUNT = 16,
	ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
	ATTR_COMPUTE_CAPABILITY_MINOR = 76,
	ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

// The capability the emulated device reports: host code takes the code
// paths of an sm_80 (their device functions have emulator versions).
static const int kCCMajor = 8, kCCMinor = 0;

static const char kImageMagic[] = "KBSIMT-MODULE";

struct Function {
	void* mod;
	int index;
	const kbs_kernel_desc* desc;
	int max_dyn_shared;
};

struct Event {
	double t; // seconds, when the event was recorded
	bool recorded;
};

static std::mutex g_mu;
static bool g_init;
static int g_workers;
static int g_ctx_dummy, g_stream_dummy;

// The last fault of a launch or module load, with the module and kernel
// (launches run one at a time; g_mu guards these).
static kbs_result g_fault;
static bool g_has_fault;
static void* g_fault_mod;
static int g_fault_kernel = -1;

static double now_s() {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define CHECK_INIT()                                  \
	do {                                              \
		if (!g_init) return CUDA_ERROR_NOT_INITIALIZED; \
	} while (0)

KBS_API CUresult cuInit(unsigned int flags) {
	if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
	std::lock_guard<std::mutex> lk(g_mu);
	if (!g_init) {
		g_workers = kbs_init(0);
		if (g_workers <= 0) return CUDA_ERROR_UNKNOWN;
		g_init = true;
	}
	return CUDA_SUCCESS;
}

KBS_API CUresult cuDriverGetVersion(int* v) {
	if (!v) return CUDA_ERROR_INVALID_VALUE;
	*v = 12000;
	return CUDA_SUCCESS;
}

KBS_API CUresult cuDeviceGetCount(int* n) {
	CHECK_INIT();
	if (!n) return CUDA_ERROR_INVALID_VALUE;
	*n = 1;
	return CUDA_SUCCESS;
}

KBS_API CUresult cuDeviceGet(CUdevice* d, int ordinal) {
	CHECK_INIT();
	if (!d) return CUDA_ERROR_INVALID_VALUE;
	if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
	*d = 0;
	return CUDA_SUCCESS;
}

KBS_API CUresult cuDeviceGetName(char* name, int len, CUdevice d) {
	CHECK_INIT();
	if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
	if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, len, "kernbench SIMT emulator (%d CPU workers)", g_workers);
	return CUDA_SUCCESS;
}

KBS_API CUresult cuDeviceGetAttribute(int* v, int attr, CUdevice d) {
	CHECK_INIT();
	if (!v) return CUDA_ERROR_INVALID_VALUE;
	if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
	switch (attr) {
	case ATTR_MAX_THREADS_PER_BLOCK: *v = KBS_MAX_THREADS; break;
	case ATTR_MAX_BLOCK_DIM_X:
	case ATTR_MAX_BLOCK_DIM_Y: *v = KBS_MAX_THREADS; break;
	case ATTR_MAX_BLOCK_DIM_Z: *v = 64; break;
	case ATTR_MAX_GRID_DIM_X: *v = 0x7fffffff; break;
	case ATTR_MAX_GRID_DIM_Y:
	case ATTR_MAX_GRID_DIM_Z: *v = 65535; break;
	case ATTR_MAX_SHARED_MEMORY_PER_BLOCK: *v = 48 * 1024; break;
	case ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = KBS_DYN_SHARED_MAX; break;
	case ATTR_WARP_SIZE: *v = KBS_WARP; break;
	case ATTR_MULTIPROCESSOR_COUNT: *v = g_workers; break;
	case ATTR_COMPUTE_CAPABILITY_MAJOR: *v = kCCMajor; break;
	case ATTR_COMPUTE_CAPABILITY_MINOR: *v = kCCMinor; break;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

KBS_API CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice d) {
	CHECK_INIT();
	if (!bytes) return CUDA_ERROR_INVALID_VALUE;
	if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
	*bytes = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
	return CUDA_SUCCESS;
}

KBS_API CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
	CHECK_INIT();
	if (!free_bytes || !total) return CUDA_ERROR_INVALID_VALUE;
	*total = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
	*free_bytes = (size_t)sysconf(_SC_AVPHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
	return CUDA_SUCCESS;
}

KBS_API CUresult cuDevicePrimaryCtxRetain(void** ctx, CUdevice d) {
	CHECK_INIT();
	if (!ctx) return CUDA_ERROR_INVALID_VALUE;
	if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
	*ctx = &g_ctx_dummy;
	return CUDA_SUCCESS;
}

KBS_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
	CHECK_INIT();
	return d == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

KBS_API CUresult cuCtxSetCurrent(void* ctx) {
	CHECK_INIT();
	return ctx == nullptr || ctx == &g_ctx_dummy ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

KBS_API CUresult cuCtxSynchronize() {
	CHECK_INIT();
	return CUDA_SUCCESS;
}

KBS_API CUresult cuStreamCreate(void** s, unsigned int) {
	CHECK_INIT();
	if (!s) return CUDA_ERROR_INVALID_VALUE;
	*s = &g_stream_dummy;
	return CUDA_SUCCESS;
}

KBS_API CUresult cuStreamDestroy_v2(void*) {
	CHECK_INIT();
	return CUDA_SUCCESS;
}

KBS_API CUresult cuStreamSynchronize(void*) {
	CHECK_INIT();
	return CUDA_SUCCESS;
}

KBS_API CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t size) {
	CHECK_INIT();
	if (!p || size == 0) return CUDA_ERROR_INVALID_VALUE;
	void* m = kbs_alloc(size);
	if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
	*p = (CUdeviceptr)(uintptr_t)m;
	return CUDA_SUCCESS;
}

KBS_API CUresult cuMemFree_v2(CUdeviceptr p) {
	CHECK_INIT();
	return kbs_free((void*)(uintptr_t)p) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

KBS_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
	CHECK_INIT();
	memcpy((void*)(uintptr_t)dst, src, n);
	return CUDA_SUCCESS;
}

KBS_API CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
	CHECK_INIT();
	memcpy(dst, (const void*)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

KBS_API CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
	CHECK_INIT();
	memmove((void*)(uintptr_t)dst, (const void*)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

KBS_API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, void*) {
	return cuMemcpyHtoD_v2(dst, src, n);
}

KBS_API CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, void*) {
	return cuMemcpyDtoH_v2(dst, src, n);
}

KBS_API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, void*) {
	return cuMemcpyDtoD_v2(dst, src, n);
}

KBS_API CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, void*) {
	CHECK_INIT();
	memset((void*)(uintptr_t)dst, v, n);
	return CUDA_SUCCESS;
}

KBS_API CUresult cuModuleLoadData(void** mod, const void* image) {
	CHECK_INIT();
	if (!mod || !image) return CUDA_ERROR_INVALID_VALUE;
	const char* img = (const char*)image;
	if (memcmp(img, kImageMagic, sizeof kImageMagic) != 0) return CUDA_ERROR_INVALID_IMAGE;
	const char* path = img + sizeof kImageMagic;
	char err[1024];
	void* m = kbs_module_load(path, err, sizeof err);
	if (!m) {
		std::lock_guard<std::mutex> lk(g_mu);
		memset(&g_fault, 0, sizeof g_fault);
		g_fault.code = KBS_E_ARG;
		snprintf(g_fault.msg, sizeof g_fault.msg, "%s", err);
		g_has_fault = true;
		g_fault_mod = nullptr;
		g_fault_kernel = -1;
		return CUDA_ERROR_INVALID_IMAGE;
	}
	*mod = m;
	return CUDA_SUCCESS;
}

KBS_API CUresult cuModuleUnload(void*) {
	CHECK_INIT();
	return CUDA_SUCCESS; // modules stay loaded for the process
}

KBS_API CUresult cuModuleGetFunction(void** fn, void* mod, const char* name) {
	CHECK_INIT();
	if (!fn || !mod || !name) return CUDA_ERROR_INVALID_VALUE;
	int n = kbs_module_nkernels(mod);
	for (int i = 0; i < n; i++) {
		const kbs_kernel_desc* d = kbs_module_kernel(mod, i);
		if (d->dialect == KBS_CUDA && strcmp(d->name, name) == 0) {
			*fn = new Function{mod, i, d, 48 * 1024};
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_NOT_FOUND;
}

// CUfunction_attribute CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
static const int kFuncAttrMaxDynamicShared = 8;

KBS_API CUresult cuFuncSetAttribute(void* fn, int attr, int value) {
	CHECK_INIT();
	if (!fn) return CUDA_ERROR_INVALID_HANDLE;
	if (attr != kFuncAttrMaxDynamicShared) return CUDA_ERROR_NOT_SUPPORTED;
	if (value < 0 || value > KBS_DYN_SHARED_MAX) return CUDA_ERROR_INVALID_VALUE;
	((Function*)fn)->max_dyn_shared = value;
	return CUDA_SUCCESS;
}

// The driver's error for each kind of fault.
static CUresult fault_code(int code) {
	switch (code) {
	case KBS_E_ARG: return CUDA_ERROR_INVALID_VALUE;
	case KBS_E_OOB:
	case KBS_E_NULL: return CUDA_ERROR_ILLEGAL_ADDRESS;
	case KBS_E_TRAP: return CUDA_ERROR_ASSERT;
	case KBS_E_TIMEOUT: return CUDA_ERROR_LAUNCH_TIMEOUT;
	default: return CUDA_ERROR_LAUNCH_FAILED;
	}
}

KBS_API CUresult cuLaunchKernel(void* fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                unsigned shared, void*, void** params, void** extra) {
	CHECK_INIT();
	if (!fn) return CUDA_ERROR_INVALID_HANDLE;
	Function* f = (Function*)fn;
	if (extra) return CUDA_ERROR_NOT_SUPPORTED; // kernelParams only
	if ((int)shared > f->max_dyn_shared) return CUDA_ERROR_INVALID_VALUE;
	const kbs_kernel_desc* d = f->desc;
	if (d->nparams > 0 && !params) return CUDA_ERROR_INVALID_VALUE;
	// Pack the parameters as the kernel lays them out.
	std::vector<uint8_t> blob;
	std::vector<uint32_t> offs(d->nparams);
	for (int i = 0; i < d->nparams; i++) {
		uint32_t a = d->param_aligns[i] ? d->param_aligns[i] : 1;
		while (blob.size() % a) blob.push_back(0);
		offs[i] = (uint32_t)blob.size();
		const uint8_t* p = (const uint8_t*)params[i];
		blob.insert(blob.end(), p, p + d->param_sizes[i]);
	}
	kbs_launch_desc ld;
	memset(&ld, 0, sizeof ld);
	ld.grid = kbs_dim3{gx, gy, gz};
	ld.block = kbs_dim3{bx, by, bz};
	ld.dyn_shared = shared;
	ld.arg_blob = blob.data();
	ld.arg_offsets = offs.data();
	ld.nparams = d->nparams;
	ld.checks = kbs_module_checks(f->mod);
	ld.timeout_s = ld.checks ? 60 : 0;
	kbs_result r;
	int code = kbs_launch(f->mod, f->index, &ld, &r);
	if (code != KBS_OK) {
		std::lock_guard<std::mutex> lk(g_mu);
		g_fault = r;
		g_has_fault = true;
		g_fault_mod = f->mod;
		g_fault_kernel = f->index;
		return fault_code(code);
	}
	return CUDA_SUCCESS;
}

KBS_API CUresult cuEventCreate(void** ev, unsigned int) {
	CHECK_INIT();
	if (!ev) return CUDA_ERROR_INVALID_VALUE;
	*ev = new Event{0, false};
	return CUDA_SUCCESS;
}

KBS_API CUresult cuEventDestroy_v2(void* ev) {
	CHECK_INIT();
	delete (Event*)ev;
	return CUDA_SUCCESS;
}

KBS_API CUresult cuEventRecord(void* ev, void*) {
	CHECK_INIT();
	if (!ev) return CUDA_ERROR_INVALID_HANDLE;
	((Event*)ev)->t = now_s();
	((Event*)ev)->recorded = true;
	return CUDA_SUCCESS;
}

KBS_API CUresult cuEventSynchronize(void* ev) {
	CHECK_INIT();
	return ev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

KBS_API CUresult cuEventElapsedTime(float* ms, void* start, void* end) {
	CHECK_INIT();
	if (!ms || !start || !end) return CUDA_ERROR_INVALID_VALUE;
	Event* a = (Event*)start;
	Event* b = (Event*)end;
	if (!a->recorded || !b->recorded) return CUDA_ERROR_INVALID_HANDLE;
	*ms = (float)((b->t - a->t) * 1e3);
	return CUDA_SUCCESS;
}

KBS_API CUresult cuGetErrorName(CUresult e, const char** s) {
	if (!s) return CUDA_ERROR_INVALID_VALUE;
	switch (e) {
	case CUDA_SUCCESS: *s = "CUDA_SUCCESS"; break;
	case CUDA_ERROR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
	case CUDA_ERROR_OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; break;
	case CUDA_ERROR_NOT_INITIALIZED: *s = "CUDA_ERROR_NOT_INITIALIZED"; break;
	case CUDA_ERROR_NO_DEVICE: *s = "CUDA_ERROR_NO_DEVICE"; break;
	case CUDA_ERROR_INVALID_DEVICE: *s = "CUDA_ERROR_INVALID_DEVICE"; break;
	case CUDA_ERROR_INVALID_IMAGE: *s = "CUDA_ERROR_INVALID_IMAGE"; break;
	case CUDA_ERROR_INVALID_CONTEXT: *s = "CUDA_ERROR_INVALID_CONTEXT"; break;
	case CUDA_ERROR_INVALID_HANDLE: *s = "CUDA_ERROR_INVALID_HANDLE"; break;
	case CUDA_ERROR_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; break;
	case CUDA_ERROR_ILLEGAL_ADDRESS: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
	case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: *s = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"; break;
	case CUDA_ERROR_LAUNCH_TIMEOUT: *s = "CUDA_ERROR_LAUNCH_TIMEOUT"; break;
	case CUDA_ERROR_ASSERT: *s = "CUDA_ERROR_ASSERT"; break;
	case CUDA_ERROR_LAUNCH_FAILED: *s = "CUDA_ERROR_LAUNCH_FAILED"; break;
	case CUDA_ERROR_NOT_SUPPORTED: *s = "CUDA_ERROR_NOT_SUPPORTED"; break;
	default: *s = "CUDA_ERROR_UNKNOWN"; return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

KBS_API CUresult cuGetErrorString(CUresult e, const char** s) {
	if (!s) return CUDA_ERROR_INVALID_VALUE;
	switch (e) {
	case CUDA_SUCCESS: *s = "no error"; break;
	case CUDA_ERROR_INVALID_VALUE: *s = "invalid argument"; break;
	case CUDA_ERROR_OUT_OF_MEMORY: *s = "out of memory"; break;
	case CUDA_ERROR_NOT_INITIALIZED: *s = "initialization error"; break;
	case CUDA_ERROR_NO_DEVICE: *s = "no CUDA-capable device is detected"; break;
	case CUDA_ERROR_INVALID_DEVICE: *s = "invalid device ordinal"; break;
	case CUDA_ERROR_INVALID_IMAGE: *s = "device kernel image is invalid"; break;
	case CUDA_ERROR_INVALID_CONTEXT: *s = "invalid device context"; break;
	case CUDA_ERROR_INVALID_HANDLE: *s = "invalid resource handle"; break;
	case CUDA_ERROR_NOT_FOUND: *s = "named symbol not found"; break;
	case CUDA_ERROR_ILLEGAL_ADDRESS: *s = "an illegal memory access was encountered"; break;
	case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: *s = "too many resources requested for launch"; break;
	case CUDA_ERROR_LAUNCH_TIMEOUT: *s = "the launch timed out and was terminated"; break;
	case CUDA_ERROR_ASSERT: *s = "device-side assert triggered"; break;
	case CUDA_ERROR_LAUNCH_FAILED: *s = "unspecified launch failure"; break;
	case CUDA_ERROR_NOT_SUPPORTED: *s = "operation not supported"; break;
	default: *s = "unknown error"; return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

// kbs_driver_last_fault copies the details of the last failed launch (or
// module load) into out, with its module and kernel index (nil and -1 for
// a module load), and returns 1; it returns 0 when there is none. It
// clears the record.
KBS_API int kbs_driver_last_fault(kbs_result* out, void** mod, int* kernel) {
	std::lock_guard<std::mutex> lk(g_mu);
	if (!g_has_fault) return 0;
	*out = g_fault;
	*mod = g_fault_mod;
	*kernel = g_fault_kernel;
	g_has_fault = false;
	return 1;
}
