// quants_iq.cuh: the formats of issue 26 on the CUDA side (MXFP4, IQ4_NL,
// IQ4_XS, TQ1_0, TQ2_0 and the codebook formats IQ2_XXS, IQ2_XS, IQ2_S,
// IQ3_XXS, IQ3_S, IQ1_S, IQ1_M; layouts in blocks.h and quant/layout.go),
// decoded eight elements at a time (the fields' offsets are blocks.h's
// KB_IQ_FIELDS): kb_iq8<T>(b, g, w) writes elements
// 8g .. 8g+7 of the block at b to w, computed with the float operations,
// in the order, of package quant's dequantizers, so that the values match
// the CPU's bit for bit. Every group of eight shares its scales, its
// grid entry (or two of four) and its sign byte, which are read once.
// kb_decode<T> (below) decodes a chunk of 32 to int8 codes and scales for
// the integer dot products.
#pragma once
#include "common.cuh"
#include "quants.cuh"
#include "iq_grids.cuh"
#include "mm.cuh"

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

// ---------------------------------------------------------------------
// Integer decoding for the dot products against kb_q8a activations
// (mmv.cuh's mmvq): kb_decode<T>(b, sub, q, dm) of mm.cuh for these
// types, chunk sub being the 32-element block (MXFP4, IQ4_NL) or the
// sub-block sub of a 256-element super-block. Every format's values are
// small integers times a scale per 16 or 32 elements: the 4-bit tables'
// int8 values (kb_lut16), the ternary codes less one, the codebook grids'
// entries with their signs applied (kb_signs4), IQ1_S's grid values with
// its delta as the halves' offset, and IQ1_M's, whose delta changes every
// eight elements, as 8*value +- 1 with an eighth of the scale (exact).

// kb_signs4 negates the bytes of the four unsigned values g (each below
// 128) whose bit in the low four bits of s is set.
__device__ __forceinline__ int kb_signs4(u32 g, u32 s) {
	const u32 m = (u32)kb_bits4(s & 15u) * 0xffu;
	return (int)__vsub4(g ^ m, m);
}

// kb_rd32u reads 4 bytes at any address (MXFP4's blocks are 17 bytes).
__device__ __forceinline__ u32 kb_rd32u(const u8* p) { return kb_rd32(p); }

// kb_nibbles4 decodes 32 4-bit codes (16 bytes at qs: element e < 16 the
// low nibble of byte e, e >= 16 the high nibble of byte e-16) through
// the table t.
template <bool ALIGNED>
__device__ __forceinline__ void kb_nibbles4(const u8* qs, const u32 t[4], int q[8]) {
#pragma unroll
	for (int j = 0; j < 4; j++) {
		const u32 v = ALIGNED ? (u32)kb_ld32(qs + 4 * j) : kb_rd32u(qs + 4 * j);
		q[j] = kb_lut16(v & 0x0f0f0f0fu, t);
		q[j + 4] = kb_lut16((v >> 4) & 0x0f0f0f0fu, t);
	}
}

template <>
__device__ __forceinline__ void kb_decode<KB_MXFP4>(const u8* b, int, int q[8], float2 dm[2]) {
	const u32 t[4] = KB_LUT16(KB_MXFP4_VALUES);
	kb_nibbles4<false>(b + KB_MXFP4_qs, t, q);
	dm[0] = dm[1] = make_float2(kb_e8m0_half(b[KB_MXFP4_e]), 0.0f);
}

template <>
__device__ __forceinline__ void kb_decode<KB_IQ4_NL>(const u8* b, int, int q[8], float2 dm[2]) {
	const u32 t[4] = KB_LUT16(KB_IQ4NL_VALUES);
	kb_nibbles4<true>(b + KB_IQ4_NL_qs, t, q);
	dm[0] = dm[1] = make_float2(kb_ldh(b + KB_IQ4_NL_d), 0.0f);
}

template <>
__device__ __forceinline__ void kb_decode<KB_IQ4_XS>(const u8* b, int ib, int q[8], float2 dm[2]) {
	const u32 t[4] = KB_LUT16(KB_IQ4NL_VALUES);
	kb_nibbles4<true>(b + KB_IQ4_XS_qs + 16 * ib, t, q);
	const int sc = ((b[KB_IQ4_XS_scales_l + ib / 2] >> (4 * (ib % 2))) & 15) | (((kb_rd16(b + KB_IQ4_XS_scales_h) >> (2 * ib)) & 3) << 4);
	dm[0] = dm[1] = make_float2(kb_ldh(b + KB_IQ4_XS_d) * (float)(sc - 32), 0.0f);
}

template <>
__device__ __forceinline__ void kb_decode<KB_TQ2_0>(const u8* b, int sub, int q[8], float2 dm[2]) {
	const u8* qs = b + KB_TQ2_0_qs + 32 * (sub / 4);
	const int sh = 2 * (sub % 4);
#pragma unroll
	for (int j = 0; j < 8; j++) q[j] = (int)__vsub4(((u32)kb_ld32(qs + 4 * j) >> sh) & 0x03030303u, 0x01010101u);
	dm[0] = dm[1] = make_float2(kb_ldh(b + KB_TQ2_0_d), 0.0f);
}

