// kbsimt_cuda.h: CUDA C++ on the SIMT emulator. The build force-includes
// it before a .cu source; cuda_fp16.h, cuda_bf16.h, cuda_runtime.h and
// cuda.h in this directory include it too, so a kernel's own #includes
// work unchanged. __global__ and __shared__ are not macros: the
// translator rewrites them (a kernel must be extern "C"; a __shared__
// variable becomes thread_local, which is per block here).
#ifndef KBSIMT_CUDA_H
#define KBSIMT_CUDA_H

#include "kbsimt_device.h"
// assert is available without an #include, as under NVRTC.
#include "assert.h"

#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __constant__
#define __managed__
#define __grid_constant__
#define __CUDACC__ 1
#define __NVCC__ 1
#define CUDART_VERSION 12000
#define CUDART_INF_F HUGE_VALF
#define CUDART_NAN_F __builtin_nanf("")

// ---------------------------------------------------------------------
// Vector types, laid out as CUDA lays them out.

#define KBS_VEC1(T, N, A) struct alignas(A) N##1 { T x; };
#define KBS_VEC2(T, N, A) struct alignas(A) N##2 { T x, y; };
#define KBS_VEC3(T, N) struct N##3 { T x, y, z; };
#define KBS_VEC4(T, N, A) struct alignas(A) N##4 { T x, y, z, w; };
#define KBS_VECS(T, N, S)                                                                   \
	KBS_VEC1(T, N, S) KBS_VEC2(T, N, 2 * S) KBS_VEC3(T, N) KBS_VEC4(T, N, 4 * S)        \
	KBS_INLINE N##1 make_##N##1(T x) { return N##1{x}; }                                \
	KBS_INLINE N##2 make_##N##2(T x, T y) { return N##2{x, y}; }                        \
	KBS_INLINE N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }                \
	KBS_INLINE N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
KBS_VECS(signed char, char, 1)
KBS_VECS(unsigned char, uchar, 1)
KBS_VECS(short, short, 2)
KBS_VECS(unsigned short, ushort, 2)
KBS_VECS(int, int, 4)
KBS_VECS(float, float, 4)
KBS_VECS(long long, longlong, 8)
KBS_VECS(unsigned long long, ulonglong, 8)
#undef KBS_VECS
#undef KBS_VEC1
#undef KBS_VEC2
#undef KBS_VEC3
#undef KBS_VEC4
struct alignas(4) uint1 { unsigned x; };
struct alignas(8) uint2 { unsigned x, y; };
typedef kbs_dim3 uint3;
struct alignas(16) uint4 { unsigned x, y, z, w; };
struct alignas(8) double1 { double x; };
struct alignas(16) double2 { double x, y; };
KBS_INLINE uint1 make_uint1(unsigned x) { return uint1{x}; }
KBS_INLINE uint2 make_uint2(unsigned x, unsigned y) { return uint2{x, y}; }
KBS_INLINE uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return uint3{x, y, z}; }
KBS_INLINE uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }
KBS_INLINE double2 make_double2(double x, double y) { return double2{x, y}; }

struct dim3 {
	unsigned x, y, z;
	KBS_INLINE dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
	KBS_INLINE dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
	KBS_INLINE operator uint3() const { return uint3{x, y, z}; }
};

// ---------------------------------------------------------------------
// Built-in variables: the calling thread's record.

#define threadIdx (kbs::self()->tid)
#define blockIdx (kbs::self()->bid)
#define blockDim (kbs::self()->bdim)
#define gridDim (kbs::self()->gdim)
#define warpSize 32

// ---------------------------------------------------------------------
// Synchronization.

KBS_INLINE void __syncthreads(KBS_SITE) { kbs_barrier("__syncthreads", nullptr, nullptr, kbs_file, kbs_line); }

namespace kbs {
struct BarVote {
	int32_t pred;
	int32_t out;
	int32_t op; // 0 count, 1 and, 2 or
};
inline void barvote_done(void** d, uint32_t n) {
	int32_t count = 0;
	for (uint32_t i = 0; i < n; i++) count += ((BarVote*)d[i])->pred != 0;
	for (uint32_t i = 0; i < n; i++) {
		BarVote* b = (BarVote*)d[i];
		b->out = b->op == 0 ? count : b->op == 1 ? (uint32_t)count == n : count > 0;
	}
}
KBS_INLINE int barvote(const char* what, int pred, int op, const char* file, int line) {
	BarVote b{pred, 0, op};
	kbs_barrier(what, &b, &barvote_done, file, line);
	return b.out;
}
} // namespace kbs

