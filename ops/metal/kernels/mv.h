// mv.h: the matrix-vector core of MUL_MAT (kb_mul_mv in mul_mat.metal):
// weight rows of every block type decoded a whole piece at a time in
// registers, dotted with up to KB_MV_NC activation columns at once, so
// that each weight byte is read once for all the columns.
//
// A simdgroup takes kb_mv<T>::NR weight rows (per type, as ggml-metal's
// N_R0: four for the legacy 4- and 5-bit formats, Q2_K and the floats,
// two for the 8-bit formats and the other K-quants). A block of a type is cut into kb_mv<T>::UPB pieces, one a
// lane: 16 values of a 32-value block, 32 values of a 256-value super-block
// (a sub-block's or two sub-blocks' worth, their scales decoded once). A
// lane reads its piece of each of the NR rows with 16- or 32-bit loads
// (load) from the simdgroup's raw copy of its rows in threadgroup memory
// (kb_mv_core, below: the rows' bytes read from device memory with
// 16-byte loads of consecutive words) or, for the types without the copy,
// from device memory, then per column loads the piece's activations
// (kb_mv_x8, 16-byte loads where the column is packed and aligned) and
// adds piece·activations to its NR sums (dot); the simdgroup moves on by
// 32/UPB blocks, and a simd_sum per row and column ends it.
//
// A piece's values come in runs of eight consecutive elements: value
// 8s+t of piece u is element start(u, s)+t of the block. Weight rows of a
// block type start where their block's 16-bit (32-bit for the types whose
// blocks are a multiple of four bytes) fields are aligned, as ggml's
// buffers guarantee; the host checks it (op_mul_mat.go).
#pragma once
#include "dequant.h"

// KB_MV_NSG simdgroups per threadgroup; KB_MV_NC columns at most.
#define KB_MV_NSG 2
#define KB_MV_NC 8

// kb_mv_h, kb_mv_u16, kb_mv_u32: an f16, a 16-bit and a 32-bit field at an
// aligned p.
// The weights are read from device memory or, for the types of
// kb_mv_coop, from the simdgroup's raw copy in threadgroup memory; on the
// emulator the address spaces are one, so the threadgroup overloads are
// Metal's alone.
inline float kb_mv_h(device const uchar *p) { return float(*(device const half *)p); }
inline ushort kb_mv_u16(device const uchar *p) { return *(device const ushort *)p; }
inline uint kb_mv_u32(device const uchar *p) { return *(device const uint *)p; }
#ifndef __KBSIMT__
inline float kb_mv_h(threadgroup const uchar *p) { return float(*(threadgroup const half *)p); }
inline ushort kb_mv_u16(threadgroup const uchar *p) { return *(threadgroup const ushort *)p; }
inline uint kb_mv_u32(threadgroup const uchar *p) { return *(threadgroup const uint *)p; }
#endif

// kb_mv_act returns the activation at p, of type btype (KB_F32, KB_F16 or
// KB_BF16).
inline float kb_mv_act(int btype, device const char *p) {
	switch (btype) {
	case KB_F16: return float(*(device const half *)p);
	case KB_BF16: return kb_bf2f(*(device const ushort *)p);
	default: return *(device const float *)p;
	}
}

// kb_mv_ld16 reads the 16 bytes at p (16-byte aligned) in one load: the
// vector is copied whole into registers first (see kb_mv_x8).
inline uint4 kb_mv_ld16(device const char *p) {
	uint4 w[1];
	for (int i = 0; i < 1; i++) w[i] = ((device const uint4 *)p)[i];
	return w[0];
}

// kb_mv_h8 and kb_mv_bf8 read the eight f16 or bf16 values at p (16-byte
// aligned) into x with one 16-byte load.
inline void kb_mv_h8(device const char *p, thread float *x) {
	const uint4 v = kb_mv_ld16(p);
	const float4 a = float4(half4(as_type<half2>(v.x), as_type<half2>(v.y)));
	const float4 b = float4(half4(as_type<half2>(v.z), as_type<half2>(v.w)));
	x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w;
	x[4] = b.x, x[5] = b.y, x[6] = b.z, x[7] = b.w;
}
inline void kb_mv_bf8(device const char *p, thread float *x) {
	const uint4 v = kb_mv_ld16(p);
	const uint u[4] = {v.x, v.y, v.z, v.w};
	for (int i = 0; i < 4; i++) {
		x[2 * i] = as_type<float>(u[i] << 16);
		x[2 * i + 1] = as_type<float>(u[i] & 0xffff0000u);
	}
}

