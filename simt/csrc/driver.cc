// driver.cc: the emulated CUDA driver. The emulator's runtime library
// exports the subset of the CUDA driver API that kernbench's CUDA backend
// calls, with the driver's names and C signatures, so the backend's host
// code loads this library in place of libcuda.so.1 and runs unchanged:
// contexts, streams, device memory, pinned host memory, copies, modules,
// launches, events, and CUDA graphs made by stream capture.
//
// The emulated device runs each launch to completion before the call
// returns (a stream is always idle). A stream being captured runs nothing:
// its launches, memsets and copies become the nodes of a graph, which
// cuGraphLaunch replays in order. Capture refuses what a GPU's refuses
// (waiting for the capturing stream, synchronous copies, allocation outside
// relaxed mode, copies between the device and pageable host memory), and
// also an event recorded on the capturing stream, which the backend never
// needs. Device pointers are host addresses of
// emulator buffers, so the bounds checks of checked modules apply. A
// module image is not PTX or a cubin but "KBSIMT-MODULE\0" followed by the
// path of a module the simt package built. A kernel's fault makes the
// launch fail with the error code a GPU would give (an illegal address, a
// misaligned address, an assert, a launch failure); kbs_driver_last_fault
// returns its details. An illegal or misaligned address is sticky, as on a
// GPU: every later call on the context fails with the same error until
// the primary context's last retain is released (the context destroyed),
// which frees the device memory left in it; the next retain makes a new
// context.
//
// kbs_driver_set_exec(0) turns kernel execution off: launches and graph
// replays still check and pack their parameters (the host's work of a
// launch) but run no kernel, so that a program's host path can be
// profiled alone. Its results are then garbage.
#include "kbsimt_host.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <set>
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
	CUDA_ERROR_ILLEGAL_STATE = 401,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_ILLEGAL_ADDRESS = 700,
	CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
	CUDA_ERROR_LAUNCH_TIMEOUT = 702,
	CUDA_ERROR_ASSERT = 710,
	CUDA_ERROR_MISALIGNED_ADDRESS = 716,
	CUDA_ERROR_LAUNCH_FAILED = 719,
	CUDA_ERROR_NOT_SUPPORTED = 801,
	CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
	CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
	CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910,
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

// A Node is one captured stream operation: a kernel launch with its
// packed parameters, a memset, or a copy.
enum NodeKind { NODE_KERNEL, NODE_MEMSET, NODE_MEMCPY };

struct Node {
	NodeKind kind;
	Function* f;
	kbs_dim3 grid, block;
	unsigned shared;
	std::vector<uint8_t> blob;
	std::vector<uint32_t> offs;
	void* dst;
	const void* src;
	size_t n;
	unsigned char v;
};

// A Graph is the nodes of one capture, in stream order; a GraphExec is an
// instantiated copy of them.
struct Graph {
	std::vector<Node> nodes;
};
struct GraphExec {
	std::vector<Node> nodes;
};

// CUstreamCaptureMode.
enum { CAPTURE_GLOBAL = 0, CAPTURE_THREAD_LOCAL = 1, CAPTURE_RELAXED = 2 };

// A Stream is idle, or capturing into a graph. invalidated says a call
// the capture refuses happened: cuStreamEndCapture then fails.
struct Stream {
	Graph* capture;
	int mode;
	bool invalidated;
};

static std::mutex g_mu;
static bool g_init;
static int g_workers;
static int g_ctx_dummy;
// The primary context's retains (cuDevicePrimaryCtxRetain less
// cuDevicePrimaryCtxRelease_v2): when they fall to zero the context is
// destroyed, and the next retain makes a new one.
static int g_ctx_refs;
// g_sticky is the context's sticky error: a kernel's illegal or
// misaligned address leaves a GPU's context unusable, every later call
// on it failing with that error until it is destroyed. g_sticky_fault is
// that launch's fault (kbs_driver_last_fault keeps returning it), and
// g_ctx_allocs the device memory allocated in the context, which its
// destruction after such a fault frees (the backend's own frees fail).
static std::atomic<int> g_sticky{0};
static kbs_result g_sticky_fault;
static void* g_sticky_mod;
static int g_sticky_kernel = -1;
static std::set<uintptr_t> g_ctx_allocs;
// The NULL stream's state.
static Stream g_null_stream;
// Streams being captured (the backend captures one at a time), and the
// mode of the last capture begun.
static std::vector<Stream*> g_captures;
static int g_capture_mode = CAPTURE_RELAXED;

