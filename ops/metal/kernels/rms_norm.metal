// rms_norm.metal: RMS_NORM, one row per threadgroup.
#include "common.h"

struct kb_norm_args {
	kb_tensor x, y;
	float eps;
};

// kb_rms_norm_f32: y = x / sqrt(mean(x^2) + eps) for each row of x; the
// grid is ne1 x ne2 x ne3 threadgroups of a multiple of 32 threads.
kernel void kb_rms_norm_f32(
		constant kb_norm_args &args [[buffer(0)]],
		device const char *x [[buffer(1)]],
		device char *y [[buffer(2)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort ntg [[threads_per_threadgroup]],
		ushort sgitg [[simdgroup_index_in_threadgroup]],
		ushort tiisg [[thread_index_in_simdgroup]],
		ushort nsg [[simdgroups_per_threadgroup]]) {
	threadgroup float scratch[32];
	device const char *xr = x + kb_row(args.x, tgpig.x, tgpig.y, tgpig.z);
	device char *yr = y + kb_row(args.y, tgpig.x, tgpig.y, tgpig.z);
	const long n = args.x.ne[0];
	float sum = 0.0f;
	for (long i = tpitg; i < n; i += ntg) {
		float v = *(device const float *)(xr + i * args.x.nb[0]);
		sum += v * v;
	}
	sum = kb_tg_sum(sum, scratch, sgitg, tiisg, nsg);
	const float scale = 1.0f / sqrt(sum / float(n) + args.eps);
	for (long i = tpitg; i < n; i += ntg) {
		*(device float *)(yr + i * args.y.nb[0]) = *(device const float *)(xr + i * args.x.nb[0]) * scale;
	}
}
