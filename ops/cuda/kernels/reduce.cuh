// reduce.cuh: block-wide reductions for kernels that give a row to a block.
#pragma once

// kb_warp_sum adds v over the 32 lanes of a warp; every lane gets the sum.
__device__ __forceinline__ float kb_warp_sum(float v) {
	for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

__device__ __forceinline__ float kb_warp_max(float v) {
	for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

// kb_block_sum adds v over the block (a multiple of 32 threads, at most
// 1024); every thread gets the sum. scratch holds 32 floats of shared
// memory, free again when it returns.
__device__ __forceinline__ float kb_block_sum(float v, float* scratch) {
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
	v = kb_warp_sum(v);
	if (nwarps == 1) return v;
	if (lane == 0) scratch[warp] = v;
	__syncthreads();
	v = lane < nwarps ? scratch[lane] : 0.0f;
	v = kb_warp_sum(v);
	__syncthreads();
	return v;
}

__device__ __forceinline__ float kb_block_max(float v, float* scratch) {
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
	v = kb_warp_max(v);
	if (nwarps == 1) return v;
	if (lane == 0) scratch[warp] = v;
	__syncthreads();
	v = lane < nwarps ? scratch[lane] : -INFINITY;
	v = kb_warp_max(v);
	__syncthreads();
	return v;
}
