// runtime.cc: the SIMT emulator's runtime. One copy per process, built
// by the Go package simt into a shared library and loaded with purego.
//
// A launch runs its blocks on a pool of worker threads. A worker runs one
// block at a time: each thread of the block is a fiber on a stack of its
// own, and the worker's scheduler runs the runnable fibers in turn until
// each blocks (at a barrier or a warp collective) or finishes. Barriers
// release when every thread of the block waits at the same one; a warp
// collective completes when the last of its lanes arrives, and that lane
// computes every lane's result. Because every fiber of a block runs on the
// worker's OS thread, a kernel module's thread_local storage is the
// block's shared memory: the translator turns __shared__ and threadgroup
// variables into thread_local ones.
//
// With checks on, the kernel module is compiled with GCC's thread
// sanitizer instrumentation and this file supplies the __tsan_* hooks
// (libtsan is never linked): every load and store of device code comes
// here first, which lets the runtime find shared-memory races between two
// barriers, accesses outside device buffers (each has red zones around
// it) or outside the dynamic shared memory the launch asked for, stack
// overflows and kernels that run too long.
#include "kbsimt_abi.h"
#include "kbsimt_host.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <new>
#include <unordered_map>
#include <vector>


// ---------------------------------------------------------------------
// Context switching.

extern "C" void kbs_switch(void** save, void* load);
extern "C" void kbs_fiber_trampoline();

#if defined(__x86_64__)
asm(R"(
	.text
	.globl kbs_switch
	.hidden kbs_switch
	.type kbs_switch,@function
kbs_switch:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	subq $8, %rsp
	stmxcsr (%rsp)
	fnstcw 4(%rsp)
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	ldmxcsr (%rsp)
	fldcw 4(%rsp)
	addq $8, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.size kbs_switch,.-kbs_switch

	.globl kbs_fiber_trampoline
	.hidden kbs_fiber_trampoline
	.type kbs_fiber_trampoline,@function
kbs_fiber_trampoline:
	movq %r12, %rdi
	callq *%r13
	ud2
	.size kbs_fiber_trampoline,.-kbs_fiber_trampoline
)");