KBS_INLINE int __syncthreads_count(int pred, KBS_SITE) {
	return kbs::barvote("__syncthreads_count", pred, 0, kbs_file, kbs_line);
}
KBS_INLINE int __syncthreads_and(int pred, KBS_SITE) {
	return kbs::barvote("__syncthreads_and", pred, 1, kbs_file, kbs_line);
}
KBS_INLINE int __syncthreads_or(int pred, KBS_SITE) {
	return kbs::barvote("__syncthreads_or", pred, 2, kbs_file, kbs_line);
}
KBS_INLINE void __syncwarp(unsigned mask = 0xffffffffu, KBS_SITE) {
	kbs::collective("__syncwarp", mask, KBS_COLL_MASKED | KBS_COLL_FENCE, nullptr, nullptr, kbs_file, kbs_line);
}
KBS_INLINE void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
KBS_INLINE void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
KBS_INLINE void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// __kbsimt_mma tells the profiler that the calling warp does one
// tensor-core product of a kind (KBS_MMA_M16N8K16_F16, ...): a kernel's
// emulator implementation of an mma.sync calls it on every lane, and lane
// 0's call counts the warp's product.
KBS_INLINE void __kbsimt_mma(int kind) {
	if (kbs::self()->lane == 0) kbs_prof_mma(kind);
}

[[noreturn]] KBS_INLINE void __trap(KBS_SITE) { kbs_trap("__trap()", kbs_file, kbs_line); }
KBS_INLINE void __brkpt(KBS_SITE) { kbs_trap("__brkpt()", kbs_file, kbs_line); }
KBS_INLINE void __nanosleep(unsigned) {}
KBS_INLINE long long clock64() { return (long long)kbs_clock64(); }

// ---------------------------------------------------------------------
// Warp shuffles and votes.

namespace kbs {
KBS_INLINE int check_width(const char* what, int width, const char* file, int line) {
	if (width <= 0 || width > 32 || (width & (width - 1)) != 0) kbs_trap(what, file, line);
	return width;
}
} // namespace kbs

template <class T>
KBS_INLINE T __shfl_sync(unsigned mask, T var, int srcLane, int width = 32, KBS_SITE) {
	kbs::check_width("__shfl_sync: width is not a power of two from 1 to 32", width, kbs_file, kbs_line);
	int lane = (int)kbs::self()->lane;
	int src = (lane & ~(width - 1)) + (srcLane & (width - 1));
	return kbs::shuffle("__shfl_sync", mask, KBS_COLL_MASKED, var, src, kbs_file, kbs_line);
}
template <class T>
KBS_INLINE T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32, KBS_SITE) {
	kbs::check_width("__shfl_up_sync: width is not a power of two from 1 to 32", width, kbs_file, kbs_line);
	int lane = (int)kbs::self()->lane;
	int src = (lane & (width - 1)) >= (int)delta ? lane - (int)delta : -1;
	return kbs::shuffle("__shfl_up_sync", mask, KBS_COLL_MASKED, var, src, kbs_file, kbs_line);
}
template <class T>
KBS_INLINE T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32, KBS_SITE) {
	kbs::check_width("__shfl_down_sync: width is not a power of two from 1 to 32", width, kbs_file, kbs_line);
	int lane = (int)kbs::self()->lane;
	int src = (lane & (width - 1)) + (int)delta < width ? lane + (int)delta : -1;
	return kbs::shuffle("__shfl_down_sync", mask, KBS_COLL_MASKED, var, src, kbs_file, kbs_line);
}
template <class T>
KBS_INLINE T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = 32, KBS_SITE) {
	kbs::check_width("__shfl_xor_sync: width is not a power of two from 1 to 32", width, kbs_file, kbs_line);
	int lane = (int)kbs::self()->lane;
	int src = lane ^ laneMask;
	// A lane may read earlier groups of width lanes, never later ones.
	if (src >= ((lane / width) + 1) * width) src = -1;
	return kbs::shuffle("__shfl_xor_sync", mask, KBS_COLL_MASKED, var, src, kbs_file, kbs_line);
}
KBS_INLINE unsigned __ballot_sync(unsigned mask, int pred, KBS_SITE) {
	return kbs::vote("__ballot_sync", mask, KBS_COLL_MASKED, pred != 0, kbs_file, kbs_line).ballot;
}
KBS_INLINE int __any_sync(unsigned mask, int pred, KBS_SITE) {
	return kbs::vote("__any_sync", mask, KBS_COLL_MASKED, pred != 0, kbs_file, kbs_line).ballot != 0;
}
KBS_INLINE int __all_sync(unsigned mask, int pred, KBS_SITE) {
	kbs::Vote v = kbs::vote("__all_sync", mask, KBS_COLL_MASKED, pred != 0, kbs_file, kbs_line);
	return v.ballot == v.active;
}
KBS_INLINE int __uni_sync(unsigned mask, int pred, KBS_SITE) {
	kbs::Vote v = kbs::vote("__uni_sync", mask, KBS_COLL_MASKED, pred != 0, kbs_file, kbs_line);
	return v.ballot == 0 || v.ballot == v.active;
}
// __activemask: the lanes of the caller's warp that exist (the emulator
// does not track convergence; lanes that exited count too).
KBS_INLINE unsigned __activemask() {
	const kbs_thread* t = kbs::self();
	unsigned n = t->nthreads - t->warp * 32;
	return n >= 32 ? 0xffffffffu : ((1u << n) - 1);
}
KBS_INLINE unsigned __lanemask_lt() { return (1u << kbs::self()->lane) - 1; }
KBS_INLINE unsigned __lanemask_le() { return ((1u << kbs::self()->lane) << 1) - 1; }
KBS_INLINE unsigned __lanemask_eq() { return 1u << kbs::self()->lane; }