// kb_mv_x8 loads activations e .. e+7 of the column at col (type btype,
// element stride nb0) into x; vec says the column is packed and 16-byte
// aligned at every multiple of 8 (f32: two 16-byte loads, f16: one).
inline void kb_mv_x8(device const char *col, long e, int btype, long nb0, bool vec, thread float *x) {
	// The vectors are copied whole into registers first, as mm.h's
	// kb_mm_row16_vec does (the emulator's g++ would otherwise split them
	// into scalar loads).
	if (vec && btype == KB_F32) {
		device const float4 *p = (device const float4 *)(col + 4 * e);
		float4 v[2];
		for (int i = 0; i < 2; i++) v[i] = p[i];
		x[0] = v[0].x, x[1] = v[0].y, x[2] = v[0].z, x[3] = v[0].w;
		x[4] = v[1].x, x[5] = v[1].y, x[6] = v[1].z, x[7] = v[1].w;
		return;
	}
	if (vec && btype == KB_F16) {
		kb_mv_h8(col + 2 * e, x);
		return;
	}
	for (int t = 0; t < 8; t++) x[t] = kb_mv_act(btype, col + (e + t) * nb0);
}

// kb_mv<T>: a lane's piece of one block of one row. NR rows per
// simdgroup, UPB pieces per block, RUNS runs of eight values per piece
// starting at start(u, s); load reads piece u of the block at b, dot
// returns its dot product with x (the piece's activations, run by run).
template <int T>
struct kb_mv;

// The legacy formats: piece u of two takes code bytes 8u .. 8u+7, whose
// low nibbles are elements 8u .. 8u+7 and high nibbles 16+8u .. .
template <>
struct kb_mv<KB_Q4_0> {
	enum { NR = 4, UPB = 2, RUNS = 2 };
	static int start(int u, int s) { return 8 * u + 16 * s; }
	float d;
	ushort q[4];
	template <typename Q>
	void load(Q b, int u) {
		d = kb_mv_h(b);
		for (int i = 0; i < 4; i++) q[i] = kb_mv_u16(b + 2 + 8 * u + 2 * i);
	}
	float dot(thread const float *x) const {
		float s = 0.0f;
		for (int i = 0; i < 4; i++) {
			const uint v = q[i];
			s = fma(float(int(v & 15) - 8), x[2 * i], s);
			s = fma(float(int((v >> 8) & 15) - 8), x[2 * i + 1], s);
			s = fma(float(int((v >> 4) & 15) - 8), x[8 + 2 * i], s);
			s = fma(float(int(v >> 12) - 8), x[8 + 2 * i + 1], s);
		}
		return d * s;
	}
};

// kb_mv_nib4 adds the codes of four packed bytes w (low nibbles against
// lo[0..3], high against hi[0..3]) times the activations to sl and sh.
inline void kb_mv_nib4(uint w, thread const float *lo, thread const float *hi, thread float &sl, thread float &sh) {
	for (int t = 0; t < 4; t++) {
		sl = fma(float((w >> (8 * t)) & 15), lo[t], sl);
		sh = fma(float((w >> (8 * t + 4)) & 15), hi[t], sh);
	}
}

template <>
struct kb_mv<KB_Q4_1> {
	enum { NR = 4, UPB = 2, RUNS = 2 };
	static int start(int u, int s) { return 8 * u + 16 * s; }
	float d, m;
	uint q[2];
	template <typename Q>
	void load(Q b, int u) {
		d = kb_mv_h(b);
		m = kb_mv_h(b + 2);
		for (int i = 0; i < 2; i++) q[i] = kb_mv_u32(b + 4 + 8 * u + 4 * i);
	}
	float dot(thread const float *x) const {
		float sq = 0.0f, sh = 0.0f, sx = 0.0f;
		for (int i = 0; i < 2; i++) kb_mv_nib4(q[i], x + 4 * i, x + 8 + 4 * i, sq, sh);
		for (int t = 0; t < 16; t++) sx += x[t];
		return d * (sq + sh) + m * sx;
	}
};

// kb_mv_q5 is the 5-bit code of element e of a Q5 block: nibble v of its
// code byte and bit e of the high bits qh.
inline int kb_mv_q5(uint v, uint qh, int e) { return int(v & 15) | int((qh >> e) & 1) << 4; }

