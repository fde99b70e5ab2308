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

// The reads and the codes' and scales' decoding (kb_rd16, kb_rdh,
// kb_nibble, kb_k4_scale_min, kb_q3_scale) are blocks.h's too.

// kb_i8 is a byte as a signed 8-bit integer.
inline int kb_i8(uchar u) { return int(u) - (int(u & 0x80) << 1); }

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

// ---------------------------------------------------------------------
// The formats of issue 26 (blocks.h lists their layouts; package quant's
// decoders give the float operations and their order, as above): MXFP4,
// IQ4_NL, IQ4_XS, TQ1_0, TQ2_0 and the codebook formats, whose grids and
// sign table are iqgrids.h's.
#include "iqgrids.h"

// The 4-bit code tables of blocks.h.
constant char kb_iq4nl_values[16] = {KB_IQ4NL_VALUES};
constant char kb_mxfp4_values[16] = {KB_MXFP4_VALUES};

// kb_e8m0_half is half the E8M0 scale e, 2^(e-128) (quant.E8M0Half): e 0
// and 1 give the subnormals 2^-128 and 2^-127.
inline float kb_e8m0_half(uint e) { return as_type<float>(e < 2 ? 0x00200000u << e : (e - 1) << 23); }

// kb_iq4xs_scale is the 6-bit scale code of sub-block j of an IQ4_XS
// block (quant.IQ4XSScale).
inline int kb_iq4xs_scale(device const uchar *b, int j) {
	return int((b[4 + j / 2] >> (4 * (j % 2))) & 15) | int((kb_rd16(b + 2) >> (2 * j)) & 3) << 4;
}

// kb_trit is trit n (0..4, the first the most significant) of a TQ1_0
// code byte: 0, 1 or 2 (quant.Trit).
inline int kb_trit(uint q, int n) {
	const uint p = n == 0 ? 1u : n == 1 ? 3u : n == 2 ? 9u : n == 3 ? 27u : 81u;
	return int(((q * p) & 255u) * 3u >> 8);
}

// kb_tq1_trit is the trit of element e of a TQ1_0 block: elements 0..159
// are trit e/32 of qs[e%32], 160..239 trit (e-160)/16 of qs[32+e%16],
// 240..255 trit (e-240)/4 of qh[e%4].
inline int kb_tq1_trit(device const uchar *b, int e) {
	if (e < 160) return kb_trit(b[e % 32], e / 32);
	if (e < 240) return kb_trit(b[32 + (e - 160) % 16], (e - 160) / 16);
	return kb_trit(b[48 + (e - 240) % 4], (e - 240) / 4);
}

// kb_signed is db times grid magnitude g, negated when neg is set (a
// negation, as quant's putSigned8: the same value, signed zeros too).
inline float kb_signed(float db, uint g, uint neg) {
	const float v = db * float(g);
	return neg ? -v : v;
}

// kb_iq2_db is the scale of IQ2_XXS (and IQ3_XXS with f 0.5) from the
// top nibble of its 32-bit word: d * (0.5 + s) * f.
inline float kb_iq2_db(float d, uint s, float f) { return d * (0.5f + float(s)) * f; }

// kb_iq1 is dl * (g + delta), g the signed grid value.
inline float kb_iq1(float dl, ulong grid, int i, float delta) {
	return dl * (float(kb_i8(uchar(grid >> (8 * i)))) + delta);
}

// kb_iq1m_d is IQ1_M's f16 super-block scale, assembled from the top
// nibbles of its four scale words (quant.IQ1MScale).
inline float kb_iq1m_d(device const uchar *b) {
	uint h = 0;
	for (int j = 0; j < 4; j++) h |= uint(kb_rd16(b + 48 + 2 * j) >> 12) << (4 * j);
	return kb_h2f(ushort(h));
}

