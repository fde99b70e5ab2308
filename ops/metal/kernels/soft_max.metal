// soft_max.metal: SOFT_MAX with scale, an optional f32 or f16 mask
// (broadcast over dims 2-3), ALiBi slopes and per-head sink logits. A
// threadgroup takes one row: the maximum of the logits (and the sink),
// then the sum of their exponentials, then the outputs, each pass a
// threadgroup reduction over the row.
#include "common.h"

struct kb_softmax_args {
	kb_tensor x, m, d;
	float scale, max_bias, m0, m1;
	int n_head_log2, has_mask, has_sinks;
};

// kb_alibi_slope is ALiBi's slope of head h, as ggml computes it from m0
// and m1 (which the host computes as ggml does); 1 without max_bias.
inline float kb_alibi_slope(float max_bias, float m0, float m1, int n_head_log2, long h) {
	if (max_bias <= 0.0f) return 1.0f;
	return h < n_head_log2 ? pow(m0, float(h + 1)) : pow(m1, float(2 * (h - n_head_log2) + 1));
}

template <typename TM>
kernel void kb_soft_max(
		constant kb_softmax_args &args [[buffer(0)]],
		device const char *x [[buffer(1)]],
		device const char *mask [[buffer(2)]],
		device const float *sinks [[buffer(3)]],
		device char *d [[buffer(4)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort ntg [[threads_per_threadgroup]],
		ushort sgitg [[simdgroup_index_in_threadgroup]],
		ushort tiisg [[thread_index_in_simdgroup]],
		ushort nsg [[simdgroups_per_threadgroup]]) {
	threadgroup float scratch[32];
	const long i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
	const long n = args.x.ne[0];
	device const char *xr = x + kb_row(args.x, i1, i2, i3);
	device const TM *mr = args.has_mask ? (device const TM *)(mask + kb_row(args.m, i1, i2 % args.m.ne[2], i3 % args.m.ne[3])) : nullptr;
	device char *dr = d + kb_row(args.d, i1, i2, i3);
	const float slope = kb_alibi_slope(args.max_bias, args.m0, args.m1, args.n_head_log2, i2);

	float mx = -INFINITY;
	for (long i = tpitg; i < n; i += ntg) {
		float z = args.scale * *(device const float *)(xr + i * args.x.nb[0]);
		if (args.has_mask) z += slope * float(mr[i]);
		mx = max(mx, z);
	}
	mx = kb_tg_max(mx, scratch, sgitg, tiisg, nsg);
	const float sink = args.has_sinks ? sinks[i2] : -INFINITY;
	mx = max(mx, sink);
	if (mx == -INFINITY) {
		// Every logit masked and no sink: zeros, as ops defines it.
		for (long i = tpitg; i < n; i += ntg) *(device float *)(dr + i * args.d.nb[0]) = 0.0f;
		return;
	}
	float sum = 0.0f;
	for (long i = tpitg; i < n; i += ntg) {
		float z = args.scale * *(device const float *)(xr + i * args.x.nb[0]);
		if (args.has_mask) z += slope * float(mr[i]);
		sum += exp(z - mx);
	}
	sum = kb_tg_sum(sum, scratch, sgitg, tiisg, nsg);
	if (args.has_sinks) sum += exp(sink - mx);
	const float inv = 1.0f / sum;
	for (long i = tpitg; i < n; i += ntg) {
		float z = args.scale * *(device const float *)(xr + i * args.x.nb[0]);
		if (args.has_mask) z += slope * float(mr[i]);
		*(device float *)(dr + i * args.d.nb[0]) = exp(z - mx) * inv;
	}
}

typedef decltype(kb_soft_max<float>) kb_soft_max_t;
template [[host_name("kb_soft_max_f32")]] kernel kb_soft_max_t kb_soft_max<float>;
template [[host_name("kb_soft_max_f32_f16")]] kernel kb_soft_max_t kb_soft_max<half>;