// Pinned host memory (cuMemHostAlloc): start address -> size.
static std::map<uintptr_t, size_t> g_pinned;

// The last fault of a launch or module load, with the module and kernel
// (launches run one at a time; g_mu guards these).
static kbs_result g_fault;
static bool g_has_fault;
static void* g_fault_mod;
static int g_fault_kernel = -1;
// The node of the last failed cuGraphLaunch whose replay failed, or -1.
static int g_fault_graph_node = -1;

// Whether kernel nodes run (kbs_driver_set_exec).
static std::atomic<bool> g_exec{true};

static Stream* stream_of(void* s) { return s ? (Stream*)s : &g_null_stream; }

// refuse_in_capture marks stream s's capture invalid (every capture's, for
// a call on no stream) and returns the error of a call that a capture does
// not allow.
static CUresult refuse_in_capture(Stream* s) {
	if (s) {
		s->invalidated = true;
	} else {
		for (Stream* c : g_captures) c->invalidated = true;
	}
	return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

// unsafe_in_capture reports whether a call that is not a stream operation
// but is unsafe while a capture is under way (allocation) must be refused:
// a capture in relaxed mode allows it.
static bool unsafe_in_capture() { return !g_captures.empty() && g_capture_mode != CAPTURE_RELAXED; }

// pinned reports whether the n bytes at p lie in pinned host memory.
static bool pinned(const void* p, size_t n) {
	std::lock_guard<std::mutex> lk(g_mu);
	uintptr_t a = (uintptr_t)p;
	auto it = g_pinned.upper_bound(a);
	if (it == g_pinned.begin()) return false;
	--it;
	return a >= it->first && a + n <= it->first + it->second;
}

static double now_s() {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define CHECK_INIT()                                  \
	do {                                              \
		if (!g_init) return CUDA_ERROR_NOT_INITIALIZED; \
	} while (0)

// CHECK_CTX is CHECK_INIT for a call on the context: after a sticky
// fault it fails with the fault's error, as a GPU's driver does.
#define CHECK_CTX()                                        \
	do {                                                   \
		CHECK_INIT();                                      \
		if (int e_ = g_sticky.load(std::memory_order_relaxed)) return e_; \
	} while (0)

// destroy_ctx forgets the primary context's sticky error, freeing the
// device memory left allocated in it when it had one. g_mu is held.
static void destroy_ctx() {
	if (g_sticky.load() != 0) {
		for (uintptr_t a : g_ctx_allocs) kbs_free((void*)a);
		g_ctx_allocs.clear();
	}
	g_sticky.store(0);
	g_sticky_kernel = -1;
	g_sticky_mod = nullptr;
}

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
	std::lock_guard<std::mutex> lk(g_mu);
	if (g_ctx_refs++ == 0) destroy_ctx(); // a new context: what was used without one is forgotten
	*ctx = &g_ctx_dummy;
	return CUDA_SUCCESS;
}

KBS_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
	CHECK_INIT();
	if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
	std::lock_guard<std::mutex> lk(g_mu);
	if (g_ctx_refs <= 0) return CUDA_ERROR_INVALID_CONTEXT;
	if (--g_ctx_refs == 0) destroy_ctx();
	return CUDA_SUCCESS;
}

