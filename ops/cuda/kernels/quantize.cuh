// quantize.cuh: the reference quantizers of package quant (ggml's
// quantize_row_*_ref) as device code, producing the same bytes.
//
// The reference's arithmetic is float32 with every product rounded
// before it is added (no fused multiply-add). NVRTC contracts a*b + c
// into an FMA by default, so every product that feeds an addition or a
// subtraction is written kb_mul (__fmul_rn, which is never contracted),
// and nearest-integer rounding adds its magic number with __fadd_rn.
// Division and sqrtf are IEEE round-to-nearest (NVRTC's default
// -prec-div and -prec-sqrt).
//
// The legacy formats (32-element blocks) quantize a block per thread
// (kb_q4_0_block ...). The K formats (256-element super-blocks) split a
// super-block over a thread per sub-block (16 or 32 elements): each
// thread fits its sub-block's scale (kb_make_qkx2, kb_make_qx, kb_make_q3,
// ports of quant/kquant.go); the super-block's scales are then encoded and
// the codes requantized against them per sub-block, and packed (see
// cpy.cu).
#pragma once
#include "common.cuh"

__device__ __forceinline__ float kb_mul(float a, float b) { return __fmul_rn(a, b); }

// kb_nearest rounds f to the nearest integer, ties to even, as ggml's
// nearest_int: by adding 1.5*2^23 and reading the low mantissa bits.
__device__ __forceinline__ int kb_nearest(float f) {
	float v = __fadd_rn(f, 12582912.0f);
	return (__float_as_int(v) & 0x007fffff) - 0x00400000;
}

// kb_trunc_i32 converts toward zero as x86's cvttss2si does: NaN and
// values outside the int32 range give INT_MIN (quant.truncInt32).
__device__ __forceinline__ int kb_trunc_i32(float f) {
	if (!(f >= -2147483648.0f && f < 2147483648.0f)) return (int)0x80000000;
	return (int)f;
}

__device__ __forceinline__ int kb_clamp(int l, int lo, int hi) { return l < lo ? lo : (l > hi ? hi : l); }

// kb_inverse returns 1/d, or 0 when d is zero.
__device__ __forceinline__ float kb_inverse(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }

__device__ __forceinline__ void kb_put16(u8* p, u16 v) {
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
}

__device__ __forceinline__ void kb_put_f16(u8* p, float f) { kb_put16(p, kb_f2h(f)); }

__device__ __forceinline__ void kb_put32(u8* p, u32 v) {
	kb_put16(p, (u16)v);
	kb_put16(p + 2, (u16)(v >> 16));
}

// kb_abs_max_signed returns the element of x[0..n) with the largest
// magnitude (the first on ties, sign kept) and that magnitude.
__device__ __forceinline__ float kb_abs_max_signed(const float* x, int n, float& amax) {
	float vmax = 0.0f;
	amax = 0.0f;
	for (int i = 0; i < n; i++) {
		float a = fabsf(x[i]);
		if (amax < a) {
			amax = a;
			vmax = x[i];
		}
	}
	return vmax;
}

// kb_min_max returns the smallest and largest of x[0..32), starting from
// -+FLT_MAX as ggml does.
__device__ __forceinline__ void kb_min_max(const float* x, float& lo, float& hi) {
	lo = 3.40282347e+38f;
	hi = -3.40282347e+38f;
	for (int i = 0; i < 32; i++) {
		if (x[i] < lo) lo = x[i];
		if (x[i] > hi) hi = x[i];
	}
}

// ---------------------------------------------------------------------
// Legacy formats: one 32-element block at b from x.

__device__ __forceinline__ void kb_q4_0_block(const float* x, u8* b) {
	float amax;
	float vmax = kb_abs_max_signed(x, 32, amax);
	float d = vmax / -8.0f, id = kb_inverse(d);
	kb_put_f16(b, d);
	for (int j = 0; j < 16; j++) {
		int q0 = min(15, (int)(i8)kb_trunc_i32(__fadd_rn(kb_mul(x[j], id), 8.5f)));
		int q1 = min(15, (int)(i8)kb_trunc_i32(__fadd_rn(kb_mul(x[j + 16], id), 8.5f)));
		b[2 + j] = (u8)(q0 | (q1 << 4));
	}
}

