// cpy.metal: CPY (a tensor's elements into another's storage in logical,
// row-major order, converted to the destination's type) and CONT.
//
// A float destination (f32, f16, bf16) is written element by element at
// any strides; a quantized one (q4_0, q4_1, q5_0, q5_1, q8_0, the K
// formats q2_K .. q6_K, and MXFP4, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0;
// contiguous, as ops.Cpy requires) block by block, one thread per block,
// with ggml's reference quantizers in quant's float operations and order
// (kquants.h for the K formats' scale searches, newquants.h for the
// formats of issue 26), so that the bytes are quant.QuantizeRow's. CONT
// copies elements (blocks for a quantized type) of any type unconverted.
//
// The quantizers' products and sums round one by one, as quant's do: no
// contraction into FMAs. The pragma (before the includes, so that it
// covers the quantizers of kquants.h and newquants.h too) keeps the Metal
// compiler from fusing (its library for this file is also built in safe
// math mode, see fastMath in device.go); on metal-emu g++ compiles the
// kernels for x86-64 without -march, which has no FMA instruction to fuse
// into.
#ifndef __KBSIMT__
#pragma clang fp contract(off)
#endif
#include "newquants.h"

struct kb_cpy_args {
	kb_tensor a, d;
	long n;        // elements
	int atype;     // KB_F32, KB_F16 or KB_BF16
	int dtype;     // the destination type
};

// kb_unravel splits a linear index over t's shape into coordinates and
// returns the element's byte offset.
inline long kb_unravel_offset(constant kb_tensor &t, long i) {
	const long i0 = i % t.ne[0];
	i /= t.ne[0];
	const long i1 = i % t.ne[1];
	i /= t.ne[1];
	const long i2 = i % t.ne[2];
	const long i3 = i / t.ne[2];
	return kb_offset(t, i0, i1, i2, i3);
}

inline float kb_load_float(int type, device const char *p) {
	switch (type) {
	case KB_F16: return kb_h2f(*(device const ushort *)p);
	case KB_BF16: return kb_bf2f(*(device const ushort *)p);
	default: return *(device const float *)p;
	}
}

// kb_cpy_float: a float destination, one element per thread of a grid
// striding over the elements.
kernel void kb_cpy_float(
		constant kb_cpy_args &args [[buffer(0)]],
		device const char *a [[buffer(1)]],
		device char *d [[buffer(2)]],
		uint tpig [[thread_position_in_grid]],
		uint ntpg [[threads_per_grid]]) {
	for (long i = tpig; i < args.n; i += ntpg) {
		const float v = kb_load_float(args.atype, a + kb_unravel_offset(args.a, i));
		device char *p = d + kb_unravel_offset(args.d, i);
		switch (args.dtype) {
		case KB_F16: *(device ushort *)p = kb_f2h(v); break;
		case KB_BF16: *(device ushort *)p = kb_f2bf(v); break;
		default: *(device float *)p = v; break;
		}
	}
}

// kb_wrap8 is an int converted to int8, wrapping, as quant's int8(...)
// conversions do.
inline int kb_wrap8(int v) { return ((v & 255) ^ 128) - 128; }

inline float kb_inverse(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }

inline void kb_put16(thread uchar *p, ushort v) {
	p[0] = uchar(v);
	p[1] = uchar(v >> 8);
}

inline void kb_put32(thread uchar *p, uint v) {
	for (int i = 0; i < 4; i++) p[i] = uchar(v >> (8 * i));
}

// kb_quantize<T>(x, b) writes the block of x[0 .. kb_block(T)-1] at b, as
// quant's quantizers do (legacy.go, kformats.go).
template <int T>
void kb_quantize(thread const float *x, thread uchar *b);

// absMaxSigned: the element of largest magnitude (the first on ties).
inline float kb_vmax(thread const float *x) {
	float amax = 0.0f, vmax = 0.0f;
	for (int j = 0; j < 32; j++) {
		const float a = fabs(x[j]);
		if (amax < a) {
			amax = a;
			vmax = x[j];
		}
	}
	return vmax;
}

