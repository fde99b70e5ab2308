// common.h: what every kernel file of the Metal backend shares: the
// tensor descriptor, indexing, f16 and bf16 conversions and simdgroup
// reductions. It compiles with Apple's Metal compiler (MSL 3.0) and on the
// SIMT emulator, so it keeps to what both take: no function constants, no
// bfloat type (bf16 is converted by hand), contiguous swizzles only.
#pragma once
#include <metal_stdlib>
using namespace metal;

// KB_STR makes a string of its argument, as kernel host names built by
// macros need: [[host_name(KB_STR(kb_x_##name))]].
#define KB_STR(x) #x

// A tensor's view: element counts and byte strides of its four
// dimensions, dimension 0 innermost (ggml's ne and nb).
struct kb_tensor {
	long ne[4];
	long nb[4];
};

// kb_minl is the smaller of two 64-bit integers (MSL's min takes 32-bit
// integer types on older language versions).
inline long kb_minl(long a, long b) { return a < b ? a : b; }

// kb_offset returns the byte offset of element (i0, i1, i2, i3).
inline long kb_offset(constant kb_tensor &t, long i0, long i1, long i2, long i3) {
	return i0 * t.nb[0] + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

// kb_row returns the byte offset of row (i1, i2, i3).
inline long kb_row(constant kb_tensor &t, long i1, long i2, long i3) {
	return i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

// kb_rows returns the number of rows (ne1*ne2*ne3).
inline long kb_rows(constant kb_tensor &t) { return t.ne[1] * t.ne[2] * t.ne[3]; }

// kb_unrow splits a row number into its coordinates.
inline void kb_unrow(constant kb_tensor &t, long r, thread long &i1, thread long &i2, thread long &i3) {
	i1 = r % t.ne[1];
	r /= t.ne[1];
	i2 = r % t.ne[2];
	i3 = r / t.ne[2];
}

// f16 and bf16 from their bits. bf16 is the top half of a float.
inline float kb_h2f(ushort h) { return float(as_type<half>(h)); }
inline float kb_bf2f(ushort b) { return as_type<float>(uint(b) << 16); }

// f32 to bf16, rounded to nearest even (NaN kept quiet), as ggml does.
inline ushort kb_f2bf(float f) {
	uint x = as_type<uint>(f);
	if ((x & 0x7fffffffu) > 0x7f800000u) return ushort((x >> 16) | 64u);
	return ushort((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// f32 to f16, rounded to nearest even.
inline ushort kb_f2h(float f) { return as_type<ushort>(half(f)); }

// Threadgroup-wide reductions for a threadgroup of nsg simdgroups of 32
// threads: every thread gets the result. scratch holds 32 floats of
// threadgroup memory, free again when they return.
inline float kb_tg_sum(float v, threadgroup float *scratch, ushort sgitg, ushort tiisg, ushort nsg) {
	v = simd_sum(v);
	if (nsg == 1) return v;
	if (tiisg == 0) scratch[sgitg] = v;
	threadgroup_barrier(mem_flags::mem_threadgroup);
	v = tiisg < nsg ? scratch[tiisg] : 0.0f;
	v = simd_sum(v);
	threadgroup_barrier(mem_flags::mem_threadgroup);
	return v;
}

inline float kb_tg_max(float v, threadgroup float *scratch, ushort sgitg, ushort tiisg, ushort nsg) {
	v = simd_max(v);
	if (nsg == 1) return v;
	if (tiisg == 0) scratch[sgitg] = v;
	threadgroup_barrier(mem_flags::mem_threadgroup);
	v = tiisg < nsg ? scratch[tiisg] : -INFINITY;
	v = simd_max(v);
	threadgroup_barrier(mem_flags::mem_threadgroup);
	return v;
}
