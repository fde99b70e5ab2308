// dequant.h: whole-block decoders. kb_dq16<T>(b, il, y) writes elements
// 16*il .. 16*il+15 of the block of type T at b into y, as floats, with
// the float operations (and their order) of quants.h's kb_value, so a
// decoded value is the reference's (up to an FMA the compiler may
// contract). A block's scales are read once for the 16, its code bytes two
// at a time (every block size in bytes but MXFP4's 17 is even, so a block
// is 2-byte aligned wherever its row is; MXFP4's decoder reads bytes).
// For the float types (a "block" of one element) the 16 are the elements
// at b onward.
//
// kb_row16<T>(row, c, y) is the same for elements 16c .. 16c+15 of a row
// (a row starts on a block; its length, for a block type, is a multiple of
// the block, so 16 elements never straddle two blocks).
//
// The simdgroup-matrix kernels give each thread 16 contiguous weights of a
// tile to decode into threadgroup memory; the matrix-vector kernels may
// use the same decoders.
#pragma once
#include "quants.h"

// kb_dec<T>::dq16 is the decoder of type T; its block pointer P is to
// device memory (the matrix-vector kernels, the tile's direct loads) or,
// for the types the tile copies raw into threadgroup memory (mm.h's
// kb_mm_coop), to threadgroup memory: the readers below (kb_u16, kb_ldh,
// kb_dq16_i8, kb_q2codes, kb_q4codes, blocks.h's kb_k4_scale_min and
// kb_q3_scale) take either. On the emulator the address spaces are one,
// so the threadgroup overloads are Metal's alone.
template <int T>
struct kb_dec;

template <int T, typename P>
inline void kb_dq16(P b, int il, thread float *y) {
	kb_dec<T>::dq16(b, il, y);
}

// kb_u16 is the pointer to the 16-bit words at b (2-byte aligned).
inline device const ushort *kb_u16(device const uchar *b) { return (device const ushort *)b; }

// kb_ldh is the f16 at b (2-byte aligned), in one load: kb_rdh's value.
inline float kb_ldh(device const uchar *b) { return float(*(device const half *)b); }

#ifndef __KBSIMT__
inline threadgroup const ushort *kb_u16(threadgroup const uchar *b) { return (threadgroup const ushort *)b; }
inline float kb_ldh(threadgroup const uchar *b) { return float(*(threadgroup const half *)b); }
#endif

template <>
struct kb_dec<KB_F32> {
	template <typename P>
	static inline void dq16(P b, int, thread float *y) {
		device const float *p = (device const float *)b;
		for (int t = 0; t < 16; t++) y[t] = p[t];
	}
};
template <>
struct kb_dec<KB_F16> {
	template <typename P>
	static inline void dq16(P b, int, thread float *y) {
		device const half *p = (device const half *)b;
		for (int t = 0; t < 16; t++) y[t] = float(p[t]);
	}
};
template <>
struct kb_dec<KB_BF16> {
	template <typename P>
	static inline void dq16(P b, int, thread float *y) {
		auto p = kb_u16(b);
		for (int t = 0; t < 16; t++) y[t] = kb_bf2f(p[t]);
	}
};