__device__ __forceinline__ void kb_q4_1_block(const float* x, u8* b) {
	float lo, hi;
	kb_min_max(x, lo, hi);
	float d = (hi - lo) / 15.0f, id = kb_inverse(d);
	kb_put_f16(b, d);
	kb_put_f16(b + 2, lo);
	for (int j = 0; j < 16; j++) {
		int q0 = min(15, (int)(i8)kb_trunc_i32(__fadd_rn(kb_mul(x[j] - lo, id), 0.5f)));
		int q1 = min(15, (int)(i8)kb_trunc_i32(__fadd_rn(kb_mul(x[j + 16] - lo, id), 0.5f)));
		b[4 + j] = (u8)(q0 | (q1 << 4));
	}
}

__device__ __forceinline__ void kb_q5_0_block(const float* x, u8* b) {
	float amax;
	float vmax = kb_abs_max_signed(x, 32, amax);
	float d = vmax / -16.0f, id = kb_inverse(d);
	kb_put_f16(b, d);
	u32 qh = 0;
	for (int j = 0; j < 16; j++) {
		u8 q0 = (u8)min(31, (int)(i8)kb_trunc_i32(__fadd_rn(kb_mul(x[j], id), 16.5f)));
		u8 q1 = (u8)min(31, (int)(i8)kb_trunc_i32(__fadd_rn(kb_mul(x[j + 16], id), 16.5f)));
		b[6 + j] = (u8)((q0 & 15) | ((q1 & 15) << 4));
		qh |= (u32)((q0 & 0x10) >> 4) << j;
		qh |= (u32)((q1 & 0x10) >> 4) << (j + 16);
	}
	kb_put32(b + 2, qh);
}

__device__ __forceinline__ void kb_q5_1_block(const float* x, u8* b) {
	float lo, hi;
	kb_min_max(x, lo, hi);
	float d = (hi - lo) / 31.0f, id = kb_inverse(d);
	kb_put_f16(b, d);
	kb_put_f16(b + 2, lo);
	u32 qh = 0;
	for (int j = 0; j < 16; j++) {
		// ggml does not clamp here: (x-min)*id never exceeds 31.5.
		u8 q0 = (u8)kb_trunc_i32(__fadd_rn(kb_mul(x[j] - lo, id), 0.5f));
		u8 q1 = (u8)kb_trunc_i32(__fadd_rn(kb_mul(x[j + 16] - lo, id), 0.5f));
		b[8 + j] = (u8)((q0 & 15) | ((q1 & 15) << 4));
		qh |= (u32)((q0 & 0x10) >> 4) << j;
		qh |= (u32)((q1 & 0x10) >> 4) << (j + 16);
	}
	kb_put32(b + 4, qh);
}

__device__ __forceinline__ void kb_q8_0_block(const float* x, u8* b) {
	// The largest |x| as ggml's MAX(amax, fabsf(v)) accumulates it.
	float amax = 0.0f;
	for (int j = 0; j < 32; j++) {
		float a = fabsf(x[j]);
		if (!(amax > a)) amax = a;
	}
	float d = amax / 127.0f, id = kb_inverse(d);
	kb_put_f16(b, d);
	for (int j = 0; j < 32; j++) b[2 + j] = (u8)(i8)kb_trunc_i32(roundf(kb_mul(x[j], id)));
}

// ---------------------------------------------------------------------
// K formats: the sub-block fits of quant/kquant.go.

