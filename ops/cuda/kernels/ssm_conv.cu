// ssm_conv.cu: Mamba's causal depthwise convolution, SSM_CONV, in f32
// over any strides.
#include "common.cuh"

// kb_ssm_conv_f32: dst[i, t, s] = sum_{j<d_conv} sx[t+j, i, s] * c[j, i],
// the sum in order of j. Grid (channel blocks, sequences, token chunks):
// a thread takes one channel and a chunk of tok_chunk tokens, so a warp's
// stores (consecutive channels of a token) are coalesced and each thread
// walks its own sx row, whose d_conv-wide windows overlap in L1.
extern "C" __global__ void kb_ssm_conv_f32(const char* sx, kb_tensor tx, const char* c, kb_tensor tc, char* d, kb_tensor td, int tok_chunk) {
	i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
	i64 s = blockIdx.y;
	if (i >= td.ne[0]) return;
	i64 t0 = (i64)blockIdx.z * tok_chunk, t1 = min(t0 + tok_chunk, td.ne[1]);
	i64 dconv = tc.ne[0];
	const char* row = sx + i * tx.nb[1] + s * tx.nb[2];
	const char* w = c + i * tc.nb[1];
	for (i64 t = t0; t < t1; t++) {
		float sum = 0.0f;
		for (i64 j = 0; j < dconv; j++) sum += *(const float*)(row + (t + j) * tx.nb[0]) * *(const float*)(w + j * tc.nb[0]);
		*(float*)(d + kb_offset(td, i, t, s, 0)) = sum;
	}
}
