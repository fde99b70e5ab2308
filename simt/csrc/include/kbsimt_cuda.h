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

// ---------------------------------------------------------------------
// The emulator's implementations of the sm_75/sm_80 instructions that
// kernels reach through inline PTX: a device function that uses the
// instruction calls its __kbsimt_ counterpart under #ifdef __KBSIMT__.
// Each checks what the PTX ISA requires (alignment, shared addresses,
// the whole warp) and traps otherwise.

namespace kbs {
typedef unsigned int u32x4 __attribute__((vector_size(16)));

// An ldmatrix's lane: the 16-byte row it read (lanes 8i..8i+7 read the
// rows of matrix i) and, after the collective, its fragment registers.
struct Ldsm {
	uint32_t row[4];
	int32_t n, trans;
	uint32_t out[4];
};

// ldsm_done gives lane l element pair (l/4, 2(l%4)..+1) of each matrix:
// of rows as read, or with .trans of the transposed matrix (the pair
// comes from rows 2(l%4) and 2(l%4)+1, column l/4).
inline void ldsm_done(void** d, uint32_t active) {
	for (int l = 0; l < KBS_WARP; l++) {
		if (!(active >> l & 1)) continue;
		Ldsm* p = (Ldsm*)d[l];
		for (int i = 0; i < p->n; i++) {
			if (!p->trans) {
				p->out[i] = ((Ldsm*)d[8 * i + l / 4])->row[l % 4];
			} else {
				int c = l / 4;
				const Ldsm* r0 = (const Ldsm*)d[8 * i + 2 * (l % 4)];
				const Ldsm* r1 = (const Ldsm*)d[8 * i + 2 * (l % 4) + 1];
				uint32_t lo = (r0->row[c / 2] >> (16 * (c % 2))) & 0xffffu;
				uint32_t hi = (r1->row[c / 2] >> (16 * (c % 2))) & 0xffffu;
				p->out[i] = lo | hi << 16;
			}
		}
	}
}

// The fragments of one lane of an m16n8k32 s8 or m16n8k8 tf32 product,
// and its results after the collective (PTX's layouts; g = lane/4,
// t = lane%4).
struct MmaS8 {
	int32_t a[4], b[2], c[4], d[4];
};
struct MmaTF32 {
	uint32_t a[4], b[2];
	float c[4], d[4];
};

KBS_INLINE int8_t byte_of(int32_t v, int i) { return (int8_t)(uint8_t)((uint32_t)v >> (8 * i)); }

// mma_s8_done: A 16x32 (a0 = A[g][4t..4t+3], a1 = A[g+8][4t..], a2 =
// A[g][16+4t..], a3 = A[g+8][16+4t..]), B 32x8 (b0 = B[4t..4t+3][g], b1 =
// B[16+4t..][g]), C and D 16x8 (c0, c1 = C[g][2t..2t+1], c2, c3 =
// C[g+8][2t..]); D = A*B + C in int32, wrapping.
inline void mma_s8_done(void** d, uint32_t) {
	int8_t A[16][32], B[32][8];
	for (int l = 0; l < KBS_WARP; l++) {
		const MmaS8* p = (const MmaS8*)d[l];
		int g = l / 4, t = l % 4;
		for (int i = 0; i < 4; i++) {
			A[g][4 * t + i] = byte_of(p->a[0], i);
			A[g + 8][4 * t + i] = byte_of(p->a[1], i);
			A[g][16 + 4 * t + i] = byte_of(p->a[2], i);
			A[g + 8][16 + 4 * t + i] = byte_of(p->a[3], i);
			B[4 * t + i][g] = byte_of(p->b[0], i);
			B[16 + 4 * t + i][g] = byte_of(p->b[1], i);
		}
	}
	for (int l = 0; l < KBS_WARP; l++) {
		MmaS8* p = (MmaS8*)d[l];
		int g = l / 4, t = l % 4;
		for (int e = 0; e < 4; e++) {
			int r = g + 8 * (e >> 1), c = 2 * t + (e & 1);
			uint32_t s = (uint32_t)p->c[e];
			for (int k = 0; k < 32; k++) s += (uint32_t)((int32_t)A[r][k] * (int32_t)B[k][c]);
			p->d[e] = (int32_t)s;
		}
	}
}

// tf32 keeps a float's sign, exponent and top 10 fraction bits; the
// product ignores the other 13.
KBS_INLINE float tf32(uint32_t x) { return bit_cast<float>(x & 0xffffe000u); }

// mma_tf32_done: A 16x8 (a0 = A[g][t], a1 = A[g+8][t], a2 = A[g][t+4],
// a3 = A[g+8][t+4]), B 8x8 (b0 = B[t][g], b1 = B[t+4][g]), C and D as
// for s8 in f32; each product is exact, summed in k order onto C.
inline void mma_tf32_done(void** d, uint32_t) {
	float A[16][8], B[8][8];
	for (int l = 0; l < KBS_WARP; l++) {
		const MmaTF32* p = (const MmaTF32*)d[l];
		int g = l / 4, t = l % 4;
		A[g][t] = tf32(p->a[0]);
		A[g + 8][t] = tf32(p->a[1]);
		A[g][t + 4] = tf32(p->a[2]);
		A[g + 8][t + 4] = tf32(p->a[3]);
		B[t][g] = tf32(p->b[0]);
		B[t + 4][g] = tf32(p->b[1]);
	}
	for (int l = 0; l < KBS_WARP; l++) {
		MmaTF32* p = (MmaTF32*)d[l];
		int g = l / 4, t = l % 4;
		for (int e = 0; e < 4; e++) {
			int r = g + 8 * (e >> 1), c = 2 * t + (e & 1);
			float s = p->c[e];
			for (int k = 0; k < 8; k++) s = fmaf(A[r][k], B[k][c], s);
			p->d[e] = s;
		}
	}
}
} // namespace kbs