template <>
struct kb_mv<KB_Q5_0> {
	enum { NR = 4, UPB = 2, RUNS = 2 };
	static int start(int u, int s) { return 8 * u + 16 * s; }
	float d;
	uint qh;
	ushort q[4];
	int u;
	template <typename Q>
	void load(Q b, int u_) {
		u = u_;
		d = kb_mv_h(b);
		qh = uint(kb_mv_u16(b + 2)) | uint(kb_mv_u16(b + 4)) << 16;
		for (int i = 0; i < 4; i++) q[i] = kb_mv_u16(b + 6 + 8 * u + 2 * i);
	}
	float dot(thread const float *x) const {
		float s = 0.0f;
		for (int i = 0; i < 4; i++) {
			const uint v = q[i];
			const int e = 8 * u + 2 * i;
			s = fma(float(kb_mv_q5(v, qh, e) - 16), x[2 * i], s);
			s = fma(float(kb_mv_q5(v >> 8, qh, e + 1) - 16), x[2 * i + 1], s);
			s = fma(float(kb_mv_q5(v >> 4, qh, e + 16) - 16), x[8 + 2 * i], s);
			s = fma(float(kb_mv_q5(v >> 12, qh, e + 17) - 16), x[8 + 2 * i + 1], s);
		}
		return d * s;
	}
};

template <>
struct kb_mv<KB_Q5_1> {
	enum { NR = 4, UPB = 2, RUNS = 2 };
	static int start(int u, int s) { return 8 * u + 16 * s; }
	float d, m;
	uint qh;
	uint q[2];
	int u;
	template <typename Q>
	void load(Q b, int u_) {
		u = u_;
		d = kb_mv_h(b);
		m = kb_mv_h(b + 2);
		qh = kb_mv_u32(b + 4);
		for (int i = 0; i < 2; i++) q[i] = kb_mv_u32(b + 8 + 8 * u + 4 * i);
	}
	float dot(thread const float *x) const {
		float s = 0.0f, sx = 0.0f;
		for (int t = 0; t < 8; t++) {
			const uint v = q[t / 4] >> (8 * (t % 4));
			s = fma(float(kb_mv_q5(v, qh, 8 * u + t)), x[t], s);
			s = fma(float(kb_mv_q5(v >> 4, qh, 16 + 8 * u + t)), x[8 + t], s);
		}
		for (int t = 0; t < 16; t++) sx += x[t];
		return d * s + m * sx;
	}
};

// The 8-bit formats: piece u of two is elements 16u .. 16u+15.
inline int kb_mv_i8(uint w, int t) { return kb_i8(uchar(w >> (8 * t))); }

template <>
struct kb_mv<KB_Q8_0> {
	enum { NR = 2, UPB = 2, RUNS = 2 };
	static int start(int u, int s) { return 16 * u + 8 * s; }
	float d;
	ushort q[8];
	template <typename Q>
	void load(Q b, int u) {
		d = kb_mv_h(b);
		for (int i = 0; i < 8; i++) q[i] = kb_mv_u16(b + 2 + 16 * u + 2 * i);
	}
	float dot(thread const float *x) const {
		float s = 0.0f;
		for (int i = 0; i < 8; i++) {
			s = fma(float(kb_mv_i8(q[i], 0)), x[2 * i], s);
			s = fma(float(kb_mv_i8(q[i], 1)), x[2 * i + 1], s);
		}
		return d * s;
	}
};

template <>
struct kb_mv<KB_Q8_1> {
	enum { NR = 2, UPB = 2, RUNS = 2 };
	static int start(int u, int s) { return 16 * u + 8 * s; }
	float d;
	uint q[4];
	template <typename Q>
	void load(Q b, int u) {
		d = kb_mv_h(b);
		for (int i = 0; i < 4; i++) q[i] = kb_mv_u32(b + 4 + 16 * u + 4 * i);
	}
	float dot(thread const float *x) const {
		float s = 0.0f;
		for (int t = 0; t < 16; t++) s = fma(float(kb_mv_i8(q[t / 4], t % 4)), x[t], s);
		return d * s;
	}
};

// The K-quants: eight pieces of 32 values per super-block of 256.
//
// Q2_K, Q3_K and Q6_K (codes of 128 elements packed in four 2-bit
// layers): piece u takes half h = u/4 and positions l = 8(u%4) .. +7 of
// its 32-byte code rows, in each of the four layers g (element 128h + 32g
// + l): four runs, each of one 16-element sub-block (scale j = 8h + 2g +
// (u%4)/2).
template <>
struct kb_mv<KB_Q2_K> {
	enum { NR = 4, UPB = 8, RUNS = 4 };
	static int start(int u, int s) { return 128 * (u / 4) + 32 * s + 8 * (u % 4); }
	float d, dmin;
	uint q[2];
	uint sc; // the four runs' scale bytes
	template <typename Q>
	void load(Q b, int u) {
		const int h = u / 4, lq = u % 4;
		const half2 dm = as_type<half2>(kb_mv_u32(b + 80));
		d = float(dm.x);
		dmin = float(dm.y);
		for (int i = 0; i < 2; i++) q[i] = kb_mv_u32(b + 16 + 32 * h + 8 * lq + 4 * i);
		const uint s0 = kb_mv_u32(b + 8 * h), s1 = kb_mv_u32(b + 8 * h + 4);
		const int sh = 8 * (lq / 2);
		sc = (s0 >> sh & 255) | (s0 >> (sh + 16) & 255) << 8 | (s1 >> sh & 255) << 16 | (s1 >> (sh + 16) & 255) << 24;
	}
	float dot(thread const float *x) const {
		float sq = 0.0f, sm = 0.0f;
		for (int g = 0; g < 4; g++) {
			float a = 0.0f, sx = 0.0f;
			for (int t = 0; t < 8; t++) {
				a = fma(float((q[t / 4] >> (8 * (t % 4) + 2 * g)) & 3), x[8 * g + t], a);
				sx += x[8 * g + t];
			}
			const uint s = sc >> (8 * g);
			sq = fma(float(s & 15), a, sq);
			sm = fma(float((s >> 4) & 15), sx, sm);
		}
		return d * sq - dmin * sm;
	}
};

