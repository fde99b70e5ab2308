// flash_attn_ext.cu: FLASH_ATTN_EXT, fused attention with an online softmax;
// the score matrix is never stored.
//
// A block takes QR = blockDim.y * RPW query rows that share one K/V head
// (consecutive (query, head) pairs with the query heads of a GQA group
// innermost, so GQA decode puts a group's heads in one block) and walks
// the keys in tiles of FA_KT = 32. Per tile, the block loads the K and V
// rows into shared memory as floats (f16 converted, q8_0/q4_0 dequantized
// through quants.cuh's kb_value), and each warp then works on its own RPW
// rows alone, so warps meet only at the two barriers around the tile
// load:
//
//   - scores: lane j scores key j of the tile against the warp's rows (the
//     q rows, kept in shared memory padded to float4s, are read four
//     elements at a time as broadcasts; K rows have an odd stride, so the
//     32 lanes read 32 banks);
//   - online softmax: the tile's maximum per row (warp max) raises the
//     running maximum m; the accumulator and running sum l are rescaled
//     by exp(m_old - m_new) and the tile's exp(s - m_new) added to l;
//   - values: for each key the lanes take its weight from lane j (a
//     shuffle) and add weight * V[j][e] to their output columns e = lane,
//     lane + 32, ... (C per lane) of each row, in registers.
//
// Keys whose mask term is -Inf get the logit -Inf and weight 0, and a
// weight 0 adds nothing (the product is not formed), so NaN in the K or V
// row of a masked key cannot leak into a row; a tile masked for every row
// of the block is skipped without loading it (causal prefill). A NaN score
// (q, an unmasked K row, the mask) makes its row's running sum NaN; the
// rows are normalized as the CPU does: a zero sum (every key masked, no
// sink) gives zeros, a NaN sum (a NaN score, sink or value) NaN.
//
// For few blocks (decode), the keys are split over gridDim.y / n_head_kv
// blocks (flash-decoding): each writes its rows' m, l and unnormalized
// accumulator to part, and kb_flash_attn_combine merges the splits, adds
// the sink and normalizes.
#include "common.cuh"
#include "quants.cuh"
#include "reduce.cuh"
#include "attn.cuh"
#include "mm.cuh"

#define FA_KT 32          // keys per tile: one per lane
#define FA_MAX_SPLITS 64  // the most KV splits (kb_flash_attn_combine; the vector kernel's, 32 for the others)

// The kernel's parameters (the host's cstruct lays them out alike).
struct kb_fa_params {
	float scale;      // Scale, divided by softcap when there is one
	float softcap;    // 0: none
	float m0, m1;     // ALiBi bases (1 without ALiBi)
	i32 n_log2;       // heads with slopes of m0
	i32 ktype, vtype; // KB_F32, KB_F16, KB_Q8_0 or KB_Q4_0
	i32 mtype;        // the mask's KB_F32 or KB_F16 (no mask: mask is null)
	i32 group;        // query heads per K/V head
	i32 splits;       // KV splits; more than 1: partial results to part
	i32 tiles;        // tiles per split
};

// fa_block is blockIdx as a kernel's epilogue takes it: on a GPU read
// again from the special registers (volatile, so that the compiler
// neither merges it with the prologue's read nor keeps what it derived
// from it, the K/V head and the split, live through the main loop, where
// NVRTC 11.8 spilled them on sm_80); blockIdx elsewhere.
__device__ __forceinline__ uint3 fa_block() {
#if !defined(__KBSIMT__) && defined(__CUDA_ARCH__)
	uint3 b;
	asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(b.x));
	asm volatile("mov.u32 %0, %%ctaid.y;" : "=r"(b.y));
	asm volatile("mov.u32 %0, %%ctaid.z;" : "=r"(b.z));
	return b;
#else
	return make_uint3(blockIdx.x, blockIdx.y, blockIdx.z);
#endif
}