// kb_trits4 is trit n of each byte of w (kb_trit's (u8)(q*3^n)*3 >> 8,
// p = 3^n), less one: the even and the odd bytes apart, in 16-bit lanes
// (q*p < 2^15, its low byte times 3 < 2^10).
__device__ __forceinline__ int kb_trits4(u32 w, u32 p) {
	const u32 ev = ((((w & 0x00ff00ffu) * p) & 0x00ff00ffu) * 3u >> 8) & 0x00030003u;
	const u32 od = (((((w >> 8) & 0x00ff00ffu) * p) & 0x00ff00ffu) * 3u >> 8) & 0x00030003u;
	return (int)__vsub4(ev | (od << 8), 0x01010101u);
}

// kb_pow3 is 3^n for n = 0..4.
__device__ __forceinline__ u32 kb_pow3(int n) { return (u32)(0x511b090301ull >> (8 * n)) & 0xffu; }

template <>
__device__ __forceinline__ void kb_decode<KB_TQ1_0>(const u8* b, int sub, int q[8], float2 dm[2]) {
	// kb_iq8<KB_TQ1_0>'s order: chunks 0..4 are trit sub of bytes 0..31;
	// 5 and 6 trits 2(sub-5) and 2(sub-5)+1 of bytes 32..47; 7 trit 4 of
	// bytes 32..47, then trits 0..3 of the four qh bytes.
	const u8* qs = b + KB_TQ1_0_qs;
#pragma unroll
	for (int j = 0; j < 8; j++) {
		const u8* at;
		int n;
		if (sub < 5) {
			at = qs + 4 * j, n = sub;
		} else if (sub < 7) {
			at = qs + 32 + 4 * (j % 4), n = 2 * (sub - 5) + j / 4;
		} else {
			at = j < 4 ? qs + 32 + 4 * j : b + KB_TQ1_0_qh, n = j < 4 ? 4 : j - 4;
		}
		q[j] = kb_trits4((u32)kb_ld32(at), kb_pow3(n));
	}
	dm[0] = dm[1] = make_float2(kb_ldh(b + KB_TQ1_0_d), 0.0f);
}

template <>
__device__ __forceinline__ void kb_decode<KB_IQ2_XXS>(const u8* b, int ib, int q[8], float2 dm[2]) {
	const u8* qs = b + KB_IQ2_XXS_qs + 8 * ib;
	const u32 s = (u32)kb_ld32(qs + 4);
#pragma unroll
	for (int l = 0; l < 4; l++) {
		const u64 g = kb_iq2xxs_grid[qs[l]];
		const u32 sg = kb_ksigns_iq2xs[(s >> (7 * l)) & 127];
		q[2 * l] = kb_signs4((u32)g, sg);
		q[2 * l + 1] = kb_signs4((u32)(g >> 32), sg >> 4);
	}
	dm[0] = dm[1] = make_float2(kb_ldh(b + KB_IQ2_XXS_d) * (0.5f + (float)(s >> 28)) * 0.25f, 0.0f);
}

template <>
__device__ __forceinline__ void kb_decode<KB_IQ2_XS>(const u8* b, int ib, int q[8], float2 dm[2]) {
#pragma unroll
	for (int l = 0; l < 4; l++) {
		const u32 v = *(const u16*)(b + KB_IQ2_XS_qs + 8 * ib + 2 * l);
		const u64 g = kb_iq2xs_grid[v & 511];
		const u32 sg = kb_ksigns_iq2xs[v >> 9];
		q[2 * l] = kb_signs4((u32)g, sg);
		q[2 * l + 1] = kb_signs4((u32)(g >> 32), sg >> 4);
	}
	const float d = kb_ldh(b + KB_IQ2_XS_d);
	const u8 sc = b[KB_IQ2_XS_scales + ib];
	dm[0] = make_float2(kb_iq2_scale(d, sc & 15), 0.0f);
	dm[1] = make_float2(kb_iq2_scale(d, sc >> 4), 0.0f);
}

template <>
__device__ __forceinline__ void kb_decode<KB_IQ2_S>(const u8* b, int ib, int q[8], float2 dm[2]) {
	const u32 qh = b[KB_IQ2_S_qh + ib];
#pragma unroll
	for (int l = 0; l < 4; l++) {
		const u64 g = kb_iq2s_grid[b[KB_IQ2_S_qs + 4 * ib + l] | (((qh >> (2 * l)) & 3) << 8)];
		const u32 sg = b[KB_IQ2_S_signs + 4 * ib + l];
		q[2 * l] = kb_signs4((u32)g, sg);
		q[2 * l + 1] = kb_signs4((u32)(g >> 32), sg >> 4);
	}
	const float d = kb_ldh(b + KB_IQ2_S_d);
	const u8 sc = b[KB_IQ2_S_scales + ib];
	dm[0] = make_float2(kb_iq2_scale(d, sc & 15), 0.0f);
	dm[1] = make_float2(kb_iq2_scale(d, sc >> 4), 0.0f);
}

