// common.cuh: what every kernel file of the CUDA backend shares: fixed-
// width types, the tensor descriptor, f16 and bf16 conversions, indexing.
// It must compile under NVRTC (no toolkit headers are assumed) and on the
// SIMT emulator (__KBSIMT__).
#pragma once

// NVRTC has no C headers: what kernels use of them is here.
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fc00000)
#endif

typedef signed char i8;
typedef unsigned char u8;
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

// A tensor's view: element counts and byte strides of its four
// dimensions, dimension 0 innermost (ggml's ne and nb).
struct kb_tensor {
	i64 ne[4];
	i64 nb[4];
};

// kb_offset returns the byte offset of element (i0, i1, i2, i3).
__device__ __forceinline__ i64 kb_offset(const kb_tensor &t, i64 i0, i64 i1, i64 i2, i64 i3) {
	return i0 * t.nb[0] + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

// kb_unravel splits a linear index over t's shape into its coordinates.
__device__ __forceinline__ void kb_unravel(const kb_tensor &t, i64 i, i64 &i0, i64 &i1, i64 &i2, i64 &i3) {
	i0 = i % t.ne[0];
	i /= t.ne[0];
	i1 = i % t.ne[1];
	i /= t.ne[1];
	i2 = i % t.ne[2];
	i3 = i / t.ne[2];
}

// kb_count returns the elements of t.
__device__ __forceinline__ i64 kb_count(const kb_tensor &t) { return t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]; }

// f16 <-> f32 through the hardware's conversions (the emulator's are
// round-to-nearest-even too).
__device__ __forceinline__ float kb_h2f(u16 h) {
#ifdef __KBSIMT__
	return __half2float(__ushort_as_half(h));
#else
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
	return f;
#endif
}

__device__ __forceinline__ u16 kb_f2h(float f) {
#ifdef __KBSIMT__
	return __half_as_ushort(__float2half_rn(f));
#else
	// The half comes out widened to a 32-bit register: with a 16-bit
	// ("=h") output, NVRTC 11.8 to 13.0 compile a later (u8)h as a
	// conversion of the half's value (F2I.U8.F16), not a truncation of
	// its bits, and kb_put16's low byte came out as 0 on an H200. The
	// emulator takes the other branch, so TestNVRTCCompilesEveryKernel
	// watches the SASS for that instruction where cuobjdump is.
	u32 r;
	asm("{\n\t.reg .b16 t;\n\tcvt.rn.f16.f32 t, %1;\n\tcvt.u32.u16 %0, t;\n\t}" : "=r"(r) : "f"(f));
	return (u16)r;
#endif
}

// kb_dp4a adds the products of the four signed bytes of a and b to c,
// the dp4a instruction (sm_61 and later). NVRTC does not define the
// __dp4a intrinsic without the toolkit's headers, so the PTX is written
// here.
__device__ __forceinline__ int kb_dp4a(int a, int b, int c) {
#ifdef __KBSIMT__
	return __dp4a(a, b, c);
#else
	int r;
	asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
	return r;
#endif
}

// bf16 <-> f32: the top half of a float, rounded to nearest even (NaN
// kept quiet), as ggml converts.
__device__ __forceinline__ float kb_bf2f(u16 b) { return __uint_as_float((u32)b << 16); }

__device__ __forceinline__ u16 kb_f2bf(float f) {
	u32 x = __float_as_uint(f);
	if ((x & 0x7fffffffu) > 0x7f800000u) return (u16)((x >> 16) | 64u);
	return (u16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// kb_grid_stride: the first index and the stride of a 1-D grid-stride loop.
__device__ __forceinline__ i64 kb_first() { return (i64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ i64 kb_stride() { return (i64)gridDim.x * blockDim.x; }

// Wide loads as one access each, on the emulator too (whose profiler
// would see a struct's copy as several): 16 bytes from a 16-byte
// aligned address as a uint4 or a float4, 8 bytes from an 8-byte
// aligned one as a uint2; global or shared memory.
// kb_ld16u loads 16 bytes from a 16-byte aligned address as one access.
__device__ __forceinline__ uint4 kb_ld16u(const void* p) {
#ifdef __KBSIMT__
	typedef unsigned v4 __attribute__((vector_size(16)));
	v4 v = *(const v4*)p;
	return make_uint4(v[0], v[1], v[2], v[3]);
#else
	return *(const uint4*)p;
#endif
}

// kb_ld16f loads a float4 from a 16-byte aligned address as one access.
__device__ __forceinline__ float4 kb_ld16f(const void* p) {
#ifdef __KBSIMT__
	typedef float v4 __attribute__((vector_size(16)));
	v4 v = *(const v4*)p;
	return make_float4(v[0], v[1], v[2], v[3]);
#else
	return *(const float4*)p;
#endif
}

// kb_ld8 loads 8 bytes from an 8-byte aligned address as one access.
__device__ __forceinline__ uint2 kb_ld8(const void* p) {
#ifdef __KBSIMT__
	typedef unsigned v2 __attribute__((vector_size(8)));
	v2 v = *(const v2*)p;
	return make_uint2(v[0], v[1]);
#else
	return *(const uint2*)p;
#endif
}
