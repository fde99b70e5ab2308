// ssm_conv.metal: Mamba's causal depthwise convolution, SSM_CONV.
#include "common.h"

struct kb_ssm_conv_args {
	kb_tensor sx, c, d;
};

// kb_ssm_conv_f32: dst[i, t, s] = sum_{j<d_conv} sx[t+j, i, s] * c[j, i],
// summed in order of j. A threadgroup per (token, sequence), its threads
// over the channels.
kernel void kb_ssm_conv_f32(
		constant kb_ssm_conv_args &args [[buffer(0)]],
		device const char *sx [[buffer(1)]],
		device const char *c [[buffer(2)]],
		device char *d [[buffer(3)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort ntg [[threads_per_threadgroup]]) {
	const long t = tgpig.x, s = tgpig.y;
	const long dconv = args.c.ne[0];
	for (long i = tpitg; i < args.d.ne[0]; i += ntg) {
		device const char *xr = sx + t * args.sx.nb[0] + i * args.sx.nb[1] + s * args.sx.nb[2];
		device const char *cr = c + i * args.c.nb[1];
		float sum = 0.0f;
		for (long j = 0; j < dconv; j++) {
			sum += *(device const float *)(xr + j * args.sx.nb[0]) * *(device const float *)(cr + j * args.c.nb[0]);
		}
		*(device float *)(d + i * args.d.nb[0] + t * args.d.nb[1] + s * args.d.nb[2]) = sum;
	}
}
