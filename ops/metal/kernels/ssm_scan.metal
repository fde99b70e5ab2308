// ssm_scan.metal: Mamba's selective scan, SSM_SCAN.
#include "common.h"

struct kb_ssm_scan_args {
	kb_tensor s, x, dt, a, b, c, ids;
	long y_elems; // the elements of y, after which the final states start
};

// kb_log1p is ln(1 + x), accurate for small x (Goldberg's trick: MSL has
// no log1p).
inline float kb_log1p(float x) {
	const float u = 1.0f + x;
	return u == 1.0f ? x : log(u) * (x / (u - 1.0f));
}

// kb_ssm_scan_f32: a threadgroup per (element i of the head, head h,
// sequence q), one thread per state element n (d_state of them, the
// threadgroup rounded up to whole simdgroups). Per token, in order: dt' =
// softplus(dt), the state st = st*exp(dt'*A) + B*(x*dt'), and y = the sum
// over n of st*C, a threadgroup reduction. The final states follow y in
// dst, sequence q's at position q. A state slot id outside [0, n_rs) sets
// the status words (1, the id).
kernel void kb_ssm_scan_f32(
		constant kb_ssm_scan_args &args [[buffer(0)]],
		device const char *s0 [[buffer(1)]],
		device const char *x [[buffer(2)]],
		device const char *dt [[buffer(3)]],
		device const char *A [[buffer(4)]],
		device const char *B [[buffer(5)]],
		device const char *C [[buffer(6)]],
		device const char *ids [[buffer(7)]],
		device float *dst [[buffer(8)]],
		device atomic_int *status [[buffer(9)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort sgitg [[simdgroup_index_in_threadgroup]],
		ushort tiisg [[thread_index_in_simdgroup]],
		ushort nsg [[simdgroups_per_threadgroup]]) {
	threadgroup float scratch[32];
	const long i = tgpig.x, h = tgpig.y, q = tgpig.z;
	const long dstate = args.s.ne[0], hdim = args.s.ne[1], nhead = args.s.ne[2];
	const long ntok = args.x.ne[2];
	const long n = tpitg;
	const bool on = n < dstate;
	const int slot = *(device const int *)(ids + q * args.ids.nb[0]);
	if (slot < 0 || slot >= args.s.ne[3]) {
		if (tpitg == 0) {
			atomic_fetch_max_explicit(&status[0], 1, memory_order_relaxed);
			atomic_exchange_explicit(&status[1], slot, memory_order_relaxed);
		}
		return;
	}
	const long g = h / (nhead / args.b.ne[1]);
	float st = on ? *(device const float *)(s0 + n * args.s.nb[0] + i * args.s.nb[1] + h * args.s.nb[2] + slot * args.s.nb[3]) : 0.0f;
	const float a = on ? *(device const float *)(A + (args.a.ne[0] == 1 ? 0 : n) * args.a.nb[0] + h * args.a.nb[1]) : 0.0f;
	for (long tok = 0; tok < ntok; tok++) {
		const float dv = *(device const float *)(dt + h * args.dt.nb[0] + tok * args.dt.nb[1] + q * args.dt.nb[2]);
		const float dtp = dv > 20.0f ? dv : kb_log1p(exp(dv));
		const float xdt = *(device const float *)(x + i * args.x.nb[0] + h * args.x.nb[1] + tok * args.x.nb[2] + q * args.x.nb[3]) * dtp;
		float y = 0.0f;
		if (on) {
			const float bv = *(device const float *)(B + n * args.b.nb[0] + g * args.b.nb[1] + tok * args.b.nb[2] + q * args.b.nb[3]);
			const float cv = *(device const float *)(C + n * args.c.nb[0] + g * args.c.nb[1] + tok * args.c.nb[2] + q * args.c.nb[3]);
			st = st * exp(dtp * a) + bv * xdt;
			y = st * cv;
		}
		y = kb_tg_sum(y, scratch, sgitg, tiisg, nsg);
		if (tpitg == 0) dst[i + hdim * (h + nhead * (tok + ntok * q))] = y;
	}
	if (on) dst[args.y_elems + n + dstate * (i + hdim * (h + nhead * q))] = st;
}