// The legacy formats of 32 elements: chunk il = 0 is the low nibbles of
// the 16 code bytes, il = 1 the high ones.
template <>
struct kb_dec<KB_Q4_0> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const float d = kb_ldh(b);
		auto q = kb_u16(b + 2);
		const int s = 4 * il;
		for (int i = 0; i < 8; i++) {
			const uint u = q[i];
			y[2 * i] = float(int((u >> s) & 15) - 8) * d;
			y[2 * i + 1] = float(int((u >> (s + 8)) & 15) - 8) * d;
		}
	}
};
template <>
struct kb_dec<KB_Q4_1> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const float d = kb_ldh(b), m = kb_ldh(b + 2);
		auto q = kb_u16(b + 4);
		const int s = 4 * il;
		for (int i = 0; i < 8; i++) {
			const uint u = q[i];
			y[2 * i] = float((u >> s) & 15) * d + m;
			y[2 * i + 1] = float((u >> (s + 8)) & 15) * d + m;
		}
	}
};
template <>
struct kb_dec<KB_Q5_0> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const float d = kb_ldh(b);
		auto h = kb_u16(b + 2);
		const uint qh = h[il]; // bits 16il .. 16il+15 of the 32-bit high mask
		auto q = kb_u16(b + 6);
		const int s = 4 * il;
		for (int i = 0; i < 8; i++) {
			const uint u = q[i];
			const int q0 = int(((u >> s) & 15) | (((qh >> (2 * i)) & 1) << 4));
			const int q1 = int(((u >> (s + 8)) & 15) | (((qh >> (2 * i + 1)) & 1) << 4));
			y[2 * i] = float(q0 - 16) * d;
			y[2 * i + 1] = float(q1 - 16) * d;
		}
	}
};
template <>
struct kb_dec<KB_Q5_1> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const float d = kb_ldh(b), m = kb_ldh(b + 2);
		auto h = kb_u16(b + 4);
		const uint qh = h[il];
		auto q = kb_u16(b + 8);
		const int s = 4 * il;
		for (int i = 0; i < 8; i++) {
			const uint u = q[i];
			const uint q0 = ((u >> s) & 15) | (((qh >> (2 * i)) & 1) << 4);
			const uint q1 = ((u >> (s + 8)) & 15) | (((qh >> (2 * i + 1)) & 1) << 4);
			y[2 * i] = float(q0) * d + m;
			y[2 * i + 1] = float(q1) * d + m;
		}
	}
};

// kb_dq16_i8 writes 16 signed bytes at q (2-byte aligned) times d.
template <typename P>
inline void kb_dq16_i8(P q, float d, thread float *y) {
	auto p = kb_u16(q);
	for (int i = 0; i < 8; i++) {
		const uint u = p[i];
		y[2 * i] = float(kb_i8(uchar(u & 255))) * d;
		y[2 * i + 1] = float(kb_i8(uchar(u >> 8))) * d;
	}
}
template <>
struct kb_dec<KB_Q8_0> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		kb_dq16_i8(b + 2 + 16 * il, kb_ldh(b), y);
	}
};
template <>
struct kb_dec<KB_Q8_1> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		kb_dq16_i8(b + 4 + 16 * il, kb_ldh(b), y);
	}
};

// The K formats of 256 elements: chunk il is elements 16il .. 16il+15,
// one sub-block of 16 (Q2_K, Q3_K, Q6_K) or half of one of 32 (Q4_K,
// Q5_K). The 2-bit codes of Q2_K and Q3_K: element e = 128h + 32g + l is
// bits 2g of byte 32h + l; chunk il has h = il/8, g = (il%8)/2 and l from
// 16*(il%2).

// kb_q2codes reads chunk il's 2-bit codes of the 64 code bytes at qs.
template <typename P>
inline void kb_q2codes(P qs, int il, thread int *q) {
	auto p = kb_u16(qs + 32 * (il / 8) + 16 * (il % 2));
	const int s = 2 * ((il % 8) / 2);
	for (int i = 0; i < 8; i++) {
		const uint u = p[i];
		q[2 * i] = int((u >> s) & 3);
		q[2 * i + 1] = int((u >> (s + 8)) & 3);
	}
}

template <>
struct kb_dec<KB_Q2_K> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const int sc = b[il];
		const float dl = kb_ldh(b + 80) * float(sc & 15);
		const float ml = kb_ldh(b + 82) * float(sc >> 4);
		int q[16];
		kb_q2codes(b + 16, il, q);
		for (int t = 0; t < 16; t++) y[t] = dl * float(q[t]) - ml;
	}
};
template <>
struct kb_dec<KB_Q3_K> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const float dl = kb_ldh(b + 108) * float(kb_q3_scale(il, b + 96));
		int q[16];
		kb_q2codes(b + 32, il, q);
		// The high bit of element e is bit e/32 of hmask[e%32]; a clear bit
		// subtracts 4.
		auto hm = kb_u16(b + 16 * (il % 2));
		const int hb = il / 2;
		for (int i = 0; i < 8; i++) {
			const uint u = hm[i];
			if (!((u >> hb) & 1)) q[2 * i] -= 4;
			if (!((u >> (hb + 8)) & 1)) q[2 * i + 1] -= 4;
		}
		for (int t = 0; t < 16; t++) y[t] = dl * float(q[t]);
	}
};