template <>
struct kb_mv<KB_Q3_K> {
	enum { NR = 2, UPB = 8, RUNS = 4 };
	static int start(int u, int s) { return 128 * (u / 4) + 32 * s + 8 * (u % 4); }
	float d;
	ushort q[4], hm[4];
	int sc[4];
	int h;
	template <typename Q>
	void load(Q b, int u) {
		h = u / 4;
		const int lq = u % 4;
		d = kb_mv_h(b + 108);
		for (int i = 0; i < 4; i++) {
			q[i] = kb_mv_u16(b + 32 + 32 * h + 8 * lq + 2 * i);
			hm[i] = kb_mv_u16(b + 8 * lq + 2 * i);
		}
		uchar s[12];
		for (int i = 0; i < 6; i++) {
			const ushort w = kb_mv_u16(b + 96 + 2 * i);
			s[2 * i] = uchar(w);
			s[2 * i + 1] = uchar(w >> 8);
		}
		for (int g = 0; g < 4; g++) {
			const int j = 8 * h + 2 * g + lq / 2;
			const int lo = j < 8 ? s[j] & 15 : s[j - 8] >> 4;
			const int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
			sc[g] = (lo | (hi << 4)) - 32;
		}
	}
	float dot(thread const float *x) const {
		float s = 0.0f;
		for (int g = 0; g < 4; g++) {
			float a = 0.0f;
			const int hb = 4 * h + g;
			for (int t = 0; t < 8; t++) {
				const uint w = q[t / 2] >> (8 * (t % 2)), m = hm[t / 2] >> (8 * (t % 2));
				const int c = int((w >> (2 * g)) & 3) - ((m >> hb) & 1 ? 0 : 4);
				a = fma(float(c), x[8 * g + t], a);
			}
			s = fma(float(sc[g]), a, s);
		}
		return d * s;
	}
};

template <>
struct kb_mv<KB_Q6_K> {
	enum { NR = 2, UPB = 8, RUNS = 4 };
	static int start(int u, int s) { return 128 * (u / 4) + 32 * s + 8 * (u % 4); }
	float d;
	ushort l0[4], l1[4], qh[4];
	int sc[4];
	template <typename Q>
	void load(Q b, int u) {
		const int h = u / 4, lq = u % 4;
		d = kb_mv_h(b + 208);
		for (int i = 0; i < 4; i++) {
			l0[i] = kb_mv_u16(b + 64 * h + 8 * lq + 2 * i);
			l1[i] = kb_mv_u16(b + 64 * h + 32 + 8 * lq + 2 * i);
			qh[i] = kb_mv_u16(b + 128 + 32 * h + 8 * lq + 2 * i);
		}
		for (int g = 0; g < 4; g++) {
			const ushort w = kb_mv_u16(b + 192 + 8 * h + 2 * g);
			sc[g] = kb_i8(uchar(w >> (8 * (lq / 2))));
		}
	}
	float dot(thread const float *x) const {
		float s = 0.0f;
		for (int g = 0; g < 4; g++) {
			float a = 0.0f;
			for (int t = 0; t < 8; t++) {
				const uint lw = (g % 2 == 0 ? l0[t / 2] : l1[t / 2]) >> (8 * (t % 2));
				const uint low = g < 2 ? lw & 15 : (lw >> 4) & 15;
				const uint high = (uint(qh[t / 2]) >> (8 * (t % 2) + 2 * g)) & 3;
				a = fma(float(int(low | high << 4) - 32), x[8 * g + t], a);
			}
			s = fma(float(sc[g]), a, s);
		}
		return d * s;
	}
};