inline void kb_minmax(thread const float *x, thread float &lo, thread float &hi) {
	lo = FLT_MAX;
	hi = -FLT_MAX;
	for (int j = 0; j < 32; j++) {
		if (x[j] < lo) lo = x[j];
		if (x[j] > hi) hi = x[j];
	}
}

template <>
void kb_quantize<KB_Q4_0>(thread const float *x, thread uchar *b) {
	const float d = kb_vmax(x) / -8.0f;
	const float id = kb_inverse(d);
	kb_put16(b, kb_f2h(d));
	for (int j = 0; j < 16; j++) {
		const float p0 = x[j] * id, p1 = x[j + 16] * id;
		const int q0 = min(15, kb_wrap8(int(p0 + 8.5f)));
		const int q1 = min(15, kb_wrap8(int(p1 + 8.5f)));
		b[2 + j] = uchar(q0 | (q1 << 4));
	}
}

template <>
void kb_quantize<KB_Q4_1>(thread const float *x, thread uchar *b) {
	float lo, hi;
	kb_minmax(x, lo, hi);
	const float d = (hi - lo) / 15.0f;
	const float id = kb_inverse(d);
	kb_put16(b, kb_f2h(d));
	kb_put16(b + 2, kb_f2h(lo));
	for (int j = 0; j < 16; j++) {
		const float p0 = (x[j] - lo) * id, p1 = (x[j + 16] - lo) * id;
		const int q0 = min(15, kb_wrap8(int(p0 + 0.5f)));
		const int q1 = min(15, kb_wrap8(int(p1 + 0.5f)));
		b[4 + j] = uchar(q0 | (q1 << 4));
	}
}

template <>
void kb_quantize<KB_Q5_0>(thread const float *x, thread uchar *b) {
	const float d = kb_vmax(x) / -16.0f;
	const float id = kb_inverse(d);
	kb_put16(b, kb_f2h(d));
	uint qh = 0;
	for (int j = 0; j < 16; j++) {
		const float p0 = x[j] * id, p1 = x[j + 16] * id;
		const uint q0 = uint(min(31, kb_wrap8(int(p0 + 16.5f))));
		const uint q1 = uint(min(31, kb_wrap8(int(p1 + 16.5f))));
		b[6 + j] = uchar((q0 & 15) | ((q1 & 15) << 4));
		qh |= ((q0 & 16) >> 4) << j;
		qh |= ((q1 & 16) >> 4) << (j + 16);
	}
	kb_put32(b + 2, qh);
}

template <>
void kb_quantize<KB_Q5_1>(thread const float *x, thread uchar *b) {
	float lo, hi;
	kb_minmax(x, lo, hi);
	const float d = (hi - lo) / 31.0f;
	const float id = kb_inverse(d);
	kb_put16(b, kb_f2h(d));
	kb_put16(b + 2, kb_f2h(lo));
	uint qh = 0;
	for (int j = 0; j < 16; j++) {
		const float p0 = (x[j] - lo) * id, p1 = (x[j + 16] - lo) * id;
		const uint q0 = uint(uchar(int(p0 + 0.5f)));
		const uint q1 = uint(uchar(int(p1 + 0.5f)));
		b[8 + j] = uchar((q0 & 15) | ((q1 & 15) << 4));
		qh |= ((q0 & 16) >> 4) << j;
		qh |= ((q1 & 16) >> 4) << (j + 16);
	}
	kb_put32(b + 4, qh);
}

template <>
void kb_quantize<KB_Q8_0>(thread const float *x, thread uchar *b) {
	float amax = 0.0f;
	for (int j = 0; j < 32; j++) {
		const float a = fabs(x[j]);
		if (!(amax > a)) amax = a;
	}
	const float d = amax / 127.0f;
	const float id = kb_inverse(d);
	kb_put16(b, kb_f2h(d));
	for (int j = 0; j < 32; j++) b[2 + j] = uchar(int(round(x[j] * id)));
}

