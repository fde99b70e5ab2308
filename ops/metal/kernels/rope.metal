// rope.metal: ROPE in normal and NeoX modes, with partial rotation,
// frequency factors and YaRN. A threadgroup takes one row (head i1 of
// token i2); its threads take pairs.
//
// Angles reach 1e5 radians, where a float's ulp is 0.008 rad, and there
// is no double on the GPU: the angle p*w is computed in double-float
// arithmetic (w as hi + lo floats from the host, the product's error by an
// FMA), reduced modulo 2*pi exactly (Cody-Waite, with 2*pi split in two
// floats), and only then handed to sin and cos, so the result is as
// accurate as float32 sin and cos of the exact angle.
#include "common.h"

struct kb_rope_args {
	kb_tensor a, d;
	long pos_nb0, ff_nb0;
	int n_dims, neox, has_ff;
	float mscale;
};

// kb_angle returns p*(whi + wlo) modulo 2*pi, in [-pi, pi] up to float
// rounding.
inline float kb_angle(float p, float whi, float wlo) {
	const float c1 = 6.28318548202514648438f;     // 2*pi rounded to float
	const float c2 = -1.74845553146951715e-07f;   // 2*pi - c1
	const float inv2pi = 0.159154943091895335769f;
	float h = p * whi;
	float l = fma(p, whi, -h) + p * wlo; // h + l = p*w to ~2^-48
	float k = rint(h * inv2pi);
	float r = fma(-k, c1, h); // exact
	r = fma(-k, c2, r);
	return r + l;
}

kernel void kb_rope_f32(
		constant kb_rope_args &args [[buffer(0)]],
		device const char *a [[buffer(1)]],
		device const char *pos [[buffer(2)]],
		device const char *ff [[buffer(3)]],
		device const float2 *w [[buffer(4)]],
		device char *d [[buffer(5)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort ntg [[threads_per_threadgroup]]) {
	const long i1 = tgpig.x, i2 = tgpig.y;
	device const char *ar = a + kb_row(args.a, i1, i2, 0);
	device char *dr = d + kb_row(args.d, i1, i2, 0);
	const float p = float(*(device const int *)(pos + i2 * args.pos_nb0));
	const int half_dims = args.n_dims / 2;
	for (int i = tpitg; i < half_dims; i += ntg) {
		float whi = w[i].x, wlo = w[i].y;
		if (args.has_ff) {
			// w / ff in double-float: the quotient and its remainder.
			float f = *(device const float *)(ff + i * args.ff_nb0);
			float q = whi / f;
			float rem = fma(-q, f, whi) + wlo;
			whi = q;
			wlo = rem / f;
		}
		const float theta = kb_angle(p, whi, wlo);
		const float c = cos(theta) * args.mscale, s = sin(theta) * args.mscale;
		const long j0 = args.neox ? i : 2 * i, j1 = args.neox ? i + half_dims : 2 * i + 1;
		const float x0 = *(device const float *)(ar + j0 * args.a.nb[0]);
		const float x1 = *(device const float *)(ar + j1 * args.a.nb[0]);
		*(device float *)(dr + j0 * args.d.nb[0]) = x0 * c - x1 * s;
		*(device float *)(dr + j1 * args.d.nb[0]) = x0 * s + x1 * c;
	}
	for (long i = args.n_dims + tpitg; i < args.d.ne[0]; i += ntg) {
		*(device float *)(dr + i * args.d.nb[0]) = *(device const float *)(ar + i * args.a.nb[0]);
	}
}