namespace kbs {
template <class T>
struct Match {
	T v;
	uint32_t out;
};
template <class T>
void match_done(void** d, uint32_t active) {
	for (int l = 0; l < KBS_WARP; l++) {
		if (!(active >> l & 1)) continue;
		Match<T>* p = (Match<T>*)d[l];
		uint32_t m = 0;
		for (int j = 0; j < KBS_WARP; j++)
			if ((active >> j & 1) && memcmp(&((Match<T>*)d[j])->v, &p->v, sizeof(T)) == 0) m |= 1u << j;
		p->out = m;
	}
}
} // namespace kbs
template <class T>
KBS_INLINE unsigned __match_any_sync(unsigned mask, T value, KBS_SITE) {
	kbs::Match<T> m{value, 0};
	kbs::collective("__match_any_sync", mask, KBS_COLL_MASKED, &m, &kbs::match_done<T>, kbs_file, kbs_line);
	return m.out;
}

KBS_INLINE unsigned __reduce_add_sync(unsigned mask, unsigned v, KBS_SITE) {
	return kbs::reduce<unsigned>("__reduce_add_sync", mask, KBS_COLL_MASKED, kbs::RSum, 0, v, kbs_file, kbs_line);
}
KBS_INLINE int __reduce_add_sync(unsigned mask, int v, KBS_SITE) {
	return kbs::reduce<int>("__reduce_add_sync", mask, KBS_COLL_MASKED, kbs::RSum, 0, v, kbs_file, kbs_line);
}
KBS_INLINE unsigned __reduce_min_sync(unsigned mask, unsigned v, KBS_SITE) {
	return kbs::reduce<unsigned>("__reduce_min_sync", mask, KBS_COLL_MASKED, kbs::RMin, 0, v, kbs_file, kbs_line);
}
KBS_INLINE int __reduce_min_sync(unsigned mask, int v, KBS_SITE) {
	return kbs::reduce<int>("__reduce_min_sync", mask, KBS_COLL_MASKED, kbs::RMin, 0, v, kbs_file, kbs_line);
}
KBS_INLINE unsigned __reduce_max_sync(unsigned mask, unsigned v, KBS_SITE) {
	return kbs::reduce<unsigned>("__reduce_max_sync", mask, KBS_COLL_MASKED, kbs::RMax, 0, v, kbs_file, kbs_line);
}
KBS_INLINE int __reduce_max_sync(unsigned mask, int v, KBS_SITE) {
	return kbs::reduce<int>("__reduce_max_sync", mask, KBS_COLL_MASKED, kbs::RMax, 0, v, kbs_file, kbs_line);
}

// ---------------------------------------------------------------------
// Atomics.