// kb_q4codes reads chunk il's 4-bit codes of the 128 code bytes at qs of
// Q4_K and Q5_K: element e is the low nibble (e%64 < 32) or the high one
// of byte 32*(e/64) + e%32.
template <typename P>
inline void kb_q4codes(P qs, int il, thread int *q) {
	auto p = kb_u16(qs + 32 * (il / 4) + 16 * (il % 2));
	const int s = 4 * ((il / 2) % 2);
	for (int i = 0; i < 8; i++) {
		const uint u = p[i];
		q[2 * i] = int((u >> s) & 15);
		q[2 * i + 1] = int((u >> (s + 8)) & 15);
	}
}

template <>
struct kb_dec<KB_Q4_K> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		int sc, m;
		kb_k4_scale_min(il / 2, b + 4, sc, m);
		const float dj = kb_ldh(b) * float(sc), mj = kb_ldh(b + 2) * float(m);
		int q[16];
		kb_q4codes(b + 16, il, q);
		for (int t = 0; t < 16; t++) y[t] = dj * float(q[t]) - mj;
	}
};
template <>
struct kb_dec<KB_Q5_K> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		int sc, m;
		kb_k4_scale_min(il / 2, b + 4, sc, m);
		const float dj = kb_ldh(b) * float(sc), mj = kb_ldh(b + 2) * float(m);
		int q[16];
		kb_q4codes(b + 48, il, q);
		// The fifth bit of element e is bit e/32 of qh[e%32].
		auto hm = kb_u16(b + 16 + 16 * (il % 2));
		const int hb = il / 2;
		for (int i = 0; i < 8; i++) {
			const uint u = hm[i];
			q[2 * i] += int((u >> hb) & 1) << 4;
			q[2 * i + 1] += int((u >> (hb + 8)) & 1) << 4;
		}
		for (int t = 0; t < 16; t++) y[t] = dj * float(q[t]) - mj;
	}
};
template <>
struct kb_dec<KB_Q6_K> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		// Element e = 128h + 32g + l: the low 4 bits are the low (g < 2) or
		// high nibble of ql[64h + 32*(g%2) + l], the high 2 bits are bits 2g
		// of qh[32h + l].
		const int h = il / 8, g = (il % 8) / 2, l0 = 16 * (il % 2);
		auto lo = kb_u16(b + 64 * h + 32 * (g % 2) + l0);
		auto hi = kb_u16(b + 128 + 32 * h + l0);
		const int sl = g < 2 ? 0 : 4, sh = 2 * g;
		const float d = kb_ldh(b + 208), s = float(kb_i8(b[192 + il]));
		for (int i = 0; i < 8; i++) {
			const uint u = lo[i], v = hi[i];
			const int q0 = int(((u >> sl) & 15) | (((v >> sh) & 3) << 4)) - 32;
			const int q1 = int(((u >> (sl + 8)) & 15) | (((v >> (sh + 8)) & 3) << 4)) - 32;
			y[2 * i] = d * s * float(q0);
			y[2 * i + 1] = d * s * float(q1);
		}
	}
};
template <>
struct kb_dec<KB_Q8_K> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const float d = as_type<float>(kb_rd32(b));
		auto p = kb_u16(b + 4 + 16 * il);
		for (int i = 0; i < 8; i++) {
			const uint u = p[i];
			y[2 * i] = d * float(kb_i8(uchar(u & 255)));
			y[2 * i + 1] = d * float(kb_i8(uchar(u >> 8)));
		}
	}
};