// fa_keep is x, computed where it stands: on a GPU through a volatile
// move, so that the compiler does not hoist what is derived from it out
// of a loop and keep it live there.
__device__ __forceinline__ int fa_keep(int x) {
#if !defined(__KBSIMT__) && defined(__CUDA_ARCH__)
	int y;
	asm volatile("mov.b32 %0, %1;" : "=r"(y) : "r"(x));
	return y;
#else
	return x;
#endif
}

// fa_load puts n rows of ne elements of type T, the first at base and the
// next nb1 bytes apart, in dst as floats (rows ld floats apart), with
// zeros in columns ne to cols: a warp per row, lanes over the row's
// elements (coalesced).
template <int T>
__device__ __forceinline__ float fa_elem(const char* row, int d) {
	return kb_at<T>((const u8*)row, d);
}
// f32 and f16 rows are element-aligned: one load per element.
template <>
__device__ __forceinline__ float fa_elem<KB_F32>(const char* row, int d) {
	return ((const float*)row)[d];
}
template <>
__device__ __forceinline__ float fa_elem<KB_F16>(const char* row, int d) {
	return kb_h2f(((const u16*)row)[d]);
}

template <int T>
__device__ __forceinline__ void fa_load(float* dst, int ld, const char* base, i64 nb1, int n, int ne, int cols) {
	for (int j = threadIdx.y; j < n; j += blockDim.y) {
		const char* row = base + j * nb1;
		for (int d = threadIdx.x; d < cols; d += 32) dst[j * ld + d] = d < ne ? fa_elem<T>(row, d) : 0.0f;
	}
}

// fa_load_type is fa_load for a type known at run time (the same for the
// whole block, so the switch does not diverge).
__device__ __forceinline__ void fa_load_type(int type, float* dst, int ld, const char* base, i64 nb1, int n, int ne, int cols) {
	switch (type) {
	case KB_F32: fa_load<KB_F32>(dst, ld, base, nb1, n, ne, cols); break;
	case KB_F16: fa_load<KB_F16>(dst, ld, base, nb1, n, ne, cols); break;
	case KB_Q8_0: fa_load<KB_Q8_0>(dst, ld, base, nb1, n, ne, cols); break;
	case KB_Q4_0: fa_load<KB_Q4_0>(dst, ld, base, nb1, n, ne, cols); break;
	}
}