KBS_API CUresult cuCtxSetCurrent(void* ctx) {
	CHECK_INIT();
	return ctx == nullptr || ctx == &g_ctx_dummy ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

KBS_API CUresult cuCtxSynchronize() {
	CHECK_CTX();
	if (!g_captures.empty()) return refuse_in_capture(nullptr);
	return CUDA_SUCCESS;
}

KBS_API CUresult cuStreamCreate(void** s, unsigned int) {
	CHECK_CTX();
	if (!s) return CUDA_ERROR_INVALID_VALUE;
	*s = new Stream{nullptr, 0, false};
	return CUDA_SUCCESS;
}

KBS_API CUresult cuStreamDestroy_v2(void* s) {
	CHECK_INIT();
	if (!s) return CUDA_ERROR_INVALID_HANDLE;
	Stream* st = (Stream*)s;
	if (st->capture) return CUDA_ERROR_ILLEGAL_STATE;
	delete st;
	return CUDA_SUCCESS;
}

KBS_API CUresult cuStreamSynchronize(void* s) {
	CHECK_CTX();
	Stream* st = stream_of(s);
	if (st->capture) return refuse_in_capture(st);
	return CUDA_SUCCESS;
}

// cuStreamBeginCapture_v2 starts capturing stream s's work into a graph.
KBS_API CUresult cuStreamBeginCapture_v2(void* s, int mode) {
	CHECK_CTX();
	if (!s) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; // the legacy NULL stream cannot be captured
	if (mode < CAPTURE_GLOBAL || mode > CAPTURE_RELAXED) return CUDA_ERROR_INVALID_VALUE;
	Stream* st = (Stream*)s;
	if (st->capture) return CUDA_ERROR_ILLEGAL_STATE;
	st->capture = new Graph;
	st->mode = mode;
	st->invalidated = false;
	g_captures.push_back(st);
	g_capture_mode = mode;
	return CUDA_SUCCESS;
}

// cuStreamEndCapture ends stream s's capture and returns its graph, or
// fails (and returns none) when a call during it was refused.
KBS_API CUresult cuStreamEndCapture(void* s, void** graph) {
	CHECK_INIT();
	if (!graph) return CUDA_ERROR_INVALID_VALUE;
	Stream* st = stream_of(s);
	if (!st->capture) return CUDA_ERROR_ILLEGAL_STATE;
	Graph* g = st->capture;
	st->capture = nullptr;
	for (size_t i = 0; i < g_captures.size(); i++) {
		if (g_captures[i] == st) {
			g_captures.erase(g_captures.begin() + i);
			break;
		}
	}
	*graph = nullptr;
	if (st->invalidated) {
		delete g;
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	}
	*graph = g;
	return CUDA_SUCCESS;
}

KBS_API CUresult cuStreamIsCapturing(void* s, int* status) {
	CHECK_INIT();
	if (!status) return CUDA_ERROR_INVALID_VALUE;
	Stream* st = stream_of(s);
	*status = st->capture ? (st->invalidated ? 2 : 1) : 0;
	return CUDA_SUCCESS;
}

KBS_API CUresult cuMemHostAlloc(void** pp, size_t size, unsigned int) {
	CHECK_INIT();
	if (!pp || size == 0) return CUDA_ERROR_INVALID_VALUE;
	if (unsafe_in_capture()) return refuse_in_capture(nullptr);
	void* m = nullptr;
	if (posix_memalign(&m, 4096, size) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
	std::lock_guard<std::mutex> lk(g_mu);
	g_pinned[(uintptr_t)m] = size;
	*pp = m;
	return CUDA_SUCCESS;
}

KBS_API CUresult cuMemFreeHost(void* p) {
	CHECK_INIT();
	if (unsafe_in_capture()) return refuse_in_capture(nullptr);
	std::lock_guard<std::mutex> lk(g_mu);
	auto it = g_pinned.find((uintptr_t)p);
	if (it == g_pinned.end()) return CUDA_ERROR_INVALID_VALUE;
	g_pinned.erase(it);
	free(p);
	return CUDA_SUCCESS;
}

KBS_API CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t size) {
	CHECK_CTX();
	if (!p || size == 0) return CUDA_ERROR_INVALID_VALUE;
	if (unsafe_in_capture()) return refuse_in_capture(nullptr);
	void* m = kbs_alloc(size);
	if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
	{
		std::lock_guard<std::mutex> lk(g_mu);
		g_ctx_allocs.insert((uintptr_t)m);
	}
	*p = (CUdeviceptr)(uintptr_t)m;
	return CUDA_SUCCESS;
}

KBS_API CUresult cuMemFree_v2(CUdeviceptr p) {
	CHECK_CTX();
	if (unsafe_in_capture()) return refuse_in_capture(nullptr);
	{
		std::lock_guard<std::mutex> lk(g_mu);
		g_ctx_allocs.erase((uintptr_t)p);
	}
	return kbs_free((void*)(uintptr_t)p) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

KBS_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
	CHECK_CTX();
	if (!g_captures.empty()) return refuse_in_capture(nullptr);
	memcpy((void*)(uintptr_t)dst, src, n);
	return CUDA_SUCCESS;
}

KBS_API CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
	CHECK_CTX();
	if (!g_captures.empty()) return refuse_in_capture(nullptr);
	memcpy(dst, (const void*)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

KBS_API CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
	CHECK_CTX();
	if (!g_captures.empty()) return refuse_in_capture(nullptr);
	memmove((void*)(uintptr_t)dst, (const void*)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

// capture_copy adds a copy to stream st's capture. A copy between the
// device and host memory must use pinned host memory, as on a GPU.
static CUresult capture_copy(Stream* st, void* dst, const void* src, size_t n, const void* host) {
	if (host && !pinned(host, n)) return refuse_in_capture(st);
	Node nd{};
	nd.kind = NODE_MEMCPY;
	nd.dst = dst;
	nd.src = src;
	nd.n = n;
	st->capture->nodes.push_back(std::move(nd));
	return CUDA_SUCCESS;
}

KBS_API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, void* s) {
	CHECK_CTX();
	Stream* st = stream_of(s);
	if (st->capture) return capture_copy(st, (void*)(uintptr_t)dst, src, n, src);
	memcpy((void*)(uintptr_t)dst, src, n);
	return CUDA_SUCCESS;
}

KBS_API CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, void* s) {
	CHECK_CTX();
	Stream* st = stream_of(s);
	if (st->capture) return capture_copy(st, dst, (const void*)(uintptr_t)src, n, dst);
	memcpy(dst, (const void*)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

KBS_API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, void* s) {
	CHECK_CTX();
	Stream* st = stream_of(s);
	if (st->capture) return capture_copy(st, (void*)(uintptr_t)dst, (const void*)(uintptr_t)src, n, nullptr);
	memmove((void*)(uintptr_t)dst, (const void*)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

KBS_API CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, void* s) {
	CHECK_CTX();
	Stream* st = stream_of(s);
	if (st->capture) {
		Node nd{};
		nd.kind = NODE_MEMSET;
		nd.dst = (void*)(uintptr_t)dst;
		nd.n = n;
		nd.v = v;
		st->capture->nodes.push_back(std::move(nd));
		return CUDA_SUCCESS;
	}
	memset((void*)(uintptr_t)dst, v, n);
	return CUDA_SUCCESS;
}

KBS_API CUresult cuModuleLoadData(void** mod, const void* image) {
	CHECK_CTX();
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
		g_fault_graph_node = -1;
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
	CHECK_CTX();
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
	case KBS_E_MISALIGNED: return CUDA_ERROR_MISALIGNED_ADDRESS;
	default: return CUDA_ERROR_LAUNCH_FAILED;
	}
}

// pack_launch checks a launch and packs its parameters as the kernel lays
// them out into a kernel node.
static CUresult pack_launch(Function* f, kbs_dim3 grid, kbs_dim3 block, unsigned shared, void** params, void** extra,
                            Node* nd) {
	if (extra) return CUDA_ERROR_NOT_SUPPORTED; // kernelParams only
	if ((int)shared > f->max_dyn_shared) return CUDA_ERROR_INVALID_VALUE;
	const kbs_kernel_desc* d = f->desc;
	if (d->nparams > 0 && !params) return CUDA_ERROR_INVALID_VALUE;
	nd->kind = NODE_KERNEL;
	nd->f = f;
	nd->grid = grid;
	nd->block = block;
	nd->shared = shared;
	nd->offs.resize(d->nparams);
	for (int i = 0; i < d->nparams; i++) {
		uint32_t a = d->param_aligns[i] ? d->param_aligns[i] : 1;
		while (nd->blob.size() % a) nd->blob.push_back(0);
		nd->offs[i] = (uint32_t)nd->blob.size();
		const uint8_t* p = (const uint8_t*)params[i];
		nd->blob.insert(nd->blob.end(), p, p + d->param_sizes[i]);
	}
	return CUDA_SUCCESS;
}

// run_kernel runs a kernel node; a fault is kept for kbs_driver_last_fault.
static CUresult run_kernel(const Node& nd) {
	if (!g_exec.load(std::memory_order_relaxed)) return CUDA_SUCCESS;
	Function* f = nd.f;
	kbs_launch_desc ld;
	memset(&ld, 0, sizeof ld);
	ld.grid = nd.grid;
	ld.block = nd.block;
	ld.dyn_shared = nd.shared;
	ld.arg_blob = nd.blob.data();
	ld.arg_offsets = nd.offs.data();
	ld.nparams = f->desc->nparams;
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
		g_fault_graph_node = -1;
		CUresult e = fault_code(code);
		if (e == CUDA_ERROR_ILLEGAL_ADDRESS || e == CUDA_ERROR_MISALIGNED_ADDRESS) {
			// Sticky, as on a GPU; the emulator's own findings (races,
			// traps, time limits) are not, so a test may go on after one.
			g_sticky_fault = r;
			g_sticky_mod = f->mod;
			g_sticky_kernel = f->index;
			g_sticky.store(e);
		}
		return e;
	}
	return CUDA_SUCCESS;
}

KBS_API CUresult cuLaunchKernel(void* fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                unsigned shared, void* s, void** params, void** extra) {
	CHECK_CTX();
	if (!fn) return CUDA_ERROR_INVALID_HANDLE;
	Node nd{};
	CUresult e = pack_launch((Function*)fn, kbs_dim3{gx, gy, gz}, kbs_dim3{bx, by, bz}, shared, params, extra, &nd);
	if (e != CUDA_SUCCESS) return e;
	Stream* st = stream_of(s);
	if (st->capture) {
		st->capture->nodes.push_back(std::move(nd));
		return CUDA_SUCCESS;
	}
	return run_kernel(nd);
}

KBS_API CUresult cuGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long flags) {
	CHECK_CTX();
	if (!exec || !graph) return CUDA_ERROR_INVALID_VALUE;
	if (flags != 0) return CUDA_ERROR_NOT_SUPPORTED;
	*exec = new GraphExec{((Graph*)graph)->nodes};
	return CUDA_SUCCESS;
}