// kb_make_qx picks codes in [-nmax, nmax) for a signed, min-free group
// of n (ggml's make_qx_quants, rmse_type 1, no importance weights); the
// codes offset by nmax go to L (all 0 for a group of zeros). It returns
// the group's scale.
__device__ __forceinline__ float kb_make_qx(int n, int nmax, const float* x, i8* L) {
	float amax;
	float vmax = kb_abs_max_signed(x, n, amax);
	if (amax < 1e-15f) {
		for (int i = 0; i < n; i++) L[i] = 0;
		return 0.0f;
	}
	float iscale = (float)(-nmax) / vmax;
	float sumlx = 0.0f, suml2 = 0.0f;
	for (int i = 0; i < n; i++) {
		float v = x[i];
		int l = kb_clamp(kb_nearest(kb_mul(iscale, v)), -nmax, nmax - 1);
		L[i] = (i8)(l + nmax);
		float w = kb_mul(v, v), fl = (float)l;
		sumlx = __fadd_rn(sumlx, kb_mul(kb_mul(w, v), fl));
		suml2 = __fadd_rn(suml2, kb_mul(kb_mul(w, fl), fl));
	}
	float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
	float best = kb_mul(scale, sumlx);
	for (int is = -9; is <= 9; is++) {
		if (is == 0) continue;
		iscale = -__fadd_rn((float)nmax, kb_mul(0.1f, (float)is)) / vmax;
		sumlx = 0.0f;
		suml2 = 0.0f;
		for (int i = 0; i < n; i++) {
			float v = x[i];
			int l = kb_clamp(kb_nearest(kb_mul(iscale, v)), -nmax, nmax - 1);
			float w = kb_mul(v, v), fl = (float)l;
			sumlx = __fadd_rn(sumlx, kb_mul(kb_mul(w, v), fl));
			suml2 = __fadd_rn(suml2, kb_mul(kb_mul(w, fl), fl));
		}
		if (suml2 > 0.0f && kb_mul(sumlx, sumlx) > kb_mul(best, suml2)) {
			for (int i = 0; i < n; i++) L[i] = (i8)(nmax + kb_clamp(kb_nearest(kb_mul(iscale, x[i])), -nmax, nmax - 1));
			scale = sumlx / suml2;
			best = kb_mul(scale, sumlx);
		}
	}
	return scale;
}