// flash_attn: RPW rows per warp, C output columns per lane (dv <= 32*C).
// Grid: (row blocks, n_head_kv * splits, q3); block: (32, warps).
template <int RPW, int C>
__device__ __forceinline__ void flash_attn(const char* q, const kb_tensor& tq, const char* k, const kb_tensor& tk,
                                           const char* v, const kb_tensor& tv, const char* mask, const kb_tensor& tm,
                                           const char* sinks, const kb_tensor& ts, char* dst, const kb_tensor& td,
                                           float* part, const kb_fa_params& p) {
	extern __shared__ float kb_fa_smem[];
	const int lane = threadIdx.x, warp = threadIdx.y;
	const int QR = blockDim.y * RPW;
	const int D = (int)tq.ne[0], DV = (int)tv.ne[0];
	const i64 nq = tq.ne[1], nh = tq.ne[2], nkv = tk.ne[1], nhk = tk.ne[2];
	const i64 G = p.group;
	const i64 hk = blockIdx.y % nhk, split = blockIdx.y / nhk;
	const i64 i3 = blockIdx.z, i3k = i3 / (tq.ne[3] / tk.ne[3]);
	const i64 row0 = (i64)blockIdx.x * QR;
	const int ldq = (D + 3) & ~3;  // q rows padded with zeros to float4s
	const int ldk = ldq + 1;       // an odd stride: lanes reading K[lane][d] hit 32 banks
	float* Qs = kb_fa_smem;        // [QR][ldq]
	float* Ks = Qs + QR * ldq;     // [FA_KT][ldk], zeros past D
	float* Vs = Ks + FA_KT * ldk;  // [FA_KT][DV]

	// The warp's rows: row r = warp*RPW + i of the block is query
	// (row0 + r) / G of head hk*G + (row0 + r) % G. Each warp loads its own
	// q rows (no other warp reads them).
	bool valid[RPW];
	i64 qi[RPW], hi[RPW];
	const char* mrow[RPW];
	float slope[RPW];
	const float* qs[RPW];
#pragma unroll
	for (int i = 0; i < RPW; i++) {
		const int r = warp * RPW + i;
		const i64 rho = row0 + r;
		valid[i] = rho < nq * G;
		qi[i] = rho / G;
		hi[i] = hk * G + rho % G;
		slope[i] = kb_alibi_slope(p.m0, p.m1, p.n_log2, hi[i]);
		mrow[i] = mask ? mask + qi[i] * tm.nb[1] + (hi[i] % tm.ne[2]) * tm.nb[2] + (i3 % tm.ne[3]) * tm.nb[3] : 0;
		const char* qr = valid[i] ? q + kb_offset(tq, 0, qi[i], hi[i], i3) : 0;
		for (int d0 = 0; d0 < ldq; d0 += 32) {
			const int d = d0 + lane;
			float x = qr && d < D ? *(const float*)(qr + d * tq.nb[0]) : 0.0f;
			// q in K's dot-product type, as the CPU backend (and ggml)
			// converts it: f16 for f16 keys, q8_0 blocks of 32 (the
			// reference quantizer's scale and rounding) for quantized ones.
			if (p.ktype == KB_F16) {
				x = kb_h2f(kb_f2h(x));
			} else if (p.ktype == KB_Q8_0 || p.ktype == KB_Q4_0) {
				const float amax = kb_warp_max(fabsf(x));
				const float dq = amax / 127.0f, id = dq != 0.0f ? 1.0f / dq : 0.0f;
				x = roundf(x * id) * kb_h2f(kb_f2h(dq));
			}
			if (d < ldq) Qs[r * ldq + d] = x;
		}
		qs[i] = Qs + r * ldq;
	}
	__syncwarp();

	float m[RPW], l[RPW], acc[RPW][C];
#pragma unroll
	for (int i = 0; i < RPW; i++) {
		m[i] = -INFINITY;
		l[i] = 0.0f;
#pragma unroll
		for (int c = 0; c < C; c++) acc[i][c] = 0.0f;
	}
	const char* kbase = k + hk * tk.nb[2] + i3k * tk.nb[3];
	const char* vbase = v + hk * tv.nb[2] + i3k * tv.nb[3];
	const int ntiles = (int)((nkv + FA_KT - 1) / FA_KT);
	const int t_end = min(ntiles, (int)(split + 1) * p.tiles);
	for (int t = (int)split * p.tiles; t < t_end; t++) {
		const i64 j0 = (i64)t * FA_KT;
		const int n = (int)min((i64)FA_KT, nkv - j0);  // keys in the tile
		// Lane j's mask terms for key j0 + j (-Inf: the key is left out).
		float mv[RPW];
		int any = 0;
#pragma unroll
		for (int i = 0; i < RPW; i++) {
			float x = -INFINITY;
			if (valid[i] && lane < n) {
				x = 0.0f;
				if (mask) {
					const char* mp = mrow[i] + (j0 + lane) * tm.nb[0];
					float mk = p.mtype == KB_F16 ? kb_h2f(*(const u16*)mp) : *(const float*)mp;
					x = mk == -INFINITY ? -INFINITY : slope[i] * mk;
				}
			}
			mv[i] = x;
			any |= x != -INFINITY;
		}
		// This barrier also ends the reads of the previous tile.
		if (!__syncthreads_or(any)) continue;
		fa_load_type(p.ktype, Ks, ldk, kbase + j0 * tk.nb[1], tk.nb[1], n, D, ldq);
		fa_load_type(p.vtype, Vs, DV, vbase + j0 * tv.nb[1], tv.nb[1], n, DV, DV);
		__syncthreads();

		// Scores of key j0 + lane: four elements of each q row per
		// (broadcast) float4 load.
		float s[RPW];
#pragma unroll
		for (int i = 0; i < RPW; i++) s[i] = 0.0f;
		if (lane < n) {
			const float* kr = Ks + lane * ldk;
			for (int d = 0; d < ldq; d += 4) {
				const float k0 = kr[d], k1 = kr[d + 1], k2 = kr[d + 2], k3 = kr[d + 3];
#pragma unroll
				for (int i = 0; i < RPW; i++) {
					const float4 qv = *(const float4*)(qs[i] + d);
					s[i] = fmaf(qv.x, k0, s[i]);
					s[i] = fmaf(qv.y, k1, s[i]);
					s[i] = fmaf(qv.z, k2, s[i]);
					s[i] = fmaf(qv.w, k3, s[i]);
				}
			}
		}
		// Online softmax: s becomes the key's weight exp(s - m).
#pragma unroll
		for (int i = 0; i < RPW; i++) {
			float x = s[i] * p.scale;
			if (p.softcap > 0.0f) x = p.softcap * tanhf(x);
			x = mv[i] == -INFINITY ? -INFINITY : x + mv[i];
			const float mnew = fmaxf(m[i], kb_warp_max(x));
			float alpha = 1.0f, e = 0.0f;
			if (mnew != -INFINITY) {
				alpha = expf(m[i] - mnew);
				e = expf(x - mnew);
			}
			l[i] = l[i] * alpha + kb_warp_sum(e);
			// A NaN score makes the row NaN: fmaxf passes over it, so
			// with every other key masked it would weigh nothing.
			if (__any_sync(0xffffffffu, x != x)) l[i] = NAN;
			m[i] = mnew;
#pragma unroll
			for (int c = 0; c < C; c++) acc[i][c] *= alpha;
			s[i] = e;
		}
		// Weighted values.
		for (int j = 0; j < n; j++) {
			float w[RPW];
			bool some = false;
#pragma unroll
			for (int i = 0; i < RPW; i++) {
				w[i] = __shfl_sync(0xffffffffu, s[i], j);
				some |= w[i] != 0.0f;
			}
			if (!some) continue;  // the same for every lane
			const float* vr = Vs + j * DV;
#pragma unroll
			for (int c = 0; c < C; c++) {
				const int e = lane + 32 * c;
				if (e < DV) {
					const float x = vr[e];
#pragma unroll
					for (int i = 0; i < RPW; i++)
						if (w[i] != 0.0f) acc[i][c] += w[i] * x;
				}
			}
		}
	}

	const i64 nrows = td.ne[1] * td.ne[2] * td.ne[3];  // output rows (head, query, sequence)
#pragma unroll
	for (int i = 0; i < RPW; i++) {
		if (!valid[i]) continue;
		const i64 orow = hi[i] + nh * (qi[i] + nq * i3);
		if (p.splits > 1) {
			float* pa = part + (split * nrows + orow) * DV;
#pragma unroll
			for (int c = 0; c < C; c++) {
				const int e = lane + 32 * c;
				if (e < DV) pa[e] = acc[i][c];
			}
			if (lane == 0) {
				float* ml = part + (i64)p.splits * nrows * DV + (split * nrows + orow) * 2;
				ml[0] = m[i];
				ml[1] = l[i];
			}
			continue;
		}
		float a = 1.0f, sum = l[i];
		const float sk = sinks ? *(const float*)(sinks + hi[i] * ts.nb[0]) : -INFINITY;
		if (sk != -INFINITY) {  // a -Inf sink is none
			const float mn = fmaxf(m[i], sk);
			a = expf(m[i] - mn);
			sum = sum * a + expf(sk - mn);
		}
		// A zero sum (every key masked, no sink) gives zeros; a NaN one
		// (a NaN score, sink or value) NaN.
		const float inv = sum == 0.0f ? 0.0f : a / sum;
		char* out = dst + kb_offset(td, 0, hi[i], qi[i], i3);
#pragma unroll
		for (int c = 0; c < C; c++) {
			const int e = lane + 32 * c;
			if (e < DV) *(float*)(out + e * td.nb[0]) = acc[i][c] * inv;
		}
	}
}

