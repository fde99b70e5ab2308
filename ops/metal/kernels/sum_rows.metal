// sum_rows.metal: SUM_ROWS, one row per threadgroup.
#include "common.h"

struct kb_sum_rows_args {
	kb_tensor x, y;
};

// Sums in double-float: a float sum s and the rounding errors c it
// dropped, kept by TwoSum (exact in IEEE arithmetic), so that a row's sum
// is as good as a float64 sum rounded once (SUM_ROWS's tolerance asks for
// that), with no double on the GPU.

// kb_add2 adds y to the pair (s, c).
inline void kb_add2(thread float &s, thread float &c, float y) {
	const float t = s + y;
	const float bp = t - s;
	c += (s - (t - bp)) + (y - bp);
	s = t;
}

// kb_tg_sum2 sums the pairs (s, c) of a threadgroup of nsg simdgroups;
// every thread gets the sum, rounded once. scratch holds 64 floats.
inline float kb_tg_sum2(float s, float c, threadgroup float *scratch, ushort sgitg, ushort tiisg, ushort nsg) {
	for (ushort o = 16; o > 0; o >>= 1) {
		const float so = simd_shuffle_xor(s, o), co = simd_shuffle_xor(c, o);
		kb_add2(s, c, so);
		c += co;
	}
	if (nsg > 1) {
		if (tiisg == 0) {
			scratch[2 * sgitg] = s;
			scratch[2 * sgitg + 1] = c;
		}
		threadgroup_barrier(mem_flags::mem_threadgroup);
		s = tiisg < nsg ? scratch[2 * tiisg] : 0.0f;
		c = tiisg < nsg ? scratch[2 * tiisg + 1] : 0.0f;
		for (ushort o = 16; o > 0; o >>= 1) {
			const float so = simd_shuffle_xor(s, o), co = simd_shuffle_xor(c, o);
			kb_add2(s, c, so);
			c += co;
		}
		threadgroup_barrier(mem_flags::mem_threadgroup);
	}
	return s + c;
}

// kb_sum_rows_f32: y[0, i1, i2, i3] = the sum of row (i1, i2, i3) of x.
kernel void kb_sum_rows_f32(
		constant kb_sum_rows_args &args [[buffer(0)]],
		device const char *x [[buffer(1)]],
		device char *y [[buffer(2)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort ntg [[threads_per_threadgroup]],
		ushort sgitg [[simdgroup_index_in_threadgroup]],
		ushort tiisg [[thread_index_in_simdgroup]],
		ushort nsg [[simdgroups_per_threadgroup]]) {
	threadgroup float scratch[64];
	device const char *xr = x + kb_row(args.x, tgpig.x, tgpig.y, tgpig.z);
	float s = 0.0f, c = 0.0f;
	for (long i = tpitg; i < args.x.ne[0]; i += ntg) kb_add2(s, c, *(device const float *)(xr + i * args.x.nb[0]));
	const float sum = kb_tg_sum2(s, c, scratch, sgitg, tiisg, nsg);
	if (tpitg == 0) *(device float *)(y + kb_row(args.y, tgpig.x, tgpig.y, tgpig.z)) = sum;
}
