// newquants.h: the reference quantizers of the formats of issue 26 that
// package quant encodes without importance weights (quant/mxfp4.go,
// iq4.go, ternary.go): MXFP4, IQ4_NL, IQ4_XS, TQ1_0 and TQ2_0, a block
// (super-block) by one thread, in quant's float32 operations and order,
// so that CPY into them writes quant.QuantizeRow's bytes.
//
// The file that includes it turns off FP contraction (cpy.metal's
// `#pragma clang fp contract(off)`, for the Metal compiler on a Mac, whose
// library for cpy.metal is also built in safe math mode: see fastMath in
// device.go): a product fused into a sum would change the codes chosen.
// On metal-emu the kernels are C++ compiled by g++ for x86-64 without
// -march, which has no FMA instruction to contract into.
#pragma once
#include "kquants.h"

// kb_mxfp4_floor_log2 returns floor(float32(log2(a))) for a finite a > 0,
// without double (Apple GPUs have none) and without log2 (whose error
// bound would move the result): a = M*2^q with M an integer of h+1 bits,
// so e = h+q = floor(log2(a)) and log2(a) = t + log2(1 - eps) with t = e+1
// and eps = k*2^-(h+1), k = 2^(h+1) - M. The float32 rounding of log2(a)
// is t exactly when t - log2(a) (about eps/ln2) is below half the spacing
// 2^s of float32s just under t, that is when k < ln2*2^(s+h). That bound
// is never within 0.5% of an integer for the s and h that occur, so the
// first-order eps/ln2 and a float32 ln2 decide it exactly.
inline int kb_mxfp4_floor_log2(float a) {
	const uint bits = as_type<uint>(a);
	uint M;
	int q;
	if ((bits >> 23) != 0) {
		M = (bits & 0x7fffffu) | 0x800000u;
		q = int(bits >> 23) - 150;
	} else {
		M = bits; // subnormal
		q = -149;
	}
	const int h = 31 - int(clz(M));
	const int e = h + q, t = e + 1;
	if (t == 0) {
		// log2(a) in [-1, 0): float32 resolves it to below 2^-24 of 0.
		return e;
	}
	// s: the spacing of float32s just below t is 2^s.
	int s;
	if (t > 0) {
		s = (31 - int(clz(uint(2 * t - 1)))) - 24;
	} else {
		s = (31 - int(clz(uint(-t)))) - 23;
	}
	const uint k = (2u << h) - M;
	const float bound = 0.6931472f * as_type<float>(uint(127 + s + h) << 23);
	return float(k) < bound ? t : e;
}

// kb_mxfp4_exponent is the E8M0 code of a block whose largest magnitude
// is amax (quant's mxfp4Exponent): floor(log2(amax)) - 2 + 127 with the
// log rounded to float32 first (a value a few ulps below a power of two
// counts as that power; quant takes the log in double and rounds it),
// converted as x86 does and cut to its low byte: Inf gives INT_MIN's low
// byte, 0.
inline uchar kb_mxfp4_exponent(float amax) {
	if (!(amax > 0.0f)) return 0;
	if (isinf(amax)) return 0;
	const float l = float(kb_mxfp4_floor_log2(amax));
	return uchar(int((l - 2.0f) + 127.0f));
}

// kb_mxfp4_index is the code whose value times d is nearest to x, the
// first on ties (quant's bestIndexMXFP4).
inline int kb_mxfp4_index(float x, float d) {
	int best = 0;
	float best_err = fabs(float(kb_mxfp4_values[0]) * d - x);
	for (int i = 1; i < 16; i++) {
		const float err = fabs(float(kb_mxfp4_values[i]) * d - x);
		if (err < best_err) {
			best = i;
			best_err = err;
		}
	}
	return best;
}

inline void kb_quantize_mxfp4(thread const float *x, thread uchar *b) {
	float amax = 0.0f;
	for (int j = 0; j < 32; j++) {
		const float a = fabs(x[j]);
		if (amax < a) amax = a;
	}
	const uchar e = kb_mxfp4_exponent(amax);
	const float d = kb_e8m0_half(e);
	b[0] = e;
	for (int j = 0; j < 16; j++) b[1 + j] = uchar(kb_mxfp4_index(x[j], d) | (kb_mxfp4_index(x[j + 16], d) << 4));
}