template <class T>
KBS_INLINE T atomicAdd(T* p, T v) { return kbs::atomic_add(p, v); }
template <class T>
KBS_INLINE T atomicSub(T* p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }
template <class T>
KBS_INLINE T atomicExch(T* p, T v) {
	if constexpr (std::is_integral<T>::value) {
		return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
	} else {
		return kbs::atomic_update(p, [v](T) { return v; });
	}
}
template <class T>
KBS_INLINE T atomicMin(T* p, T v) { return kbs::atomic_update(p, [v](T c) { return v < c ? v : c; }); }
template <class T>
KBS_INLINE T atomicMax(T* p, T v) { return kbs::atomic_update(p, [v](T c) { return v > c ? v : c; }); }
template <class T>
KBS_INLINE T atomicAnd(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }
template <class T>
KBS_INLINE T atomicOr(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }
template <class T>
KBS_INLINE T atomicXor(T* p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }
template <class T>
KBS_INLINE T atomicCAS(T* p, T compare, T val) {
	__atomic_compare_exchange_n(p, &compare, val, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	return compare;
}
KBS_INLINE unsigned atomicInc(unsigned* p, unsigned val) {
	return kbs::atomic_update(p, [val](unsigned c) { return c >= val ? 0u : c + 1; });
}
KBS_INLINE unsigned atomicDec(unsigned* p, unsigned val) {
	return kbs::atomic_update(p, [val](unsigned c) { return (c == 0 || c > val) ? val : c - 1; });
}
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicMax_block atomicMax
#define atomicMin_block atomicMin
#define atomicCAS_block atomicCAS
#define atomicExch_block atomicExch

// ---------------------------------------------------------------------
// Math and bit intrinsics.

using std::isfinite;
using std::isinf;
using std::isnan;
using std::signbit;

template <class A, class B>
KBS_INLINE typename std::common_type<A, B>::type min(A a, B b) {
	typedef typename std::common_type<A, B>::type C;
	return C(b) < C(a) ? C(b) : C(a);
}
template <class A, class B>
KBS_INLINE typename std::common_type<A, B>::type max(A a, B b) {
	typedef typename std::common_type<A, B>::type C;
	return C(b) > C(a) ? C(b) : C(a);
}
KBS_INLINE unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
KBS_INLINE unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }
KBS_INLINE long long llmin(long long a, long long b) { return a < b ? a : b; }
KBS_INLINE long long llmax(long long a, long long b) { return a > b ? a : b; }

KBS_INLINE float __expf(float x) { return expf(x); }
KBS_INLINE float __exp10f(float x) { return powf(10.0f, x); }
KBS_INLINE float exp10f(float x) { return powf(10.0f, x); }
KBS_INLINE float __logf(float x) { return logf(x); }
KBS_INLINE float __log2f(float x) { return log2f(x); }
KBS_INLINE float __log10f(float x) { return log10f(x); }
KBS_INLINE float __sinf(float x) { return sinf(x); }
KBS_INLINE float __cosf(float x) { return cosf(x); }
KBS_INLINE float __tanf(float x) { return tanf(x); }
KBS_INLINE void __sincosf(float x, float* s, float* c) { *s = sinf(x), *c = cosf(x); }
KBS_INLINE float __powf(float x, float y) { return powf(x, y); }
KBS_INLINE float __fdividef(float a, float b) { return a / b; }
KBS_INLINE float __fdiv_rn(float a, float b) { return a / b; }
KBS_INLINE float __fadd_rn(float a, float b) { return a + b; }
KBS_INLINE float __fsub_rn(float a, float b) { return a - b; }
KBS_INLINE float __fmul_rn(float a, float b) { return a * b; }
KBS_INLINE float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
KBS_INLINE float __frcp_rn(float x) { return 1.0f / x; }
KBS_INLINE float __fsqrt_rn(float x) { return sqrtf(x); }
KBS_INLINE float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
KBS_INLINE float rsqrtf(float x) { return 1.0f / sqrtf(x); }
KBS_INLINE double rsqrt(double x) { return 1.0 / sqrt(x); }
KBS_INLINE float rcbrtf(float x) { return 1.0f / cbrtf(x); }
KBS_INLINE float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : (x == x ? x : 0.0f)); }