// Q4_K and Q5_K (four 64-element groups of 32 code bytes, low nibbles a
// sub-block of 32, high nibbles the next): piece u takes group g = u/2
// and code bytes 16(u%2) .. +15 of it: two runs of sub-block 2g, then two
// of sub-block 2g+1. kb_mv_k4 decodes their scales and mins.
template <typename Q>
inline void kb_mv_k4(Q b, int g, thread float &d0, thread float &m0, thread float &d1, thread float &m1) {
	const half2 dm = as_type<half2>(kb_mv_u32(b));
	uint w[3];
	for (int i = 0; i < 3; i++) w[i] = kb_mv_u32(b + 4 + 4 * i);
	uchar s[12];
	for (int i = 0; i < 12; i++) s[i] = uchar(w[i / 4] >> (8 * (i % 4)));
	int sc[2], m[2];
	for (int k = 0; k < 2; k++) {
		const int j = 2 * g + k;
		if (j < 4) {
			sc[k] = s[j] & 63;
			m[k] = s[j + 4] & 63;
		} else {
			sc[k] = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
			m[k] = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
		}
	}
	const float d = float(dm.x), dmin = float(dm.y);
	d0 = d * float(sc[0]);
	m0 = dmin * float(m[0]);
	d1 = d * float(sc[1]);
	m1 = dmin * float(m[1]);
}

template <>
struct kb_mv<KB_Q4_K> {
	enum { NR = 2, UPB = 8, RUNS = 4 };
	static int start(int u, int s) { return 64 * (u / 2) + 16 * (u % 2) + 8 * (s % 2) + 32 * (s / 2); }
	float d0, m0, d1, m1;
	uint q[4];
	template <typename Q>
	void load(Q b, int u) {
		kb_mv_k4(b, u / 2, d0, m0, d1, m1);
		for (int i = 0; i < 4; i++) q[i] = kb_mv_u32(b + 16 + 32 * (u / 2) + 16 * (u % 2) + 4 * i);
	}
	float dot(thread const float *x) const {
		float sl = 0.0f, sh = 0.0f, xl = 0.0f, xh = 0.0f;
		for (int i = 0; i < 4; i++) kb_mv_nib4(q[i], x + 4 * i, x + 16 + 4 * i, sl, sh);
		for (int t = 0; t < 16; t++) {
			xl += x[t];
			xh += x[16 + t];
		}
		return d0 * sl + d1 * sh - (m0 * xl + m1 * xh);
	}
};

template <>
struct kb_mv<KB_Q5_K> {
	enum { NR = 2, UPB = 8, RUNS = 4 };
	static int start(int u, int s) { return 64 * (u / 2) + 16 * (u % 2) + 8 * (s % 2) + 32 * (s / 2); }
	float d0, m0, d1, m1;
	uint q[4], qh[4];
	int g;
	template <typename Q>
	void load(Q b, int u) {
		g = u / 2;
		kb_mv_k4(b, g, d0, m0, d1, m1);
		for (int i = 0; i < 4; i++) {
			q[i] = kb_mv_u32(b + 48 + 32 * g + 16 * (u % 2) + 4 * i);
			qh[i] = kb_mv_u32(b + 16 + 16 * (u % 2) + 4 * i);
		}
	}
	float dot(thread const float *x) const {
		float sl = 0.0f, sh = 0.0f, xl = 0.0f, xh = 0.0f;
		for (int t = 0; t < 16; t++) {
			const uint v = q[t / 4] >> (8 * (t % 4)), h = qh[t / 4] >> (8 * (t % 4));
			sl = fma(float((v & 15) | ((h >> (2 * g)) & 1) << 4), x[t], sl);
			sh = fma(float(((v >> 4) & 15) | ((h >> (2 * g + 1)) & 1) << 4), x[16 + t], sh);
			xl += x[t];
			xh += x[16 + t];
		}
		return d0 * sl + d1 * sh - (m0 * xl + m1 * xh);
	}
};

// Q8_K: piece u is elements 32u .. 32u+31.
template <>
struct kb_mv<KB_Q8_K> {
	enum { NR = 2, UPB = 8, RUNS = 4 };
	static int start(int u, int s) { return 32 * u + 8 * s; }
	float d;
	uint q[8];
	template <typename Q>
	void load(Q b, int u) {
		d = as_type<float>(kb_mv_u32(b));
		for (int i = 0; i < 8; i++) q[i] = kb_mv_u32(b + 4 + 32 * u + 4 * i);
	}
	float dot(thread const float *x) const {
		float s = 0.0f;
		for (int t = 0; t < 32; t++) s = fma(float(kb_mv_i8(q[t / 4], t % 4)), x[t], s);
		return d * s;
	}
};