template <>
void kb_quantize<KB_Q2_K>(thread const float *x, thread uchar *b) {
	kb_quantize_q2_K(x, b);
}
template <>
void kb_quantize<KB_Q3_K>(thread const float *x, thread uchar *b) {
	kb_quantize_q3_K(x, b);
}
template <>
void kb_quantize<KB_Q4_K>(thread const float *x, thread uchar *b) {
	kb_quantize_q4_K(x, b);
}
template <>
void kb_quantize<KB_Q5_K>(thread const float *x, thread uchar *b) {
	kb_quantize_q5_K(x, b);
}
template <>
void kb_quantize<KB_Q6_K>(thread const float *x, thread uchar *b) {
	kb_quantize_q6_K(x, b);
}
template <>
void kb_quantize<KB_MXFP4>(thread const float *x, thread uchar *b) {
	kb_quantize_mxfp4(x, b);
}
template <>
void kb_quantize<KB_IQ4_XS>(thread const float *x, thread uchar *b) {
	kb_quantize_iq4_xs(x, b);
}
template <>
void kb_quantize<KB_TQ1_0>(thread const float *x, thread uchar *b) {
	kb_quantize_tq1_0(x, b);
}
template <>
void kb_quantize<KB_TQ2_0>(thread const float *x, thread uchar *b) {
	kb_quantize_tq2_0(x, b);
}

// kb_cpy_q<T>: a quantized destination, one block per thread of a grid
// striding over the blocks; the destination is contiguous, so block bi
// holds elements B*bi .. B*bi+B-1 in logical order. The block is built in
// thread memory and then written.
template <int T>
kernel void kb_cpy_q(
		constant kb_cpy_args &args [[buffer(0)]],
		device const char *a [[buffer(1)]],
		device char *d [[buffer(2)]],
		uint tpig [[thread_position_in_grid]],
		uint ntpg [[threads_per_grid]]) {
	const int B = kb_block(T), S = kb_bytes(T);
	const long nb = args.n / B;
	for (long bi = tpig; bi < nb; bi += ntpg) {
		float x[B];
		uchar blk[S];
		for (int j = 0; j < B; j++) x[j] = kb_load_float(args.atype, a + kb_unravel_offset(args.a, B * bi + j));
		for (int j = 0; j < S; j++) blk[j] = 0;
		kb_quantize<T>(x, blk);
		device uchar *out = (device uchar *)(d + bi * S);
		for (int j = 0; j < S; j++) out[j] = blk[j];
	}
}

typedef decltype(kb_cpy_q<KB_Q8_0>) kb_cpy_q_t;
template [[host_name("kb_cpy_q4_0")]] kernel kb_cpy_q_t kb_cpy_q<KB_Q4_0>;
template [[host_name("kb_cpy_q4_1")]] kernel kb_cpy_q_t kb_cpy_q<KB_Q4_1>;
template [[host_name("kb_cpy_q5_0")]] kernel kb_cpy_q_t kb_cpy_q<KB_Q5_0>;
template [[host_name("kb_cpy_q5_1")]] kernel kb_cpy_q_t kb_cpy_q<KB_Q5_1>;
template [[host_name("kb_cpy_q8_0")]] kernel kb_cpy_q_t kb_cpy_q<KB_Q8_0>;
template [[host_name("kb_cpy_q2_K")]] kernel kb_cpy_q_t kb_cpy_q<KB_Q2_K>;
template [[host_name("kb_cpy_q3_K")]] kernel kb_cpy_q_t kb_cpy_q<KB_Q3_K>;
template [[host_name("kb_cpy_q4_K")]] kernel kb_cpy_q_t kb_cpy_q<KB_Q4_K>;
template [[host_name("kb_cpy_q5_K")]] kernel kb_cpy_q_t kb_cpy_q<KB_Q5_K>;
template [[host_name("kb_cpy_q6_K")]] kernel kb_cpy_q_t kb_cpy_q<KB_Q6_K>;
template [[host_name("kb_cpy_mxfp4")]] kernel kb_cpy_q_t kb_cpy_q<KB_MXFP4>;
template [[host_name("kb_cpy_iq4_xs")]] kernel kb_cpy_q_t kb_cpy_q<KB_IQ4_XS>;
template [[host_name("kb_cpy_tq1_0")]] kernel kb_cpy_q_t kb_cpy_q<KB_TQ1_0>;
template [[host_name("kb_cpy_tq2_0")]] kernel kb_cpy_q_t kb_cpy_q<KB_TQ2_0>;