// __kbsimt_ldmatrix is ldmatrix.sync.aligned.m8n8.x{n}[.trans].shared.b16
// (n = 1, 2 or 4): lanes 8i..8i+7 give the 16-byte-aligned shared
// addresses of the 8 rows (8 16-bit elements each) of matrix i, and every
// lane receives r[i]: elements (l/4, 2(l%4)) and (l/4, 2(l%4)+1) of
// matrix i, the first in the low half (of the transpose with trans).
// Every lane of the warp calls it.
KBS_INLINE void __kbsimt_ldmatrix(int n, bool trans, const void* row, unsigned* r, KBS_SITE) {
	if (n != 1 && n != 2 && n != 4) kbs_trap("ldmatrix: .num must be .x1, .x2 or .x4", kbs_file, kbs_line);
	kbs::Ldsm d;
	d.n = n;
	d.trans = trans;
	if ((int)kbs::self()->lane < 8 * n) {
		if ((uintptr_t)row & 15) kbs_misaligned(row, 16, "ldmatrix row", kbs_file, kbs_line);
		if (!kbs_in_shared(row, 16)) kbs_trap("ldmatrix: a row address is not in shared memory", kbs_file, kbs_line);
		kbs::u32x4 v = *(const kbs::u32x4*)row;
		memcpy(d.row, &v, 16);
	} else {
		memset(d.row, 0, 16);
	}
	kbs::collective("ldmatrix", 0xffffffffu, KBS_COLL_MASKED, &d, &kbs::ldsm_done, kbs_file, kbs_line);
	for (int i = 0; i < n; i++) r[i] = d.out[i];
}