template <>
__device__ __forceinline__ void kb_decode<KB_IQ3_XXS>(const u8* b, int ib, int q[8], float2 dm[2]) {
	const u8* qs = b + KB_IQ3_XXS_qs + 8 * ib;
	const u32 s = (u32)kb_ld32(b + KB_IQ3_XXS_ss + 4 * ib);
#pragma unroll
	for (int l = 0; l < 4; l++) {
		const u32 sg = kb_ksigns_iq2xs[(s >> (7 * l)) & 127];
		q[2 * l] = kb_signs4(kb_iq3xxs_grid[qs[2 * l]], sg);
		q[2 * l + 1] = kb_signs4(kb_iq3xxs_grid[qs[2 * l + 1]], sg >> 4);
	}
	dm[0] = dm[1] = make_float2(kb_ldh(b + KB_IQ3_XXS_d) * (0.5f + (float)(s >> 28)) * 0.5f, 0.0f);
}

template <>
__device__ __forceinline__ void kb_decode<KB_IQ3_S>(const u8* b, int ib, int q[8], float2 dm[2]) {
	const u8* qs = b + KB_IQ3_S_qs + 8 * ib;
	const u32 qh = b[KB_IQ3_S_qh + ib];
#pragma unroll
	for (int l = 0; l < 4; l++) {
		const u32 sg = b[KB_IQ3_S_signs + 4 * ib + l];
		q[2 * l] = kb_signs4(kb_iq3s_grid[qs[2 * l] | (((qh >> (2 * l)) & 1) << 8)], sg);
		q[2 * l + 1] = kb_signs4(kb_iq3s_grid[qs[2 * l + 1] | (((qh >> (2 * l + 1)) & 1) << 8)], sg >> 4);
	}
	const int sc = (b[KB_IQ3_S_scales + ib / 2] >> (4 * (ib % 2))) & 15;
	dm[0] = dm[1] = make_float2(kb_ldh(b + KB_IQ3_S_d) * (float)(1 + 2 * sc), 0.0f);
}

template <>
__device__ __forceinline__ void kb_decode<KB_IQ1_S>(const u8* b, int ib, int q[8], float2 dm[2]) {
	const u32 h = *(const u16*)(b + KB_IQ1_S_qh + 2 * ib);
#pragma unroll
	for (int l = 0; l < 4; l++) {
		const u64 g = kb_iq1s_grid[b[KB_IQ1_S_qs + 4 * ib + l] | (((h >> (3 * l)) & 7) << 8)];
		q[2 * l] = (int)(u32)g;
		q[2 * l + 1] = (int)(u32)(g >> 32);
	}
	// w = dl * (grid + delta): the delta times the half's activation sum.
	const float dl = kb_ldh(b + KB_IQ1_S_d) * (float)(2 * ((h >> 12) & 7) + 1);
	dm[0] = dm[1] = make_float2(dl, dl * (h & 0x8000 ? -0.125f : 0.125f));
}

// kb_iq1m_code is 8*g + (neg ? -1 : 1) for the four grid values g
// (-1, 0 or 1) in the bytes of v.
__device__ __forceinline__ int kb_iq1m_code(u32 v, bool neg) {
	const u32 a = v & 0x01010101u, n = (v >> 7) & 0x01010101u;  // |g|, g < 0
	const u32 m = __vsub4(a << 3, n << 4);                       // 8*g
	return (int)(neg ? __vsub4(m, 0x01010101u) : __vadd4(m, 0x01010101u));
}

template <>
__device__ __forceinline__ void kb_decode<KB_IQ1_M>(const u8* b, int ib, int q[8], float2 dm[2]) {
#pragma unroll
	for (int l = 0; l < 4; l++) {
		const u32 h = b[KB_IQ1_M_qh + 2 * ib + l / 2] >> (4 * (l % 2));
		const u64 g = kb_iq1s_grid[b[KB_IQ1_M_qs + 4 * ib + l] | ((h & 7) << 8)];
		q[2 * l] = kb_iq1m_code((u32)g, h & 8);
		q[2 * l + 1] = kb_iq1m_code((u32)(g >> 32), h & 8);
	}
	u32 dh = 0;
#pragma unroll
	for (int j = 0; j < 4; j++) dh |= (u32)(*(const u16*)(b + KB_IQ1_M_scales + 2 * j) >> 12) << (4 * j);
	const float d = kb_h2f((u16)dh) * 0.125f;
	const u32 sc = *(const u16*)(b + KB_IQ1_M_scales + 2 * (ib / 2)) >> (6 * (ib % 2));
	dm[0] = make_float2(d * (float)(2 * (sc & 7) + 1), 0.0f);
	dm[1] = make_float2(d * (float)(2 * ((sc >> 3) & 7) + 1), 0.0f);
}