#define KB_FLASH_ATTN(RPW, C, DMAX)                                                                                  \
	extern "C" __global__ void kb_flash_attn_ext_r##RPW##_d##DMAX(                                                   \
	    const char* q, kb_tensor tq, const char* k, kb_tensor tk, const char* v, kb_tensor tv, const char* mask,   \
	    kb_tensor tm, const char* sinks, kb_tensor ts, char* dst, kb_tensor td, float* part, kb_fa_params p) {   \
		flash_attn<RPW, C>(q, tq, k, tk, v, tv, mask, tm, sinks, ts, dst, td, part, p);                          \
	}
KB_FLASH_ATTN(1, 2, 64)
KB_FLASH_ATTN(1, 4, 128)
KB_FLASH_ATTN(1, 8, 256)
KB_FLASH_ATTN(2, 2, 64)
KB_FLASH_ATTN(2, 4, 128)
KB_FLASH_ATTN(2, 8, 256)
KB_FLASH_ATTN(4, 2, 64)
KB_FLASH_ATTN(4, 4, 128)
KB_FLASH_ATTN(4, 8, 256)

// The tensor-core prefill kernels (kb_flash_attn_mma_d<D>).
#include "fa_mma.cuh"

// The vector decode kernels (kb_flash_attn_vec_*).
#include "fa_vec.cuh"

