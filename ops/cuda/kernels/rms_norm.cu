// rms_norm.cu: RMS_NORM, one row per block.
#include "common.cuh"
#include "reduce.cuh"

// kb_rms_norm_f32: y = x / sqrt(mean(x^2) + eps) for each row of x; the
// grid is (rows, 1, 1) over ne1*ne2*ne3 rows.
extern "C" __global__ void kb_rms_norm_f32(const char* x, kb_tensor tx, char* y, kb_tensor ty, float eps) {
	__shared__ float scratch[32];
	i64 r = blockIdx.x;
	i64 i1 = r % tx.ne[1], i2 = (r / tx.ne[1]) % tx.ne[2], i3 = r / (tx.ne[1] * tx.ne[2]);
	const char* xr = x + kb_offset(tx, 0, i1, i2, i3);
	char* yr = y + kb_offset(ty, 0, i1, i2, i3);
	float sum = 0.0f;
	for (i64 i = threadIdx.x; i < tx.ne[0]; i += blockDim.x) {
		float v = *(const float*)(xr + i * tx.nb[0]);
		sum += v * v;
	}
	sum = kb_block_sum(sum, scratch);
	float scale = 1.0f / sqrtf(sum / (float)tx.ne[0] + eps);
	for (i64 i = threadIdx.x; i < tx.ne[0]; i += blockDim.x) {
		*(float*)(yr + i * ty.nb[0]) = *(const float*)(xr + i * tx.nb[0]) * scale;
	}
}