// init_frame lays out a new fiber's stack below top (16-byte aligned) so
// that switching to it enters fn(arg) through the trampoline.
static void* init_frame(char* top, void (*fn)(void*), void* arg) {
	void** sp = (void**)top;
	*--sp = (void*)kbs_fiber_trampoline; // return address, at top-8
	*--sp = nullptr;                     // rbp
	*--sp = nullptr;                     // rbx
	*--sp = arg;                         // r12
	*--sp = (void*)fn;                   // r13
	*--sp = nullptr;                     // r14
	*--sp = nullptr;                     // r15
	uint32_t mxcsr;
	uint16_t fpucw;
	asm volatile("stmxcsr %0" : "=m"(mxcsr));
	asm volatile("fnstcw %0" : "=m"(fpucw));
	--sp;
	memcpy((char*)sp, &mxcsr, 4);
	memcpy((char*)sp + 4, &fpucw, 2);
	return sp;
}
#elif defined(__aarch64__)
asm(R"(
	.text
	.globl kbs_switch
	.hidden kbs_switch
	.type kbs_switch,%function
kbs_switch:
	sub sp, sp, #0xb0
	stp x19, x20, [sp, #0x00]
	stp x21, x22, [sp, #0x10]
	stp x23, x24, [sp, #0x20]
	stp x25, x26, [sp, #0x30]
	stp x27, x28, [sp, #0x40]
	stp x29, x30, [sp, #0x50]
	stp d8, d9, [sp, #0x60]
	stp d10, d11, [sp, #0x70]
	stp d12, d13, [sp, #0x80]
	stp d14, d15, [sp, #0x90]
	mrs x9, fpcr
	str x9, [sp, #0xa0]
	mov x9, sp
	str x9, [x0]
	mov sp, x1
	ldr x9, [sp, #0xa0]
	msr fpcr, x9
	ldp x19, x20, [sp, #0x00]
	ldp x21, x22, [sp, #0x10]
	ldp x23, x24, [sp, #0x20]
	ldp x25, x26, [sp, #0x30]
	ldp x27, x28, [sp, #0x40]
	ldp x29, x30, [sp, #0x50]
	ldp d8, d9, [sp, #0x60]
	ldp d10, d11, [sp, #0x70]
	ldp d12, d13, [sp, #0x80]
	ldp d14, d15, [sp, #0x90]
	add sp, sp, #0xb0
	ret
	.size kbs_switch,.-kbs_switch

	.globl kbs_fiber_trampoline
	.hidden kbs_fiber_trampoline
	.type kbs_fiber_trampoline,%function
kbs_fiber_trampoline:
	mov x0, x19
	blr x20
	brk #0
	.size kbs_fiber_trampoline,.-kbs_fiber_trampoline
)");

static void* init_frame(char* top, void (*fn)(void*), void* arg) {
	uint64_t* sp = (uint64_t*)(top - 0xb0);
	memset(sp, 0, 0xb0);
	sp[0] = (uint64_t)arg;                  // x19
	sp[1] = (uint64_t)fn;                   // x20
	sp[11] = (uint64_t)kbs_fiber_trampoline; // x30
	uint64_t fpcr;
	asm volatile("mrs %0, fpcr" : "=r"(fpcr));
	sp[20] = fpcr;
	return sp;
}
#else
#error "kbsimt: the emulator's fibers need x86-64 or arm64"
#endif

// ---------------------------------------------------------------------
// Device memory: every allocation has red zones on both sides, and the
// runtime keeps a sorted table of them for the bounds checks.

static const size_t kRedZone = 4096;
static const size_t kAlign = 256;

struct BufRange {
	uintptr_t base;
	uint64_t size;
};

static pthread_mutex_t g_buf_mu = PTHREAD_MUTEX_INITIALIZER;
static std::vector<BufRange>* g_bufs;

KBS_API void* kbs_alloc(uint64_t size) {
	size_t inner = (size + kAlign - 1) & ~(kAlign - 1);
	size_t total = inner + 2 * kRedZone;
	void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) return nullptr;
	uintptr_t base = (uintptr_t)p + kRedZone;
	pthread_mutex_lock(&g_buf_mu);
	if (!g_bufs) g_bufs = new std::vector<BufRange>();
	BufRange r{base, size};
	auto it = std::lower_bound(g_bufs->begin(), g_bufs->end(), r,
	                           [](const BufRange& a, const BufRange& b) { return a.base < b.base; });
	g_bufs->insert(it, r);
	pthread_mutex_unlock(&g_buf_mu);
	return (void*)base;
}

KBS_API int kbs_free(void* ptr) {
	uintptr_t base = (uintptr_t)ptr;
	pthread_mutex_lock(&g_buf_mu);
	int found = 0;
	uint64_t size = 0;
	if (g_bufs) {
		for (auto it = g_bufs->begin(); it != g_bufs->end(); ++it) {
			if (it->base == base) {
				size = it->size;
				g_bufs->erase(it);
				found = 1;
				break;
			}
		}
	}
	pthread_mutex_unlock(&g_buf_mu);
	if (!found) return -1;
	size_t inner = (size + kAlign - 1) & ~(kAlign - 1);
	munmap((void*)(base - kRedZone), inner + 2 * kRedZone);
	return 0;
}

// ---------------------------------------------------------------------
// Modules.

struct Module {
	void* handle;
	const kbs_kernel_desc* kernels;
	int nkernels;
	void* (*anchor)();
	uintptr_t load_addr;
	int checked; // built with the memory checks
	char* path;
};

KBS_API void* kbs_module_load(const char* path, char* err, int errlen) {
	void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "dlopen %s: %s", path, dlerror());
		return nullptr;
	}
	typedef const kbs_kernel_desc* (*table_fn)(int*);
	table_fn table = (table_fn)dlsym(h, "kbs_kernel_table");
	void* (*anchor)() = (void* (*)())dlsym(h, "kbs_tls_anchor");
	if (!table || !anchor) {
		snprintf(err, errlen, "%s is not a kbsimt kernel module (no kbs_kernel_table or kbs_tls_anchor)", path);
		dlclose(h);
		return nullptr;
	}
	struct link_map* lm = nullptr;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm) {
		snprintf(err, errlen, "dlinfo %s: %s", path, dlerror());
		dlclose(h);
		return nullptr;
	}
	Module* m = new Module();
	m->handle = h;
	m->kernels = table(&m->nkernels);
	m->anchor = anchor;
	m->load_addr = lm->l_addr;
	m->path = strdup(path);
	int (*checked)() = (int (*)())dlsym(h, "kbs_module_checked");
	m->checked = checked ? checked() : 0;
	for (int i = 0; i < m->nkernels; i++) {
		if (m->kernels[i].abi != KBS_ABI_VERSION) {
			snprintf(err, errlen, "%s: kernel %s built for ABI %d, runtime has %d", path,
			         m->kernels[i].name, m->kernels[i].abi, KBS_ABI_VERSION);
			delete m;
			dlclose(h);
			return nullptr;
		}
	}
	return m;
}

KBS_API int kbs_module_nkernels(void* mod) { return ((Module*)mod)->nkernels; }

KBS_API const kbs_kernel_desc* kbs_module_kernel(void* mod, int i) {
	Module* m = (Module*)mod;
	if (i < 0 || i >= m->nkernels) return nullptr;
	return &m->kernels[i];
}

KBS_API uint64_t kbs_module_base(void* mod) { return ((Module*)mod)->load_addr; }

KBS_API const char* kbs_module_path(void* mod) { return ((Module*)mod)->path; }

// kbs_module_checks returns the check flags a launch of the module's
// kernels should use: the memory checks and poisoning for a module built
// with them, none otherwise.
KBS_API int kbs_module_checks(void* mod) { return ((Module*)mod)->checked ? KBS_CHECK_MEMORY | KBS_CHECK_POISON : 0; }

// ---------------------------------------------------------------------
// Threads of a block.

enum { F_RUNNABLE, F_BARRIER, F_COLL, F_DONE, F_ABORTED };

struct Worker;

struct Fiber {
	kbs_thread t; // first: device code reads it
	void* sp;
	int32_t state;
	int32_t line;       // where it waits
	const char* what;
	const char* file;
	void* data;         // its collective or barrier data
	void (*bar_fn)(void**, uint32_t);
	Worker* w;
	char* stack_lo;     // lowest usable address of its stack
};
static_assert(sizeof(Fiber) <= KBS_FIBER_HDR, "Fiber record larger than KBS_FIBER_HDR");
static_assert((KBS_STACK_SIZE & (KBS_STACK_SIZE - 1)) == 0, "stack size not a power of two");

// A pending warp collective: the lanes that have arrived and their data.
struct Group {
	bool used;
	int32_t flags;
	const char* what;
	const char* file;
	int32_t line;
	uint32_t mask;      // KBS_COLL_MASKED: the lanes that must arrive
	uint32_t arrived;
	kbs_coll_fn fn;
	void* data[KBS_WARP];
};

static const int kGroups = 8;

struct WarpState {
	uint32_t lanes; // lanes that exist
	uint32_t done;  // lanes that have exited
	uint32_t epoch; // advances at each warp fence (race checks)
	Group g[kGroups];
};

// Race shadow of one byte of shared memory.
struct Shadow {
	uint32_t w_ep, r_ep;    // block epochs of the last write and reads
	uint32_t w_wep, r_wep;  // warp epochs of those accesses
	uint16_t w_tid, r_tid;  // the writer; the first reader
	uint16_t r_tid2;        // another reader, when r_multi > 0
	uint8_t r_multi;        // 0 one reader, 1 several of one warp, 2 of several warps
	uint8_t async;          // 1 while a cp.async that writes it waits for its wait_group
	uint64_t w_pc, r_pc;
};

// ---------------------------------------------------------------------
// The profiler's per-worker state. Lanes of a warp run one after another
// here, so each access is filed under its warp, its static site (the
// code address that made it) and its dynamic instance (how many times the
// lane has been there before); the accesses of one key are one request,
// as a warp's lanes issue one instruction together on the device. Keys are
// complete when every lane has passed them: at a barrier and at the end
// of the block, where the requests are counted and dropped.

enum { RK_GLD, RK_GST, RK_GATOM, RK_SLD, RK_SST, RK_SATOM };

struct ProfReq {
	uint64_t pc;
	uint32_t inst;
	uint16_t kind;
	uint16_t warp;
	uint32_t lanes; // mask of the lanes that took part
	uint64_t addr[KBS_WARP];
	uint32_t size[KBS_WARP];
};

struct ReqKey {
	uint64_t pc;
	uint32_t warp, inst;
	bool operator==(const ReqKey& o) const { return pc == o.pc && warp == o.warp && inst == o.inst; }
};

struct ReqKeyHash {
	size_t operator()(const ReqKey& k) const {
		uint64_t h = k.pc * 0x9e3779b97f4a7c15ull ^ ((uint64_t)k.warp << 32 | k.inst) * 0xc2b2ae3d27d4eb4full;
		return (size_t)(h ^ h >> 29);
	}
};

struct WorkerProf {
	std::unordered_map<uint64_t, uint32_t> inst; // (pc << 10 | thread) -> times there
	std::unordered_map<ReqKey, uint32_t, ReqKeyHash> open; // -> index in reqs
	std::vector<ProfReq> reqs;
	uint64_t c[KBS_PC_N];
	std::vector<uint8_t> statics; // 16-byte chunks of static shared memory touched
};

// The shadow of one 4-byte granule of a buffer: its last writer and up to
// two readers since, each a global thread id + 1 with the block epoch,
// warp-fence epoch and bytes of the access.
struct GShadow {
	uint32_t w, w_ep, r1, r1_ep, r2, r2_ep;
	uint16_t w_wep, r1_wep, r2_wep;
	uint8_t wmask, r1mask, r2mask, pad;
	// The worker that ran the last write and its global-access count
	// then: once that count moves on, the write's store has landed.
	uint32_t w_worker;
	uint64_t w_seq;
};

struct GPending {
	uintptr_t addr;
	uint32_t n, other;
	uint64_t pc, other_pc;
	int bi;
	bool active, other_write;
	uint8_t old[16];
};

// A cp.async of one thread whose wait_group has not come: its shared
// destination, the commit group it belongs to (the thread's count of
// commits when it was issued) and its place.
struct AsyncCopy {
	uintptr_t a;
	uint32_t n, group;
	uint64_t pc;
};

struct Launch;

struct Worker {
	int id;
	pthread_t th;
	char* stacks;     // nstacks stacks of KBS_STACK_SIZE, aligned to it
	uint32_t nstacks;
	void* region;     // the mapping holding the stacks
	size_t region_len;
	void* sched_sp;
	Fiber* cur;
	Group* coll; // the collective whose completion runs
	Launch* L;
	// The block.
	kbs_dim3 bid;
	uint32_t n, ndone, nbarrier;
	WarpState warps[KBS_MAX_THREADS / KBS_WARP];
	void* bar_data[KBS_MAX_THREADS];
	// Shared memory: the module's TLS block in this thread.
	const Module* mod;
	uintptr_t smem_lo, smem_size, dyn_lo;
	Shadow* shadow;
	size_t shadow_len; // bytes covered
	// Red zones after shared arrays, as offsets in the module's shared
	// memory (the same in every worker), sorted, registered by device
	// code as it declares the arrays.
	std::vector<std::pair<uint64_t, uint64_t>>* red;
	uint32_t epoch;
	uint64_t naccess;
	// gseq counts the worker's global accesses under the race check, and
	// its block ends: a write's store has landed once it moved past the
	// count the write's hook took (the hook runs before the store).
	std::atomic<uint64_t> gseq;
	struct GPending* pend; // per thread of the block: a conflict awaiting its value check
	uint32_t npend;
	WorkerProf* prof; // the profiler's state, when the launch is profiled
	WorkerProf* prof_store;
	// cp.async (checked modules): per thread of the block, its copies not
	// yet waited for and its count of commit_groups; nacp counts the
	// block's pending copies.
	std::vector<AsyncCopy>* acp;
	uint32_t* acp_groups;
	uint32_t nacp;
	// Counters.
	uint64_t blocks, switches, barriers, collectives;
};

struct Launch {
	const Module* mod;
	const kbs_kernel_desc* k;
	kbs_launch_desc d;
	kbs_launch_ctx ctx;
	void* params[256];
	uint64_t nblocks;
	std::atomic<uint64_t> next;
	std::atomic<int> abort;
	pthread_mutex_t mu; // guards res
	kbs_result* res;
	std::atomic<uint64_t> races;
	int checks;
	std::vector<BufRange> bufs;
	double deadline;
	uint64_t dyn_bytes; // dynamic shared memory the launch uses
	uint64_t tg_off[KBS_MAX_TG];
	int nworkers;
	// Profiling: the blocks to run (all when empty), and per buffer of
	// bufs the bitmaps of the sectors read and written.
	bool profile;
	std::vector<uint64_t> sample;
	std::atomic<uint64_t*>* rd_bits;
	std::atomic<uint64_t*>* wr_bits;
	// Global-memory race checks (checked launches): a shadow per device
	// buffer, made on its first access; per block, whether it used a
	// fence or a global atomic (then it may order accesses across
	// blocks); striped locks over the shadows.
	bool grace;
	uint32_t nthreads;
	std::atomic<struct GShadow*>* gshadow;
	std::atomic<uint8_t>* syncs;
	std::atomic<uint8_t> glocks[1024];
};

static __thread Worker* tls_worker;

static void prof_flush(Worker* w, int warp);
static void resolve_all_pending(Worker* w);
static void acp_reset(Worker* w);

static double now_s() {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline Fiber* fiber_at(Worker* w, uint32_t i) {
	return (Fiber*)(w->stacks + (size_t)(i + 1) * KBS_STACK_SIZE - KBS_FIBER_HDR);
}

// ---------------------------------------------------------------------
// Faults.

// set_fault records the first fault of a launch and stops it.
static void set_fault(Launch* L, int code, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_fault(Launch* L, int code, const char* fmt, ...) {
	pthread_mutex_lock(&L->mu);
	if (L->res->code == KBS_OK || L->res->code == KBS_E_RACE) {
		// A race lets the launch finish; anything else replaces it.
		L->res->code = code;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(L->res->msg, sizeof L->res->msg, fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&L->mu);
	L->abort.store(1);
}

// abandon leaves the current fiber for good after a fault.
[[noreturn]] static void abandon(Worker* w) {
	Fiber* f = w->cur;
	f->state = F_ABORTED;
	kbs_switch(&f->sp, w->sched_sp);
	__builtin_unreachable();
}

static void fill_where(Worker* w, Fiber* f) {
	kbs_result* r = w->L->res;
	r->block = w->bid;
	if (f) r->thread[0] = f->t.tid;
}

static const char* base_name(const char* file) {
	if (!file) return "?";
	const char* s = strrchr(file, '/');
	return s ? s + 1 : file;
}

KBS_API void kbs_trap(const char* why, const char* file, int32_t line) {
	Worker* w = tls_worker;
	if (!w || !w->cur) {
		fprintf(stderr, "kbsimt: trap outside a kernel: %s at %s:%d\n", why, file, line);
		abort();
	}
	Fiber* f = w->cur;
	pthread_mutex_lock(&w->L->mu);
	fill_where(w, f);
	pthread_mutex_unlock(&w->L->mu);
	set_fault(w->L, KBS_E_TRAP, "%s at %s:%d in thread (%u,%u,%u) of block (%u,%u,%u)", why,
	          base_name(file), line, f->t.tid.x, f->t.tid.y, f->t.tid.z, w->bid.x, w->bid.y, w->bid.z);
	abandon(w);
}

// misaligned_fault stops the launch with a misaligned-address fault: an
// access (what) of width bytes, or of a type aligned to width bytes, at
// addr. A GPU faults on any access that is not aligned to its width
// (CUDA_ERROR_MISALIGNED_ADDRESS, which makes the context unusable); the
// CPU would take it, or crash the process on an aligned vector move.
[[noreturn]] static void misaligned_fault(Worker* w, uintptr_t addr, uint32_t width, const char* what, const char* file,
                                          int32_t line) {
	Fiber* f = w->cur;
	pthread_mutex_lock(&w->L->mu);
	fill_where(w, f);
	const bool first = w->L->res->code == KBS_OK || w->L->res->code == KBS_E_RACE;
	pthread_mutex_unlock(&w->L->mu);
	set_fault(w->L, KBS_E_MISALIGNED,
	          "misaligned address: %s at 0x%llx (%llu bytes past a multiple of %u) in kernel %s at %s:%d in thread (%u,%u,%u) of block (%u,%u,%u)",
	          what, (unsigned long long)addr, (unsigned long long)(addr & (width - 1)), width, w->L->k->name,
	          base_name(file), line, f->t.tid.x, f->t.tid.y, f->t.tid.z, w->bid.x, w->bid.y, w->bid.z);
	pthread_mutex_lock(&w->L->mu);
	if (first && w->L->res->code == KBS_E_MISALIGNED) {
		w->L->res->addr = addr;
		w->L->res->size = width;
	}
	pthread_mutex_unlock(&w->L->mu);
	abandon(w);
}

KBS_API void kbs_misaligned(const void* addr, uint32_t width, const char* what, const char* file, int32_t line) {
	Worker* w = tls_worker;
	if (!w || !w->cur) {
		fprintf(stderr, "kbsimt: misaligned %s of %u bytes at %p outside a kernel at %s:%d\n", what, width, addr, file, line);
		abort();
	}
	char desc[160];
	snprintf(desc, sizeof desc, "%s of %u bytes", what, width);
	misaligned_fault(w, (uintptr_t)addr, width, desc, file, line);
}

// Kernel modules are compiled with -fsanitize=alignment, in both modes:
// every load and store through a pointer first tests the address against
// its type's alignment (a bit test), and calls these hooks (GCC's UBSan
// ABI, supplied here as the thread-sanitizer's are) when it fails. A
// kernel's misaligned 16-byte vector load is then a fault naming the
// address rather than a crash (an aligned SSE move faults on the CPU) or
// a silent pass (an unaligned one does not).
struct UbsanLocation {
	const char* file;
	uint32_t line, column;
};
struct UbsanType {
	uint16_t kind, info;
	char name[1];
};
struct UbsanTypeMismatch {
	UbsanLocation loc;
	const UbsanType* type;
	uint8_t log_align;
	uint8_t check_kind; // 0 load, 1 store, others a reference or member access
};

static void ubsan_mismatch(UbsanTypeMismatch* d, uintptr_t p) {
	Worker* w = tls_worker;
	const uint32_t align = 1u << d->log_align;
	if (!(p & (align - 1))) return; // a null pointer: the bounds checks' business
	// A copy of a const object binds a const reference: a load too.
	const char* type = d->type ? d->type->name : "?";
	const bool konst = strncmp(type, "'const ", 7) == 0;
	const char* kind = d->check_kind == 0 || (d->check_kind == 2 && konst) ? "load" : d->check_kind == 1 ? "store" : "access";
	char what[200];
	snprintf(what, sizeof what, "%s of %s (%u-byte aligned)", kind, type, align);
	if (!w || !w->cur) {
		fprintf(stderr, "kbsimt: misaligned %s (%u-byte aligned) at 0x%llx outside a kernel at %s:%u\n", what, align,
		        (unsigned long long)p, d->loc.file, d->loc.line);
		abort();
	}
	misaligned_fault(w, p, align, what, d->loc.file, (int32_t)d->loc.line);
}

extern "C" __attribute__((visibility("default"))) void __ubsan_handle_type_mismatch_v1(UbsanTypeMismatch* d, uintptr_t p) {
	ubsan_mismatch(d, p);
}
extern "C" __attribute__((visibility("default"))) void __ubsan_handle_type_mismatch_v1_abort(UbsanTypeMismatch* d,
                                                                                              uintptr_t p) {
	ubsan_mismatch(d, p);
	abort();
}

// ---------------------------------------------------------------------
// Barriers and collectives.

static inline void yield(Worker* w, Fiber* f) {
	w->switches++;
	kbs_switch(&f->sp, w->sched_sp);
	if (w->L->abort.load(std::memory_order_relaxed)) abandon(w);
}

static void check_deadline(Worker* w) {
	Launch* L = w->L;
	if (L->deadline > 0 && now_s() > L->deadline) {
		set_fault(L, KBS_E_TIMEOUT, "kernel %s ran past its time limit of %.3g s (a thread spinning on a value no other thread will set?)",
		          L->k->name, L->d.timeout_s);
		if (w->cur) abandon(w);
	}
}

KBS_API void kbs_barrier(const char* what, void* data, void (*fn)(void**, uint32_t), const char* file, int32_t line) {
	Worker* w = tls_worker;
	if (!w || !w->cur) kbs_trap("barrier outside a kernel", file, line);
	Fiber* f = w->cur;
	f->state = F_BARRIER;
	f->what = what;
	f->file = file;
	f->line = line;
	f->data = data;
	f->bar_fn = fn;
	w->nbarrier++;
	if ((w->switches & 0xfff) == 0) check_deadline(w);
	yield(w, f);
}

// lanes_string writes the lanes of mask as ranges ("0-15,17").
static void lanes_string(uint32_t mask, char* buf, size_t len) {
	buf[0] = 0;
	size_t at = 0;
	for (int i = 0; i < 32;) {
		if (!(mask >> i & 1)) {
			i++;
			continue;
		}
		int j = i;
		while (j + 1 < 32 && (mask >> (j + 1) & 1)) j++;
		int n = (j == i) ? snprintf(buf + at, len - at, "%s%d", at ? "," : "", i)
		                 : snprintf(buf + at, len - at, "%s%d-%d", at ? "," : "", i, j);
		if (n < 0 || (size_t)n >= len - at) break;
		at += n;
		i = j + 1;
	}
}

// complete runs group g's completion and wakes its lanes.
static void complete(Worker* w, WarpState* ws, Group* g, uint32_t warp) {
	w->coll = g;
	if (g->fn) g->fn(g->data, g->arrived);
	w->coll = nullptr;
	if (g->flags & KBS_COLL_FENCE) ws->epoch++;
	// Bound the profiler's pending requests: when every live lane of the
	// warp is here, the warp's requests so far are complete.
	if (w->prof && w->prof->reqs.size() > 65536 && g->arrived == (ws->lanes & ~ws->done)) prof_flush(w, (int)warp);
	for (int l = 0; l < KBS_WARP; l++) {
		if (!(g->arrived >> l & 1)) continue;
		Fiber* f = fiber_at(w, warp * KBS_WARP + l);
		if (f->state == F_COLL) f->state = F_RUNNABLE;
	}
	g->used = false;
	w->collectives++;
}

static bool same_site(const char* f1, int l1, const char* f2, int l2) {
	return l1 == l2 && (f1 == f2 || (f1 && f2 && strcmp(f1, f2) == 0));
}

KBS_API void kbs_collective(const char* what, uint32_t mask, int32_t flags, void* data, kbs_coll_fn fn,
                            const char* file, int32_t line) {
	Worker* w = tls_worker;
	if (!w || !w->cur) kbs_trap("warp collective outside a kernel", file, line);
	Fiber* f = w->cur;
	Launch* L = w->L;
	uint32_t lane = f->t.lane, warp = f->t.warp;
	WarpState* ws = &w->warps[warp];
	uint32_t bit = 1u << lane;
	char lanes[128];
	Group* g = nullptr;
	if (flags & KBS_COLL_MASKED) {
		if (!(mask & bit)) {
			fill_where(w, f);
			set_fault(L, KBS_E_WARP, "kernel %s, block (%u,%u,%u): %s at %s:%d: lane %u of warp %u calls it with mask 0x%08x, which leaves the lane out",
			          L->k->name, w->bid.x, w->bid.y, w->bid.z, what, base_name(file), line, lane, warp, mask);
			abandon(w);
		}
		if (mask & ~ws->lanes) {
			lanes_string(mask & ~ws->lanes, lanes, sizeof lanes);
			fill_where(w, f);
			set_fault(L, KBS_E_WARP, "kernel %s, block (%u,%u,%u): %s at %s:%d: mask 0x%08x names lanes %s, which warp %u of a %u-thread block does not have",
			          L->k->name, w->bid.x, w->bid.y, w->bid.z, what, base_name(file), line, mask, lanes, warp, f->t.nthreads);
			abandon(w);
		}
		if (mask & ws->done) {
			lanes_string(mask & ws->done, lanes, sizeof lanes);
			fill_where(w, f);
			set_fault(L, KBS_E_WARP, "kernel %s, block (%u,%u,%u): %s at %s:%d: lanes %s of warp %u, named in mask 0x%08x, have exited",
			          L->k->name, w->bid.x, w->bid.y, w->bid.z, what, base_name(file), line, lanes, warp, mask);
			abandon(w);
		}
		// Lanes join the pending collective of the same intrinsic and
		// mask. Subsets of a warp may wait at different collectives at
		// once (independent thread scheduling); if they can never all
		// arrive, the block stalls and the scheduler reports it.
		for (int i = 0; i < kGroups; i++) {
			Group* h = &ws->g[i];
			if (h->used && (h->flags & KBS_COLL_MASKED) && h->mask == mask && strcmp(h->what, what) == 0) {
				g = h;
				break;
			}
		}
	} else {
		for (int i = 0; i < kGroups; i++) {
			Group* h = &ws->g[i];
			if (h->used && !(h->flags & KBS_COLL_MASKED) && same_site(h->file, h->line, file, line)) {
				if (strcmp(h->what, what) != 0) {
					fill_where(w, f);
					set_fault(L, KBS_E_WARP, "kernel %s, threadgroup (%u,%u,%u): simdgroup %u: lanes call both %s and %s at %s:%d", L->k->name, w->bid.x, w->bid.y, w->bid.z, warp, h->what, what,
					          base_name(file), line);
					abandon(w);
				}
				g = h;
				break;
			}
		}
	}
	if (!g) {
		for (int i = 0; i < kGroups; i++) {
			if (!ws->g[i].used) {
				g = &ws->g[i];
				break;
			}
		}
		if (!g) {
			fill_where(w, f);
			set_fault(L, KBS_E_WARP, "kernel %s, block (%u,%u,%u): warp %u: more than %d collectives pending at once (at %s at %s:%d)", L->k->name, w->bid.x, w->bid.y, w->bid.z, warp, kGroups,
			          what, base_name(file), line);
			abandon(w);
		}
		memset(g, 0, sizeof *g);
		g->used = true;
		g->flags = flags;
		g->what = what;
		g->file = file;
		g->line = line;
		g->mask = mask;
		g->fn = fn;
	}
	g->arrived |= bit;
	g->data[lane] = data;
	uint32_t need = (flags & KBS_COLL_MASKED) ? mask : (ws->lanes & ~ws->done);
	if ((g->arrived & need) == need) {
		complete(w, ws, g, warp);
		return;
	}
	f->state = F_COLL;
	f->what = what;
	f->file = file;
	f->line = line;
	yield(w, f);
}

// on_exit updates the warp when a lane finishes: a Metal collective the
// lane will never join may now be complete; a CUDA one that names the
// lane never will be.
static void on_exit(Worker* w, Fiber* f) {
	uint32_t lane = f->t.lane, warp = f->t.warp;
	WarpState* ws = &w->warps[warp];
	ws->done |= 1u << lane;
	for (int i = 0; i < kGroups; i++) {
		Group* g = &ws->g[i];
		if (!g->used) continue;
		if (g->flags & KBS_COLL_MASKED) {
			if (g->mask >> lane & 1) {
				char lanes[128];
				lanes_string(g->arrived, lanes, sizeof lanes);
				fill_where(w, f);
				set_fault(w->L, KBS_E_WARP, "kernel %s, block (%u,%u,%u): warp %u: lane %u exits while lanes %s wait for it at %s at %s:%d (mask 0x%08x)",
				          w->L->k->name, w->bid.x, w->bid.y, w->bid.z, warp, lane, lanes, g->what, base_name(g->file), g->line, g->mask);
				return;
			}
		} else {
			uint32_t need = ws->lanes & ~ws->done;
			if ((g->arrived & need) == need) complete(w, ws, g, warp);
		}
	}
}

static void fiber_main(void* arg) {
	Fiber* f = (Fiber*)arg;
	Worker* w = f->w;
	w->L->k->entry(&f->t);
	f->state = F_DONE;
	w->ndone++;
	on_exit(w, f);
	kbs_switch(&f->sp, w->sched_sp);
	__builtin_unreachable();
}

// describe_waits writes where the block's threads wait, grouped by place.
static void describe_waits(Worker* w, char* buf, size_t len) {
	size_t at = 0;
	buf[0] = 0;
	std::vector<bool> seen(w->n);
	for (uint32_t i = 0; i < w->n && at < len; i++) {
		if (seen[i]) continue;
		Fiber* f = fiber_at(w, i);
		if (f->state != F_BARRIER && f->state != F_COLL && f->state != F_DONE) continue;
		// Collect the threads in the same state at the same place.
		uint32_t first = i, last = i, count = 0;
		for (uint32_t j = i; j < w->n; j++) {
			Fiber* g = fiber_at(w, j);
			if (g->state != f->state) continue;
			if (f->state != F_DONE && !same_site(g->file, g->line, f->file, f->line)) continue;
			seen[j] = true;
			last = j;
			count++;
		}
		int n;
		const char* range = count == last - first + 1 ? "" : " (some of)";
		if (f->state == F_DONE)
			n = snprintf(buf + at, len - at, "%sthreads %u-%u%s have exited", at ? "; " : "", first, last, range);
		else
			n = snprintf(buf + at, len - at, "%sthreads %u-%u%s wait at %s (%s:%d)", at ? "; " : "", first, last, range,
			             f->what, base_name(f->file), f->line);
		if (n < 0) break;
		at += (size_t)n;
	}
}

// release_barrier checks the waiting threads and lets them go on; false
// when the barrier is divergent.
static bool release_barrier(Worker* w) {
	Launch* L = w->L;
	char desc[1024];
	Fiber* first = nullptr;
	for (uint32_t i = 0; i < w->n; i++) {
		Fiber* f = fiber_at(w, i);
		if (f->state != F_BARRIER) continue;
		if (!first) {
			first = f;
		} else if (!same_site(f->file, f->line, first->file, first->line) || strcmp(f->what, first->what) != 0) {
			describe_waits(w, desc, sizeof desc);
			pthread_mutex_lock(&L->mu);
			L->res->block = w->bid;
			L->res->thread[0] = first->t.tid;
			L->res->thread[1] = f->t.tid;
			pthread_mutex_unlock(&L->mu);
			set_fault(L, KBS_E_BARRIER, "divergent barrier in kernel %s, block (%u,%u,%u): threads wait at different barriers: %s",
			          L->k->name, w->bid.x, w->bid.y, w->bid.z, desc);
			return false;
		}
	}
	if (w->ndone > 0) {
		describe_waits(w, desc, sizeof desc);
		pthread_mutex_lock(&L->mu);
		L->res->block = w->bid;
		L->res->thread[0] = first->t.tid;
		pthread_mutex_unlock(&L->mu);
		set_fault(L, KBS_E_BARRIER, "divergent barrier in kernel %s, block (%u,%u,%u): %s at %s:%d is not reached by every thread: %s",
		          L->k->name, w->bid.x, w->bid.y, w->bid.z, first->what, base_name(first->file), first->line, desc);
		return false;
	}
	if (first->bar_fn) {
		for (uint32_t i = 0; i < w->n; i++) w->bar_data[i] = fiber_at(w, i)->data;
		first->bar_fn(w->bar_data, w->n);
	}
	prof_flush(w, -1);
	for (uint32_t i = 0; i < w->n; i++) fiber_at(w, i)->state = F_RUNNABLE;
	w->nbarrier = 0;
	w->epoch++;
	w->barriers++;
	return true;
}

// resolve_divergent completes Metal collectives whose other lanes wait
// elsewhere: the lanes at one place are the active ones. It reports
// whether it completed any.
static bool resolve_divergent(Worker* w) {
	bool any = false;
	for (uint32_t wp = 0; wp < (w->n + KBS_WARP - 1) / KBS_WARP; wp++) {
		WarpState* ws = &w->warps[wp];
		for (int i = 0; i < kGroups; i++) {
			Group* g = &ws->g[i];
			if (g->used && !(g->flags & KBS_COLL_MASKED) && g->arrived) {
				complete(w, ws, g, wp);
				any = true;
			}
		}
	}
	return any;
}

// ---------------------------------------------------------------------
// Blocks.

static bool ensure_stacks(Worker* w, uint32_t n) {
	if (n <= w->nstacks) return true;
	if (w->region) munmap(w->region, w->region_len);
	w->region = nullptr;
	w->nstacks = 0;
	size_t len = (size_t)(n + 1) * KBS_STACK_SIZE;
	void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) return false;
	uintptr_t lo = ((uintptr_t)p + KBS_STACK_SIZE - 1) & ~(uintptr_t)(KBS_STACK_SIZE - 1);
	w->region = p;
	w->region_len = len;
	w->stacks = (char*)lo;
	w->nstacks = n;
	long page = sysconf(_SC_PAGESIZE);
	// A guard page at the bottom of each stack turns an overflow into a
	// fault here rather than a write into the next thread's record.
	for (uint32_t i = 0; i < n; i++) mprotect(w->stacks + (size_t)i * KBS_STACK_SIZE, page, PROT_NONE);
	return true;
}

struct PhdrQuery {
	uintptr_t addr;
	uintptr_t tls;
	size_t tls_size;
	bool found;
};

static int phdr_cb(struct dl_phdr_info* info, size_t, void* p) {
	PhdrQuery* q = (PhdrQuery*)p;
	if (info->dlpi_addr != q->addr) return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_TLS) {
			q->tls = (uintptr_t)info->dlpi_tls_data;
			q->tls_size = info->dlpi_phdr[i].p_memsz;
			q->found = true;
		}
	}
	return 1;
}

// bind_module finds the module's shared memory (its TLS block) in this
// worker's thread.
static bool bind_module(Worker* w, const Module* m) {
	if (w->mod == m) return true;
	uintptr_t dyn = (uintptr_t)m->anchor(); // allocates the block here
	PhdrQuery q{m->load_addr, 0, 0, false};
	dl_iterate_phdr(phdr_cb, &q);
	if (!q.found || !q.tls || dyn < q.tls || dyn + KBS_DYN_SHARED_MAX > q.tls + q.tls_size) {
		set_fault(w->L, KBS_E_ARG, "cannot locate the kernel module's shared memory (TLS block) in worker %d", w->id);
		return false;
	}
	w->mod = m;
	if (!w->red) w->red = new std::vector<std::pair<uint64_t, uint64_t>>();
	w->red->clear();
	w->smem_lo = q.tls;
	w->smem_size = q.tls_size;
	w->dyn_lo = dyn;
	if (w->shadow_len < q.tls_size) {
		if (w->shadow) munmap(w->shadow, w->shadow_len * sizeof(Shadow));
		void* p = mmap(nullptr, q.tls_size * sizeof(Shadow), PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED) {
			w->shadow = nullptr;
			w->shadow_len = 0;
			set_fault(w->L, KBS_E_ARG, "out of memory for the race checker's shadow");
			return false;
		}
		w->shadow = (Shadow*)p;
		w->shadow_len = q.tls_size;
		w->epoch = 0;
	}
	return true;
}

static void run_block_threads(Worker* w, Launch* L, uint64_t b);

// run_block runs block b (a linear index) of the launch.
static void run_block(Worker* w, Launch* L, uint64_t b) {
	WorkerProf* P = w->prof;
	if (P) {
		P->inst.clear();
		P->open.clear();
		P->reqs.clear();
	}
	if (w->acp_groups) memset(w->acp_groups, 0, KBS_MAX_THREADS * sizeof(uint32_t));
	run_block_threads(w, L, b);
	w->gseq.fetch_add(1);
	if (w->npend) resolve_all_pending(w);
	if (w->nacp) acp_reset(w);
	if (P && L->abort.load()) {
		// A block cut short is not counted.
		P->reqs.clear();
		P->open.clear();
	} else if (P) {
		prof_flush(w, -1);
		P->c[KBS_PC_BLOCKS_RUN]++;
		P->c[KBS_PC_WARPS] += (w->n + KBS_WARP - 1) / KBS_WARP;
	}
}

static void run_block_threads(Worker* w, Launch* L, uint64_t b) {
	const kbs_dim3 gd = L->d.grid, bd = L->d.block;
	w->bid = kbs_dim3{(uint32_t)(b % gd.x), (uint32_t)((b / gd.x) % gd.y), (uint32_t)(b / ((uint64_t)gd.x * gd.y))};
	uint32_t n = bd.x * bd.y * bd.z;
	w->n = n;
	w->ndone = 0;
	w->nbarrier = 0;
	w->blocks++;
	if (L->checks & KBS_CHECK_POISON) {
		memset((void*)w->smem_lo, 0xff, w->dyn_lo - w->smem_lo);
		memset((void*)w->dyn_lo, 0xff, L->dyn_bytes);
		uintptr_t after = w->dyn_lo + KBS_DYN_SHARED_MAX;
		memset((void*)after, 0xff, w->smem_lo + w->smem_size - after);
	}
	if (w->epoch > 0xfff00000u) {
		memset(w->shadow, 0, w->shadow_len * sizeof(Shadow));
		w->epoch = 0;
	}
	w->epoch += 1;
	uint32_t nwarps = (n + KBS_WARP - 1) / KBS_WARP;
	for (uint32_t i = 0; i < nwarps; i++) {
		WarpState* ws = &w->warps[i];
		uint32_t m = n - i * KBS_WARP;
		ws->lanes = m >= 32 ? 0xffffffffu : ((1u << m) - 1);
		ws->done = 0;
		ws->epoch = 0;
		for (int j = 0; j < kGroups; j++) ws->g[j].used = false;
	}
	for (uint32_t i = 0; i < n; i++) {
		Fiber* f = fiber_at(w, i);
		f->t.tid = kbs_dim3{i % bd.x, (i / bd.x) % bd.y, i / (bd.x * bd.y)};
		f->t.bid = w->bid;
		f->t.bdim = bd;
		f->t.gdim = gd;
		f->t.linear = i;
		f->t.lane = i % KBS_WARP;
		f->t.warp = i / KBS_WARP;
		f->t.nwarps = nwarps;
		f->t.nthreads = n;
		f->t.magic = KBS_THREAD_MAGIC;
		f->t.ctx = &L->ctx;
		f->state = F_RUNNABLE;
		f->w = w;
		f->stack_lo = w->stacks + (size_t)i * KBS_STACK_SIZE + 4096;
		f->sp = init_frame((char*)f, fiber_main, f);
	}
	for (;;) {
		bool ran = false;
		for (uint32_t i = 0; i < n; i++) {
			Fiber* f = fiber_at(w, i);
			if (f->state != F_RUNNABLE) continue;
			w->cur = f;
			w->switches++;
			kbs_switch(&w->sched_sp, f->sp);
			w->cur = nullptr;
			ran = true;
			if (L->abort.load(std::memory_order_relaxed)) return;
		}
		if (w->ndone == n) return;
		if (w->nbarrier > 0 && w->nbarrier + w->ndone == n) {
			if (!release_barrier(w)) return;
			continue;
		}
		if (ran) continue;
		if (resolve_divergent(w)) continue;
		char desc[1024];
		describe_waits(w, desc, sizeof desc);
		pthread_mutex_lock(&L->mu);
		L->res->block = w->bid;
		pthread_mutex_unlock(&L->mu);
		set_fault(L, KBS_E_DEADLOCK, "deadlock in kernel %s, block (%u,%u,%u): %s", L->k->name, w->bid.x, w->bid.y,
		          w->bid.z, desc);
		return;
	}
}

static void run_launch(Worker* w, Launch* L) {
	tls_worker = w;
	w->L = L;
	if (!ensure_stacks(w, L->d.block.x * L->d.block.y * L->d.block.z)) {
		set_fault(L, KBS_E_ARG, "out of memory for %u thread stacks", L->d.block.x * L->d.block.y * L->d.block.z);
		return;
	}
	if (!bind_module(w, L->mod)) return;
	if (L->grace && !w->pend) w->pend = new GPending[KBS_MAX_THREADS]();
	if (w->pend) {
		for (int i = 0; i < KBS_MAX_THREADS; i++) w->pend[i].active = false;
	}
	w->npend = 0;
	w->prof = nullptr;
	if (L->profile) {
		if (!w->prof_store) w->prof_store = new WorkerProf();
		w->prof = w->prof_store;
		memset(w->prof->c, 0, sizeof w->prof->c);
		w->prof->statics.assign(w->smem_size / 16 + 1, 0);
	}
	uint64_t nrun = L->sample.empty() ? L->nblocks : L->sample.size();
	for (;;) {
		if (L->abort.load(std::memory_order_relaxed)) break;
		uint64_t b = L->next.fetch_add(1);
		if (b >= nrun) break;
		run_block(w, L, L->sample.empty() ? b : L->sample[b]);
	}
	w->cur = nullptr;
}

// ---------------------------------------------------------------------
// The worker pool.

static struct {
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t work = PTHREAD_COND_INITIALIZER;
	pthread_cond_t done = PTHREAD_COND_INITIALIZER;
	pthread_mutex_t launch_mu = PTHREAD_MUTEX_INITIALIZER; // one launch at a time
	int nworkers;
	Worker** workers;
	uint64_t gen;
	Launch* L;
	int pending;
} G;

static void* worker_main(void* arg) {
	Worker* w = (Worker*)arg;
	uint64_t seen = 0;
	for (;;) {
		pthread_mutex_lock(&G.mu);
		while (G.gen == seen) pthread_cond_wait(&G.work, &G.mu);
		seen = G.gen;
		Launch* L = G.L;
		pthread_mutex_unlock(&G.mu);
		if (w->id < L->nworkers) run_launch(w, L);
		pthread_mutex_lock(&G.mu);
		if (--G.pending == 0) pthread_cond_signal(&G.done);
		pthread_mutex_unlock(&G.mu);
	}
	return nullptr;
}

// kbs_init starts the worker pool; later calls do nothing. It returns the
// number of workers, or -1.
KBS_API int kbs_init(int workers) {
	pthread_mutex_lock(&G.mu);
	if (G.workers) {
		int n = G.nworkers;
		pthread_mutex_unlock(&G.mu);
		return n;
	}
	if (workers <= 0) workers = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (workers <= 0) workers = 1;
	G.workers = new Worker*[workers];
	for (int i = 0; i < workers; i++) {
		Worker* w = new (std::nothrow) Worker();
		if (!w) {
			pthread_mutex_unlock(&G.mu);
			return -1;
		}
		memset((void*)w, 0, sizeof *w);
		w->id = i;
		G.workers[i] = w;
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 1 << 20);
		if (pthread_create(&w->th, &attr, worker_main, w) != 0) {
			pthread_attr_destroy(&attr);
			pthread_mutex_unlock(&G.mu);
			return -1;
		}
		pthread_attr_destroy(&attr);
		G.nworkers = i + 1;
	}
	int n = G.nworkers;
	pthread_mutex_unlock(&G.mu);
	return n;
}

KBS_API int kbs_abi_version() { return KBS_ABI_VERSION; }

// ---------------------------------------------------------------------
// Profiling sessions: while one is on, every launch is counted and its
// record kept until the host takes it. Guarded by G.launch_mu.

struct ProfRecord {
	kbs_prof p;
	std::vector<kbs_prof_buf> bufs;
	std::vector<uint64_t> statics;
};

static struct {
	bool on;
	uint64_t sample;
	std::vector<ProfRecord>* recs;
} PS;

// kbs_profile_start profiles the launches that follow; with sample > 0,
// a launch of more blocks runs only a deterministic sample of about that
// many (the corner blocks of the grid and evenly spaced ones), for the
// counters alone: its results are not the kernel's.
KBS_API void kbs_profile_start(uint64_t sample) {
	pthread_mutex_lock(&G.launch_mu);
	PS.on = true;
	PS.sample = sample;
	if (!PS.recs) PS.recs = new std::vector<ProfRecord>();
	PS.recs->clear();
	pthread_mutex_unlock(&G.launch_mu);
}

// kbs_profile_stop ends profiling; the records stay until the next start.
KBS_API int kbs_profile_stop() {
	pthread_mutex_lock(&G.launch_mu);
	PS.on = false;
	int n = PS.recs ? (int)PS.recs->size() : 0;
	pthread_mutex_unlock(&G.launch_mu);
	return n;
}

// kbs_profile_get copies record i; its buffers and static shared chunks
// go to bufs and statics when those are not nil (nbufs and nstatic say
// how many).
KBS_API int kbs_profile_get(int i, kbs_prof* out, kbs_prof_buf* bufs, uint64_t* statics) {
	pthread_mutex_lock(&G.launch_mu);
	int ok = PS.recs && i >= 0 && i < (int)PS.recs->size();
	if (ok) {
		const ProfRecord& r = (*PS.recs)[i];
		*out = r.p;
		if (bufs && !r.bufs.empty()) memcpy(bufs, r.bufs.data(), r.bufs.size() * sizeof(kbs_prof_buf));
		if (statics && !r.statics.empty()) memcpy(statics, r.statics.data(), r.statics.size() * 8);
	}
	pthread_mutex_unlock(&G.launch_mu);
	return ok ? 0 : -1;
}

// kbs_profile_sizes reports the sizes of the profile structures.
KBS_API void kbs_profile_sizes(uint64_t* out) {
	out[0] = sizeof(kbs_prof);
	out[1] = sizeof(kbs_prof_buf);
	out[2] = KBS_PC_N;
}

// sample_blocks picks about n blocks of grid g: its corners and blocks
// spread evenly over the linear order, sorted.
static std::vector<uint64_t> sample_blocks(kbs_dim3 g, uint64_t n) {
	uint64_t N = (uint64_t)g.x * g.y * g.z;
	std::vector<uint64_t> v;
	for (int c = 0; c < 8; c++) {
		uint64_t x = (c & 1) ? g.x - 1 : 0, y = (c & 2) ? g.y - 1 : 0, z = (c & 4) ? g.z - 1 : 0;
		v.push_back(x + (uint64_t)g.x * (y + (uint64_t)g.y * z));
	}
	for (uint64_t i = 0; i < n; i++) v.push_back((uint64_t)(((2 * (unsigned __int128)i + 1) * N) / (2 * n)));
	std::sort(v.begin(), v.end());
	v.erase(std::unique(v.begin(), v.end()), v.end());
	return v;
}

// prof_finish files the profile of launch L.
static void prof_finish(Launch* L) {
	ProfRecord rec;
	memset(&rec.p, 0, sizeof rec.p);
	rec.p.kernel = L->k->name;
	rec.p.module = (void*)L->mod;
	rec.p.grid = L->d.grid;
	rec.p.block = L->d.block;
	rec.p.dyn_shared = L->dyn_bytes;
	std::vector<uint8_t> statics;
	for (int i = 0; i < G.nworkers; i++) {
		Worker* w = G.workers[i];
		rec.p.c[KBS_PC_BARRIERS] += w->barriers;
		rec.p.c[KBS_PC_COLLECTIVES] += w->collectives;
		if (!w->prof || w->L != L) continue;
		for (int j = 0; j < KBS_PC_N; j++) rec.p.c[j] += w->prof->c[j];
		if (statics.size() < w->prof->statics.size()) statics.resize(w->prof->statics.size());
		for (size_t j = 0; j < w->prof->statics.size(); j++) statics[j] |= w->prof->statics[j];
		w->prof = nullptr;
	}
	rec.p.c[KBS_PC_BLOCKS] = L->nblocks;
	rec.p.c[KBS_PC_INSTRUMENTED] = (L->checks & KBS_CHECK_MEMORY) && L->mod->checked;
	for (size_t i = 0; i < L->bufs.size(); i++) {
		uint64_t* rb = L->rd_bits[i].load();
		uint64_t* wb = L->wr_bits[i].load();
		if (!rb && !wb) continue;
		kbs_prof_buf b{L->bufs[i].base, L->bufs[i].size, 0, 0};
		uint64_t words = ((L->bufs[i].size + 31) / 32 + 63) / 64;
		for (uint64_t j = 0; j < words; j++) {
			if (rb) b.read_sectors += __builtin_popcountll(rb[j]);
			if (wb) b.write_sectors += __builtin_popcountll(wb[j]);
		}
		free(rb);
		free(wb);
		rec.bufs.push_back(b);
	}
	for (size_t j = 0; j < statics.size(); j++)
		if (statics[j]) rec.statics.push_back(j * 16);
	rec.p.nbufs = rec.bufs.size();
	rec.p.nstatic = rec.statics.size();
	delete[] L->rd_bits;
	delete[] L->wr_bits;
	PS.recs->push_back(std::move(rec));
}

// kbs_coll_misuse stops the launch with a warp-misuse fault from a
// collective's completion (device code: kbsimt_abi.h).
KBS_API void kbs_coll_misuse(const char* why) {
	Worker* w = tls_worker;
	if (!w || !w->L) return;
	Launch* L = w->L;
	Group* g = w->coll;
	pthread_mutex_lock(&L->mu);
	fill_where(w, w->cur);
	pthread_mutex_unlock(&L->mu);
	set_fault(L, KBS_E_WARP, "kernel %s, block (%u,%u,%u): %s at %s:%d: %s", L->k->name, w->bid.x, w->bid.y, w->bid.z,
	          g ? g->what : "collective", g ? base_name(g->file) : "?", g ? g->line : 0, why);
}

// kbs_launch runs kernel k of mod over the grid and waits for it. The
// result holds the first fault, if any, and the launch's counters.
KBS_API int kbs_launch(void* mod, int k, const kbs_launch_desc* d, kbs_result* res) {
	memset(res, 0, sizeof *res);
	Module* m = (Module*)mod;
	if (!G.workers) {
		res->code = KBS_E_ARG;
		snprintf(res->msg, sizeof res->msg, "kbs_init was not called");
		return res->code;
	}
	if (k < 0 || k >= m->nkernels) {
		res->code = KBS_E_ARG;
		snprintf(res->msg, sizeof res->msg, "no kernel %d in the module", k);
		return res->code;
	}
	const kbs_kernel_desc* kd = &m->kernels[k];
	uint64_t threads = (uint64_t)d->block.x * d->block.y * d->block.z;
	uint64_t blocks = (uint64_t)d->grid.x * d->grid.y * d->grid.z;
	const char* bad = nullptr;
	char why[256];
	if (threads == 0 || blocks == 0) {
		bad = why;
		snprintf(why, sizeof why, "a grid of (%u,%u,%u) blocks of (%u,%u,%u) threads is empty", d->grid.x, d->grid.y,
		         d->grid.z, d->block.x, d->block.y, d->block.z);
	} else if (threads > KBS_MAX_THREADS) {
		bad = why;
		snprintf(why, sizeof why, "a block of (%u,%u,%u) = %llu threads is more than %d", d->block.x, d->block.y,
		         d->block.z, (unsigned long long)threads, KBS_MAX_THREADS);
	} else if (d->block.z > 64) {
		bad = why;
		snprintf(why, sizeof why, "block z size %u is more than 64", d->block.z);
	} else if (d->grid.y > 65535 || d->grid.z > 65535) {
		bad = why;
		snprintf(why, sizeof why, "grid y and z sizes (%u, %u) must be at most 65535", d->grid.y, d->grid.z);
	} else if (kd->dialect == KBS_CUDA && d->nparams != kd->nparams) {
		bad = why;
		snprintf(why, sizeof why, "kernel %s takes %d parameters, the launch gives %d", kd->name, kd->nparams,
		         d->nparams);
	} else if (d->nparams > 256) {
		bad = "more than 256 parameters";
	}
	uint64_t dyn = 0;
	uint64_t tg_off[KBS_MAX_TG] = {0};
	if (!bad) {
		if (kd->dialect == KBS_CUDA) {
			dyn = d->dyn_shared;
		} else {
			// Threadgroup memory regions, 16-byte aligned, with a
			// 16-byte gap between them so the bounds check sees an
			// overrun of one into the next.
			for (int i = 0; i < KBS_MAX_TG; i++) {
				if (!d->tg_len[i]) continue;
				tg_off[i] = dyn;
				dyn += (d->tg_len[i] + 15) / 16 * 16 + 16;
			}
		}
		if (dyn > KBS_DYN_SHARED_MAX) {
			bad = why;
			snprintf(why, sizeof why, "%llu bytes of dynamic shared memory is more than the %d the emulator has",
			         (unsigned long long)dyn, KBS_DYN_SHARED_MAX);
		}
	}
	if (bad) {
		res->code = KBS_E_ARG;
		snprintf(res->msg, sizeof res->msg, "launch of %s: %s", kd->name, bad);
		return res->code;
	}

	pthread_mutex_lock(&G.launch_mu);
	Launch* L = new Launch();
	L->mod = m;
	L->k = kd;
	L->d = *d;
	L->nblocks = blocks;
	L->next.store(0);
	L->abort.store(0);
	pthread_mutex_init(&L->mu, nullptr);
	L->res = res;
	L->races.store(0);
	L->checks = d->checks;
	L->dyn_bytes = dyn;
	L->nworkers = d->workers > 0 && d->workers < G.nworkers ? d->workers : G.nworkers;
	L->deadline = d->timeout_s > 0 ? now_s() + d->timeout_s : 0;
	memset(&L->ctx, 0, sizeof L->ctx);
	for (int i = 0; i < d->nparams; i++) L->params[i] = (void*)(d->arg_blob + d->arg_offsets[i]);
	L->ctx.params = L->params;
	for (int i = 0; i < KBS_MAX_BUFFERS; i++) L->ctx.buffers[i] = d->buffers[i];
	memcpy(L->tg_off, tg_off, sizeof tg_off);
	pthread_mutex_lock(&g_buf_mu);
	if (g_bufs) L->bufs = *g_bufs;
	pthread_mutex_unlock(&g_buf_mu);
	L->nthreads = (uint32_t)threads;
	L->grace = (d->checks & KBS_CHECK_MEMORY) && m->checked && blocks <= (1u << 26) && blocks * threads < 0xffffffffu;
	L->gshadow = nullptr;
	L->syncs = nullptr;
	if (L->grace) {
		L->gshadow = new std::atomic<GShadow*>[L->bufs.size() + 1]();
		L->syncs = new std::atomic<uint8_t>[blocks]();
	}
	L->profile = PS.on;
	L->rd_bits = L->wr_bits = nullptr;
	if (L->profile) {
		// A profiled launch runs without a time limit: profiling is
		// slower, and a sampled launch's blocks are the costly ones.
		L->deadline = 0;
		if (PS.sample && blocks > PS.sample) L->sample = sample_blocks(d->grid, PS.sample);
		L->rd_bits = new std::atomic<uint64_t*>[L->bufs.size() + 1]();
		L->wr_bits = new std::atomic<uint64_t*>[L->bufs.size() + 1]();
	}

	// Workers bind the module's TLS themselves; the Metal threadgroup
	// pointers depend on the worker, so the entry computes them from
	// the offsets (kbs_tg_base below).
	pthread_mutex_lock(&G.mu);
	G.L = L;
	G.gen++;
	G.pending = G.nworkers;
	pthread_cond_broadcast(&G.work);
	while (G.pending > 0) pthread_cond_wait(&G.done, &G.mu);
	pthread_mutex_unlock(&G.mu);

	res->races = L->races.load();
	if (L->profile) prof_finish(L);
	for (int i = 0; i < G.nworkers; i++) {
		Worker* w = G.workers[i];
		res->blocks += w->blocks;
		res->switches += w->switches;
		res->barriers += w->barriers;
		res->collectives += w->collectives;
		res->accesses += w->naccess;
		w->blocks = w->switches = w->barriers = w->collectives = w->naccess = 0;
		w->L = nullptr;
	}
	if (L->grace) {
		for (size_t i = 0; i < L->bufs.size(); i++) {
			GShadow* sh = L->gshadow[i].load();
			if (sh) {
				size_t len = ((L->bufs[i].size + 3) / 4) * sizeof(GShadow);
				munmap(sh, len ? len : 1);
			}
		}
		delete[] L->gshadow;
		delete[] L->syncs;
	}
	int code = res->code;
	pthread_mutex_destroy(&L->mu);
	delete L;
	pthread_mutex_unlock(&G.launch_mu);
	return code;
}

// kbs_tg_base returns the address of the calling thread's block's
// threadgroup memory region i (Metal), or nil when the launch gave it
// no length.
KBS_API void* kbs_tg_base(int i) {
	Worker* w = tls_worker;
	if (!w || !w->L || i < 0 || i >= KBS_MAX_TG || !w->L->d.tg_len[i]) return nullptr;
	return (void*)(w->dyn_lo + w->L->tg_off[i]);
}

// kbs_dyn_len returns the dynamic shared memory bytes of the launch.
KBS_API uint64_t kbs_dyn_len() {
	Worker* w = tls_worker;
	return (w && w->L) ? w->L->dyn_bytes : 0;
}

KBS_API void kbs_redzone(const void* p, uint64_t n) {
	Worker* w = tls_worker;
	if (!w || !w->cur || !w->red) return;
	uint64_t off = (uintptr_t)p - w->smem_lo;
	if (off >= w->smem_size) return;
	std::pair<uint64_t, uint64_t> z{off, n};
	auto it = std::lower_bound(w->red->begin(), w->red->end(), z);
	if (it != w->red->end() && it->first == off) return;
	w->red->insert(it, z);
}



// ---------------------------------------------------------------------
// Global-memory races: accesses of device buffers by two threads of one
// launch, at least one a write, that nothing orders. Within a block a
// barrier orders them (the worker's epoch), and within a warp a warp
// fence; blocks are ordered by nothing, unless they communicate through
// fences or global atomics (then they are exempt: the checker does not
// follow those). Atomics never race with each other and are not tracked;
// separate launches never race. A write that conflicts is reported only
// once it is seen to change the bytes (two threads storing the same
// value are benign on the device): the check waits for the thread's next
// access, or the end of its block.

static inline uint32_t gtid_of(Launch* L, Worker* w, Fiber* f) {
	uint64_t b = w->bid.x + (uint64_t)L->d.grid.x * (w->bid.y + (uint64_t)L->d.grid.y * w->bid.z);
	return (uint32_t)(b * L->nthreads + f->t.linear) + 1;
}

static void describe_gtid(Launch* L, uint32_t g, kbs_dim3* block, kbs_dim3* thread) {
	uint64_t b = (g - 1) / L->nthreads, t = (g - 1) % L->nthreads;
	kbs_dim3 gd = L->d.grid, bd = L->d.block;
	*block = kbs_dim3{(uint32_t)(b % gd.x), (uint32_t)(b / gd.x % gd.y), (uint32_t)(b / ((uint64_t)gd.x * gd.y))};
	*thread = kbs_dim3{(uint32_t)(t % bd.x), (uint32_t)(t / bd.x % bd.y), (uint32_t)(t / ((uint64_t)bd.x * bd.y))};
}

static void report_global_race(Worker* w, Fiber* f, int bi, uintptr_t a, bool write, bool other_write, uint32_t other,
                               uint64_t other_pc, uint64_t pc) {
	Launch* L = w->L;
	if (L->races.fetch_add(1) != 0) return;
	kbs_dim3 ob, ot;
	describe_gtid(L, other, &ob, &ot);
	const BufRange& r = L->bufs[bi];
	pthread_mutex_lock(&L->mu);
	kbs_result* res = L->res;
	if (res->code == KBS_OK) {
		res->code = KBS_E_RACE;
		res->addr = a;
		res->buf_base = r.base;
		res->buf_size = r.size;
		res->block = w->bid;
		res->thread[0] = ot;
		res->thread[1] = f->t.tid;
		res->write[0] = other_write;
		res->write[1] = write;
		res->pc[0] = other_pc;
		res->pc[1] = pc;
		snprintf(res->msg, sizeof res->msg,
		         "global-memory race in kernel %s: %s by thread (%u,%u,%u) of block (%u,%u,%u) and %s by thread (%u,%u,%u) of block (%u,%u,%u), at byte offset %llu of a %llu-byte buffer, with nothing ordering them",
		         L->k->name, other_write ? "write" : "read", ot.x, ot.y, ot.z, ob.x, ob.y, ob.z, write ? "write" : "read",
		         f->t.tid.x, f->t.tid.y, f->t.tid.z, w->bid.x, w->bid.y, w->bid.z, (unsigned long long)(a - r.base),
		         (unsigned long long)r.size);
	}
	pthread_mutex_unlock(&L->mu);
}

// resolve_pending reports thread i's pending conflict if its write
// changed the bytes.
static void resolve_pending(Worker* w, Fiber* f, uint32_t i) {
	GPending* p = &w->pend[i];
	if (!p->active) return;
	p->active = false;
	w->npend--;
	if (memcmp((const void*)p->addr, p->old, p->n) != 0)
		report_global_race(w, f, p->bi, p->addr, true, p->other_write, p->other, p->other_pc, p->pc);
}

// resolve_all_pending settles the block's pending conflicts at its end.
static void resolve_all_pending(Worker* w) {
	for (uint32_t i = 0; i < w->n && w->npend; i++) resolve_pending(w, fiber_at(w, i), i);
	w->npend = 0;
}

// ordered reports whether an earlier access by thread g (block epoch ep,
// warp-fence epoch wep) is ordered before the current thread's access.
static inline bool ordered(Launch* L, Worker* w, Fiber* f, uint32_t me, uint32_t g, uint32_t ep, uint16_t wep) {
	if (g == 0 || g == me) return true;
	uint32_t ob = (g - 1) / L->nthreads, mb = (me - 1) / L->nthreads;
	if (ob != mb) return L->syncs[ob].load(std::memory_order_relaxed) || L->syncs[mb].load(std::memory_order_relaxed);
	if (ep != w->epoch) return true;
	uint32_t ot = (g - 1) % L->nthreads;
	return ot / KBS_WARP == f->t.warp && wep != (uint16_t)w->warps[f->t.warp].epoch;
}

// mark_sync notes that the current block used a fence or a global atomic.
static void mark_sync(Worker* w) {
	Launch* L = w->L;
	uint64_t b = w->bid.x + (uint64_t)L->d.grid.x * (w->bid.y + (uint64_t)L->d.grid.y * w->bid.z);
	L->syncs[b].store(1, std::memory_order_relaxed);
}

static void global_race(Worker* w, Fiber* f, int bi, uintptr_t a, size_t n, bool write, uint64_t pc) {
	Launch* L = w->L;
	const BufRange& r = L->bufs[bi];
	GShadow* sh = L->gshadow[bi].load(std::memory_order_acquire);
	if (!sh) {
		size_t len = ((r.size + 3) / 4) * sizeof(GShadow);
		void* p = mmap(nullptr, len ? len : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED) return;
		GShadow* expect = nullptr;
		if (L->gshadow[bi].compare_exchange_strong(expect, (GShadow*)p)) {
			sh = (GShadow*)p;
		} else {
			munmap(p, len ? len : 1);
			sh = expect;
		}
	}
	uint32_t me = gtid_of(L, w, f);
	uint64_t seq = w->gseq.fetch_add(1) + 1;
	uint32_t ep = w->epoch;
	uint16_t wep = (uint16_t)w->warps[f->t.warp].epoch;
	uint64_t off = a - r.base;
	bool conflict = false, cw = false;
	uint32_t other = 0, oworker = 0;
	uint64_t opc = 0, oseq = 0;
	for (uint64_t g = off / 4; g <= (off + n - 1) / 4; g++) {
		uint64_t lo = std::max<uint64_t>(off, g * 4), hi = std::min<uint64_t>(off + n, g * 4 + 4);
		uint8_t mask = (uint8_t)(((1u << (hi - lo)) - 1) << (lo - g * 4));
		std::atomic<uint8_t>& lk = L->glocks[(g >> 4) & 1023];
		while (lk.exchange(1, std::memory_order_acquire)) {
		}
		GShadow* s = &sh[g];
		if (!conflict && (s->wmask & mask) && !ordered(L, w, f, me, s->w, s->w_ep, s->w_wep)) {
			conflict = true, cw = true, other = s->w, opc = 0, oworker = s->w_worker, oseq = s->w_seq;
		}
		if (write) {
			if (!conflict && (s->r1mask & mask) && !ordered(L, w, f, me, s->r1, s->r1_ep, s->r1_wep))
				conflict = true, cw = false, other = s->r1;
			if (!conflict && (s->r2mask & mask) && !ordered(L, w, f, me, s->r2, s->r2_ep, s->r2_wep))
				conflict = true, cw = false, other = s->r2;
			if (s->w != me || s->w_ep != ep) s->wmask = 0;
			s->w = me, s->w_ep = ep, s->w_wep = wep, s->wmask |= mask;
			s->w_worker = (uint32_t)w->id, s->w_seq = seq;
			s->r1 = s->r2 = 0, s->r1mask = s->r2mask = 0;
		} else if (s->r1 == 0 || s->r1 == me) {
			if (s->r1 != me || s->r1_ep != ep) s->r1mask = 0;
			s->r1 = me, s->r1_ep = ep, s->r1_wep = wep, s->r1mask |= mask;
		} else {
			if (s->r2 != me || s->r2_ep != ep) s->r2mask = 0;
			s->r2 = me, s->r2_ep = ep, s->r2_wep = wep, s->r2mask |= mask;
		}
		lk.store(0, std::memory_order_release);
	}
	if (!conflict) return;
	(void)opc;
	if (!write) {
		report_global_race(w, f, bi, a, false, true, other, 0, pc);
		return;
	}
	// Report the write once it is seen to change the bytes. The bytes
	// before it are the other write's only once that store has landed:
	// another worker's thread may sit between its hook and its store, so
	// wait for that worker to move on (its next global access or block
	// end; a worker never waits for another, and an aborted launch ends
	// the wait). The same worker's fibers switch only after their stores.
	// Two workers whose wide stores conflict in their current hooks would
	// wait for each other: the wait is bounded (a thread preempted between
	// hook and store is the case it covers).
	if (cw && oworker != (uint32_t)w->id) {
		Worker* ow = G.workers[oworker];
		double until = now_s() + 0.05;
		while (ow->gseq.load() == oseq && !L->abort.load() && now_s() < until) sched_yield();
	}
	GPending* p = &w->pend[f->t.linear];
	if (p->active) return;
	p->active = true;
	w->npend++;
	p->addr = a;
	p->n = (uint32_t)std::min<size_t>(n, sizeof p->old);
	memcpy(p->old, (const void*)a, p->n);
	p->other = other;
	p->other_write = cw;
	p->pc = pc;
	p->other_pc = 0;
	p->bi = bi;
}

// ---------------------------------------------------------------------
// The profiler: counting requests the way the hardware serves them.

// prof_access files one lane's access under its request.
static void prof_access(Worker* w, Fiber* f, uintptr_t a, size_t n, int kind, uint64_t pc) {
	WorkerProf* P = w->prof;
	uint32_t& cnt = P->inst[pc << 10 | f->t.linear];
	ReqKey key{pc, f->t.warp, cnt++};
	auto it = P->open.find(key);
	ProfReq* r;
	if (it == P->open.end()) {
		P->open.emplace(key, (uint32_t)P->reqs.size());
		P->reqs.emplace_back();
		r = &P->reqs.back();
		r->pc = pc;
		r->inst = key.inst;
		r->kind = (uint16_t)kind;
		r->warp = (uint16_t)f->t.warp;
		r->lanes = 0;
	} else {
		r = &P->reqs[it->second];
	}
	uint32_t lane = f->t.lane;
	r->lanes |= 1u << lane;
	r->addr[lane] = a;
	r->size[lane] = (uint32_t)std::min<size_t>(n, 1u << 20);
}

// mark_sectors sets the bits of the sectors [a, a+n) of buffer i in bits.
static void mark_sectors(Launch* L, std::atomic<uint64_t*>* bits, int i, uintptr_t a, size_t n) {
	const BufRange& r = L->bufs[i];
	uint64_t* b = bits[i].load(std::memory_order_acquire);
	if (!b) {
		uint64_t words = ((r.size + 31) / 32 + 63) / 64;
		uint64_t* nb = (uint64_t*)calloc(words ? words : 1, 8);
		if (!nb) return;
		if (bits[i].compare_exchange_strong(b, nb)) {
			b = nb;
		} else {
			free(nb);
		}
	}
	for (uint64_t s = (a - r.base) >> 5; s <= (a + n - 1 - r.base) >> 5; s++)
		if (!(__atomic_load_n(&b[s / 64], __ATOMIC_RELAXED) >> (s % 64) & 1))
			__atomic_fetch_or(&b[s / 64], 1ull << (s % 64), __ATOMIC_RELAXED);
}

// count_global counts a global request: its sectors, bytes and lanes.
static void count_global(WorkerProf* P, const ProfReq& r) {
	uint64_t sec[256];
	std::vector<uint64_t> big;
	int ns = 0;
	uint64_t bytes = 0, same = 0;
	for (int l = 0; l < KBS_WARP; l++) {
		if (!(r.lanes >> l & 1)) continue;
		uint64_t a = r.addr[l], n = r.size[l];
		bytes += n;
		if (r.kind == RK_GATOM)
			for (int m = 0; m < l; m++)
				if ((r.lanes >> m & 1) && r.addr[m] == a) {
					same++;
					break;
				}
		for (uint64_t s = a >> 5; s <= (a + n - 1) >> 5; s++) {
			if (ns < 256) sec[ns++] = s;
			else big.push_back(s);
		}
	}
	big.insert(big.end(), sec, sec + ns);
	std::sort(big.begin(), big.end());
	uint64_t nsec = std::unique(big.begin(), big.end()) - big.begin();
	uint64_t lanes = __builtin_popcount(r.lanes);
	switch (r.kind) {
	case RK_GLD:
	case RK_GST: {
		int b = r.kind == RK_GLD ? KBS_PC_GLD_REQ : KBS_PC_GST_REQ;
		P->c[b]++;
		P->c[b + 1] += nsec;
		P->c[b + 2] += bytes;
		P->c[b + 3] += lanes;
		break;
	}
	default:
		P->c[KBS_PC_ATOM_REQ]++;
		P->c[KBS_PC_ATOM_SECTORS] += nsec;
		P->c[KBS_PC_ATOM_LANES] += lanes;
		P->c[KBS_PC_ATOM_SAME] += same;
	}
}

// count_shared counts a shared request's wavefronts under NVIDIA's
// banking: 32 banks of 4-byte words; a warp's 4-byte (or narrower)
// accesses are served together, 8-byte ones by half-warps and 16-byte ones
// by quarter-warps; each phase takes as many wavefronts as the most
// distinct words any one bank holds (lanes reading one word share it).
static void count_shared(WorkerProf* P, const ProfReq& r) {
	uint32_t maxn = 1;
	for (int l = 0; l < KBS_WARP; l++)
		if (r.lanes >> l & 1) maxn = std::max(maxn, r.size[l]);
	uint32_t wpl = (maxn + 3) / 4; // words a lane touches
	wpl = wpl <= 1 ? 1 : wpl <= 2 ? 2 : 4;
	uint32_t lpp = KBS_WARP / wpl; // lanes per phase
	uint64_t waves = 0, ideal = 0;
	for (uint32_t ph = 0; ph < wpl; ph++) {
		uint32_t pl = (r.lanes >> (ph * lpp)) & (lpp == 32 ? 0xffffffffu : ((1u << lpp) - 1));
		if (!pl) continue;
		uint64_t words[KBS_WARP * 8];
		int nw = 0;
		for (uint32_t l = ph * lpp; l < (ph + 1) * lpp; l++) {
			if (!(r.lanes >> l & 1)) continue;
			uint64_t a = r.addr[l], n = r.size[l];
			for (uint64_t x = a >> 2; x <= (a + n - 1) >> 2 && nw < KBS_WARP * 8; x++) words[nw++] = x;
		}
		std::sort(words, words + nw);
		nw = std::unique(words, words + nw) - words;
		uint32_t per[32] = {0}, most = 1;
		for (int i = 0; i < nw; i++) most = std::max(most, ++per[words[i] % 32]);
		waves += most;
		ideal++;
	}
	int b = r.kind == RK_SLD ? KBS_PC_SLD_REQ : KBS_PC_SST_REQ;
	P->c[b]++;
	P->c[b + 1] += waves;
	P->c[b + 2] += ideal;
	P->c[b + 3] += __builtin_popcount(r.lanes);
}

static void count_req(WorkerProf* P, const ProfReq& r) {
	switch (r.kind) {
	case RK_SLD:
	case RK_SST:
		count_shared(P, r);
		break;
	case RK_SATOM:
		P->c[KBS_PC_SATOM_REQ]++;
		P->c[KBS_PC_SATOM_LANES] += __builtin_popcount(r.lanes);
		break;
	default:
		count_global(P, r);
	}
}

// prof_flush counts the pending requests of warp (of every warp when
// warp < 0) and drops them: every lane has passed them.
static void prof_flush(Worker* w, int warp) {
	WorkerProf* P = w->prof;
	if (!P) return;
	if (warp < 0) {
		for (const ProfReq& r : P->reqs) count_req(P, r);
		P->reqs.clear();
		P->open.clear();
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < P->reqs.size(); i++) {
		if (P->reqs[i].warp == warp) count_req(P, P->reqs[i]);
		else P->reqs[k++] = P->reqs[i];
	}
	P->reqs.resize(k);
	P->open.clear();
	for (size_t i = 0; i < P->reqs.size(); i++)
		P->open.emplace(ReqKey{P->reqs[i].pc, P->reqs[i].warp, P->reqs[i].inst}, (uint32_t)i);
}

KBS_API void kbs_prof_mma(int32_t kind) {
	Worker* w = tls_worker;
	if (!w || !w->prof || kind < 0 || kind >= KBS_MMA_KINDS) return;
	w->prof->c[KBS_PC_MMA + kind]++;
}

// ---------------------------------------------------------------------
// Checks: the thread-sanitizer hooks.

static void shared_access(Worker* w, Fiber* f, uintptr_t a, size_t n, bool write, uint64_t pc);
static inline void prof_static(Worker* w, uintptr_t a);

// kbs_in_shared reports whether [p, p+n) lies in the calling block's
// shared memory (ldmatrix and cp.async take only shared addresses).
KBS_API int32_t kbs_in_shared(const void* p, uint64_t n) {
	Worker* w = tls_worker;
	if (!w || !w->cur) return 0;
	uintptr_t a = (uintptr_t)p;
	return a - w->smem_lo < w->smem_size && n <= w->smem_size - (a - w->smem_lo);
}

// Asynchronous copies (cp.async) in a checked module: the device code has
// read the source (its global load is checked and counted there); the
// copy writes the destination now, checked and counted as the store of
// the calling place, and the destination's bytes are marked as pending
// until the thread's cp.async.wait_group lets the copy's group go. Until
// then any access to them, by any thread, the issuer included, is a race;
// after it, the bytes are the issuer's write at that point (other threads
// need a barrier). A block's pending copies are dropped at its end.

static void acp_mark(Worker* w, uintptr_t a, uint32_t n, uint8_t v) {
	Shadow* sh = w->shadow + (a - w->smem_lo);
	for (uint32_t i = 0; i < n; i++) sh[i].async = v;
}

static void acp_reset(Worker* w) {
	for (uint32_t i = 0; i < KBS_MAX_THREADS && w->nacp; i++) {
		for (const AsyncCopy& c : w->acp[i]) {
			acp_mark(w, c.a, c.n, 0);
			w->nacp--;
		}
		w->acp[i].clear();
	}
	w->nacp = 0;
}

KBS_API void kbs_cp_async(void* dst, const void* data, uint32_t n) {
	uint64_t pc = (uint64_t)__builtin_return_address(0);
	Worker* w = tls_worker;
	Fiber* f = w ? w->cur : nullptr;
	uintptr_t a = (uintptr_t)dst;
	if (!f || !w->shadow || a - w->smem_lo >= w->smem_size) {
		memcpy(dst, data, n);
		return;
	}
	if (!w->acp) {
		w->acp = new std::vector<AsyncCopy>[KBS_MAX_THREADS];
		w->acp_groups = new uint32_t[KBS_MAX_THREADS]();
	}
	shared_access(w, f, a, n, true, pc);
	if (w->prof) {
		prof_access(w, f, a, n, RK_SST, pc);
		prof_static(w, a);
	}
	memcpy(dst, data, n);
	uint32_t t = f->t.linear;
	w->acp[t].push_back(AsyncCopy{a, n, w->acp_groups[t], pc});
	acp_mark(w, a, n, 1);
	w->nacp++;
}

// kbs_cp_async_commit closes the calling thread's open group of copies.
KBS_API void kbs_cp_async_commit() {
	Worker* w = tls_worker;
	if (!w || !w->cur || !w->acp_groups) return;
	w->acp_groups[w->cur->t.linear]++;
}

// kbs_cp_async_wait completes the calling thread's committed groups but
// the newest keep ones.
KBS_API void kbs_cp_async_wait(uint32_t keep) {
	Worker* w = tls_worker;
	if (!w || !w->cur || !w->acp) return;
	Fiber* f = w->cur;
	uint32_t t = f->t.linear, g = w->acp_groups[t];
	std::vector<AsyncCopy>& v = w->acp[t];
	size_t k = 0;
	for (size_t i = 0; i < v.size(); i++) {
		AsyncCopy c = v[i];
		if ((uint64_t)c.group + keep < g) {
			acp_mark(w, c.a, c.n, 0);
			w->nacp--;
			shared_access(w, f, c.a, c.n, true, c.pc);
		} else {
			v[k++] = c;
		}
	}
	v.resize(k);
}

static void report_race(Worker* w, Fiber* f, uintptr_t a, const Shadow* s, bool write, bool other_write,
                        uint16_t other_tid, uint64_t other_pc, uint64_t pc) {
	Launch* L = w->L;
	if (L->races.fetch_add(1) != 0) return;
	Fiber* o = fiber_at(w, other_tid);
	pthread_mutex_lock(&L->mu);
	kbs_result* r = L->res;
	if (r->code == KBS_OK) {
		r->code = KBS_E_RACE;
		r->addr = a;
		r->smem_offset = (int64_t)(a - w->smem_lo);
		r->block = w->bid;
		r->thread[0] = o->t.tid;
		r->thread[1] = f->t.tid;
		r->write[0] = other_write;
		r->write[1] = write;
		r->pc[0] = other_pc;
		r->pc[1] = pc;
		// The Go side names the variable from the module's symbols.
		snprintf(r->msg, sizeof r->msg,
		         "shared-memory race in kernel %s, block (%u,%u,%u): %s by thread (%u,%u,%u) and %s by thread (%u,%u,%u) ",
		         L->k->name, w->bid.x, w->bid.y, w->bid.z, other_write ? "write" : "read", o->t.tid.x, o->t.tid.y,
		         o->t.tid.z, write ? "write" : "read", f->t.tid.x, f->t.tid.y, f->t.tid.z);
	}
	pthread_mutex_unlock(&L->mu);
	(void)s;
}

// report_async_race reports an access to a byte that a cp.async of the
// block writes and whose wait_group has not come: the copy may land at
// any time until then (compute-sanitizer's racecheck reports it too).
static void report_async_race(Worker* w, Fiber* f, uintptr_t a, bool write, uint64_t pc) {
	Launch* L = w->L;
	if (L->races.fetch_add(1) != 0) return;
	uint32_t issuer = 0;
	uint64_t ipc = 0;
	for (uint32_t i = 0; i < w->n && !ipc; i++) {
		for (const AsyncCopy& c : w->acp[i]) {
			if (a >= c.a && a < c.a + c.n) {
				issuer = i;
				ipc = c.pc;
				break;
			}
		}
	}
	Fiber* o = fiber_at(w, issuer);
	pthread_mutex_lock(&L->mu);
	kbs_result* r = L->res;
	if (r->code == KBS_OK) {
		r->code = KBS_E_RACE;
		r->addr = a;
		r->smem_offset = (int64_t)(a - w->smem_lo);
		r->aux = 1; // the first access is a cp.async not yet waited for
		r->block = w->bid;
		r->thread[0] = o->t.tid;
		r->thread[1] = f->t.tid;
		r->write[0] = true;
		r->write[1] = write;
		r->pc[0] = ipc;
		r->pc[1] = pc;
		snprintf(r->msg, sizeof r->msg,
		         "shared-memory race in kernel %s, block (%u,%u,%u): cp.async write by thread (%u,%u,%u) and %s by thread (%u,%u,%u) before the copy's cp.async.wait_group",
		         L->k->name, w->bid.x, w->bid.y, w->bid.z, o->t.tid.x, o->t.tid.y, o->t.tid.z, write ? "write" : "read",
		         f->t.tid.x, f->t.tid.y, f->t.tid.z);
	}
	pthread_mutex_unlock(&L->mu);
}

static void shared_access(Worker* w, Fiber* f, uintptr_t a, size_t n, bool write, uint64_t pc) {
	Launch* L = w->L;
	if (a + n > w->smem_lo + w->smem_size) {
		pthread_mutex_lock(&L->mu);
		fill_where(w, f);
		L->res->addr = a;
		L->res->size = n;
		L->res->pc[0] = pc;
		L->res->write[0] = write;
		pthread_mutex_unlock(&L->mu);
		set_fault(L, KBS_E_OOB, "out-of-bounds shared-memory %s of %zu bytes in kernel %s by thread (%u,%u,%u) of block (%u,%u,%u): it runs past the end of shared memory",
		          write ? "write" : "read", n, L->k->name, f->t.tid.x, f->t.tid.y, f->t.tid.z, w->bid.x, w->bid.y, w->bid.z);
		abandon(w);
	}
	if (!w->red->empty()) {
		// The last red zone starting before the access's end.
		uint64_t off = a - w->smem_lo;
		auto it = std::upper_bound(w->red->begin(), w->red->end(), std::make_pair(off + n, (uint64_t)0));
		if (it != w->red->begin() && (--it)->first + it->second > off) {
			pthread_mutex_lock(&L->mu);
			fill_where(w, f);
			L->res->addr = a;
			L->res->size = n;
			L->res->pc[0] = pc;
			L->res->write[0] = write;
			L->res->smem_offset = (int64_t)off;
			L->res->aux = (int64_t)it->first;
			pthread_mutex_unlock(&L->mu);
			set_fault(L, KBS_E_OOB, "out-of-bounds shared-memory %s of %zu bytes in kernel %s by thread (%u,%u,%u) of block (%u,%u,%u)",
			          write ? "write" : "read", n, L->k->name, f->t.tid.x, f->t.tid.y, f->t.tid.z, w->bid.x, w->bid.y, w->bid.z);
			abandon(w);
		}
	}
	if (a + n > w->dyn_lo && a < w->dyn_lo + KBS_DYN_SHARED_MAX) {
		uint64_t off = a - w->dyn_lo;
		bool ok;
		uint64_t limit = L->dyn_bytes;
		if (L->k->dialect == KBS_METAL) {
			ok = false;
			for (int i = 0; i < KBS_MAX_TG; i++) {
				if (L->d.tg_len[i] && off >= L->tg_off[i] && off + n <= L->tg_off[i] + L->d.tg_len[i]) {
					ok = true;
					break;
				}
			}
		} else {
			ok = a >= w->dyn_lo && off + n <= limit;
		}
		if (!ok) {
			pthread_mutex_lock(&L->mu);
			fill_where(w, f);
			L->res->addr = a;
			L->res->size = n;
			L->res->pc[0] = pc;
			L->res->write[0] = write;
			pthread_mutex_unlock(&L->mu);
			if (L->k->dialect == KBS_METAL)
				set_fault(L, KBS_E_OOB, "out-of-bounds threadgroup-memory %s of %zu bytes at offset %llu in kernel %s by thread (%u,%u,%u) of threadgroup (%u,%u,%u): outside every [[threadgroup(i)]] region the launch gave",
				          write ? "write" : "read", n, (unsigned long long)off, L->k->name, f->t.tid.x, f->t.tid.y,
				          f->t.tid.z, w->bid.x, w->bid.y, w->bid.z);
			else
				set_fault(L, KBS_E_OOB, "out-of-bounds dynamic shared-memory %s of %zu bytes at offset %llu in kernel %s by thread (%u,%u,%u) of block (%u,%u,%u): the launch gave %llu bytes",
				          write ? "write" : "read", n, (unsigned long long)off, L->k->name, f->t.tid.x, f->t.tid.y,
				          f->t.tid.z, w->bid.x, w->bid.y, w->bid.z, (unsigned long long)limit);
			abandon(w);
		}
	}
	uint32_t E = w->epoch;
	uint16_t tid = (uint16_t)f->t.linear;
	uint32_t warp = f->t.warp;
	uint32_t wep = w->warps[warp].epoch;
	Shadow* sh = w->shadow + (a - w->smem_lo);
	for (size_t i = 0; i < n; i++) {
		Shadow* s = sh + i;
		if (s->async) report_async_race(w, f, a + i, write, pc);
		if (s->w_ep == E && s->w_tid != tid) {
			bool synced = (uint32_t)s->w_tid / KBS_WARP == warp && s->w_wep != wep;
			if (!synced) report_race(w, f, a + i, s, write, true, s->w_tid, s->w_pc, pc);
		}
		if (write) {
			if (s->r_ep == E) {
				bool race;
				uint16_t other = s->r_tid;
				if (s->r_multi == 2) {
					race = true;
				} else if (s->r_multi == 1) {
					race = (uint32_t)other / KBS_WARP != warp || s->r_wep == wep;
				} else {
					race = other != tid && ((uint32_t)other / KBS_WARP != warp || s->r_wep == wep);
				}
				if (race) {
					if (other == tid) other = s->r_tid2;
					report_race(w, f, a + i, s, true, false, other, s->r_pc, pc);
				}
			}
			s->w_ep = E;
			s->w_tid = tid;
			s->w_wep = wep;
			s->w_pc = pc;
			s->r_ep = 0;
		} else {
			if (s->r_ep != E) {
				s->r_ep = E;
				s->r_tid = tid;
				s->r_wep = wep;
				s->r_multi = 0;
				s->r_pc = pc;
			} else if (s->r_tid != tid) {
				if (s->r_multi < 2) s->r_multi = ((uint32_t)s->r_tid / KBS_WARP == warp) ? 1 : 2;
				s->r_tid2 = tid;
				s->r_wep = wep;
			}
		}
	}
}

// global_access checks an access outside shared memory and the stacks:
// it returns the index in L->bufs of the device buffer it falls in, or -1
// for other memory (kernel parameters, constants).
static int global_access(Worker* w, Fiber* f, uintptr_t a, size_t n, bool write, uint64_t pc) {
	Launch* L = w->L;
	const std::vector<BufRange>& b = L->bufs;
	// The last buffer whose red zone starts at or below a.
	size_t lo = 0, hi = b.size();
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (b[mid].base - kRedZone <= a) lo = mid + 1;
		else hi = mid;
	}
	if (lo > 0) {
		const BufRange& r = b[lo - 1];
		uint64_t inner = (r.size + kAlign - 1) & ~(uint64_t)(kAlign - 1);
		if (a < r.base + inner + kRedZone) {
			if (a >= r.base && a + n <= r.base + r.size) return (int)lo - 1;
			pthread_mutex_lock(&L->mu);
			fill_where(w, f);
			L->res->addr = a;
			L->res->size = n;
			L->res->buf_base = r.base;
			L->res->buf_size = r.size;
			L->res->pc[0] = pc;
			L->res->write[0] = write;
			pthread_mutex_unlock(&L->mu);
			set_fault(L, KBS_E_OOB, "out-of-bounds %s of %zu bytes in kernel %s by thread (%u,%u,%u) of block (%u,%u,%u): byte offset %lld of a %llu-byte buffer",
			          write ? "write" : "read", n, L->k->name, f->t.tid.x, f->t.tid.y, f->t.tid.z, w->bid.x, w->bid.y,
			          w->bid.z, (long long)(int64_t)(a - r.base), (unsigned long long)r.size);
			abandon(w);
		}
	}
	if (a < 65536) {
		pthread_mutex_lock(&L->mu);
		fill_where(w, f);
		L->res->addr = a;
		L->res->size = n;
		L->res->pc[0] = pc;
		L->res->write[0] = write;
		pthread_mutex_unlock(&L->mu);
		set_fault(L, KBS_E_NULL, "null pointer %s (address 0x%llx) in kernel %s by thread (%u,%u,%u) of block (%u,%u,%u)",
		          write ? "write" : "read", (unsigned long long)a, L->k->name, f->t.tid.x, f->t.tid.y, f->t.tid.z,
		          w->bid.x, w->bid.y, w->bid.z);
		abandon(w);
	}
	return -1;
}

// prof_static notes a touched chunk of static shared memory.
static inline void prof_static(Worker* w, uintptr_t a) {
	if (a >= w->dyn_lo && a < w->dyn_lo + KBS_DYN_SHARED_MAX) return;
	size_t i = (a - w->smem_lo) / 16;
	if (i < w->prof->statics.size()) w->prof->statics[i] = 1;
}

static inline void access(uintptr_t a, size_t n, bool write, void* pc) {
	Worker* w = tls_worker;
	if (!w) return;
	Fiber* f = w->cur;
	if (!f) return;
	if ((++w->naccess & 0xffff) == 0) check_deadline(w);
	if (w->npend) resolve_pending(w, f, f->t.linear);
	// A thread's own stack (or, through a collective, another's).
	if (a - (uintptr_t)w->stacks < (uintptr_t)w->nstacks * KBS_STACK_SIZE) return;
	if (a - w->smem_lo < w->smem_size) {
		shared_access(w, f, a, n, write, (uint64_t)pc);
		if (w->prof) {
			prof_access(w, f, a, n, write ? RK_SST : RK_SLD, (uint64_t)pc);
			prof_static(w, a);
		}
		return;
	}
	int bi = global_access(w, f, a, n, write, (uint64_t)pc);
	if (bi >= 0 && w->L->grace) global_race(w, f, bi, a, n, write, (uint64_t)pc);
	if (w->prof && bi >= 0) {
		prof_access(w, f, a, n, write ? RK_GST : RK_GLD, (uint64_t)pc);
		mark_sectors(w->L, write ? w->L->wr_bits : w->L->rd_bits, bi, a, n);
	}
}

#define RET __builtin_return_address(0)
#define HOOK extern "C" __attribute__((visibility("default")))

HOOK void __tsan_init() {}
HOOK void __tsan_func_entry(void*) {
	Worker* w = tls_worker;
	if (!w || !w->cur) return;
	char* sp = (char*)__builtin_frame_address(0);
	if (sp < w->cur->stack_lo + 8192) {
		Fiber* f = w->cur;
		fill_where(w, f);
		set_fault(w->L, KBS_E_STACK, "thread (%u,%u,%u) of block (%u,%u,%u) in kernel %s overflows its %d KiB stack (deep recursion or a large local array?)",
		          f->t.tid.x, f->t.tid.y, f->t.tid.z, w->bid.x, w->bid.y, w->bid.z, w->L->k->name,
		          KBS_STACK_SIZE / 1024);
		abandon(w);
	}
}
HOOK void __tsan_func_exit() {}
HOOK void __tsan_vptr_update(void**, void*) {}
HOOK void __tsan_vptr_read(void**) {}

#define RW(N)                                                                                   \
	HOOK void __tsan_read##N(void* a) { access((uintptr_t)a, N, false, RET); }                  \
	HOOK void __tsan_write##N(void* a) { access((uintptr_t)a, N, true, RET); }                  \
	HOOK void __tsan_unaligned_read##N(void* a) { access((uintptr_t)a, N, false, RET); }        \
	HOOK void __tsan_unaligned_write##N(void* a) { access((uintptr_t)a, N, true, RET); }        \
	HOOK void __tsan_volatile_read##N(void* a) { access((uintptr_t)a, N, false, RET); }         \
	HOOK void __tsan_volatile_write##N(void* a) { access((uintptr_t)a, N, true, RET); }         \
	HOOK void __tsan_unaligned_volatile_read##N(void* a) { access((uintptr_t)a, N, false, RET); } \
	HOOK void __tsan_unaligned_volatile_write##N(void* a) { access((uintptr_t)a, N, true, RET); }
RW(1)
RW(2)
RW(4)
RW(8)
RW(16)
#undef RW

HOOK void __tsan_read_range(void* a, unsigned long n) {
	if (n) access((uintptr_t)a, n, false, RET);
}
HOOK void __tsan_write_range(void* a, unsigned long n) {
	if (n) access((uintptr_t)a, n, true, RET);
}

// Atomics: checked for bounds like any access (an atomic never races with
// another atomic, so they skip the race shadow), then done for real: the
// blocks of a launch run in parallel.
static inline void atomic_access(void* a, size_t n, void* pc) {
	Worker* w = tls_worker;
	if (!w || !w->cur) return;
	uintptr_t p = (uintptr_t)a;
	if (p - (uintptr_t)w->stacks < (uintptr_t)w->nstacks * KBS_STACK_SIZE) return;
	if (p - w->smem_lo < w->smem_size) {
		if (w->prof) prof_access(w, w->cur, p, n, RK_SATOM, (uint64_t)pc);
		return;
	}
	int bi = global_access(w, w->cur, p, n, true, (uint64_t)pc);
	if (bi >= 0 && w->L->grace) mark_sync(w);
	if (w->prof && bi >= 0) {
		prof_access(w, w->cur, p, n, RK_GATOM, (uint64_t)pc);
		mark_sectors(w->L, w->L->rd_bits, bi, p, n);
		mark_sectors(w->L, w->L->wr_bits, bi, p, n);
	}
}

#define RMW(N, T, op, builtin)                                                    \
	HOOK T __tsan_atomic##N##_##op(volatile T* a, T v, int) {                     \
		atomic_access((void*)a, sizeof(T), RET);                                  \
		return builtin(a, v, __ATOMIC_SEQ_CST);                                   \
	}
#define ATOMICS(N, T)                                                                                   \
	HOOK T __tsan_atomic##N##_load(const volatile T* a, int) {                                          \
		atomic_access((void*)a, sizeof(T), RET);                                                        \
		return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                    \
	}                                                                                                   \
	HOOK void __tsan_atomic##N##_store(volatile T* a, T v, int) {                                       \
		atomic_access((void*)a, sizeof(T), RET);                                                        \
		__atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                       \
	}                                                                                                   \
	RMW(N, T, exchange, __atomic_exchange_n)                                                            \
	RMW(N, T, fetch_add, __atomic_fetch_add)                                                            \
	RMW(N, T, fetch_sub, __atomic_fetch_sub)                                                            \
	RMW(N, T, fetch_and, __atomic_fetch_and)                                                            \
	RMW(N, T, fetch_or, __atomic_fetch_or)                                                              \
	RMW(N, T, fetch_xor, __atomic_fetch_xor)                                                            \
	RMW(N, T, fetch_nand, __atomic_fetch_nand)                                                          \
	HOOK int __tsan_atomic##N##_compare_exchange_strong(volatile T* a, T* c, T v, int, int) {           \
		atomic_access((void*)a, sizeof(T), RET);                                                        \
		return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);         \
	}                                                                                                   \
	HOOK int __tsan_atomic##N##_compare_exchange_weak(volatile T* a, T* c, T v, int, int) {             \
		return __tsan_atomic##N##_compare_exchange_strong(a, c, v, 0, 0);                               \
	}                                                                                                   \
	HOOK T __tsan_atomic##N##_compare_exchange_val(volatile T* a, T c, T v, int, int) {                 \
		__tsan_atomic##N##_compare_exchange_strong(a, &c, v, 0, 0);                                     \
		return c;                                                                                       \
	}
ATOMICS(8, uint8_t)
ATOMICS(16, uint16_t)
ATOMICS(32, uint32_t)
ATOMICS(64, uint64_t)
#undef RMW
#undef ATOMICS

HOOK void __tsan_atomic_thread_fence(int) {
	Worker* w = tls_worker;
	if (w && w->cur && w->L && w->L->grace) mark_sync(w);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}
HOOK void __tsan_atomic_signal_fence(int) {}

KBS_API uint64_t kbs_clock64() {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// kbs_sizes reports the sizes of the structures the Go package mirrors,
// so it can refuse a runtime whose layout it does not know.
KBS_API void kbs_sizes(uint64_t* out) {
	out[0] = sizeof(kbs_result);
	out[1] = sizeof(kbs_launch_desc);
	out[2] = sizeof(kbs_kernel_desc);
	out[3] = sizeof(kbs_thread);
}