// The formats of issue 26 (MXFP4, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0 and the
// codebook formats) through their whole-block decoders (dequant.h's
// kb_dq16): a piece is 16 values of a 32-value block (UPB 2) or 32 of a
// 256-value super-block (UPB 8: one sub-block of 32, decoded as two
// chunks of 16), decoded once for all the columns and dotted as floats.
// Two rows a simdgroup, as ggml-metal's N_R0 for most of these.
template <int T>
struct kb_mv_dq {
	enum { NR = 2, UPB = kb_block(T) == 32 ? 2 : 8, RUNS = kb_block(T) == 32 ? 2 : 4 };
	static int start(int u, int s) { return 8 * RUNS * u + 8 * s; }
	float w[8 * RUNS];
	template <typename Q>
	void load(Q b, int u) {
		for (int i = 0; i < RUNS / 2; i++) kb_dq16<T>(b, RUNS / 2 * u + i, w + 16 * i);
	}
	float dot(thread const float *x) const {
		float s = 0.0f;
		for (int t = 0; t < 8 * RUNS; t++) s = fma(w[t], x[t], s);
		return s;
	}
};
#define KB_MV_DQ(name, T) \
	template <>           \
	struct kb_mv<T> : kb_mv_dq<T> {};
KB_FOR_NEW_WEIGHT_TYPES(KB_MV_DQ)
#undef KB_MV_DQ

// The float types: a lane's piece is eight consecutive elements, read as
// two float4 or one 16-byte vector of f16 or bf16 where vec says the
// rows are 16-byte aligned (a simdgroup's request then reads 512
// contiguous bytes of f16); the last piece of a row whose length is no multiple of 8 is
// read element by element (kb_mv_rows_flt).
template <int T>
struct kb_mv_flt {
	enum { NR = 4 };
	float w[8];
	void load8(device const uchar *p, bool vec) {
		// Whole vectors into registers first (see kb_mv_x8).
		if (vec && T == KB_F32) {
			float4 v[2];
			for (int i = 0; i < 2; i++) v[i] = ((device const float4 *)p)[i];
			const float4 a = v[0], b = v[1];
			w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = b.x, w[5] = b.y, w[6] = b.z, w[7] = b.w;
		} else if (vec && T == KB_F16) {
			kb_mv_h8((device const char *)p, w);
		} else if (vec && T == KB_BF16) {
			kb_mv_bf8((device const char *)p, w);
		} else {
			for (int t = 0; t < 8; t++) w[t] = kb_value<T>(p + t * kb_bytes(T), 0);
		}
	}
	float dot(thread const float *x) const {
		float s = 0.0f;
		for (int t = 0; t < 8; t++) s = fma(w[t], x[t], s);
		return s;
	}
};
template <>
struct kb_mv<KB_F32> : kb_mv_flt<KB_F32> {};
template <>
struct kb_mv<KB_F16> : kb_mv_flt<KB_F16> {};
template <>
struct kb_mv<KB_BF16> : kb_mv_flt<KB_BF16> {};

// kb_mv_rows_nc adds to acc[r*KB_MV_NC + c] the lane's share of the dot
// product of weight row r (at a0 + r*a_nb1, rows nr and past read as row
// nr-1) with column c (at bcol + c*b_nb1, c < n), over the rows' length
// k; the caller simd_sums them. bvec and avec: the columns and the rows
// (floats) take vector loads.
template <int T>
inline void kb_mv_rows_nc(long k, device const char *a0, long a_nb1, int nr, device const char *bcol, long b_nb1, int n,
		int btype, long b_nb0, bool bvec, bool, ushort tiisg, thread float *acc) {
	typedef kb_mv<T> P;
	const int B = kb_block(T), BY = kb_bytes(T);
	const long nb = k / B;
	const int u = tiisg % P::UPB;
	for (long ib = tiisg / P::UPB; ib < nb; ib += 32 / P::UPB) {
		P w[P::NR];
		for (int r = 0; r < P::NR; r++) w[r].load((device const uchar *)(a0 + min(r, nr - 1) * a_nb1) + ib * BY, u);
		for (int c = 0; c < KB_MV_NC; c++) {
			if (c >= n) break;
			device const char *col = bcol + c * b_nb1;
			float x[8 * P::RUNS];
			for (int s = 0; s < P::RUNS; s++) kb_mv_x8(col, ib * B + P::start(u, s), btype, b_nb0, bvec, x + 8 * s);
			for (int r = 0; r < P::NR; r++) acc[r * KB_MV_NC + c] += w[r].dot(x);
		}
	}
}