KBS_INLINE int __float2int_rn(float x) { return (int)nearbyintf(x); }
KBS_INLINE int __float2int_rz(float x) { return (int)x; }
KBS_INLINE int __float2int_rd(float x) { return (int)floorf(x); }
KBS_INLINE int __float2int_ru(float x) { return (int)ceilf(x); }
KBS_INLINE unsigned __float2uint_rn(float x) { return (unsigned)nearbyintf(x); }
KBS_INLINE unsigned __float2uint_rz(float x) { return (unsigned)x; }
KBS_INLINE float __int2float_rn(int x) { return (float)x; }
KBS_INLINE float __uint2float_rn(unsigned x) { return (float)x; }
KBS_INLINE float __int_as_float(int x) { return kbs::bit_cast<float>(x); }
KBS_INLINE int __float_as_int(float x) { return kbs::bit_cast<int>(x); }
KBS_INLINE float __uint_as_float(unsigned x) { return kbs::bit_cast<float>(x); }
KBS_INLINE unsigned __float_as_uint(float x) { return kbs::bit_cast<unsigned>(x); }
KBS_INLINE double __longlong_as_double(long long x) { return kbs::bit_cast<double>(x); }
KBS_INLINE long long __double_as_longlong(double x) { return kbs::bit_cast<long long>(x); }

KBS_INLINE int __popc(unsigned x) { return __builtin_popcount(x); }
KBS_INLINE int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
KBS_INLINE int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
KBS_INLINE int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
KBS_INLINE int __ffs(int x) { return __builtin_ffs(x); }
KBS_INLINE int __ffsll(long long x) { return __builtin_ffsll(x); }
KBS_INLINE unsigned __brev(unsigned x) {
	x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
	x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
	x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
	return __builtin_bswap32(x);
}
KBS_INLINE unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
	uint64_t v = ((uint64_t)y << 32) | x;
	unsigned r = 0;
	for (int i = 0; i < 4; i++) r |= (unsigned)((v >> (((s >> (4 * i)) & 7) * 8)) & 0xff) << (8 * i);
	return r;
}
KBS_INLINE unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
	uint64_t v = ((uint64_t)hi << 32) | lo;
	return (unsigned)((v << (shift & 31)) >> 32);
}
KBS_INLINE unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
	uint64_t v = ((uint64_t)hi << 32) | lo;
	return (unsigned)(v >> (shift & 31));
}
KBS_INLINE int __mul24(int a, int b) { return (int)(((int64_t)(a << 8 >> 8) * (int64_t)(b << 8 >> 8))); }
KBS_INLINE unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
KBS_INLINE int __mulhi(int a, int b) { return (int)(((int64_t)a * b) >> 32); }
KBS_INLINE unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((uint64_t)a * b) >> 32); }