// kb_cpy_iq4_nl: IQ4_NL, as kb_cpy_q a block per thread. The reference
// keeps one code buffer for a row, so a block whose largest magnitude is
// below 1e-15 (scale 0: it decodes to zeros whatever its codes) keeps the
// codes of the latest earlier block of its row that is not, or all 8 when
// there is none: such a thread refits that block from a to find them. A
// row is ne0 of the destination: the CPU quantizes each row in one
// QuantizeRow call (its runs of 4096 elements split rows longer than that
// when the source is not packed f32, which changes only such blocks'
// codes).
kernel void kb_cpy_iq4_nl(
		constant kb_cpy_args &args [[buffer(0)]],
		device const char *a [[buffer(1)]],
		device char *d [[buffer(2)]],
		uint tpig [[thread_position_in_grid]],
		uint ntpg [[threads_per_grid]]) {
	const long nb = args.n / 32, rowblocks = args.d.ne[0] / 32;
	for (long bi = tpig; bi < nb; bi += ntpg) {
		float x[32];
		uchar blk[18], L[32];
		for (int j = 0; j < 32; j++) x[j] = kb_load_float(args.atype, a + kb_unravel_offset(args.a, 32 * bi + j));
		float dl;
		if (!kb_iq4_fit(x, -1, L, dl)) {
			for (int j = 0; j < 32; j++) L[j] = 8;
			float y[32], unused;
			for (long p = bi - 1; p >= bi - bi % rowblocks; p--) {
				for (int j = 0; j < 32; j++) y[j] = kb_load_float(args.atype, a + kb_unravel_offset(args.a, 32 * p + j));
				if (kb_iq4_fit(y, -1, L, unused)) break;
			}
		}
		kb_sethalf(blk, dl);
		kb_iq4_pack(L, blk + 2);
		device uchar *out = (device uchar *)(d + bi * 18);
		for (int j = 0; j < 18; j++) out[j] = blk[j];
	}
}

struct kb_cont_args {
	kb_tensor a, d;
	long units; // elements (blocks) per row
	int unit;   // bytes per element (block)
};

// kb_cont: CONT, a threadgroup per row of the destination, its threads
// over the row's elements (blocks), each copied byte by byte (4 bytes at
// a time when the element's size and places allow).
kernel void kb_cont(
		constant kb_cont_args &args [[buffer(0)]],
		device const char *a [[buffer(1)]],
		device char *d [[buffer(2)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort ntg [[threads_per_threadgroup]]) {
	device const char *ar = a + kb_row(args.a, tgpig.x, tgpig.y, tgpig.z);
	device char *dr = d + kb_row(args.d, tgpig.x, tgpig.y, tgpig.z);
	for (long u = tpitg; u < args.units; u += ntg) {
		device const char *s = ar + u * args.a.nb[0];
		device char *t = dr + u * args.d.nb[0];
		if (args.unit % 4 == 0 && (ulong(s) | ulong(t)) % 4 == 0) {
			for (int j = 0; j < args.unit; j += 4) *(device uint *)(t + j) = *(device const uint *)(s + j);
		} else {
			for (int j = 0; j < args.unit; j++) t[j] = s[j];
		}
	}
}
