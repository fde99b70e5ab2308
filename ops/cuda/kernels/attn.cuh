// attn.cuh: what SOFT_MAX (soft_max.cu) and FLASH_ATTN_EXT (flash_attn_ext.cu)
// share: the ALiBi slope of a head.
#pragma once
#include "common.cuh"

// kb_alibi_slope returns head h's ALiBi slope, as ggml computes it: with n
// the largest power of two not above the head count (n_log2 here), m0 =
// 2^(-max_bias/n) and m1 = 2^(-max_bias/(2n)) (the host rounds both to
// float), the slope is m0^(h+1) for h < n and m1^(2(h-n)+1) above. The
// host passes m0 = m1 = 1 when max_bias is 0, so every slope is exactly 1.
__device__ __forceinline__ float kb_alibi_slope(float m0, float m1, int n_log2, i64 h) {
	return h < n_log2 ? powf(m0, (float)(h + 1)) : powf(m1, (float)(2 * (h - n_log2) + 1));
}