// CUgraphExecUpdateResult values.
enum { UPDATE_SUCCESS = 0, UPDATE_TOPOLOGY_CHANGED = 2, UPDATE_NODE_TYPE_CHANGED = 3, UPDATE_FUNCTION_CHANGED = 4 };

// CUgraphExecUpdateResultInfo.
struct UpdateResultInfo {
	int result;
	void* error_node;
	void* error_from_node;
};

// cuGraphExecUpdate_v2 gives exec graph's parameters when the two have the
// same nodes, of the same kinds, launching the same kernels (grids,
// parameters, sizes and addresses may change); else it fails and exec is
// unchanged.
KBS_API CUresult cuGraphExecUpdate_v2(void* exec, void* graph, UpdateResultInfo* info) {
	CHECK_INIT();
	if (!exec || !graph || !info) return CUDA_ERROR_INVALID_VALUE;
	GraphExec* x = (GraphExec*)exec;
	Graph* g = (Graph*)graph;
	info->error_node = info->error_from_node = nullptr;
	info->result = UPDATE_SUCCESS;
	if (x->nodes.size() != g->nodes.size()) info->result = UPDATE_TOPOLOGY_CHANGED;
	for (size_t i = 0; info->result == UPDATE_SUCCESS && i < g->nodes.size(); i++) {
		if (x->nodes[i].kind != g->nodes[i].kind) {
			info->result = UPDATE_NODE_TYPE_CHANGED;
		} else if (g->nodes[i].kind == NODE_KERNEL && x->nodes[i].f != g->nodes[i].f) {
			info->result = UPDATE_FUNCTION_CHANGED;
		}
	}
	if (info->result != UPDATE_SUCCESS) return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	x->nodes = g->nodes;
	return CUDA_SUCCESS;
}

