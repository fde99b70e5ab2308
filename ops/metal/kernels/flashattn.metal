// flashattn.metal: FLASH_ATTN_EXT, fused attention with an online
// softmax, for K and V of f32, f16, q8_0 and q4_0 (each its own type),
// head sizes up to FA_DMAX, f16 or f32 masks, ALiBi, softcap and sinks.
//
// kb_fa_vec_<k>_<v> takes one query row of one head per threadgroup of
// nsg simdgroups: the simdgroups take the keys in turn (key ik goes to
// simdgroup ik % nsg), and the 32 lanes of a simdgroup split the head:
// lane l holds query and output elements l, l+32, ... . Per key, q·k is a
// simd_sum of the lanes' partial dot products; the running maximum M, sum
// S and output accumulator are rescaled when M rises (the online
// softmax). Keys whose mask term is -Inf are skipped before their K or V
// row is read. At the end the simdgroups' states meet in threadgroup
// memory and simdgroup 0 merges them with the sink logit.
#include "quants.h"

#define FA_DMAX 256
#define FA_EPL (FA_DMAX / 32) // elements per lane

struct kb_fa_args {
	kb_tensor q, k, v, m, d;
	float scale, max_bias, softcap, m0, m1;
	int n_head_log2, has_mask, mask_f16, has_sinks;
};

inline float kb_fa_slope(constant kb_fa_args &args, long h) {
	if (args.max_bias <= 0.0f) return 1.0f;
	return h < args.n_head_log2 ? pow(args.m0, float(h + 1)) : pow(args.m1, float(2 * (h - args.n_head_log2) + 1));
}

template <int TK, int TV>
kernel void kb_fa_vec(
		constant kb_fa_args &args [[buffer(0)]],
		device const char *q [[buffer(1)]],
		device const char *k [[buffer(2)]],
		device const char *v [[buffer(3)]],
		device const char *mask [[buffer(4)]],
		device const float *sinks [[buffer(5)]],
		device char *d [[buffer(6)]],
		threadgroup float *shmem [[threadgroup(0)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tiisg [[thread_index_in_simdgroup]],
		ushort sgitg [[simdgroup_index_in_threadgroup]],
		ushort nsg [[simdgroups_per_threadgroup]]) {
	const long iq = tgpig.x, h = tgpig.y, i3 = tgpig.z;
	const long dk = args.k.ne[0], dv = args.v.ne[0], nkv = args.k.ne[1];
	const long hk = h / (args.q.ne[2] / args.k.ne[2]);
	const long i3k = i3 / (args.q.ne[3] / args.k.ne[3]);
	device const char *qr = q + kb_row(args.q, iq, h, i3);
	device const char *kb = k + hk * args.k.nb[2] + i3k * args.k.nb[3];
	device const char *vb = v + hk * args.v.nb[2] + i3k * args.v.nb[3];
	device const char *mr = mask + (args.has_mask ? kb_row(args.m, iq, h % args.m.ne[2], i3 % args.m.ne[3]) : 0);
	const float slope = kb_fa_slope(args, h);

	float qv[FA_EPL], o[FA_EPL];
	for (int i = 0; i < FA_EPL; i++) {
		const long e = tiisg + 32 * i;
		qv[i] = e < dk ? *(device const float *)(qr + e * args.q.nb[0]) : 0.0f;
		o[i] = 0.0f;
	}
	float M = -INFINITY, S = 0.0f;
	for (long ik = sgitg; ik < nkv; ik += nsg) {
		float mv = 0.0f;
		if (args.has_mask) {
			mv = args.mask_f16 ? float(((device const half *)mr)[ik]) : ((device const float *)mr)[ik];
			mv *= slope;
			if (mv == -INFINITY) continue; // the key is left out: its K and V are not read
		}
		device const uchar *kr = (device const uchar *)(kb + ik * args.k.nb[1]);
		float part = 0.0f;
		for (int i = 0; i < FA_EPL; i++) {
			const long e = tiisg + 32 * i;
			if (e < dk) part = fma(qv[i], kb_at<TK>(kr, e), part);
		}
		float s = simd_sum(part);
		s = args.softcap > 0.0f ? args.softcap * tanh(args.scale * s / args.softcap) + mv : args.scale * s + mv;
		const float Mn = max(M, s);
		const float ms = exp(M - Mn), vs = exp(s - Mn);
		S = S * ms + vs;
		device const uchar *vr = (device const uchar *)(vb + ik * args.v.nb[1]);
		for (int i = 0; i < FA_EPL; i++) {
			const long e = tiisg + 32 * i;
			o[i] = o[i] * ms + (e < dv ? vs * kb_at<TV>(vr, e) : 0.0f);
		}
		M = Mn;
	}

	// Merge the simdgroups' states: M and S at shmem[2*sg], the
	// accumulators after them, dv floats each.
	threadgroup float *ms_ = shmem;
	threadgroup float *os = shmem + 2 * nsg;
	if (tiisg == 0) {
		ms_[2 * sgitg] = M;
		ms_[2 * sgitg + 1] = S;
	}
	for (int i = 0; i < FA_EPL; i++) {
		const long e = tiisg + 32 * i;
		if (e < dv) os[sgitg * dv + e] = o[i];
	}
	threadgroup_barrier(mem_flags::mem_threadgroup);
	if (sgitg != 0) return;
	float Mt = args.has_sinks ? sinks[h] : -INFINITY;
	for (int g = 0; g < nsg; g++) Mt = max(Mt, ms_[2 * g]);
	device char *dr = d + kb_row(args.d, h, iq, i3);
	if (Mt == -INFINITY) {
		// Every key masked and no sink: zeros.
		for (long e = tiisg; e < dv; e += 32) *(device float *)(dr + e * args.d.nb[0]) = 0.0f;
		return;
	}
	float St = args.has_sinks ? exp(sinks[h] - Mt) : 0.0f;
	for (int g = 0; g < nsg; g++) St += ms_[2 * g + 1] * exp(ms_[2 * g] - Mt);
	const float inv = 1.0f / St;
	for (long e = tiisg; e < dv; e += 32) {
		float acc = 0.0f;
		for (int g = 0; g < nsg; g++) acc += os[g * dv + e] * exp(ms_[2 * g] - Mt);
		*(device float *)(dr + e * args.d.nb[0]) = acc * inv;
	}
}

typedef decltype(kb_fa_vec<KB_F16, KB_F16>) kb_fa_vec_t;
#define KB_FA_VEC(kn, K, vn, V) template [[host_name(KB_STR(kb_fa_vec_##kn##_##vn))]] kernel kb_fa_vec_t kb_fa_vec<K, V>;
#define KB_FA_VEC_V(kn, K)      \
	KB_FA_VEC(kn, K, f32, KB_F32) \
	KB_FA_VEC(kn, K, f16, KB_F16) \
	KB_FA_VEC(kn, K, q8_0, KB_Q8_0) \
	KB_FA_VEC(kn, K, q4_0, KB_Q4_0)
KB_FA_VEC_V(f32, KB_F32)
KB_FA_VEC_V(f16, KB_F16)
KB_FA_VEC_V(q8_0, KB_Q8_0)
KB_FA_VEC_V(q4_0, KB_Q4_0)
