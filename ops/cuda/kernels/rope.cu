// rope.cu: ROPE, normal and NeoX modes, partial rotation, frequency
// factors and YaRN (ops.RopeParams).
//
// A block takes one token and a run of its heads. Its threads first
// compute the token's cos and sin for each pair of rotated dimensions
// into shared memory, once for all the heads; then each thread rotates
// pairs, consecutive threads taking consecutive pairs of a head (and
// then of the next head), so loads and stores are coalesced.
//
// The angles are computed in float64, as the CPU backend computes them:
// at positions near 1e5 a float32 angle is off by up to ~0.01 rad. Only
// the cos and sin are rounded to float32, once. YaRN's correction range,
// a discrete choice made in float32 as ggml makes it, comes from the host.
#include "common.cuh"

// kb_rope_params are the node's parameters as the kernel uses them.
struct kb_rope_params {
	double base;   // freq_base
	double scale;  // freq_scale
	double ext;    // ext_factor
	double low;    // YaRN's correction range [low, high], in pairs
	double high;
	double mscale; // attn_factor, with YaRN's magnitude correction
	int n_dims;
	int neox;
	int has_ff;             // freq factors are given
	int heads_per_block;
};

// kb_rope_f32: grid (tokens, head runs), dynamic shared memory 8*n_dims
// bytes (cos and sin of each pair). d may be a (in place): each element
// is read by the thread that writes it, before it writes.
extern "C" __global__ void kb_rope_f32(const char* a, kb_tensor ta, const char* pos, kb_tensor tp, const char* ff, kb_tensor tf,
                                       char* d, kb_tensor td, kb_rope_params p) {
	extern __shared__ float cs[];
	int half = p.n_dims / 2;
	i64 tok = blockIdx.x;
	i64 h0 = (i64)blockIdx.y * p.heads_per_block;
	i64 nh = min((i64)p.heads_per_block, ta.ne[1] - h0);
	double ps = (double)*(const i32*)(pos + tok * tp.nb[0]);
	for (int i = threadIdx.x; i < half; i += blockDim.x) {
		// theta = pos * base^(-2i/n_dims) / ff[i] * (scale*(1-mix) + mix)
		double w = pow(p.base, -2.0 * (double)i / (double)p.n_dims);
		if (p.has_ff) w /= (double)*(const float*)(ff + i * tf.nb[0]);
		double k = p.scale;
		if (p.ext != 0.0) {
			double y = ((double)i - p.low) / fmax(0.001, p.high - p.low);
			double mix = (1.0 - fmin(1.0, fmax(0.0, y))) * p.ext;
			k = p.scale * (1.0 - mix) + mix;
		}
		double s, c;
		sincos(ps * (w * k), &s, &c);
		cs[i] = (float)(c * p.mscale);
		cs[half + i] = (float)(s * p.mscale);
	}
	__syncthreads();
	i64 n = nh * half;
	for (i64 e = threadIdx.x; e < n; e += blockDim.x) {
		i64 h = h0 + e / half;
		int i = (int)(e % half);
		i64 j0 = p.neox ? i : 2 * i, j1 = p.neox ? i + half : 2 * i + 1;
		const char* x = a + kb_offset(ta, 0, h, tok, 0);
		char* y = d + kb_offset(td, 0, h, tok, 0);
		float x0 = *(const float*)(x + j0 * ta.nb[0]), x1 = *(const float*)(x + j1 * ta.nb[0]);
		float c = cs[i], s = cs[half + i];
		*(float*)(y + j0 * td.nb[0]) = x0 * c - x1 * s;
		*(float*)(y + j1 * td.nb[0]) = x0 * s + x1 * c;
	}
	// Dimensions n_dims and above are copied.
	i64 tail = ta.ne[0] - p.n_dims;
	for (i64 e = threadIdx.x; e < nh * tail; e += blockDim.x) {
		i64 h = h0 + e / tail, j = p.n_dims + e % tail;
		*(float*)(d + kb_offset(td, j, h, tok, 0)) = *(const float*)(a + kb_offset(ta, j, h, tok, 0));
	}
}