// kb_mv_rows_flt is kb_mv_rows_nc for the float types: lane takes
// elements 8(tiisg + 32i) .. +7; a tail of fewer than eight goes element
// by element.
template <int T>
inline void kb_mv_rows_flt(long k, device const char *a0, long a_nb1, int nr, device const char *bcol, long b_nb1, int n,
		int btype, long b_nb0, bool bvec, bool avec, ushort tiisg, thread float *acc) {
	typedef kb_mv<T> P;
	for (long e = 8 * long(tiisg); e < k; e += 8 * 32) {
		const int cnt = int(kb_minl(8, k - e));
		P w[P::NR];
		for (int r = 0; r < P::NR; r++) {
			device const uchar *p = (device const uchar *)(a0 + min(r, nr - 1) * a_nb1) + e * kb_bytes(T);
			if (cnt == 8) {
				w[r].load8(p, avec);
			} else {
				for (int t = 0; t < 8; t++) w[r].w[t] = t < cnt ? kb_value<T>(p + t * kb_bytes(T), 0) : 0.0f;
			}
		}
		for (int c = 0; c < KB_MV_NC; c++) {
			if (c >= n) break;
			device const char *col = bcol + c * b_nb1;
			float x[8];
			if (cnt == 8) {
				kb_mv_x8(col, e, btype, b_nb0, bvec, x);
			} else {
				for (int t = 0; t < 8; t++) x[t] = t < cnt ? kb_mv_act(btype, col + (e + t) * b_nb0) : 0.0f;
			}
			for (int r = 0; r < P::NR; r++) acc[r * KB_MV_NC + c] += w[r].dot(x);
		}
	}
}

#define KB_MV_FLT(T)                                                                                                      \
	template <>                                                                                                           \
	inline void kb_mv_rows_nc<T>(long k, device const char *a0, long a_nb1, int nr, device const char *bcol, long b_nb1, \
			int n, int btype, long b_nb0, bool bvec, bool avec, ushort tiisg, thread float *acc) {                       \
		kb_mv_rows_flt<T>(k, a0, a_nb1, nr, bcol, b_nb1, n, btype, b_nb0, bvec, avec, tiisg, acc);                      \
	}
KB_MV_FLT(KB_F32)
KB_MV_FLT(KB_F16)
KB_MV_FLT(KB_BF16)
#undef KB_MV_FLT

// The raw copy. For the types of kb_mv_coop a simdgroup reads its rows'
// bytes as the 16-byte words that hold them, lane i word i of a row's
// span (then the next row's), so that a request moves 512 contiguous
// bytes, into its own region of threadgroup memory, and decodes its
// pieces from there (the pieces, their loads and dot products as above).
// A stage is KB_MV_STAGE/NR elements of each of the NR rows (1024 for
// four rows, 2048 for two): 5 requests for four q4_0 rows of 1024 (4.5
// of 512 bytes), 9 for two q8_0 rows of 2048 (8.5), 2.8 to 9.2 KiB of
// threadgroup memory a threadgroup; a stage twice as long fills its last
// request better (1.02-1.04x the ideal requests at k = 4096 against
// 1.04-1.06x) for twice the memory, which a memory-bound kernel wants
// for more threadgroups in flight. kb_mv_coop: the legacy formats and the
// K-quants, the types whose pieces kb_mv<T>::load reads; the formats of
// issue 26 (kb_mv_dq, whose codebook decoders read device memory only,
// and MXFP4's 17-byte blocks) and the float types (no decoding: 16-byte
// loads straight into registers) read device memory.
#define KB_MV_STAGE 4096

constexpr bool kb_mv_coop(int t) {
	return t == KB_Q4_0 || t == KB_Q4_1 || t == KB_Q5_0 || t == KB_Q5_1 || t == KB_Q8_0 || t == KB_Q8_1 ||
			t == KB_Q2_K || t == KB_Q3_K || t == KB_Q4_K || t == KB_Q5_K || t == KB_Q6_K || t == KB_Q8_K;
}

// kb_mv_raw<T>: BLOCKS a stage (of every row), RS the bytes of one row's
// copy (the words that hold a stage's bytes starting at any even byte of
// a word), BYTES a simdgroup's region (NR rows), 0 for the types without
// the copy. The host's mvRawStride and mvShared say the same.
template <int T>
struct kb_mv_raw {
	enum {
		BLOCKS = KB_MV_STAGE / kb_mv<T>::NR / kb_block(T),
		RS = kb_mv_coop(T) ? 16 * ((BLOCKS * kb_bytes(T) + 14 + 15) / 16) : 0,
		BYTES = kb_mv<T>::NR * RS,
	};
};