template <>
inline float kb_value<KB_MXFP4>(device const uchar *b, int e) {
	return float(kb_mxfp4_values[kb_nibble(b + 1, e)]) * kb_e8m0_half(b[0]);
}
template <>
inline float kb_value<KB_IQ4_NL>(device const uchar *b, int e) {
	return kb_rdh(b) * float(kb_iq4nl_values[kb_nibble(b + 2, e)]);
}
template <>
inline float kb_value<KB_IQ4_XS>(device const uchar *b, int e) {
	const int ib = e / 32;
	const float dl = kb_rdh(b) * float(kb_iq4xs_scale(b, ib) - 32);
	return dl * float(kb_iq4nl_values[kb_nibble(b + 8 + 16 * ib, e % 32)]);
}
template <>
inline float kb_value<KB_TQ1_0>(device const uchar *b, int e) {
	return float(kb_tq1_trit(b, e) - 1) * kb_rdh(b + 52);
}
template <>
inline float kb_value<KB_TQ2_0>(device const uchar *b, int e) {
	const int q = (b[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
	return float(q - 1) * kb_rdh(b + 64);
}
template <>
inline float kb_value<KB_IQ2_XXS>(device const uchar *b, int e) {
	const int ib = e / 32, l = (e % 32) / 8, i = e % 8;
	const uint w = kb_rd32(b + 6 + 8 * ib);
	const float db = kb_iq2_db(kb_rdh(b), w >> 28, 0.25f);
	const uint s = kb_ksigns_iq2xs[(w >> (7 * l)) & 127];
	return kb_signed(db, uint(kb_iq2xxs_grid[b[2 + 8 * ib + l]] >> (8 * i)) & 255, (s >> i) & 1);
}
template <>
inline float kb_value<KB_IQ2_XS>(device const uchar *b, int e) {
	const int ib = e / 32, l = (e % 32) / 8, i = e % 8;
	const uint q = kb_rd16(b + 2 + 8 * ib + 2 * l), sc = b[66 + ib];
	const float db = kb_iq2_db(kb_rdh(b), l < 2 ? sc & 15 : sc >> 4, 0.25f);
	const uint s = kb_ksigns_iq2xs[q >> 9];
	return kb_signed(db, uint(kb_iq2xs_grid[q & 511] >> (8 * i)) & 255, (s >> i) & 1);
}
template <>
inline float kb_value<KB_IQ2_S>(device const uchar *b, int e) {
	const int ib = e / 32, l = (e % 32) / 8, i = e % 8;
	const uint sc = b[74 + ib];
	const float db = kb_iq2_db(kb_rdh(b), l < 2 ? sc & 15 : sc >> 4, 0.25f);
	const uint idx = b[2 + 4 * ib + l] | ((uint(b[66 + ib]) >> (2 * l)) & 3) << 8;
	return kb_signed(db, uint(kb_iq2s_grid[idx] >> (8 * i)) & 255, (b[34 + 4 * ib + l] >> i) & 1);
}
template <>
inline float kb_value<KB_IQ3_XXS>(device const uchar *b, int e) {
	const int ib = e / 32, k = (e % 32) / 4, i = e % 4;
	const uint w = kb_rd32(b + 66 + 4 * ib);
	const float db = kb_iq2_db(kb_rdh(b), w >> 28, 0.5f);
	const uint s = uint(kb_ksigns_iq2xs[(w >> (7 * (k / 2))) & 127]) >> (4 * (k % 2));
	return kb_signed(db, (kb_iq3xxs_grid[b[2 + 8 * ib + k]] >> (8 * i)) & 255, (s >> i) & 1);
}
template <>
inline float kb_value<KB_IQ3_S>(device const uchar *b, int e) {
	const int ib = e / 32, k = (e % 32) / 4, i = e % 4;
	const float db = kb_rdh(b) * float(1 + 2 * int((b[106 + ib / 2] >> (4 * (ib % 2))) & 15));
	const uint idx = b[2 + 8 * ib + k] | ((uint(b[66 + ib]) >> k) & 1) << 8;
	const uint s = uint(b[74 + 4 * ib + k / 2]) >> (4 * (k % 2));
	return kb_signed(db, (kb_iq3s_grid[idx] >> (8 * i)) & 255, (s >> i) & 1);
}
template <>
inline float kb_value<KB_IQ1_S>(device const uchar *b, int e) {
	const int ib = e / 32, l = (e % 32) / 8;
	const uint h = kb_rd16(b + 34 + 2 * ib);
	const float dl = kb_rdh(b) * float(2 * int((h >> 12) & 7) + 1);
	const float delta = h & 0x8000 ? -0.125f : 0.125f;
	return kb_iq1(dl, kb_iq1s_grid[b[2 + 4 * ib + l] | ((h >> (3 * l)) & 7) << 8], e % 8, delta);
}
template <>
inline float kb_value<KB_IQ1_M>(device const uchar *b, int e) {
	const int ib = e / 32, l = (e % 32) / 8;
	const uint sc = uint(kb_rd16(b + 48 + 2 * (ib / 2))) >> (6 * (ib % 2));
	const float dl = kb_iq1m_d(b) * float(2 * int(l < 2 ? sc & 7 : (sc >> 3) & 7) + 1);
	const uint h = uint(b[32 + 2 * ib + l / 2]) >> (4 * (l % 2));
	const float delta = h & 8 ? -0.125f : 0.125f;
	return kb_iq1(dl, kb_iq1s_grid[b[4 * ib + l] | (h & 7) << 8], e % 8, delta);
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
	X(q8_K, KB_Q8_K)           \
	KB_FOR_NEW_WEIGHT_TYPES(X)

// KB_FOR_NEW_WEIGHT_TYPES(X) applies X to the formats of issue 26.
#define KB_FOR_NEW_WEIGHT_TYPES(X) \
	X(mxfp4, KB_MXFP4)             \
	X(iq4_nl, KB_IQ4_NL)           \
	X(iq4_xs, KB_IQ4_XS)           \
	X(tq2_0, KB_TQ2_0)             \
	X(tq1_0, KB_TQ1_0)             \
	X(iq2_xxs, KB_IQ2_XXS)         \
	X(iq2_xs, KB_IQ2_XS)           \
	X(iq2_s, KB_IQ2_S)             \
	X(iq3_xxs, KB_IQ3_XXS)         \
	X(iq3_s, KB_IQ3_S)             \
	X(iq1_s, KB_IQ1_S)             \
	X(iq1_m, KB_IQ1_M)
