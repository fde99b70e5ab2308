// ssm_scan.cu: Mamba's selective scan, SSM_SCAN, in f32 over any strides.
#include "common.cuh"

// softplus: ln(1 + e^x), or x itself above 20 as ggml.
__device__ __forceinline__ float kb_softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }

// kb_ssm_scan: SSM_SCAN (see ops.SSMScan), sequential over tokens and
// parallel over state rows (a head's head_dim rows of d_state states) and
// sequences. Each row belongs to L lanes of a warp (L a power of two,
// L*NS >= d_state): lane l holds states l, l+L, ... in registers, and y is
// the sum of the lanes' partial sums by xor shuffles. A block (grid x)
// takes blockDim.x/L rows of one B/C group of one sequence (grid y): the
// token's B and C rows go through shared memory, loaded once for the
// block (double-buffered, so one barrier a token). The result holds y
// (x's shape, packed) and then the final states, sequence q's at q.
template <int NS>
__device__ __forceinline__ void kb_ssm_scan(const char* s, const kb_tensor& ts, const char* x, const kb_tensor& tx, const char* dt,
                                            const kb_tensor& tdt, const char* A, const kb_tensor& tA, const char* B, const kb_tensor& tB,
                                            const char* C, const kb_tensor& tC, const char* ids, const kb_tensor& tids, float* d, int L,
                                            int* status) {
	extern __shared__ float bc[]; // two buffers of B then C, 2*d_state each
	const i64 ds = ts.ne[0], hd = ts.ne[1], nh = ts.ne[2], ntok = tx.ne[2];
	const i64 hpg = nh / tB.ne[1], rows_per_group = hpg * hd;
	const int rpb = blockDim.x / L;
	const i64 bpg = (rows_per_group + rpb - 1) / rpb;
	const i64 g = blockIdx.x / bpg, q = blockIdx.y;
	const int lane = threadIdx.x % L;
	const i64 row = (blockIdx.x % bpg) * rpb + threadIdx.x / L;
	const bool valid = row < rows_per_group;
	const i64 h = g * hpg + (valid ? row / hd : 0), i = valid ? row % hd : 0;

	i64 slot = *(const i32*)(ids + q * tids.nb[0]);
	if (slot < 0 || slot >= ts.ne[3]) {
		if (threadIdx.x == 0) {
			atomicMax(&status[0], 1);
			atomicExch(&status[1], (int)slot);
		}
		return;
	}
	const bool mamba2 = tA.ne[0] == 1;
	// Mamba-1: A per state (a[k]); Mamba-2: one A per head (a0).
	float st[NS], a[NS];
	float a0 = valid ? *(const float*)(A + kb_offset(tA, 0, h, 0, 0)) : 0.0f;
#pragma unroll
	for (int k = 0; k < NS; k++) {
		i64 n = lane + (i64)k * L;
		st[k] = 0.0f;
		a[k] = 0.0f;
		if (valid && n < ds) {
			st[k] = *(const float*)(s + kb_offset(ts, n, i, h, slot));
			a[k] = *(const float*)(A + kb_offset(tA, mamba2 ? 0 : n, h, 0, 0));
		}
	}
	for (i64 tok = 0; tok < ntok; tok++) {
		float* buf = bc + (tok & 1) * 2 * ds;
		for (i64 n = threadIdx.x; n < ds; n += blockDim.x) {
			buf[n] = *(const float*)(B + kb_offset(tB, n, g, tok, q));
			buf[ds + n] = *(const float*)(C + kb_offset(tC, n, g, tok, q));
		}
		__syncthreads();
		float part = 0.0f;
		if (valid) {
			float dsp = kb_softplus(*(const float*)(dt + kb_offset(tdt, h, tok, q, 0)));
			float xdt = *(const float*)(x + kb_offset(tx, i, h, tok, q)) * dsp;
			float dA = expf(dsp * a0);
#pragma unroll
			for (int k = 0; k < NS; k++) {
				i64 n = lane + (i64)k * L;
				if (n < ds) {
					if (!mamba2) dA = expf(dsp * a[k]);
					st[k] = st[k] * dA + buf[n] * xdt;
					part += st[k] * buf[ds + n];
				}
			}
		}
		for (int o = L >> 1; o > 0; o >>= 1) part += __shfl_xor_sync(0xffffffffu, part, o);
		if (valid && lane == 0) d[((q * ntok + tok) * nh + h) * hd + i] = part;
	}
	if (!valid) return;
	float* out = d + kb_count(tx) + ((q * nh + h) * hd + i) * ds;
#pragma unroll
	for (int k = 0; k < NS; k++) {
		i64 n = lane + (i64)k * L;
		if (n < ds) out[n] = st[k];
	}
}

#define KB_SSM_SCAN(NS)                                                                                                               \
	extern "C" __global__ void kb_ssm_scan_f32_##NS(const char* s, kb_tensor ts, const char* x, kb_tensor tx, const char* dt,          \
	                                                kb_tensor tdt, const char* A, kb_tensor tA, const char* B, kb_tensor tB,           \
	                                                const char* C, kb_tensor tC, const char* ids, kb_tensor tids, float* d, int L,     \
	                                                int* status) {                                                                     \
		kb_ssm_scan<NS>(s, ts, x, tx, dt, tdt, A, tA, B, tB, C, tC, ids, tids, d, L, status);                                     \
	}
KB_SSM_SCAN(4)
KB_SSM_SCAN(16)
