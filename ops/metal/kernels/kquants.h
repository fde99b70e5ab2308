// kquants.h: the K formats' reference quantizers (ggml's
// quantize_row_qN_K_ref, as package quant ports them in kformats.go and
// kquant.go), one super-block of 256 elements by one thread, in the same
// float32 operations and order, so that CPY into a K format writes
// quant.QuantizeRow's bytes. The file that includes it turns off FP
// contraction: a product fused into a sum would change the codes chosen.
#pragma once
#include "quants.h"

#define KB_QKK 256
#define KB_GROUP_MAX_EPS 1e-15f

// kb_nearest rounds to the nearest integer, ties to even, as ggml's
// nearest_int does: by adding 1.5*2^23 in float and reading the bits.
inline int kb_nearest(float f) {
	const float v = f + 12582912.0f;
	return (as_type<int>(v) & 0x007fffff) - 0x00400000;
}

inline int kb_clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// kb_i8w is v converted to int8, wrapping.
inline int kb_i8w(int v) { return ((v & 255) ^ 128) - 128; }

inline void kb_sethalf(thread uchar *p, float f) {
	const ushort h = kb_f2h(f);
	p[0] = uchar(h);
	p[1] = uchar(h >> 8);
}

inline float kb_gethalf(thread const uchar *p) { return kb_h2f(ushort(p[0] | (p[1] << 8))); }

// kb_absmax_signed returns the element of largest magnitude (the first on
// ties, sign kept) and sets amax to the magnitude.
inline float kb_absmax_signed(thread const float *x, int n, thread float &amax) {
	float vmax = 0.0f;
	amax = 0.0f;
	for (int i = 0; i < n; i++) {
		const float a = fabs(x[i]);
		if (amax < a) {
			amax = a;
			vmax = x[i];
		}
	}
	return vmax;
}

// make_qx_quants (rmse_type 1, no weights): codes in [-nmax, nmax),
// offset by nmax into L; returns the scale.
inline float kb_make_qx_quants(int nmax, thread const float *x, int n, thread int *L) {
	float amax;
	const float vmax = kb_absmax_signed(x, n, amax);
	if (amax < KB_GROUP_MAX_EPS) {
		for (int i = 0; i < n; i++) L[i] = 0;
		return 0.0f;
	}
	float iscale = float(-nmax) / vmax;
	float sumlx = 0.0f, suml2 = 0.0f;
	for (int i = 0; i < n; i++) {
		const float v = x[i];
		const int l = kb_clampi(kb_nearest(iscale * v), -nmax, nmax - 1);
		L[i] = l + nmax;
		const float w = v * v, fl = float(l);
		sumlx += w * v * fl;
		suml2 += w * fl * fl;
	}
	float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
	float best = scale * sumlx;
	for (int is = -9; is <= 9; is++) {
		if (is == 0) continue;
		iscale = -(float(nmax) + 0.1f * float(is)) / vmax;
		sumlx = 0.0f;
		suml2 = 0.0f;
		for (int i = 0; i < n; i++) {
			const float v = x[i];
			const int l = kb_clampi(kb_nearest(iscale * v), -nmax, nmax - 1);
			const float w = v * v, fl = float(l);
			sumlx += w * v * fl;
			suml2 += w * fl * fl;
		}
		if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
			for (int i = 0; i < n; i++) L[i] = nmax + kb_clampi(kb_nearest(iscale * x[i]), -nmax, nmax - 1);
			scale = sumlx / suml2;
			best = scale * sumlx;
		}
	}
	return scale;
}