// kb_make_q3 picks codes in [-nmax, nmax) for a signed group of n and
// refines them one at a time (ggml's make_q3_quants with do_rmse); the
// codes offset by nmax go to L (all 0 for a group of zeros). It returns
// the group's scale.
__device__ __forceinline__ float kb_make_q3(int n, int nmax, const float* x, i8* L) {
	float amax;
	float vmax = kb_abs_max_signed(x, n, amax);
	if (amax < 1e-15f) {
		for (int i = 0; i < n; i++) L[i] = 0;
		return 0.0f;
	}
	float iscale = (float)(-nmax) / vmax;
	float sumlx = 0.0f, suml2 = 0.0f;
	for (int i = 0; i < n; i++) {
		float v = x[i];
		int l = kb_clamp(kb_nearest(kb_mul(iscale, v)), -nmax, nmax - 1);
		L[i] = (i8)l;
		float w = kb_mul(v, v), fl = (float)l;
		sumlx = __fadd_rn(sumlx, kb_mul(kb_mul(w, v), fl));
		suml2 = __fadd_rn(suml2, kb_mul(kb_mul(w, fl), fl));
	}
	for (int itry = 0; itry < 5; itry++) {
		bool changed = false;
		for (int i = 0; i < n; i++) {
			float v = x[i];
			float w = kb_mul(v, v), li = (float)L[i];
			float slx = __fsub_rn(sumlx, kb_mul(kb_mul(w, v), li));
			if (slx <= 0.0f) continue;
			float sl2 = __fsub_rn(suml2, kb_mul(kb_mul(w, li), li));
			int nl = kb_clamp(kb_nearest(kb_mul(v, sl2) / slx), -nmax, nmax - 1);
			if (nl == (int)L[i]) continue;
			float fn = (float)nl;
			slx = __fadd_rn(slx, kb_mul(kb_mul(w, v), fn));
			sl2 = __fadd_rn(sl2, kb_mul(kb_mul(w, fn), fn));
			if (sl2 > 0.0f && kb_mul(kb_mul(slx, slx), suml2) > kb_mul(kb_mul(sumlx, sumlx), sl2)) {
				L[i] = (i8)nl;
				sumlx = slx;
				suml2 = sl2;
				changed = true;
			}
		}
		if (!changed) break;
	}
	for (int i = 0; i < n; i++) L[i] = (i8)(L[i] + nmax);
	return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// kb_qkx2_err is a residual's error: |diff| (mad) or diff^2.
__device__ __forceinline__ float kb_qkx2_err(float diff, bool mad) { return mad ? fabsf(diff) : kb_mul(diff, diff); }

// kb_make_qkx2 picks codes in [0, nmax] for a group of n (at most 32)
// stored as scale*code - min, searching nstep+1 candidate scales around
// the plain range fit for the lowest weighted error (ggml's
// make_qkx2_quants). The codes go to L; it returns the scale and sets
// neg_min to the offset to subtract (never negative).
__device__ __forceinline__ float kb_make_qkx2(int n, int nmax, const float* x, const float* weights, u8* L, float rmin, float rdelta,
                                              int nstep, bool mad, float& neg_min) {
	u8 Laux[32];
	float lo = x[0], hi = x[0];
	float sumW = weights[0];
	float sumX = kb_mul(sumW, x[0]);
	for (int i = 1; i < n; i++) {
		if (x[i] < lo) lo = x[i];
		if (x[i] > hi) hi = x[i];
		float w = weights[i];
		sumW = __fadd_rn(sumW, w);
		sumX = __fadd_rn(sumX, kb_mul(w, x[i]));
	}
	if (lo > 0.0f) lo = 0.0f;
	if (hi == lo) {
		for (int i = 0; i < n; i++) L[i] = 0;
		neg_min = -lo;
		return 0.0f;
	}
	float iscale = (float)nmax / (hi - lo);
	float scale = 1.0f / iscale;
	float best_err = 0.0f;
	for (int i = 0; i < n; i++) {
		int l = kb_clamp(kb_nearest(kb_mul(iscale, x[i] - lo)), 0, nmax);
		L[i] = (u8)l;
		float diff = __fsub_rn(__fadd_rn(kb_mul(scale, (float)l), lo), x[i]);
		best_err = __fadd_rn(best_err, kb_mul(weights[i], kb_qkx2_err(diff, mad)));
	}
	if (nstep < 1) {
		neg_min = -lo;
		return scale;
	}
	for (int is = 0; is <= nstep; is++) {
		iscale = __fadd_rn(__fadd_rn(rmin, kb_mul(rdelta, (float)is)), (float)nmax) / (hi - lo);
		float sumL = 0.0f, sumL2 = 0.0f, sumXL = 0.0f;
		for (int i = 0; i < n; i++) {
			int l = kb_clamp(kb_nearest(kb_mul(iscale, x[i] - lo)), 0, nmax);
			Laux[i] = (u8)l;
			float w = weights[i], fl = (float)l;
			sumL = __fadd_rn(sumL, kb_mul(w, fl));
			sumL2 = __fadd_rn(sumL2, kb_mul(kb_mul(w, fl), fl));
			sumXL = __fadd_rn(sumXL, kb_mul(kb_mul(w, fl), x[i]));
		}
		float det = __fsub_rn(kb_mul(sumW, sumL2), kb_mul(sumL, sumL));
		if (det <= 0.0f) continue;
		float this_scale = __fsub_rn(kb_mul(sumW, sumXL), kb_mul(sumX, sumL)) / det;
		float this_min = __fsub_rn(kb_mul(sumL2, sumX), kb_mul(sumL, sumXL)) / det;
		if (this_min > 0.0f) {
			this_min = 0.0f;
			this_scale = sumXL / sumL2;
		}
		float cur_err = 0.0f;
		for (int i = 0; i < n; i++) {
			float diff = __fsub_rn(__fadd_rn(kb_mul(this_scale, (float)Laux[i]), this_min), x[i]);
			cur_err = __fadd_rn(cur_err, kb_mul(weights[i], kb_qkx2_err(diff, mad)));
		}
		if (cur_err < best_err) {
			for (int i = 0; i < n; i++) L[i] = Laux[i];
			best_err = cur_err;
			scale = this_scale;
			lo = this_min;
		}
	}
	neg_min = -lo;
	return scale;
}

// ---------------------------------------------------------------------
// The formats of issue 26 that quant can encode without importance
// weights: MXFP4 and IQ4_NL (32-element blocks, a block per thread),
// IQ4_XS (a thread per 32 elements of a super-block, as the K formats)
// and TQ1_0, TQ2_0 (ternary; a super-block's bytes shared among its
// threads). Every one is deterministic float32 arithmetic, so the bytes
// are quant.QuantizeRow's (quant/mxfp4.go, iq4.go, ternary.go).

// kb_mxfp4_exponent is the E8M0 code of a block whose largest magnitude
// is amax (quant's mxfp4Exponent): floor(log2(amax)) - 2 + 127 with the
// log rounded to float32 first (ggml's log2f; a value a few ulps below a
// power of two counts as that power), converted as x86 does and cut to
// its low byte. The log is taken in double and rounded, as quant does.
__device__ __forceinline__ u8 kb_mxfp4_exponent(float amax) {
	if (!(amax > 0.0f)) return 0;
	const float l = floorf((float)log2((double)amax));
	return (u8)kb_trunc_i32(__fadd_rn(__fsub_rn(l, 2.0f), 127.0f));
}

// kb_mxfp4_index is the code whose value times d is nearest to x, the
// first on ties (quant's bestIndexMXFP4).
__device__ __forceinline__ int kb_mxfp4_index(float x, float d) {
	int best = 0;
	float best_err = fabsf(__fsub_rn(kb_mul((float)kb_mxfp4_values[0], d), x));
	for (int i = 1; i < 16; i++) {
		const float err = fabsf(__fsub_rn(kb_mul((float)kb_mxfp4_values[i], d), x));
		if (err < best_err) {
			best = i;
			best_err = err;
		}
	}
	return best;
}

__device__ __forceinline__ void kb_mxfp4_block(const float* x, u8* b) {
	float amax = 0.0f;
	for (int j = 0; j < 32; j++) {
		const float a = fabsf(x[j]);
		if (amax < a) amax = a;
	}
	const u8 e = kb_mxfp4_exponent(amax);
	const float d = kb_e8m0_half(e);
	b[0] = e;
	for (int j = 0; j < 16; j++) b[1 + j] = (u8)(kb_mxfp4_index(x[j], d) | (kb_mxfp4_index(x[j + 16], d) << 4));
}

// kb_iq4_index is the index of the IQ4_NL value nearest to x, the upper
// on ties, by the reference's bisection (quant's bestIndexIQ4; a NaN
// gives 15).
__device__ __forceinline__ int kb_iq4_index(float x) {
	const i8* v = kb_iq4nl_values;
	if (x <= (float)v[0]) return 0;
	if (x >= (float)v[15]) return 15;
	int lo = 0, hi = 15;
	while (hi - lo > 1) {
		const int mid = (lo + hi) / 2;
		if (x < (float)v[mid]) {
			hi = mid;
		} else {
			lo = mid;
		}
	}
	return __fsub_rn(x, (float)v[hi - 1]) < __fsub_rn((float)v[hi], x) ? hi - 1 : hi;
}

// kb_iq4_fit fits 32 elements of IQ4_NL or IQ4_XS without importance
// weights (quant's quantizeIQ4, one ib of its first loop, weights x²): a
// scale from the element of largest magnitude, refined by least squares,
// then 2*ntry+1 scales tried around it when ntry > 0. It writes the codes
// of the first fit to L and returns the scale in dl, or returns false
// with dl 0 and L untouched when the largest magnitude is below 1e-15.
__device__ __forceinline__ bool kb_iq4_fit(const float* x, int ntry, u8* L, float& dl) {
	const float v0 = (float)kb_iq4nl_values[0];
	float w[32];
	float amax = 0.0f, vmax = 0.0f;
	for (int j = 0; j < 32; j++) {
		w[j] = kb_mul(x[j], x[j]);
		const float a = fabsf(x[j]);
		if (a > amax) {
			amax = a;
			vmax = x[j];
		}
	}
	dl = 0.0f;
	if (amax < 1e-15f) return false;
	float d = ntry > 0 ? -vmax / v0 : vmax / v0;
	float id = 1.0f / d;
	float sumqx = 0.0f, sumq2 = 0.0f;
	for (int j = 0; j < 32; j++) {
		const int l = kb_iq4_index(kb_mul(id, x[j]));
		L[j] = (u8)l;
		const float q = (float)kb_iq4nl_values[l];
		const float wq = kb_mul(w[j], q);
		sumqx = __fadd_rn(sumqx, kb_mul(wq, x[j]));
		sumq2 = __fadd_rn(sumq2, kb_mul(wq, q));
	}
	d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
	float best = kb_mul(d, sumqx);
	for (int itry = -ntry; itry <= ntry; itry++) {
		id = (float)(itry + (int)kb_iq4nl_values[0]) / vmax;
		sumqx = 0.0f;
		sumq2 = 0.0f;
		for (int j = 0; j < 32; j++) {
			const float q = (float)kb_iq4nl_values[kb_iq4_index(kb_mul(id, x[j]))];
			const float wq = kb_mul(w[j], q);
			sumqx = __fadd_rn(sumqx, kb_mul(wq, x[j]));
			sumq2 = __fadd_rn(sumq2, kb_mul(wq, q));
		}
		if (sumq2 > 0.0f && kb_mul(sumqx, sumqx) > kb_mul(best, sumq2)) {
			d = sumqx / sumq2;
			best = kb_mul(d, sumqx);
		}
	}
	dl = d;
	return true;
}

// kb_iq4_pack packs 32 codes into 16 bytes: element j in the low nibble
// of byte j, element j+16 in the high one.
__device__ __forceinline__ void kb_iq4_pack(const u8* L, u8* qs) {
	for (int j = 0; j < 16; j++) qs[j] = (u8)(L[j] | (L[16 + j] << 4));
}

// kb_lround_trit is lroundf(f) + 1 as the ternary quantizers compute it
// on x86-64 (quant's lroundTrit): halves away from zero; NaN and
// magnitudes of 2^63 or more give 1; the sum is cut to 32 bits.
__device__ __forceinline__ int kb_lround_trit(float f) {
	if (f != f || fabsf(f) >= 9.223372036854775808e18f) return 1;
	return (int)(u32)(unsigned long long)((long long)roundf(f) + 1);
}

// kb_ternary_scale returns a TQ super-block's largest magnitude, found as
// the reference finds it (a NaN is taken and replaced by the next
// element; quant's ternaryScale), and sets id to its inverse (0 for 0).
__device__ __forceinline__ float kb_ternary_scale(const float* x, float& id) {
	float d = 0.0f;
	for (int i = 0; i < 256; i++) {
		const float a = fabsf(x[i]);
		if (!(d > a)) d = a;
	}
	id = kb_inverse(d);
	return d;
}

// kb_pack_trits is the TQ1_0 byte of the trits of x[k*stride]*id, k < n,
// the first most significant, scaled to 256/243 (rounded up); four trits
// take a zero fifth (quant's packTrits).
__device__ __forceinline__ u8 kb_pack_trits(const float* x, int stride, int n, float id) {
	u8 q = 0;
	for (int k = 0; k < n; k++) q = (u8)(q * 3 + (u8)kb_lround_trit(kb_mul(x[k * stride], id)));
	if (n == 4) q = (u8)(q * 3);
	return (u8)(((u32)q * 256 + 242) / 243);
}