// kb_flash_attn_combine merges the splits' partial results of output row
// blockIdx.x (head, query, sequence): with M the largest of the splits'
// maxima and the sink, each split's accumulator and sum are weighted by
// exp(m - M), the sink's exp(sink - M) joins the sum, and the row is the
// weighted accumulators over the weighted sums.
extern "C" __global__ void kb_flash_attn_combine(const float* part, i32 splits, const char* sinks, kb_tensor ts,
                                                 char* dst, kb_tensor td) {
	__shared__ float w[FA_MAX_SPLITS];
	const i64 nh = td.ne[1], nq = td.ne[2], nrows = nh * nq * td.ne[3];
	const i64 orow = blockIdx.x, h = orow % nh, iq = (orow / nh) % nq, i3 = orow / (nh * nq);
	const int DV = (int)td.ne[0];
	const float* ml = part + (i64)splits * nrows * DV;
	float mx = sinks ? *(const float*)(sinks + h * ts.nb[0]) : -INFINITY;
	for (int s = 0; s < splits; s++) mx = fmaxf(mx, ml[(s * nrows + orow) * 2]);
	for (int s = threadIdx.x; s < splits; s += blockDim.x) {  // any block size
		const float ms = ml[(s * nrows + orow) * 2];
		w[s] = ms == -INFINITY ? 0.0f : expf(ms - mx);
	}
	__syncthreads();
	const float sk = sinks ? *(const float*)(sinks + h * ts.nb[0]) : -INFINITY;
	float sum = sk == -INFINITY ? 0.0f : expf(sk - mx);  // a NaN sink: NaN
	for (int s = 0; s < splits; s++) sum += w[s] * ml[(s * nrows + orow) * 2 + 1];
	const float inv = sum == 0.0f ? 0.0f : 1.0f / sum;  // as flash_attn: NaN stays NaN
	char* out = dst + kb_offset(td, 0, h, iq, i3);
	for (int e = threadIdx.x; e < DV; e += blockDim.x) {
		float o = 0.0f;
		for (int s = 0; s < splits; s++)
			if (w[s] != 0.0f) o += w[s] * part[(s * nrows + orow) * DV + e];
		*(float*)(out + e * td.nb[0]) = o * inv;
	}
}
