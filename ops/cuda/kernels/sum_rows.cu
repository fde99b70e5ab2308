// sum_rows.cu: SUM_ROWS of f32 rows.
#include "common.cuh"

// kb_sum_dwarp adds v over the 32 lanes of a warp; every lane gets the sum.
__device__ __forceinline__ double kb_sum_dwarp(double v) {
	for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

// kb_sum_rows_f32 sums each row of a into d[0, r], in float64 as the CPU
// does (an f32 sum of a row whose terms cancel loses the digits the
// tolerance asks for; the op is memory-bound, so the float64 adds are
// free): a row per warp (blockDim.x/32 rows per block) when warp_rows is
// set, else a row per block (a multiple of 32 threads). Lanes stride over
// the row, so a warp's loads are coalesced when the row is packed.
extern "C" __global__ void kb_sum_rows_f32(const char* a, kb_tensor ta, char* d, kb_tensor td, int warp_rows) {
	__shared__ double scratch[32];
	i64 rows = ta.ne[1] * ta.ne[2] * ta.ne[3];
	i64 r;
	int t, nt;
	if (warp_rows) {
		r = (i64)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
		t = threadIdx.x & 31;
		nt = 32;
	} else {
		r = blockIdx.x;
		t = threadIdx.x;
		nt = blockDim.x;
	}
	i64 i1 = r % ta.ne[1], i2 = (r / ta.ne[1]) % ta.ne[2], i3 = r / (ta.ne[1] * ta.ne[2]);
	double sum = 0.0;
	if (r < rows) {
		const char* row = a + kb_offset(ta, 0, i1, i2, i3);
		for (i64 i = t; i < ta.ne[0]; i += nt) sum += (double)*(const float*)(row + i * ta.nb[0]);
	}
	sum = kb_sum_dwarp(sum);
	if (!warp_rows && blockDim.x > 32) {
		int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
		if (lane == 0) scratch[warp] = sum;
		__syncthreads();
		sum = kb_sum_dwarp(lane < (int)(blockDim.x >> 5) ? scratch[lane] : 0.0);
	}
	if (t == 0 && r < rows) *(float*)(d + kb_offset(td, 0, i1, i2, i3)) = (float)sum;
}