// kb_iq4_index is the index of the IQ4_NL value nearest to x, the upper
// on ties, by the reference's bisection (quant's bestIndexIQ4; a NaN
// gives 15).
inline int kb_iq4_index(float x) {
	if (x <= float(kb_iq4nl_values[0])) return 0;
	if (x >= float(kb_iq4nl_values[15])) return 15;
	int lo = 0, hi = 15;
	while (hi - lo > 1) {
		const int mid = (lo + hi) / 2;
		if (x < float(kb_iq4nl_values[mid])) {
			hi = mid;
		} else {
			lo = mid;
		}
	}
	return x - float(kb_iq4nl_values[hi - 1]) < float(kb_iq4nl_values[hi]) - x ? hi - 1 : hi;
}

// kb_iq4_fit fits 32 elements of IQ4_NL or IQ4_XS without importance
// weights (one ib of quant's quantizeIQ4, weights x²): a scale from the
// element of largest magnitude, refined by least squares, then 2*ntry+1
// scales tried around it when ntry > 0. It writes the codes of the first
// fit to L and returns the scale in dl, or returns false with dl 0 and L
// untouched when the largest magnitude is below 1e-15.
inline bool kb_iq4_fit(thread const float *x, int ntry, thread uchar *L, thread float &dl) {
	const float v0 = float(kb_iq4nl_values[0]);
	float w[32];
	float amax = 0.0f, vmax = 0.0f;
	for (int j = 0; j < 32; j++) {
		w[j] = x[j] * x[j];
		const float a = fabs(x[j]);
		if (a > amax) {
			amax = a;
			vmax = x[j];
		}
	}
	dl = 0.0f;
	if (amax < KB_GROUP_MAX_EPS) return false;
	float d = ntry > 0 ? -vmax / v0 : vmax / v0;
	float id = 1.0f / d;
	float sumqx = 0.0f, sumq2 = 0.0f;
	for (int j = 0; j < 32; j++) {
		const int l = kb_iq4_index(id * x[j]);
		L[j] = uchar(l);
		const float q = float(kb_iq4nl_values[l]);
		const float wq = w[j] * q;
		const float p = wq * x[j], p2 = wq * q;
		sumqx = sumqx + p;
		sumq2 = sumq2 + p2;
	}
	d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
	float best = d * sumqx;
	for (int itry = -ntry; itry <= ntry; itry++) {
		id = float(itry + int(kb_iq4nl_values[0])) / vmax;
		sumqx = 0.0f;
		sumq2 = 0.0f;
		for (int j = 0; j < 32; j++) {
			const float q = float(kb_iq4nl_values[kb_iq4_index(id * x[j])]);
			const float wq = w[j] * q;
			const float p = wq * x[j], p2 = wq * q;
			sumqx = sumqx + p;
			sumq2 = sumq2 + p2;
		}
		const float lhs = sumqx * sumqx, rhs = best * sumq2;
		if (sumq2 > 0.0f && lhs > rhs) {
			d = sumqx / sumq2;
			best = d * sumqx;
		}
	}
	dl = d;
	return true;
}

// kb_iq4_pack packs 32 codes into 16 bytes: element j in the low nibble
// of byte j, element j+16 in the high one.
inline void kb_iq4_pack(thread const uchar *L, thread uchar *qs) {
	for (int j = 0; j < 16; j++) qs[j] = uchar(L[j] | (L[16 + j] << 4));
}