// cuGraphLaunch replays exec's nodes in order on the (idle) device; the
// first that fails stops it, and kbs_driver_last_graph_node names it.
KBS_API CUresult cuGraphLaunch(void* exec, void* s) {
	CHECK_CTX();
	if (!exec) return CUDA_ERROR_INVALID_HANDLE;
	Stream* st = stream_of(s);
	if (st->capture) return refuse_in_capture(st); // child graphs are not emulated
	GraphExec* x = (GraphExec*)exec;
	for (size_t i = 0; i < x->nodes.size(); i++) {
		const Node& nd = x->nodes[i];
		switch (nd.kind) {
		case NODE_KERNEL: {
			CUresult e = run_kernel(nd);
			if (e != CUDA_SUCCESS) {
				std::lock_guard<std::mutex> lk(g_mu);
				g_fault_graph_node = (int)i;
				return e;
			}
			break;
		}
		case NODE_MEMSET: memset(nd.dst, nd.v, nd.n); break;
		case NODE_MEMCPY: memmove(nd.dst, nd.src, nd.n); break;
		}
	}
	return CUDA_SUCCESS;
}

KBS_API CUresult cuGraphDestroy(void* graph) {
	CHECK_INIT();
	if (!graph) return CUDA_ERROR_INVALID_VALUE;
	delete (Graph*)graph;
	return CUDA_SUCCESS;
}

