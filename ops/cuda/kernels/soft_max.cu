// soft_max.cu: SOFT_MAX over rows of f32 logits, with scale, an optional
// f32 or f16 mask (broadcast over dims 2-3), ALiBi and per-head sinks.
//
// A row goes to a warp when it is short (blockDim = (32, rows per
// block)) and to a whole block when it is long (blockDim = (threads, 1)):
// the row's threads stride over it, find its maximum and the sum of its
// exponentials by warp (or block) reductions, and write exp(z - M) / sum.
// When p.cache is set, each thread keeps the logits, then the
// exponentials, of its own elements in dynamic shared memory (blockDim.y
// rows of ne0 floats), so the input and mask are read once; otherwise
// (rows too long for shared memory) they are read again for each pass.
#include "common.cuh"
#include "quants.cuh"
#include "reduce.cuh"
#include "attn.cuh"

// The kernel's parameters (the host's cstruct lays them out alike).
struct kb_sm_params {
	float scale;
	float m0, m1;  // ALiBi bases (1 without ALiBi)
	i32 n_log2;    // heads with slopes of m0
	i32 cache;     // keep the row in dynamic shared memory
};

// MT is the mask's type: KB_F32, KB_F16, or -1 for no mask.
template <int MT>
__device__ __forceinline__ float sm_logit(const char* xr, i64 nbx, const char* mr, i64 i, float scale, float slope) {
	float z = *(const float*)(xr + i * nbx) * scale;
	if (MT == KB_F32) z += slope * *(const float*)(mr + i * 4);
	if (MT == KB_F16) z += slope * kb_h2f(*(const u16*)(mr + i * 2));
	return z;
}

template <int MT>
__device__ __forceinline__ void soft_max(const char* x, const kb_tensor& tx, const char* mask, const kb_tensor& tm,
                                         const char* sinks, const kb_tensor& ts, char* y, const kb_tensor& ty,
                                         const kb_sm_params& p) {
	extern __shared__ float kb_sm_cache[];
	__shared__ float scratch[32];
	const bool warp_row = blockDim.x == 32;  // else blockDim.y == 1
	const i64 ne0 = tx.ne[0], rows = tx.ne[1] * tx.ne[2] * tx.ne[3];
	const i64 r = (i64)blockIdx.x * blockDim.y + threadIdx.y;
	if (r >= rows) return;  // whole warps of the last block (warp rows only)
	const i64 i1 = r % tx.ne[1], i2 = (r / tx.ne[1]) % tx.ne[2], i3 = r / (tx.ne[1] * tx.ne[2]);
	const char* xr = x + kb_offset(tx, 0, i1, i2, i3);
	const char* mr = 0;
	if (MT >= 0) mr = mask + i1 * tm.nb[1] + (i2 % tm.ne[2]) * tm.nb[2] + (i3 % tm.ne[3]) * tm.nb[3];
	char* yr = y + kb_offset(ty, 0, i1, i2, i3);
	const float slope = MT >= 0 ? kb_alibi_slope(p.m0, p.m1, p.n_log2, i2) : 1.0f;
	float* z = kb_sm_cache + threadIdx.y * ne0;  // this row's cache (p.cache)

	float mx = -INFINITY;
	for (i64 i = threadIdx.x; i < ne0; i += blockDim.x) {
		float v = sm_logit<MT>(xr, tx.nb[0], mr, i, p.scale, slope);
		if (p.cache) z[i] = v;
		mx = fmaxf(mx, v);
	}
	mx = warp_row ? kb_warp_max(mx) : kb_block_max(mx, scratch);
	float sink = -INFINITY;
	if (sinks) {
		sink = *(const float*)(sinks + i2 * ts.nb[0]);
		mx = fmaxf(mx, sink);
	}
	if (mx == -INFINITY) {  // every logit masked, no sink: zeros
		for (i64 i = threadIdx.x; i < ne0; i += blockDim.x) *(float*)(yr + i * ty.nb[0]) = 0.0f;
		return;
	}
	float sum = 0.0f;
	for (i64 i = threadIdx.x; i < ne0; i += blockDim.x) {
		float e = expf((p.cache ? z[i] : sm_logit<MT>(xr, tx.nb[0], mr, i, p.scale, slope)) - mx);
		if (p.cache) z[i] = e;
		sum += e;
	}
	sum = warp_row ? kb_warp_sum(sum) : kb_block_sum(sum, scratch);
	if (sinks) sum += expf(sink - mx);
	const float inv = 1.0f / sum;
	for (i64 i = threadIdx.x; i < ne0; i += blockDim.x) {
		float e = p.cache ? z[i] : expf(sm_logit<MT>(xr, tx.nb[0], mr, i, p.scale, slope) - mx);
		*(float*)(yr + i * ty.nb[0]) = e * inv;
	}
}

#define KB_SOFT_MAX(name, MT)                                                                                         \
	extern "C" __global__ void kb_soft_max_f32##name(const char* x, kb_tensor tx, const char* mask, kb_tensor tm,     \
	                                                 const char* sinks, kb_tensor ts, char* y, kb_tensor ty,          \
	                                                 kb_sm_params p) {                                                \
		soft_max<MT>(x, tx, mask, tm, sinks, ts, y, ty, p);                                                           \
	}
KB_SOFT_MAX(, -1)
KB_SOFT_MAX(_mask_f32, KB_F32)
KB_SOFT_MAX(_mask_f16, KB_F16)