// kb_quantize_iq4_xs quantizes one IQ4_XS super-block (quant's
// quantizeIQ4 with n = 256, ntry 7): the sub-block scales, then the
// super-block scale (the sub-block scale of largest magnitude, the first
// on ties, over -32), the 6-bit codes against it as a float32 (not as the
// f16 stored) and the 4-bit codes against those. Every code is refitted,
// so nothing carries over from block to block.
inline void kb_quantize_iq4_xs(thread const float *x, thread uchar *b) {
	float sc[8];
	uchar L[32];
	float max_scale = 0.0f, amax_scale = 0.0f;
	for (int ib = 0; ib < 8; ib++) {
		kb_iq4_fit(x + 32 * ib, 7, L, sc[ib]);
		if (fabs(sc[ib]) > amax_scale) {
			amax_scale = fabs(sc[ib]);
			max_scale = sc[ib];
		}
	}
	const float ds = -max_scale / 32.0f;
	kb_sethalf(b, ds);
	const float id = ds != 0.0f ? 1.0f / ds : 0.0f;
	uint h = 0;
	for (int ib = 0; ib < 8; ib++) {
		int l = kb_clampi(kb_nearest(id * sc[ib]), -32, 31);
		const float dl = ds * float(l);
		const float idl = dl != 0.0f ? 1.0f / dl : 0.0f;
		for (int j = 0; j < 32; j++) L[j] = uchar(kb_iq4_index(idl * x[32 * ib + j]));
		kb_iq4_pack(L, b + 8 + 16 * ib);
		l += 32;
		if (ib % 2 == 0) {
			b[4 + ib / 2] = uchar(l & 15);
		} else {
			b[4 + ib / 2] |= uchar((l & 15) << 4);
		}
		h |= uint(l >> 4) << (2 * ib);
	}
	b[2] = uchar(h);
	b[3] = uchar(h >> 8);
}

// kb_lround_trit is lroundf(f) + 1 as the ternary quantizers compute it
// on x86-64 (quant's lroundTrit): halves away from zero; NaN and
// magnitudes of 2^63 or more give 1; the sum is cut to 32 bits.
inline int kb_lround_trit(float f) {
	if (isnan(f) || fabs(f) >= 9.223372036854775808e18f) return 1;
	return int(long(round(f)) + 1);
}

// kb_ternary_scale returns a TQ super-block's largest magnitude, found as
// the reference finds it (a NaN is taken and replaced by the next
// element; quant's ternaryScale), and sets id to its inverse (0 for 0).
inline float kb_ternary_scale(thread const float *x, thread float &id) {
	float d = 0.0f;
	for (int i = 0; i < 256; i++) {
		const float a = fabs(x[i]);
		if (!(d > a)) d = a;
	}
	id = d != 0.0f ? 1.0f / d : 0.0f;
	return d;
}

// kb_pack_trits is the TQ1_0 byte of the trits of x[k*stride]*id, k < n,
// the first most significant, scaled to 256/243 (rounded up); four trits
// take a zero fifth (quant's packTrits).
inline uchar kb_pack_trits(thread const float *x, int stride, int n, float id) {
	uchar q = 0;
	for (int k = 0; k < n; k++) q = uchar(q * 3 + uchar(kb_lround_trit(x[k * stride] * id)));
	if (n == 4) q = uchar(q * 3);
	return uchar((uint(q) * 256 + 242) / 243);
}

inline void kb_quantize_tq1_0(thread const float *x, thread uchar *b) {
	float id;
	const float d = kb_ternary_scale(x, id);
	kb_sethalf(b + 52, d);
	for (int m = 0; m < 32; m++) b[m] = kb_pack_trits(x + m, 32, 5, id);
	for (int m = 0; m < 16; m++) b[32 + m] = kb_pack_trits(x + 160 + m, 16, 5, id);
	for (int j = 0; j < 4; j++) b[48 + j] = kb_pack_trits(x + 240 + j, 4, 4, id);
}

inline void kb_quantize_tq2_0(thread const float *x, thread uchar *b) {
	float id;
	const float d = kb_ternary_scale(x, id);
	kb_sethalf(b + 64, d);
	for (int h = 0; h < 2; h++) {
		for (int m = 0; m < 32; m++) {
			uchar q = 0;
			for (int n = 0; n < 4; n++) q = uchar(q + uchar((kb_lround_trit(x[128 * h + 32 * n + m] * id) & 3) << (2 * n)));
			b[32 * h + m] = q;
		}
	}
}