KBS_API CUresult cuGraphExecDestroy(void* exec) {
	CHECK_INIT();
	if (!exec) return CUDA_ERROR_INVALID_VALUE;
	delete (GraphExec*)exec;
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

KBS_API CUresult cuEventRecord(void* ev, void* s) {
	CHECK_CTX();
	if (!ev) return CUDA_ERROR_INVALID_HANDLE;
	Stream* st = stream_of(s);
	if (st->capture) return refuse_in_capture(st);
	((Event*)ev)->t = now_s();
	((Event*)ev)->recorded = true;
	return CUDA_SUCCESS;
}

KBS_API CUresult cuEventSynchronize(void* ev) {
	CHECK_CTX();
	return ev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

KBS_API CUresult cuEventElapsedTime(float* ms, void* start, void* end) {
	CHECK_CTX();
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
	case CUDA_ERROR_ILLEGAL_STATE: *s = "CUDA_ERROR_ILLEGAL_STATE"; break;
	case CUDA_ERROR_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; break;
	case CUDA_ERROR_ILLEGAL_ADDRESS: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
	case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: *s = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"; break;
	case CUDA_ERROR_LAUNCH_TIMEOUT: *s = "CUDA_ERROR_LAUNCH_TIMEOUT"; break;
	case CUDA_ERROR_ASSERT: *s = "CUDA_ERROR_ASSERT"; break;
	case CUDA_ERROR_MISALIGNED_ADDRESS: *s = "CUDA_ERROR_MISALIGNED_ADDRESS"; break;
	case CUDA_ERROR_LAUNCH_FAILED: *s = "CUDA_ERROR_LAUNCH_FAILED"; break;
	case CUDA_ERROR_NOT_SUPPORTED: *s = "CUDA_ERROR_NOT_SUPPORTED"; break;
	case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: *s = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"; break;
	case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: *s = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"; break;
	case CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE: *s = "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE"; break;
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
	case CUDA_ERROR_ILLEGAL_STATE: *s = "the operation is not valid in this state"; break;
	case CUDA_ERROR_NOT_FOUND: *s = "named symbol not found"; break;
	case CUDA_ERROR_ILLEGAL_ADDRESS: *s = "an illegal memory access was encountered"; break;
	case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: *s = "too many resources requested for launch"; break;
	case CUDA_ERROR_LAUNCH_TIMEOUT: *s = "the launch timed out and was terminated"; break;
	case CUDA_ERROR_ASSERT: *s = "device-side assert triggered"; break;
	case CUDA_ERROR_MISALIGNED_ADDRESS: *s = "misaligned address"; break;
	case CUDA_ERROR_LAUNCH_FAILED: *s = "unspecified launch failure"; break;
	case CUDA_ERROR_NOT_SUPPORTED: *s = "operation not supported"; break;
	case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: *s = "operation not permitted when stream is capturing"; break;
	case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: *s = "operation failed due to a previous error during capture"; break;
	case CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE: *s = "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"; break;
	default: *s = "unknown error"; return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

// kbs_driver_last_fault copies the details of the last failed launch (or
// module load) into out, with its module and kernel index (nil and -1 for
// a module load), and returns 1; it returns 0 when there is none. It
// clears the record, except that of a sticky fault, which it returns until
// the context is destroyed.
KBS_API int kbs_driver_last_fault(kbs_result* out, void** mod, int* kernel) {
	std::lock_guard<std::mutex> lk(g_mu);
	if (!g_has_fault && g_sticky.load() != 0) {
		// A call that failed for the context's sticky fault: that fault.
		*out = g_sticky_fault;
		*mod = g_sticky_mod;
		*kernel = g_sticky_kernel;
		return 1;
	}
	if (!g_has_fault) return 0;
	*out = g_fault;
	*mod = g_fault_mod;
	*kernel = g_fault_kernel;
	g_has_fault = false;
	return 1;
}

// kbs_driver_last_graph_node returns the index of the graph node (in
// capture order: launches, memsets and copies) whose replay failed in the
// last cuGraphLaunch that failed, or -1 when the last failure was not a
// graph's.
KBS_API int kbs_driver_last_graph_node(void) {
	std::lock_guard<std::mutex> lk(g_mu);
	return g_fault_graph_node;
}

// kbs_driver_set_exec turns the execution of kernels on (on != 0, the
// default) or off for the process: off, cuLaunchKernel and cuGraphLaunch
// check and pack each launch as always but run no kernel (copies and
// memsets still happen), so the host's cost of launching can be measured
// without the emulator's cost of running. Results are garbage while it is
// off.
KBS_API void kbs_driver_set_exec(int on) { g_exec.store(on != 0); }