// __kbsimt_cp_async is cp.async.{ca,cg}.shared.global [dst], [src], bytes,
// src_bytes: it copies src_bytes (0..bytes) of global src to shared dst
// and zero-fills the rest of the bytes (4, 8 or 16; both addresses
// aligned to them). The copy belongs to the thread's open group, which
// __kbsimt_cp_async_commit closes; __kbsimt_cp_async_wait(n) waits until
// at most the newest n committed groups are pending. In a checked module
// the destination may not be touched until then (a race otherwise); the
// global read happens here.
KBS_INLINE void __kbsimt_cp_async(void* dst, const void* src, int bytes, int src_bytes, KBS_SITE) {
	if (bytes != 4 && bytes != 8 && bytes != 16) kbs_trap("cp.async: the copy size must be 4, 8 or 16 bytes", kbs_file, kbs_line);
	if (src_bytes < 0 || src_bytes > bytes) kbs_trap("cp.async: src-size is larger than the copy", kbs_file, kbs_line);
	if ((uintptr_t)dst & (uintptr_t)(bytes - 1)) kbs_misaligned(dst, (uint32_t)bytes, "cp.async destination", kbs_file, kbs_line);
	if ((uintptr_t)src & (uintptr_t)(bytes - 1)) kbs_misaligned(src, (uint32_t)bytes, "cp.async source", kbs_file, kbs_line);
	if (!kbs_in_shared(dst, (uint64_t)bytes)) kbs_trap("cp.async: the destination is not in shared memory", kbs_file, kbs_line);
	if (kbs_in_shared(src, 1)) kbs_trap("cp.async: the source is in shared memory, not global", kbs_file, kbs_line);
	alignas(16) unsigned char data[16] = {0};
	if (src_bytes == bytes) {
		if (bytes == 16) {
			kbs::u32x4 v = *(const kbs::u32x4*)src;
			memcpy(data, &v, 16);
		} else if (bytes == 8) {
			uint64_t v = *(const uint64_t*)src;
			memcpy(data, &v, 8);
		} else {
			uint32_t v = *(const uint32_t*)src;
			memcpy(data, &v, 4);
		}
	} else {
		for (int i = 0; i < src_bytes; i++) data[i] = ((const unsigned char*)src)[i];
	}
#ifdef KBS_CHECKED
	kbs_cp_async(dst, data, (uint32_t)bytes);
#else
	memcpy(dst, data, (size_t)bytes);
#endif
}
KBS_INLINE void __kbsimt_cp_async_commit() {
#ifdef KBS_CHECKED
	kbs_cp_async_commit();
#endif
}
KBS_INLINE void __kbsimt_cp_async_wait(int n) {
#ifdef KBS_CHECKED
	kbs_cp_async_wait(n < 0 ? 0u : (uint32_t)n);
#else
	(void)n;
#endif
}

// __kbsimt_mma_m16n8k32_s8 is mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
// (fragments as in kbs::mma_s8_done); __kbsimt_mma_m16n8k8_tf32 is
// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 (kbs::mma_tf32_done).
// The whole warp calls them; the profiler counts one product.
KBS_INLINE void __kbsimt_mma_m16n8k32_s8(int d[4], const int a[4], const int b[2], const int c[4], KBS_SITE) {
	kbs::MmaS8 m;
	for (int i = 0; i < 4; i++) m.a[i] = a[i], m.c[i] = c[i];
	m.b[0] = b[0];
	m.b[1] = b[1];
	kbs::collective("mma.sync.m16n8k32.s8", 0xffffffffu, KBS_COLL_MASKED, &m, &kbs::mma_s8_done, kbs_file, kbs_line);
	__kbsimt_mma(KBS_MMA_M16N8K32_S8);
	for (int i = 0; i < 4; i++) d[i] = m.d[i];
}
KBS_INLINE void __kbsimt_mma_m16n8k8_tf32(float d[4], const unsigned a[4], const unsigned b[2], const float c[4], KBS_SITE) {
	kbs::MmaTF32 m;
	for (int i = 0; i < 4; i++) m.a[i] = a[i], m.c[i] = c[i];
	m.b[0] = b[0];
	m.b[1] = b[1];
	kbs::collective("mma.sync.m16n8k8.tf32", 0xffffffffu, KBS_COLL_MASKED, &m, &kbs::mma_tf32_done, kbs_file, kbs_line);
	__kbsimt_mma(KBS_MMA_M16N8K8_TF32);
	for (int i = 0; i < 4; i++) d[i] = m.d[i];
}
// __kbsimt_cvt_rna_tf32 is cvt.rna.tf32.f32: f rounded to tf32, ties
// away from zero (NaN and Inf kept).
KBS_INLINE unsigned __kbsimt_cvt_rna_tf32(float f) {
	uint32_t x = kbs::bit_cast<uint32_t>(f);
	if ((x & 0x7f800000u) == 0x7f800000u) return (x & 0x7fffffffu) > 0x7f800000u ? (x | 0x400000u) & 0xffffe000u : x;
	return (x + 0x1000u) & 0xffffe000u;
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
