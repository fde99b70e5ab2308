// quants.h: the element types and block formats of blocks.h (ggml's, as
// quant/layout.go documents them) on the Metal side, as templated
// dequantizers: the value of any element of a block, computed with the
// same float operations, in the same order, as package quant's
// dequantizers, so that a kernel's dequantized weights match the
// reference's (up to an FMA the compiler may contract).
#pragma once
#include "common.h"

// The type numbers (KB_F32, KB_Q4_0, ...) and block sizes (kb_block,
// kb_bytes) are blocks.h's, shared with the CUDA kernels.
#include "blocks.h"

// Little-endian reads at any alignment (blocks of 18 or 22 bytes leave
// their fields unaligned).
inline ushort kb_rd16(device const uchar *p) { return ushort(p[0] | (p[1] << 8)); }
inline uint kb_rd32(device const uchar *p) { return uint(p[0]) | (uint(p[1]) << 8) | (uint(p[2]) << 16) | (uint(p[3]) << 24); }
inline float kb_rdh(device const uchar *p) { return kb_h2f(kb_rd16(p)); }

// kb_i8 is a byte as a signed 8-bit integer.
inline int kb_i8(uchar u) { return int(u) - (int(u & 0x80) << 1); }

// kb_nibble returns the 4-bit code of element e (0..31) of a legacy
// block's 16 code bytes: the low nibble of qs[e] for e < 16, the high
// nibble of qs[e-16] above.
inline int kb_nibble(device const uchar *qs, int e) { return e < 16 ? qs[e] & 15 : qs[e - 16] >> 4; }

// kb_k4_scale_min returns the 6-bit scale and min codes of sub-block j of
// a Q4_K or Q5_K super-block's 12 scale bytes.
inline void kb_k4_scale_min(int j, device const uchar *s, thread int &sc, thread int &m) {
	if (j < 4) {
		sc = s[j] & 63;
		m = s[j + 4] & 63;
	} else {
		sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
		m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
	}
}

// kb_q3_scale returns the signed scale of sub-block j of a Q3_K
// super-block's 12 scale bytes.
inline int kb_q3_scale(int j, device const uchar *s) {
	int lo = j < 8 ? s[j] & 15 : s[j - 8] >> 4;
	int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
	return (lo | (hi << 4)) - 32;
}

// kb_value<T>(b, e) is element e of the block at b, as a float.
template <int T>
float kb_value(device const uchar *b, int e);

