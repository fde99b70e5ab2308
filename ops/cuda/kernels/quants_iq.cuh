// quants_iq.cuh: the formats of issue 26 on the CUDA side (MXFP4, IQ4_NL,
// IQ4_XS, TQ1_0, TQ2_0 and the codebook formats IQ2_XXS, IQ2_XS, IQ2_S,
// IQ3_XXS, IQ3_S, IQ1_S, IQ1_M; layouts in blocks.h and quant/layout.go),
// decoded eight elements at a time (the fields' offsets are blocks.h's
// KB_IQ_FIELDS): kb_iq8<T>(b, g, w) writes elements
// 8g .. 8g+7 of the block at b to w, computed with the float operations,
// in the order, of package quant's dequantizers, so that the values match
// the CPU's bit for bit. Every group of eight shares its scales, its
// grid entry (or two of four) and its sign byte, which are read once.
#pragma once
#include "common.cuh"
#include "quants.cuh"
#include "iq_grids.cuh"

// KB_FOR_IQ_TYPES(X) applies X(name, T) to every type here.
#define KB_FOR_IQ_TYPES(X) \
	X(mxfp4, KB_MXFP4)     \
	X(iq4_nl, KB_IQ4_NL)   \
	X(iq4_xs, KB_IQ4_XS)   \
	X(tq1_0, KB_TQ1_0)     \
	X(tq2_0, KB_TQ2_0)     \
	X(iq2_xxs, KB_IQ2_XXS) \
	X(iq2_xs, KB_IQ2_XS)   \
	X(iq2_s, KB_IQ2_S)     \
	X(iq3_xxs, KB_IQ3_XXS) \
	X(iq3_s, KB_IQ3_S)     \
	X(iq1_s, KB_IQ1_S)     \
	X(iq1_m, KB_IQ1_M)

// kb_iq4nl_values, kb_mxfp4_values and kb_e8m0_half are quants.cuh's
// (CPY's quantizers use them too).

// kb_code4 is the 4-bit code of element e (0..31) of 16 code bytes: the
// low nibble of qs[e] below 16, the high nibble of qs[e-16] above.
__device__ __forceinline__ int kb_code4(const u8* qs, int e) { return e < 16 ? qs[e] & 15 : qs[e - 16] >> 4; }

// kb_signed8 writes db * grid byte i, negated where bit i of signs is
// set, for i = 0..7.
__device__ __forceinline__ void kb_signed8(float w[8], float db, u64 grid, u32 signs) {
#pragma unroll
	for (int i = 0; i < 8; i++) {
		float v = db * (float)(u8)(grid >> (8 * i));
		w[i] = (signs >> i) & 1 ? -v : v;
	}
}

// kb_signed4 writes four elements of a 4-byte grid entry, as kb_signed8.
__device__ __forceinline__ void kb_signed4(float* w, float db, u32 grid, u32 signs) {
#pragma unroll
	for (int i = 0; i < 4; i++) {
		float v = db * (float)(u8)(grid >> (8 * i));
		w[i] = (signs >> i) & 1 ? -v : v;
	}
}

// kb_iq1_8 writes dl * (grid value i + delta) of IQ1_S's grid entry idx.
__device__ __forceinline__ void kb_iq1_8(float w[8], float dl, int idx, float delta) {
	const u64 grid = kb_iq1s_grid[idx];
#pragma unroll
	for (int i = 0; i < 8; i++) w[i] = dl * ((float)(i8)(u8)(grid >> (8 * i)) + delta);
}

// kb_iq2_scale is IQ2_XS's and IQ2_S's scale of a 4-bit code: d*(0.5+c)/4.
__device__ __forceinline__ float kb_iq2_scale(float d, int c) { return d * (0.5f + (float)c) * 0.25f; }

template <int T>
__device__ __forceinline__ void kb_iq8(const u8* b, int g, float w[8]);

template <>
__device__ __forceinline__ void kb_iq8<KB_MXFP4>(const u8* b, int g, float w[8]) {
	const float d = kb_e8m0_half(b[KB_MXFP4_e]);
#pragma unroll
	for (int i = 0; i < 8; i++) w[i] = (float)kb_mxfp4_values[kb_code4(b + KB_MXFP4_qs, 8 * g + i)] * d;
}

