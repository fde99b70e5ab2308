// quants.cuh: the element types and block formats of blocks.h (ggml's, as
// quant/layout.go documents them) on the CUDA side: the value of any
// element of a block, computed with the same float operations, in the
// same order, as package quant's dequantizers, so a kernel's dequantized
// weights match the reference's bit for bit (up to an FMA the compiler
// may contract).
#pragma once
#include "common.cuh"

// The type numbers (KB_F32, KB_Q4_0, ...) and block sizes (kb_block,
// kb_bytes) are blocks.h's, shared with the Metal kernels.
#include "blocks.h"

// kb_type<T>: elements per block and bytes per block.
template <int T>
struct kb_type {
	static constexpr int block = kb_block(T), bytes = kb_bytes(T);
};

// The value tables of IQ4_NL/IQ4_XS and MXFP4 (MXFP4's doubled E2M1
// values), shared by their decoders (quants_iq.cuh) and quantizers
// (quantize.cuh).
static __device__ const i8 kb_iq4nl_values[16] = {KB_IQ4NL_VALUES};
static __device__ const i8 kb_mxfp4_values[16] = {KB_MXFP4_VALUES};

// KB_LUT16 packs 16 int8 values into four little-endian words.
#define KB_LUT_W(a, b, c, d) ((u32)(u8)(a) | ((u32)(u8)(b) << 8) | ((u32)(u8)(c) << 16) | ((u32)(u8)(d) << 24))
#define KB_LUT_WORDS(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p) \
	{KB_LUT_W(a, b, c, d), KB_LUT_W(e, f, g, h), KB_LUT_W(i, j, k, l), KB_LUT_W(m, n, o, p)}
#define KB_LUT16(...) KB_LUT_WORDS(__VA_ARGS__)

// kb_lut16 (the code tables of IQ4_NL, IQ4_XS and MXFP4: quants_iq.cuh,
// and mmq32.cuh's raw IQ4_NL blocks) maps the four 4-bit codes in the low nibbles of v's bytes
// through the 16-byte table t: __byte_perm picks from the table's low or
// high half by the codes' low three bits, bit 3 chooses the half.
__device__ __forceinline__ int kb_lut16(u32 v, const u32 t[4]) {
	const u32 x = v & 0x07070707u, y = x | (x >> 4);
	const u32 sel = (y & 0xffu) | ((y >> 8) & 0xff00u);  // byte i's code in nibble i
	const u32 lo = __byte_perm(t[0], t[1], sel), hi = __byte_perm(t[2], t[3], sel);
	const u32 m = ((v >> 3) & 0x01010101u) * 0xffu;
	return (int)((lo & ~m) | (hi & m));
}

// kb_e8m0_half is half the value of an E8M0 scale, 2^(e-128) (quant's
// E8M0Half): subnormal for e < 2.
__device__ __forceinline__ float kb_e8m0_half(u32 e) {
	return __uint_as_float(e < 2 ? 0x00200000u << e : (e - 1) << 23);
}

// The reads and the codes' and scales' decoding (kb_rd16, kb_rdh,
// kb_nibble, kb_k4_scale_min, kb_q3_scale) are blocks.h's too.

// kb_value<T>(b, e) is element e of the block at b, as a float.
template <int T>
__device__ __forceinline__ float kb_value(const u8* b, int e);

template <>
__device__ __forceinline__ float kb_value<KB_F32>(const u8* b, int) {
	return __uint_as_float(kb_rd32(b));
}
template <>
__device__ __forceinline__ float kb_value<KB_F16>(const u8* b, int) {
	return kb_rdh(b);
}
template <>
__device__ __forceinline__ float kb_value<KB_BF16>(const u8* b, int) {
	return kb_bf2f(kb_rd16(b));
}
template <>
__device__ __forceinline__ float kb_value<KB_I8>(const u8* b, int) {
	return (float)(i8)b[0];
}
template <>
__device__ __forceinline__ float kb_value<KB_I16>(const u8* b, int) {
	return (float)(i16)kb_rd16(b);
}
template <>
__device__ __forceinline__ float kb_value<KB_I32>(const u8* b, int) {
	return (float)(i32)kb_rd32(b);
}