// Byte-wise SIMD (ggml's quantized dot products use these).
KBS_INLINE int __dp4a(int a, int b, int c) {
	for (int i = 0; i < 4; i++) c += (int)(int8_t)(a >> (8 * i)) * (int)(int8_t)(b >> (8 * i));
	return c;
}
KBS_INLINE unsigned __dp4a(unsigned a, unsigned b, unsigned c) {
	for (int i = 0; i < 4; i++) c += ((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
	return c;
}
KBS_INLINE int __dp2a_lo(int a, int b, int c) {
	for (int i = 0; i < 2; i++) c += (int)(int16_t)(a >> (16 * i)) * (int)(int8_t)(b >> (8 * i));
	return c;
}
namespace kbs {
template <class F>
KBS_INLINE unsigned bytewise(unsigned a, unsigned b, F f) {
	unsigned r = 0;
	for (int i = 0; i < 4; i++) r |= ((unsigned)f((int8_t)(a >> (8 * i)), (int8_t)(b >> (8 * i))) & 0xffu) << (8 * i);
	return r;
}
} // namespace kbs
KBS_INLINE unsigned __vadd4(unsigned a, unsigned b) {
	return kbs::bytewise(a, b, [](int x, int y) { return x + y; });
}
KBS_INLINE unsigned __vsub4(unsigned a, unsigned b) {
	return kbs::bytewise(a, b, [](int x, int y) { return x - y; });
}
KBS_INLINE unsigned __vsubss4(unsigned a, unsigned b) {
	return kbs::bytewise(a, b, [](int x, int y) { int d = x - y; return d < -128 ? -128 : d > 127 ? 127 : d; });
}
KBS_INLINE unsigned __vaddss4(unsigned a, unsigned b) {
	return kbs::bytewise(a, b, [](int x, int y) { int d = x + y; return d < -128 ? -128 : d > 127 ? 127 : d; });
}
KBS_INLINE unsigned __vcmpeq4(unsigned a, unsigned b) {
	return kbs::bytewise(a, b, [](int x, int y) { return x == y ? 0xff : 0; });
}
KBS_INLINE unsigned __vcmpne4(unsigned a, unsigned b) {
	return kbs::bytewise(a, b, [](int x, int y) { return x != y ? 0xff : 0; });
}

template <class T>
KBS_INLINE T __ldg(const T* p) { return *p; }
template <class T>
KBS_INLINE T __ldcg(const T* p) { return *p; }
template <class T>
KBS_INLINE T __ldcs(const T* p) { return *p; }
template <class T>
KBS_INLINE T __ldca(const T* p) { return *p; }
template <class T>
KBS_INLINE void __stcg(T* p, T v) { *p = v; }
template <class T>
KBS_INLINE void __stcs(T* p, T v) { *p = v; }

// ---------------------------------------------------------------------
// cuda_fp16.h and cuda_bf16.h.

typedef kbs::half __half;
typedef kbs::half half;
typedef uint16_t __half_raw_bits;
struct alignas(4) __half2 {
	__half x, y;
	__half2() = default;
	KBS_INLINE __half2(__half a, __half b) : x(a), y(b) {}
};
typedef __half2 half2;

typedef kbs::bfloat16 __nv_bfloat16;
typedef kbs::bfloat16 nv_bfloat16;
struct alignas(4) __nv_bfloat162 {
	__nv_bfloat16 x, y;
	__nv_bfloat162() = default;
	KBS_INLINE __nv_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) : x(a), y(b) {}
};
typedef __nv_bfloat162 nv_bfloat162;

KBS_INLINE __half __float2half(float f) { return __half(f); }
KBS_INLINE __half __float2half_rn(float f) { return __half(f); }
KBS_INLINE __half __float2half_rz(float f) {
	__half h(f);
	// Round toward zero: step back when rounding went away from zero.
	if (std::isfinite(f) && std::fabs((float)h) > std::fabs(f)) h.bits = (uint16_t)(h.bits - 1);
	return h;
}
KBS_INLINE float __half2float(__half h) { return (float)h; }
KBS_INLINE __half __int2half_rn(int i) { return __half((float)i); }
KBS_INLINE int __half2int_rn(__half h) { return (int)nearbyintf((float)h); }
KBS_INLINE int __half2int_rz(__half h) { return (int)(float)h; }
KBS_INLINE short __half_as_short(__half h) { return (short)h.bits; }
KBS_INLINE unsigned short __half_as_ushort(__half h) { return h.bits; }
KBS_INLINE __half __short_as_half(short s) { return __half::from_bits((uint16_t)s); }
KBS_INLINE __half __ushort_as_half(unsigned short s) { return __half::from_bits(s); }
KBS_INLINE __half __hadd(__half a, __half b) { return a + b; }
KBS_INLINE __half __hsub(__half a, __half b) { return a - b; }
KBS_INLINE __half __hmul(__half a, __half b) { return a * b; }
KBS_INLINE __half __hdiv(__half a, __half b) { return a / b; }
KBS_INLINE __half __hfma(__half a, __half b, __half c) { return __half(fmaf((float)a, (float)b, (float)c)); }
KBS_INLINE __half __hneg(__half a) { return -a; }
KBS_INLINE __half __habs(__half a) { return __half::from_bits((uint16_t)(a.bits & 0x7fffu)); }
KBS_INLINE __half __hmax(__half a, __half b) { return (float)a > (float)b ? a : b; }
KBS_INLINE __half __hmin(__half a, __half b) { return (float)a < (float)b ? a : b; }
KBS_INLINE bool __heq(__half a, __half b) { return (float)a == (float)b; }
KBS_INLINE bool __hne(__half a, __half b) { return (float)a != (float)b; }
KBS_INLINE bool __hlt(__half a, __half b) { return (float)a < (float)b; }
KBS_INLINE bool __hle(__half a, __half b) { return (float)a <= (float)b; }
KBS_INLINE bool __hgt(__half a, __half b) { return (float)a > (float)b; }
KBS_INLINE bool __hge(__half a, __half b) { return (float)a >= (float)b; }
KBS_INLINE bool __hisnan(__half a) { return (a.bits & 0x7fffu) > 0x7c00u; }
KBS_INLINE int __hisinf(__half a) { return (a.bits & 0x7fffu) == 0x7c00u ? ((a.bits & 0x8000u) ? -1 : 1) : 0; }
KBS_INLINE __half hexp(__half a) { return __half(expf((float)a)); }
KBS_INLINE __half hlog(__half a) { return __half(logf((float)a)); }
KBS_INLINE __half hsqrt(__half a) { return __half(sqrtf((float)a)); }
KBS_INLINE __half hrsqrt(__half a) { return __half(1.0f / sqrtf((float)a)); }

KBS_INLINE __half2 __half2half2(__half a) { return __half2(a, a); }
KBS_INLINE __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
KBS_INLINE __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
KBS_INLINE __half2 __float2half2_rn(float a) { return __half2(__half(a), __half(a)); }
KBS_INLINE __half2 __float22half2_rn(float2 f) { return __half2(__half(f.x), __half(f.y)); }
KBS_INLINE float2 __half22float2(__half2 h) { return float2{(float)h.x, (float)h.y}; }
KBS_INLINE float __low2float(__half2 h) { return (float)h.x; }
KBS_INLINE float __high2float(__half2 h) { return (float)h.y; }
KBS_INLINE __half __low2half(__half2 h) { return h.x; }
KBS_INLINE __half __high2half(__half2 h) { return h.y; }
KBS_INLINE __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
KBS_INLINE __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
KBS_INLINE __half2 __lowhigh2highlow(__half2 a) { return __half2(a.y, a.x); }
KBS_INLINE __half2 __hadd2(__half2 a, __half2 b) { return __half2(a.x + b.x, a.y + b.y); }
KBS_INLINE __half2 __hsub2(__half2 a, __half2 b) { return __half2(a.x - b.x, a.y - b.y); }
KBS_INLINE __half2 __hmul2(__half2 a, __half2 b) { return __half2(a.x * b.x, a.y * b.y); }
KBS_INLINE __half2 __h2div(__half2 a, __half2 b) { return __half2(a.x / b.x, a.y / b.y); }
KBS_INLINE __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
KBS_INLINE __half2 __hneg2(__half2 a) { return __half2(-a.x, -a.y); }
KBS_INLINE __half2 __habs2(__half2 a) { return __half2(__habs(a.x), __habs(a.y)); }
KBS_INLINE __half2 __hmax2(__half2 a, __half2 b) { return __half2(__hmax(a.x, b.x), __hmax(a.y, b.y)); }
KBS_INLINE __half2 __hmin2(__half2 a, __half2 b) { return __half2(__hmin(a.x, b.x), __hmin(a.y, b.y)); }
KBS_INLINE __half2 h2exp(__half2 a) { return __half2(hexp(a.x), hexp(a.y)); }
KBS_INLINE __half2 operator+(__half2 a, __half2 b) { return __hadd2(a, b); }
KBS_INLINE __half2 operator-(__half2 a, __half2 b) { return __hsub2(a, b); }
KBS_INLINE __half2 operator*(__half2 a, __half2 b) { return __hmul2(a, b); }
KBS_INLINE __half2 operator/(__half2 a, __half2 b) { return __h2div(a, b); }
KBS_INLINE __half2 operator-(__half2 a) { return __hneg2(a); }
KBS_INLINE __half2& operator+=(__half2& a, __half2 b) { return a = a + b; }
KBS_INLINE __half2& operator-=(__half2& a, __half2 b) { return a = a - b; }
KBS_INLINE __half2& operator*=(__half2& a, __half2 b) { return a = a * b; }

KBS_INLINE __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
KBS_INLINE __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
KBS_INLINE float __bfloat162float(__nv_bfloat16 b) { return (float)b; }
KBS_INLINE unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.bits; }
KBS_INLINE __nv_bfloat16 __ushort_as_bfloat16(unsigned short s) { return __nv_bfloat16::from_bits(s); }
KBS_INLINE __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162(__nv_bfloat16(a), __nv_bfloat16(b)); }
KBS_INLINE __nv_bfloat162 __float22bfloat162_rn(float2 f) { return __nv_bfloat162(__nv_bfloat16(f.x), __nv_bfloat16(f.y)); }
KBS_INLINE float2 __bfloat1622float2(__nv_bfloat162 b) { return float2{(float)b.x, (float)b.y}; }
KBS_INLINE float __low2float(__nv_bfloat162 b) { return (float)b.x; }
KBS_INLINE float __high2float(__nv_bfloat162 b) { return (float)b.y; }

#endif