template <>
__device__ __forceinline__ void kb_iq8<KB_IQ4_NL>(const u8* b, int g, float w[8]) {
	const float d = kb_rdh(b + KB_IQ4_NL_d);
#pragma unroll
	for (int i = 0; i < 8; i++) w[i] = d * (float)kb_iq4nl_values[kb_code4(b + KB_IQ4_NL_qs, 8 * g + i)];
}

template <>
__device__ __forceinline__ void kb_iq8<KB_IQ4_XS>(const u8* b, int g, float w[8]) {
	const int ib = g / 4;
	const int sc = ((b[KB_IQ4_XS_scales_l + ib / 2] >> (4 * (ib % 2))) & 15) | (((kb_rd16(b + KB_IQ4_XS_scales_h) >> (2 * ib)) & 3) << 4);
	const float dl = kb_rdh(b + KB_IQ4_XS_d) * (float)(sc - 32);
#pragma unroll
	for (int i = 0; i < 8; i++) w[i] = dl * (float)kb_iq4nl_values[kb_code4(b + KB_IQ4_XS_qs + 16 * ib, 8 * (g % 4) + i)];
}

template <>
__device__ __forceinline__ void kb_iq8<KB_TQ2_0>(const u8* b, int g, float w[8]) {
	const float d = kb_rdh(b + KB_TQ2_0_d);
	const int e = 8 * g, h = e / 128, n = (e % 128) / 32, m = e % 32;
#pragma unroll
	for (int i = 0; i < 8; i++) w[i] = (float)(((b[KB_TQ2_0_qs + 32 * h + m + i] >> (2 * n)) & 3) - 1) * d;
}

// kb_trit is trit n (0..4) of a TQ1_0 byte q: (u8)(q*3^n)*3 >> 8.
__device__ __forceinline__ int kb_trit(u32 q, int n) {
	const u32 p = n == 0 ? 1 : n == 1 ? 3 : n == 2 ? 9 : n == 3 ? 27 : 81;
	return (int)(((q * p) & 255) * 3 >> 8);
}

template <>
__device__ __forceinline__ void kb_iq8<KB_TQ1_0>(const u8* b, int g, float w[8]) {
	const float d = kb_rdh(b + KB_TQ1_0_d);
	const int e = 8 * g;
	const u8* q;
	int n;
	if (e < 160) {  // bytes 0..31, trit e/32 of byte e%32
		q = b + KB_TQ1_0_qs + e % 32;
		n = e / 32;
	} else if (e < 240) {  // bytes 32..47, trit (e-160)/16
		q = b + KB_TQ1_0_qs + 32 + (e - 160) % 16;
		n = (e - 160) / 16;
	} else {  // bytes 48..51, trit (e-240)/4: two trits of four bytes
#pragma unroll
		for (int i = 0; i < 8; i++) w[i] = (float)(kb_trit(b[KB_TQ1_0_qh + i % 4], (e - 240) / 4 + i / 4) - 1) * d;
		return;
	}
#pragma unroll
	for (int i = 0; i < 8; i++) w[i] = (float)(kb_trit(q[i], n) - 1) * d;
}

template <>
__device__ __forceinline__ void kb_iq8<KB_IQ2_XXS>(const u8* b, int g, float w[8]) {
	const int ib = g / 4, l = g % 4;
	const u8* q = b + KB_IQ2_XXS_qs + 8 * ib;
	const u32 s = kb_rd32(q + 4);
	const float db = kb_rdh(b + KB_IQ2_XXS_d) * (0.5f + (float)(s >> 28)) * 0.25f;
	kb_signed8(w, db, kb_iq2xxs_grid[q[l]], kb_ksigns_iq2xs[(s >> (7 * l)) & 127]);
}

template <>
__device__ __forceinline__ void kb_iq8<KB_IQ2_XS>(const u8* b, int g, float w[8]) {
	const int ib = g / 4, l = g % 4;
	const u32 q = kb_rd16(b + KB_IQ2_XS_qs + 8 * ib + 2 * l);
	const u8 sc = b[KB_IQ2_XS_scales + ib];
	const float db = kb_iq2_scale(kb_rdh(b + KB_IQ2_XS_d), l < 2 ? sc & 15 : sc >> 4);
	kb_signed8(w, db, kb_iq2xs_grid[q & 511], kb_ksigns_iq2xs[q >> 9]);
}