// The formats of issue 26, with the float operations of quants.h's
// kb_value for them. MXFP4's block is 17 bytes, so its fields are read a
// byte at a time; the others read bytes too where a field may sit on an
// odd address, 16-bit words where it may not.
//
// MXFP4 and IQ4_NL (32 elements): chunk il = 0 is the low nibbles of the
// 16 code bytes, il = 1 the high ones.
template <>
struct kb_dec<KB_MXFP4> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const float d = kb_e8m0_half(b[0]);
		for (int t = 0; t < 16; t++) y[t] = float(kb_mxfp4_values[(b[1 + t] >> (4 * il)) & 15]) * d;
	}
};
template <>
struct kb_dec<KB_IQ4_NL> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const float d = kb_ldh(b);
		auto q = kb_u16(b + 2);
		const int s = 4 * il;
		for (int i = 0; i < 8; i++) {
			const uint u = q[i];
			y[2 * i] = d * float(kb_iq4nl_values[(u >> s) & 15]);
			y[2 * i + 1] = d * float(kb_iq4nl_values[(u >> (s + 8)) & 15]);
		}
	}
};
// IQ4_XS: chunk il is the low (il even) or high nibbles of the 16 code
// bytes of sub-block il/2.
template <>
struct kb_dec<KB_IQ4_XS> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const int ib = il / 2;
		const float dl = kb_ldh(b) * float(kb_iq4xs_scale(b, ib) - 32);
		auto q = kb_u16(b + 8 + 16 * ib);
		const int s = 4 * (il % 2);
		for (int i = 0; i < 8; i++) {
			const uint u = q[i];
			y[2 * i] = dl * float(kb_iq4nl_values[(u >> s) & 15]);
			y[2 * i + 1] = dl * float(kb_iq4nl_values[(u >> (s + 8)) & 15]);
		}
	}
};
// TQ2_0: element 128h + 32n + m is bits 2n of byte 32h + m.
template <>
struct kb_dec<KB_TQ2_0> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const float d = kb_ldh(b + 64);
		auto q = kb_u16(b + 32 * (il / 8) + 16 * (il % 2));
		const int s = 2 * ((il % 8) / 2);
		for (int i = 0; i < 8; i++) {
			const uint u = q[i];
			y[2 * i] = float(int((u >> s) & 3) - 1) * d;
			y[2 * i + 1] = float(int((u >> (s + 8)) & 3) - 1) * d;
		}
	}
};
// TQ1_0: chunks 0..9 are trit il/2 of qs[16(il%2) ..], 10..14 trit il-10
// of qs[32 ..], 15 the four trits of each of the four qh bytes.
template <>
struct kb_dec<KB_TQ1_0> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const float d = kb_ldh(b + 52);
		if (il < 15) {
			auto q = il < 10 ? b + 16 * (il % 2) : b + 32;
			const int n = il < 10 ? il / 2 : il - 10;
			for (int t = 0; t < 16; t++) y[t] = float(kb_trit(q[t], n) - 1) * d;
		} else {
			for (int t = 0; t < 16; t++) y[t] = float(kb_trit(b[48 + t % 4], t / 4) - 1) * d;
		}
	}
};

// The codebook formats: chunk il is half of sub-block ib = il/2 of 32,
// two groups of eight (IQ2, IQ1: l = 2(il%2), +1) or four of four (IQ3:
// k = 4(il%2) .. +3).

// kb_dq8_signed writes the eight magnitudes of grid times db, negated
// where bits of signs are set.
inline void kb_dq8_signed(float db, ulong grid, uint signs, thread float *y) {
	for (int i = 0; i < 8; i++) y[i] = kb_signed(db, uint(grid >> (8 * i)) & 255, (signs >> i) & 1);
}
inline void kb_dq4_signed(float db, uint grid, uint signs, thread float *y) {
	for (int i = 0; i < 4; i++) y[i] = kb_signed(db, (grid >> (8 * i)) & 255, (signs >> i) & 1);
}