// kb_mv_core<T>::run adds to acc[r*KB_MV_NC + c] the lane's share of the
// dot product of weight row r0+r (at abase + row*a_nb1, abase amis bytes
// past a 16-byte boundary; rows nr and past read as row nr-1, hi the
// bytes from abase to the end of the last row of the matrix) with column
// c (at bcol + c*b_nb1, c < n), over the rows' length k; the caller
// simd_sums them. raw is the simdgroup's region of threadgroup memory
// (kb_mv_raw<T>::BYTES). bvec and avec: the columns and the rows (floats)
// take vector loads.
template <int T, bool C = kb_mv_coop(T)>
struct kb_mv_core;

// Without the copy: kb_mv_rows_nc.
template <int T>
struct kb_mv_core<T, false> {
	static inline void run(long k, device const char *abase, long a_nb1, long r0, int nr, int, long,
			threadgroup uchar *, device const char *bcol, long b_nb1, int n, int btype, long b_nb0, bool bvec,
			bool avec, ushort tiisg, thread float *acc) {
		kb_mv_rows_nc<T>(k, abase + r0 * a_nb1, a_nb1, nr, bcol, b_nb1, n, btype, b_nb0, bvec, avec, tiisg, acc);
	}
};

// With the copy: per stage, word wi of row r (the aligned 16-byte word
// at s - as + 16wi, the stage's bytes [s, s+len) starting as bytes into
// their first word) goes to raw + r*RS + 16wi; a word that is not wholly
// inside the matrix (before abase, past hi) is copied a byte at a time,
// its bytes of the range only. The bytes of a word outside [s, s+len)
// belong to the row's other stages or a neighboring row: copied, never
// decoded. Each simdgroup copies and decodes its own rows, so
// simdgroup barriers order the copy and the decoding.
template <int T>
struct kb_mv_core<T, true> {
	static inline void run(long k, device const char *abase, long a_nb1, long r0, int nr, int amis, long hi,
			threadgroup uchar *raw, device const char *bcol, long b_nb1, int n, int btype, long b_nb0, bool bvec,
			bool, ushort tiisg, thread float *acc) {
		typedef kb_mv<T> P;
		const int B = kb_block(T), BY = kb_bytes(T), RS = kb_mv_raw<T>::RS;
		const long nb = k / B;
		const int u = tiisg % P::UPB;
		for (long kb0 = 0; kb0 < nb; kb0 += kb_mv_raw<T>::BLOCKS) {
			const int nbs = int(kb_minl(kb_mv_raw<T>::BLOCKS, nb - kb0));
			const long koff = kb0 * BY, len = long(nbs) * BY;
			// Words per row: the first row's where the rows are 16-byte
			// apart (all alike), else the most any row takes.
			const long s0 = r0 * a_nb1 + koff;
			const int nw = (a_nb1 & 15) == 0 ? int((((amis + s0) & 15) + len + 15) / 16) : int((len + 29) / 16);
			for (int idx = tiisg; idx < nr * nw; idx += 32) {
				const int r = idx / nw, wi = idx - r * nw;
				const long s = (r0 + r) * a_nb1 + koff;
				const long as = (amis + s) & 15;
				if (16 * wi >= as + len) continue; // past this row's range
				const long wa = s - as + 16 * wi;
				threadgroup uchar *dst = raw + r * RS + 16 * wi;
				if (wa >= 0 && wa + 16 <= hi) {
					*(threadgroup uint4 *)dst = *(device const uint4 *)(abase + wa);
				} else {
					for (int j = 0; j < 16; j++)
						if (wa + j >= s && wa + j < s + len) dst[j] = abase[wa + j];
				}
			}
			simdgroup_barrier(mem_flags::mem_threadgroup);
			// Where each row's stage starts in the copy.
			int ro[P::NR];
			for (int r = 0; r < P::NR; r++) {
				const int rr = min(r, nr - 1);
				ro[r] = rr * RS + int((amis + (r0 + rr) * a_nb1 + koff) & 15);
			}
			for (int ib = tiisg / P::UPB; ib < nbs; ib += 32 / P::UPB) {
				P w[P::NR];
				for (int r = 0; r < P::NR; r++) w[r].load((threadgroup const uchar *)(raw + ro[r] + ib * BY), u);
				for (int c = 0; c < KB_MV_NC; c++) {
					if (c >= n) break;
					device const char *col = bcol + c * b_nb1;
					float x[8 * P::RUNS];
					for (int s = 0; s < P::RUNS; s++)
						kb_mv_x8(col, (kb0 + ib) * B + P::start(u, s), btype, b_nb0, bvec, x + 8 * s);
					for (int r = 0; r < P::NR; r++) acc[r * KB_MV_NC + c] += w[r].dot(x);
				}
			}
			simdgroup_barrier(mem_flags::mem_threadgroup);
		}
	}
};