template <>
__device__ __forceinline__ void kb_iq8<KB_IQ2_S>(const u8* b, int g, float w[8]) {
	const int ib = g / 4, l = g % 4;
	const int idx = b[KB_IQ2_S_qs + 4 * ib + l] | (((b[KB_IQ2_S_qh + ib] >> (2 * l)) & 3) << 8);
	const u8 sc = b[KB_IQ2_S_scales + ib];
	const float db = kb_iq2_scale(kb_rdh(b + KB_IQ2_S_d), l < 2 ? sc & 15 : sc >> 4);
	kb_signed8(w, db, kb_iq2s_grid[idx], b[KB_IQ2_S_signs + 4 * ib + l]);
}

template <>
__device__ __forceinline__ void kb_iq8<KB_IQ3_XXS>(const u8* b, int g, float w[8]) {
	const int ib = g / 4, l = g % 4;
	const u32 s = kb_rd32(b + KB_IQ3_XXS_ss + 4 * ib);
	const float db = kb_rdh(b + KB_IQ3_XXS_d) * (0.5f + (float)(s >> 28)) * 0.5f;
	const u32 signs = kb_ksigns_iq2xs[(s >> (7 * l)) & 127];
	kb_signed4(w, db, kb_iq3xxs_grid[b[KB_IQ3_XXS_qs + 8 * ib + 2 * l]], signs);
	kb_signed4(w + 4, db, kb_iq3xxs_grid[b[KB_IQ3_XXS_qs + 8 * ib + 2 * l + 1]], signs >> 4);
}

template <>
__device__ __forceinline__ void kb_iq8<KB_IQ3_S>(const u8* b, int g, float w[8]) {
	const int ib = g / 4, l = g % 4;
	const float db = kb_rdh(b + KB_IQ3_S_d) * (float)(1 + 2 * ((b[KB_IQ3_S_scales + ib / 2] >> (4 * (ib % 2))) & 15));
	const u32 qh = b[KB_IQ3_S_qh + ib], signs = b[KB_IQ3_S_signs + 4 * ib + l];
	const int k = 2 * l;
	kb_signed4(w, db, kb_iq3s_grid[b[KB_IQ3_S_qs + 8 * ib + k] | (((qh >> k) & 1) << 8)], signs);
	kb_signed4(w + 4, db, kb_iq3s_grid[b[KB_IQ3_S_qs + 8 * ib + k + 1] | (((qh >> (k + 1)) & 1) << 8)], signs >> 4);
}

template <>
__device__ __forceinline__ void kb_iq8<KB_IQ1_S>(const u8* b, int g, float w[8]) {
	const int ib = g / 4, l = g % 4;
	const u32 h = kb_rd16(b + KB_IQ1_S_qh + 2 * ib);
	const float dl = kb_rdh(b + KB_IQ1_S_d) * (float)(2 * ((h >> 12) & 7) + 1);
	kb_iq1_8(w, dl, b[KB_IQ1_S_qs + 4 * ib + l] | (((h >> (3 * l)) & 7) << 8), h & 0x8000 ? -0.125f : 0.125f);
}

template <>
__device__ __forceinline__ void kb_iq8<KB_IQ1_M>(const u8* b, int g, float w[8]) {
	const int ib = g / 4, l = g % 4;
	u32 dh = 0;
#pragma unroll
	for (int j = 0; j < 4; j++) dh |= (u32)(kb_rd16(b + KB_IQ1_M_scales + 2 * j) >> 12) << (4 * j);
	const float d = kb_h2f((u16)dh);
	const u32 sc = kb_rd16(b + KB_IQ1_M_scales + 2 * (ib / 2)) >> (6 * (ib % 2));
	const float dl = d * (float)(2 * ((l < 2 ? sc : sc >> 3) & 7) + 1);
	const u32 h = b[KB_IQ1_M_qh + 2 * ib + l / 2] >> (4 * (l % 2));
	kb_iq1_8(w, dl, b[KB_IQ1_M_qs + 4 * ib + l] | ((h & 7) << 8), h & 8 ? -0.125f : 0.125f);
}