template <>
inline float kb_value<KB_F32>(device const uchar *b, int) {
	return as_type<float>(kb_rd32(b));
}
template <>
inline float kb_value<KB_F16>(device const uchar *b, int) {
	return kb_rdh(b);
}
template <>
inline float kb_value<KB_BF16>(device const uchar *b, int) {
	return kb_bf2f(kb_rd16(b));
}
template <>
inline float kb_value<KB_Q4_0>(device const uchar *b, int e) {
	return float(kb_nibble(b + 2, e) - 8) * kb_rdh(b);
}
template <>
inline float kb_value<KB_Q4_1>(device const uchar *b, int e) {
	return float(kb_nibble(b + 4, e)) * kb_rdh(b) + kb_rdh(b + 2);
}
template <>
inline float kb_value<KB_Q5_0>(device const uchar *b, int e) {
	int q = kb_nibble(b + 6, e) | int((kb_rd32(b + 2) >> e) & 1) << 4;
	return float(q - 16) * kb_rdh(b);
}
template <>
inline float kb_value<KB_Q5_1>(device const uchar *b, int e) {
	int q = kb_nibble(b + 8, e) | int((kb_rd32(b + 4) >> e) & 1) << 4;
	return float(q) * kb_rdh(b) + kb_rdh(b + 2);
}
template <>
inline float kb_value<KB_Q8_0>(device const uchar *b, int e) {
	return float(kb_i8(b[2 + e])) * kb_rdh(b);
}
template <>
inline float kb_value<KB_Q8_1>(device const uchar *b, int e) {
	return float(kb_i8(b[4 + e])) * kb_rdh(b);
}
template <>
inline float kb_value<KB_Q2_K>(device const uchar *b, int e) {
	int h = e / 128, r = e % 128;
	int q = (b[16 + 32 * h + r % 32] >> (2 * (r / 32))) & 3;
	int s = b[e / 16];
	float dl = kb_rdh(b + 80) * float(s & 15);
	float ml = kb_rdh(b + 82) * float(s >> 4);
	return dl * float(q) - ml;
}
template <>
inline float kb_value<KB_Q3_K>(device const uchar *b, int e) {
	int h = e / 128, r = e % 128;
	int q = (b[32 + 32 * h + r % 32] >> (2 * (r / 32))) & 3;
	if (!(b[e % 32] & (1 << (e / 32)))) q -= 4;
	float dl = kb_rdh(b + 108) * float(kb_q3_scale(e / 16, b + 96));
	return dl * float(q);
}
template <>
inline float kb_value<KB_Q4_K>(device const uchar *b, int e) {
	int sc, m;
	kb_k4_scale_min(e / 32, b + 4, sc, m);
	uchar byte = b[16 + 32 * (e / 64) + e % 32];
	int q = e % 64 < 32 ? byte & 15 : byte >> 4;
	float dj = kb_rdh(b) * float(sc), mj = kb_rdh(b + 2) * float(m);
	return dj * float(q) - mj;
}
template <>
inline float kb_value<KB_Q5_K>(device const uchar *b, int e) {
	int sc, m;
	kb_k4_scale_min(e / 32, b + 4, sc, m);
	uchar byte = b[48 + 32 * (e / 64) + e % 32];
	int q = e % 64 < 32 ? byte & 15 : byte >> 4;
	if (b[16 + e % 32] & (1 << (e / 32))) q += 16;
	float dj = kb_rdh(b) * float(sc), mj = kb_rdh(b + 2) * float(m);
	return dj * float(q) - mj;
}
template <>
inline float kb_value<KB_Q6_K>(device const uchar *b, int e) {
	int h = e / 128, r = e % 128, l = r % 32, g = r / 32;
	uchar lb = b[64 * h + l + 32 * (g % 2)];
	int low = g < 2 ? lb & 15 : lb >> 4;
	int high = (b[128 + 32 * h + l] >> (2 * g)) & 3;
	int q = (low | (high << 4)) - 32;
	return kb_rdh(b + 208) * float(kb_i8(b[192 + e / 16])) * float(q);
}
template <>
inline float kb_value<KB_Q8_K>(device const uchar *b, int e) {
	return as_type<float>(kb_rd32(b)) * float(kb_i8(b[4 + e]));
}

// kb_at<T>(row, i) is element i of a row of T (a row starts on a block).
template <int T>
inline float kb_at(device const uchar *row, long i) {
	const int B = kb_block(T);
	return kb_value<T>(row + (i / B) * kb_bytes(T), int(i % B));
}

// kb_deq8<T>(row, c, out) dequantizes elements 8c .. 8c+7 of a row of T
// whose length is a multiple of 8 (a block type's always is): the
// templated dequantizer the matrix kernels use, reading each block's
// scales once for the eight.
template <int T>
inline void kb_deq8(device const uchar *row, long c, thread float *out) {
	const int B = kb_block(T);
	if (B == 1) {
		for (int j = 0; j < 8; j++) out[j] = kb_value<T>(row + (8 * c + j) * kb_bytes(T), 0);
	} else {
		device const uchar *b = row + (8 * c / B) * kb_bytes(T);
		int e0 = int((8 * c) % B);
		for (int j = 0; j < 8; j++) out[j] = kb_value<T>(b, e0 + j);
	}
}

// The legacy and 8-bit formats have a dequantizer of eight elements that
// reads the scale once.
template <>
inline void kb_deq8<KB_Q4_0>(device const uchar *row, long c, thread float *out) {
	device const uchar *b = row + (c / 4) * 18;
	int e0 = int(c % 4) * 8;
	float d = kb_rdh(b);
	for (int j = 0; j < 8; j++) out[j] = float(kb_nibble(b + 2, e0 + j) - 8) * d;
}
template <>
inline void kb_deq8<KB_Q8_0>(device const uchar *row, long c, thread float *out) {
	device const uchar *b = row + (c / 4) * 34;
	int e0 = int(c % 4) * 8;
	float d = kb_rdh(b);
	for (int j = 0; j < 8; j++) out[j] = float(kb_i8(b[2 + e0 + j])) * d;
}

// KB_FOR_WEIGHT_TYPES(X) applies X(name, T) to every type a weight may
// have.
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