template <>
__device__ __forceinline__ float kb_value<KB_Q4_0>(const u8* b, int e) {
	return (float)(kb_nibble(b + 2, e) - 8) * kb_rdh(b);
}
template <>
__device__ __forceinline__ float kb_value<KB_Q4_1>(const u8* b, int e) {
	return (float)kb_nibble(b + 4, e) * kb_rdh(b) + kb_rdh(b + 2);
}
template <>
__device__ __forceinline__ float kb_value<KB_Q5_0>(const u8* b, int e) {
	int q = kb_nibble(b + 6, e) | (int)((kb_rd32(b + 2) >> e) & 1) << 4;
	return (float)(q - 16) * kb_rdh(b);
}
template <>
__device__ __forceinline__ float kb_value<KB_Q5_1>(const u8* b, int e) {
	int q = kb_nibble(b + 8, e) | (int)((kb_rd32(b + 4) >> e) & 1) << 4;
	return (float)q * kb_rdh(b) + kb_rdh(b + 2);
}
template <>
__device__ __forceinline__ float kb_value<KB_Q8_0>(const u8* b, int e) {
	return (float)(i8)b[2 + e] * kb_rdh(b);
}
template <>
__device__ __forceinline__ float kb_value<KB_Q8_1>(const u8* b, int e) {
	return (float)(i8)b[4 + e] * kb_rdh(b);
}
template <>
__device__ __forceinline__ float kb_value<KB_Q2_K>(const u8* b, int e) {
	int h = e / 128, r = e % 128;
	int q = (b[16 + 32 * h + r % 32] >> (2 * (r / 32))) & 3;
	int s = b[e / 16];
	float dl = kb_rdh(b + 80) * (float)(s & 15);
	float ml = kb_rdh(b + 82) * (float)(s >> 4);
	return dl * (float)q - ml;
}
template <>
__device__ __forceinline__ float kb_value<KB_Q3_K>(const u8* b, int e) {
	int h = e / 128, r = e % 128;
	int q = (b[32 + 32 * h + r % 32] >> (2 * (r / 32))) & 3;
	if (!(b[e % 32] & (1 << (e / 32)))) q -= 4;
	float dl = kb_rdh(b + 108) * (float)kb_q3_scale(e / 16, b + 96);
	return dl * (float)q;
}
template <>
__device__ __forceinline__ float kb_value<KB_Q4_K>(const u8* b, int e) {
	int sc, m;
	kb_k4_scale_min(e / 32, b + 4, sc, m);
	u8 byte = b[16 + 32 * (e / 64) + e % 32];
	int q = e % 64 < 32 ? byte & 15 : byte >> 4;
	float dj = kb_rdh(b) * (float)sc, mj = kb_rdh(b + 2) * (float)m;
	return dj * (float)q - mj;
}
template <>
__device__ __forceinline__ float kb_value<KB_Q5_K>(const u8* b, int e) {
	int sc, m;
	kb_k4_scale_min(e / 32, b + 4, sc, m);
	u8 byte = b[48 + 32 * (e / 64) + e % 32];
	int q = e % 64 < 32 ? byte & 15 : byte >> 4;
	if (b[16 + e % 32] & (1 << (e / 32))) q += 16;
	float dj = kb_rdh(b) * (float)sc, mj = kb_rdh(b + 2) * (float)m;
	return dj * (float)q - mj;
}
template <>
__device__ __forceinline__ float kb_value<KB_Q6_K>(const u8* b, int e) {
	int h = e / 128, r = e % 128, l = r % 32, g = r / 32;
	u8 lb = b[64 * h + l + 32 * (g % 2)];
	int low = g < 2 ? lb & 15 : lb >> 4;
	int high = (b[128 + 32 * h + l] >> (2 * g)) & 3;
	int q = (low | (high << 4)) - 32;
	return kb_rdh(b + 208) * (float)(i8)b[192 + e / 16] * (float)q;
}
template <>
__device__ __forceinline__ float kb_value<KB_Q8_K>(const u8* b, int e) {
	return __uint_as_float(kb_rd32(b)) * (float)(i8)b[4 + e];
}

// kb_at<T>(row, i) is element i of a row of T (a row starts on a block).
template <int T>
__device__ __forceinline__ float kb_at(const u8* row, i64 i) {
	const int B = kb_type<T>::block;
	return kb_value<T>(row + (i / B) * kb_type<T>::bytes, (int)(i % B));
}

// KB_FOR_TYPES(X) applies X(name, T) to every type a weight may have.
#define KB_FOR_WEIGHT_TYPES(X) \
	X(f32, KB_F32)             \
	X(f16, KB_F16)             \
	X(bf16, KB_BF16)           \
	X(q4_0, KB_Q4_0)           \
	X(q4_1, KB_Q4_1)           \
	X(q5_0, KB_Q5_0)           \
	X(q5_1, KB_Q5_1)           \
	X(q8_0, KB_Q8_0)           \
	X(q8_1, KB_Q8_1)           \
	X(q2_K, KB_Q2_K)           \
	X(q3_K, KB_Q3_K)           \
	X(q4_K, KB_Q4_K)           \
	X(q5_K, KB_Q5_K)           \
	X(q6_K, KB_Q6_K)           \
	X(q8_K, KB_Q8_K)