template <>
struct kb_dec<KB_IQ2_XXS> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const int ib = il / 2;
		auto p = kb_u16(b + 2 + 8 * ib);
		const uint w = uint(p[2]) | uint(p[3]) << 16;
		const float db = kb_iq2_db(kb_ldh(b), w >> 28, 0.25f);
		for (int j = 0; j < 2; j++) {
			const int l = 2 * (il % 2) + j;
			const uint q = (uint(p[l / 2]) >> (8 * (l % 2))) & 255;
			kb_dq8_signed(db, kb_iq2xxs_grid[q], kb_ksigns_iq2xs[(w >> (7 * l)) & 127], y + 8 * j);
		}
	}
};
template <>
struct kb_dec<KB_IQ2_XS> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const int ib = il / 2;
		const uint sc = b[66 + ib];
		const float db = kb_iq2_db(kb_ldh(b), il % 2 == 0 ? sc & 15 : sc >> 4, 0.25f);
		auto p = kb_u16(b + 2 + 8 * ib);
		for (int j = 0; j < 2; j++) {
			const uint q = p[2 * (il % 2) + j];
			kb_dq8_signed(db, kb_iq2xs_grid[q & 511], kb_ksigns_iq2xs[q >> 9], y + 8 * j);
		}
	}
};
template <>
struct kb_dec<KB_IQ2_S> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const int ib = il / 2;
		const uint sc = b[74 + ib], qh = b[66 + ib];
		const float db = kb_iq2_db(kb_ldh(b), il % 2 == 0 ? sc & 15 : sc >> 4, 0.25f);
		for (int j = 0; j < 2; j++) {
			const int l = 2 * (il % 2) + j;
			const uint idx = b[2 + 4 * ib + l] | ((qh >> (2 * l)) & 3) << 8;
			kb_dq8_signed(db, kb_iq2s_grid[idx], b[34 + 4 * ib + l], y + 8 * j);
		}
	}
};
template <>
struct kb_dec<KB_IQ3_XXS> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const int ib = il / 2;
		auto p = kb_u16(b + 66 + 4 * ib);
		const uint w = uint(p[0]) | uint(p[1]) << 16;
		const float db = kb_iq2_db(kb_ldh(b), w >> 28, 0.5f);
		for (int j = 0; j < 4; j++) {
			const int k = 4 * (il % 2) + j;
			const uint s = uint(kb_ksigns_iq2xs[(w >> (7 * (k / 2))) & 127]) >> (4 * (k % 2));
			kb_dq4_signed(db, kb_iq3xxs_grid[b[2 + 8 * ib + k]], s, y + 4 * j);
		}
	}
};
template <>
struct kb_dec<KB_IQ3_S> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const int ib = il / 2;
		const float db = kb_ldh(b) * float(1 + 2 * int((b[106 + ib / 2] >> (4 * (ib % 2))) & 15));
		const uint qh = b[66 + ib];
		for (int j = 0; j < 4; j++) {
			const int k = 4 * (il % 2) + j;
			const uint idx = b[2 + 8 * ib + k] | ((qh >> k) & 1) << 8;
			kb_dq4_signed(db, kb_iq3s_grid[idx], uint(b[74 + 4 * ib + k / 2]) >> (4 * (k % 2)), y + 4 * j);
		}
	}
};
template <>
struct kb_dec<KB_IQ1_S> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const int ib = il / 2;
		const uint h = kb_u16(b + 34)[ib];
		const float dl = kb_ldh(b) * float(2 * int((h >> 12) & 7) + 1);
		const float delta = h & 0x8000 ? -0.125f : 0.125f;
		for (int j = 0; j < 2; j++) {
			const int l = 2 * (il % 2) + j;
			const ulong grid = kb_iq1s_grid[b[2 + 4 * ib + l] | ((h >> (3 * l)) & 7) << 8];
			for (int i = 0; i < 8; i++) y[8 * j + i] = kb_iq1(dl, grid, i, delta);
		}
	}
};
template <>
struct kb_dec<KB_IQ1_M> {
	template <typename P>
	static inline void dq16(P b, int il, thread float *y) {
		const int ib = il / 2;
		const uint sc = uint(kb_u16(b + 48)[ib / 2]) >> (6 * (ib % 2));
		const float dl = kb_iq1m_d(b) * float(2 * int(il % 2 == 0 ? sc & 7 : (sc >> 3) & 7) + 1);
		const uint hb = b[32 + 2 * ib + il % 2];
		for (int j = 0; j < 2; j++) {
			const int l = 2 * (il % 2) + j;
			const uint h = hb >> (4 * j);
			const float delta = h & 8 ? -0.125f : 0.125f;
			const ulong grid = kb_iq1s_grid[b[4 * ib + l] | (h & 7) << 8];
			for (int i = 0; i < 8; i++) y[8 * j + i] = kb_iq1(dl, grid, i, delta);
		}
	}
};

template <int T>
inline void kb_row16(device const uchar *row, long c, thread float *y) {
	const long e = 16 * c;
	kb_dq16<T>(row + (e / kb_block(T)) * kb_bytes(T), int((e % kb_block(T)) / 16), y);
}