// make_q3_quants with do_rmse: codes in [-nmax, nmax) refined one at a
// time, offset by nmax into L; returns the scale.
inline float kb_make_q3_quants(int nmax, thread const float *x, int n, thread int *L) {
	float amax;
	const float vmax = kb_absmax_signed(x, n, amax);
	if (amax < KB_GROUP_MAX_EPS) {
		for (int i = 0; i < n; i++) L[i] = 0;
		return 0.0f;
	}
	const float iscale = float(-nmax) / vmax;
	float sumlx = 0.0f, suml2 = 0.0f;
	for (int i = 0; i < n; i++) {
		const float v = x[i];
		const int l = kb_clampi(kb_nearest(iscale * v), -nmax, nmax - 1);
		L[i] = l;
		const float w = v * v, fl = float(l);
		sumlx += w * v * fl;
		suml2 += w * fl * fl;
	}
	for (int it = 0; it < 5; it++) {
		bool changed = false;
		for (int i = 0; i < n; i++) {
			const float v = x[i];
			const float w = v * v, li = float(L[i]);
			float slx = sumlx - w * v * li;
			if (slx <= 0.0f) continue;
			float sl2 = suml2 - w * li * li;
			const int nl = kb_clampi(kb_nearest(v * sl2 / slx), -nmax, nmax - 1);
			if (nl == L[i]) continue;
			const float fn = float(nl);
			slx += w * v * fn;
			sl2 += w * fn * fn;
			if (sl2 > 0.0f && slx * slx * suml2 > sumlx * sumlx * sl2) {
				L[i] = nl;
				sumlx = slx;
				suml2 = sl2;
				changed = true;
			}
		}
		if (!changed) break;
	}
	for (int i = 0; i < n; i++) L[i] += nmax;
	return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// make_qkx2_quants: codes in [0, nmax] for scale*code - min, searching
// nstep+1 scales around the range fit; returns the scale and sets negmin
// (the offset to subtract, never negative).
inline float kb_make_qkx2_quants(int nmax, thread const float *x, thread const float *weights, int n, thread int *L,
		thread int *Laux, float rmin, float rdelta, int nstep, bool mad, thread float &negmin) {
	float lo = x[0], hi = x[0];
	float sumw = weights[0];
	float sumx = sumw * x[0];
	for (int i = 1; i < n; i++) {
		if (x[i] < lo) lo = x[i];
		if (x[i] > hi) hi = x[i];
		const float w = weights[i];
		sumw += w;
		sumx += w * x[i];
	}
	if (lo > 0.0f) lo = 0.0f;
	if (hi == lo) {
		for (int i = 0; i < n; i++) L[i] = 0;
		negmin = -lo;
		return 0.0f;
	}
	float iscale = float(nmax) / (hi - lo);
	float scale = 1.0f / iscale;
	float best = 0.0f;
	for (int i = 0; i < n; i++) {
		const int l = kb_clampi(kb_nearest(iscale * (x[i] - lo)), 0, nmax);
		L[i] = l;
		const float diff = scale * float(l) + lo - x[i];
		best += weights[i] * (mad ? fabs(diff) : diff * diff);
	}
	if (nstep < 1) {
		negmin = -lo;
		return scale;
	}
	for (int is = 0; is <= nstep; is++) {
		iscale = (rmin + rdelta * float(is) + float(nmax)) / (hi - lo);
		float suml = 0.0f, suml2 = 0.0f, sumxl = 0.0f;
		for (int i = 0; i < n; i++) {
			const int l = kb_clampi(kb_nearest(iscale * (x[i] - lo)), 0, nmax);
			Laux[i] = l;
			const float w = weights[i], fl = float(l);
			suml += w * fl;
			suml2 += w * fl * fl;
			sumxl += w * fl * x[i];
		}
		const float det = sumw * suml2 - suml * suml;
		if (det <= 0.0f) continue;
		float this_scale = (sumw * sumxl - sumx * suml) / det;
		float this_min = (suml2 * sumx - suml * sumxl) / det;
		if (this_min > 0.0f) {
			this_min = 0.0f;
			this_scale = sumxl / suml2;
		}
		float cur = 0.0f;
		for (int i = 0; i < n; i++) {
			const float diff = this_scale * float(Laux[i]) + this_min - x[i];
			cur += weights[i] * (mad ? fabs(diff) : diff * diff);
		}
		if (cur < best) {
			for (int i = 0; i < n; i++) L[i] = Laux[i];
			best = cur;
			scale = this_scale;
			lo = this_min;
		}
	}
	negmin = -lo;
	return scale;
}

// kb_pack_q2bits packs 256 2-bit codes as Q2_K and Q3_K store them.
inline void kb_pack_q2bits(thread uchar *qs, thread const int *L) {
	for (int j = 0; j < KB_QKK; j += 128) {
		for (int l = 0; l < 32; l++) {
			qs[j / 4 + l] = uchar(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
		}
	}
}

// kb_pack_nibbles packs 256 4-bit codes as Q4_K and Q5_K store them.
inline void kb_pack_nibbles(thread uchar *qs, thread const int *L) {
	for (int j = 0; j < KB_QKK; j += 64) {
		for (int l = 0; l < 32; l++) qs[j / 2 + l] = uchar(L[j + l] | (L[j + l + 32] << 4));
	}
}

inline void kb_k4_get(int j, thread const uchar *s, thread int &sc, thread int &m) {
	if (j < 4) {
		sc = s[j] & 63;
		m = s[j + 4] & 63;
	} else {
		sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
		m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
	}
}

inline void kb_k4_put(int j, thread uchar *s, int ls, int lm) {
	if (j < 4) {
		s[j] = uchar(ls);
		s[j + 4] = uchar(lm);
		return;
	}
	s[j + 4] = uchar((ls & 15) | ((lm & 15) << 4));
	s[j - 4] |= uchar((ls >> 4) << 6);
	s[j] |= uchar((lm >> 4) << 6);
}

inline void kb_quantize_q2_K(thread const float *x, thread uchar *b) {
	int L[KB_QKK], laux[16];
	float weights[16], mins[16], scales[16];
	thread uchar *sc = b, *qs = b + 16;
	float max_scale = 0.0f, max_min = 0.0f;
	for (int j = 0; j < 16; j++) {
		thread const float *xs = x + 16 * j;
		for (int l = 0; l < 16; l++) weights[l] = fabs(xs[l]);
		scales[j] = kb_make_qkx2_quants(3, xs, weights, 16, L + 16 * j, laux, -0.5f, 0.1f, 15, true, mins[j]);
		if (scales[j] > max_scale) max_scale = scales[j];
		if (mins[j] > max_min) max_min = mins[j];
	}
	if (max_scale > 0.0f) {
		const float iscale = 15.0f / max_scale;
		for (int j = 0; j < 16; j++) sc[j] = uchar(kb_nearest(iscale * scales[j]));
		kb_sethalf(b + 80, max_scale / 15.0f);
	} else {
		for (int j = 0; j < 16; j++) sc[j] = 0;
		kb_sethalf(b + 80, 0.0f);
	}
	if (max_min > 0.0f) {
		const float iscale = 15.0f / max_min;
		for (int j = 0; j < 16; j++) sc[j] |= uchar(kb_nearest(iscale * mins[j]) << 4);
		kb_sethalf(b + 82, max_min / 15.0f);
	} else {
		kb_sethalf(b + 82, 0.0f);
	}
	const float d = kb_gethalf(b + 80), dmin = kb_gethalf(b + 82);
	for (int j = 0; j < 16; j++) {
		const float dj = d * float(sc[j] & 15);
		if (dj == 0.0f) continue;
		const float dm = dmin * float(sc[j] >> 4);
		for (int i = 16 * j; i < 16 * j + 16; i++) L[i] = kb_clampi(kb_nearest((x[i] + dm) / dj), 0, 3);
	}
	kb_pack_q2bits(qs, L);
}

inline void kb_quantize_q3_K(thread const float *x, thread uchar *b) {
	int L[KB_QKK];
	float scales[16];
	thread uchar *hmask = b, *qs = b + 32, *sc = b + 96;
	float max_scale = 0.0f, amax = 0.0f;
	for (int j = 0; j < 16; j++) {
		scales[j] = kb_make_q3_quants(4, x + 16 * j, 16, L + 16 * j);
		const float s = fabs(scales[j]);
		if (s > amax) {
			amax = s;
			max_scale = scales[j];
		}
	}
	for (int j = 0; j < 12; j++) sc[j] = 0;
	if (max_scale != 0.0f) {
		const float iscale = -32.0f / max_scale;
		for (int j = 0; j < 16; j++) {
			int l = kb_i8w(kb_nearest(iscale * scales[j]));
			l = kb_clampi(l, -32, 31) + 32;
			if (j < 8) {
				sc[j] = uchar(l & 15);
			} else {
				sc[j - 8] |= uchar((l & 15) << 4);
			}
			sc[8 + j % 4] |= uchar((l >> 4) << (2 * (j / 4)));
		}
		kb_sethalf(b + 108, 1.0f / iscale);
	} else {
		kb_sethalf(b + 108, 0.0f);
	}
	const float dall = kb_gethalf(b + 108);
	for (int j = 0; j < 16; j++) {
		const int lo = j < 8 ? sc[j] & 15 : sc[j - 8] >> 4;
		const int hi = (sc[8 + j % 4] >> (2 * (j / 4))) & 3;
		const float d = dall * float((lo | (hi << 4)) - 32);
		if (d == 0.0f) continue;
		for (int i = 16 * j; i < 16 * j + 16; i++) L[i] = kb_clampi(kb_nearest(x[i] / d), -4, 3) + 4;
	}
	for (int j = 0; j < 32; j++) hmask[j] = 0;
	for (int e = 0; e < KB_QKK; e++) {
		if (L[e] > 3) {
			hmask[e % 32] |= uchar(1 << (e / 32));
			L[e] -= 4;
		}
	}
	kb_pack_q2bits(qs, L);
}

// The part Q4_K and Q5_K share: sub-block fits, scales and d/dmin at the
// start of b, the final codes in L.
inline void kb_quantize_q45_K(thread const float *x, thread uchar *b, thread int *L, int nmax, float rmin, int nstep) {
	int laux[32];
	float weights[32], mins[8], scales[8];
	float max_scale = 0.0f, max_min = 0.0f;
	for (int j = 0; j < 8; j++) {
		thread const float *xs = x + 32 * j;
		float sumx2 = 0.0f;
		for (int l = 0; l < 32; l++) sumx2 += xs[l] * xs[l];
		const float av = sqrt(sumx2 / 32.0f);
		for (int l = 0; l < 32; l++) weights[l] = av + fabs(xs[l]);
		scales[j] = kb_make_qkx2_quants(nmax, xs, weights, 32, L + 32 * j, laux, rmin, 0.1f, nstep, false, mins[j]);
		if (scales[j] > max_scale) max_scale = scales[j];
		if (mins[j] > max_min) max_min = mins[j];
	}
	const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
	const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
	thread uchar *sc = b + 4;
	for (int j = 0; j < 8; j++) {
		const int ls = min(63, kb_nearest(inv_scale * scales[j]) & 255);
		const int lm = min(63, kb_nearest(inv_min * mins[j]) & 255);
		kb_k4_put(j, sc, ls, lm);
	}
	kb_sethalf(b, max_scale / 63.0f);
	kb_sethalf(b + 2, max_min / 63.0f);
	const float d0 = kb_gethalf(b), dmin0 = kb_gethalf(b + 2);
	for (int j = 0; j < 8; j++) {
		int s, m;
		kb_k4_get(j, sc, s, m);
		const float d = d0 * float(s);
		if (d == 0.0f) continue;
		const float dm = dmin0 * float(m);
		for (int i = 32 * j; i < 32 * j + 32; i++) L[i] = kb_clampi(kb_nearest((x[i] + dm) / d), 0, nmax);
	}
}

inline void kb_quantize_q4_K(thread const float *x, thread uchar *b) {
	int L[KB_QKK];
	kb_quantize_q45_K(x, b, L, 15, -1.0f, 20);
	kb_pack_nibbles(b + 16, L);
}

inline void kb_quantize_q5_K(thread const float *x, thread uchar *b) {
	int L[KB_QKK];
	kb_quantize_q45_K(x, b, L, 31, -0.5f, 15);
	thread uchar *qh = b + 16;
	for (int j = 0; j < 32; j++) qh[j] = 0;
	for (int e = 0; e < KB_QKK; e++) {
		if (L[e] > 15) {
			qh[e % 32] |= uchar(1 << (e / 32));
			L[e] -= 16;
		}
	}
	kb_pack_nibbles(b + 48, L);
}

inline void kb_quantize_q6_K(thread const float *x, thread uchar *b) {
	int L[KB_QKK];
	float scales[16];
	thread uchar *ql = b, *qh = b + 128, *sc = b + 192;
	float max_scale = 0.0f, max_abs = 0.0f;
	for (int j = 0; j < 16; j++) {
		scales[j] = kb_make_qx_quants(32, x + 16 * j, 16, L + 16 * j);
		const float a = fabs(scales[j]);
		if (a > max_abs) {
			max_abs = a;
			max_scale = scales[j];
		}
	}
	if (max_abs < KB_GROUP_MAX_EPS) {
		for (int j = 0; j < 210; j++) b[j] = 0;
		return;
	}
	const float iscale = -128.0f / max_scale;
	kb_sethalf(b + 208, 1.0f / iscale);
	for (int j = 0; j < 16; j++) sc[j] = uchar(kb_i8w(min(127, kb_nearest(iscale * scales[j]))));
	const float d0 = kb_gethalf(b + 208);
	for (int j = 0; j < 16; j++) {
		const float d = d0 * float(kb_i8w(sc[j]));
		if (d == 0.0f) continue;
		for (int i = 16 * j; i < 16 * j + 16; i++) L[i] = kb_clampi(kb_nearest(x[i] / d), -32, 31) + 32;
	}
	for (int e = 0; e < KB_QKK; e++) {
		const int h = e / 128, r = e % 128, lo = r % 32, g = r / 32;
		const int k = 64 * h + lo + 32 * (g % 2);
		const int l = L[e];
		if (g < 2) {
			ql[k] = uchar((ql[k] & 0xf0) | (l & 15));
		} else {
			ql[k] = uchar((ql[k] & 0x0f) | ((l & 15) << 4));
		}
		if (g == 0) qh[32 * h + lo] = 0;
		qh[32 * h + lo] |= uchar(((l >> 4) & 3) << (2 * g));
	}
}
