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
#define FA_MAX_SPLITS 32  // the most KV splits (kb_flash_attn_combine)

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

// ---------------------------------------------------------------------
// The tensor-core prefill kernel, kb_flash_attn_mma_d<D>: head size D =
// dv (64, 80, 96, 112, 128 or 256), K and V each f16 (rows 16-byte
// aligned), q8_0 or q4_0. A block of FM_WARPS warps takes FM_ROWS = 64
// (query, head) rows of one K/V head, ordered as the tiled kernel orders
// them (a GQA group's heads together, so each K/V tile is loaded once for
// all of them); warp w takes rows 16w..16w+15, the A operand of
// mma.sync m16n8k16 (f16 in, f32 accumulate):
//
//   - q rows are converted as the tiled kernel converts them (f16 for f16
//     K, q8_0 values for quantized K), stored as f16, and taken by
//     ldmatrix into registers once (D <= 128) or per tile (D = 256);
//   - K and V tiles of KT keys (64; 32 for D = 256) are stored as f16
//     rows of D + 8 halves: an odd number of 16-byte chunks, so the 8 rows
//     an ldmatrix matrix reads at one chunk column fall in 8 distinct
//     bank groups. f16 rows come by 16-byte cp.async copies; q8_0 and
//     q4_0 rows are dequantized by the threads, 8 elements and one
//     16-byte store each. Two stages: tile t+1 loads while tile t is
//     computed;
//   - S = Q K^T: K fragments by ldmatrix (K rows are the B operand's
//     columns); the online softmax in registers: each lane holds rows g
//     and g+8 (g = lane/4) of its warp at keys 8i + 2(lane%4) + {0, 1},
//     the running maximum per row reduced over the row's 4 lanes, the
//     running sum kept per lane and added at the end;
//   - O += P V: P rounded to f16 in the A fragment layout straight from
//     S's accumulators, V fragments by ldmatrix .trans.
//
// Masks, ALiBi, softcap, sinks, splits, NaN and fully masked rows follow
// the tiled kernel. A masked key's weight is 0, and in the product 0 * NaN
// would carry a NaN V row into the rows that mask the key: a tile whose V
// holds a value that is not finite (checked where it lands in shared
// memory) is weighed one key at a time instead, a zero weight never
// multiplied in. Tiles at the end of a block's keys masked for every row
// of the block (causal prefill) are neither loaded nor computed; a warp
// skips the product of any tile masked for all its rows.
#define FM_WARPS 4
#define FM_ROWS (16 * FM_WARPS)
#define FM_THREADS (32 * FM_WARPS)

// fm_shape is kb_flash_attn_mma_d<D>'s tiling; the host computes the
// same shared memory size (faMMAGeometryFor).
template <int D>
struct fm_shape {
	static constexpr int KT = D <= 128 ? 64 : 32;          // keys per tile
	static constexpr bool QREG = D <= 128;                 // q fragments held in registers
	static constexpr int LD = D + 8;                       // halves per tile row
	static constexpr int TILE = KT * LD;                   // halves per K or V tile
	static constexpr int QS = QREG ? 0 : FM_ROWS * LD;     // halves of q kept in shared memory
	static_assert(!QREG || FM_ROWS <= KT, "q is staged in a K tile");
};

// fm_bad reports whether either f16 of w is Inf or NaN.
__device__ __forceinline__ bool fm_bad(u32 w) {
	return (w & 0x7c00u) == 0x7c00u || (w & 0x7c000000u) == 0x7c000000u;
}

// fm_h2 packs a and b as f16 (a in the low half).
__device__ __forceinline__ u32 fm_h2(float a, float b) { return (u32)kb_f2h(a) | (u32)kb_f2h(b) << 16; }

// fm_load starts filling the tile at dst with the n rows (K or V, of
// type type) at base, nb1 bytes apart, as f16, and zeros past n: thread
// tid takes 16-byte chunks tid, tid + FM_THREADS, ... (chunk c: row
// c / (D/8), elements 8(c % (D/8))..+7). f16 chunks are cp.async copies
// (the caller commits them); q8_0 and q4_0 chunks are dequantized and
// stored, and fm_load returns whether one of them is not finite.
template <int D, int KT>
__device__ __forceinline__ bool fm_load(int type, u16* dst, const char* base, i64 nb1, int n) {
	constexpr int CH = D / 8, LD = D + 8;
	const int tid = threadIdx.x + 32 * threadIdx.y;
	if (type == KB_F16) {
		for (int c = tid; c < KT * CH; c += FM_THREADS) {
			const int r = c / CH, ch = c % CH;
			const bool ok = r < n;
			kb_cp_async<16>(dst + r * LD + 8 * ch, ok ? base + r * nb1 + 16 * ch : base, ok ? 16 : 0);
		}
		return false;
	}
	bool bad = false;
	for (int c = tid; c < KT * CH; c += FM_THREADS) {
		const int r = c / CH, ch = c % CH;
		u32 w[4] = {0, 0, 0, 0};
		if (r < n) {
			const char* row = base + r * nb1;
			float f[8];
			if (type == KB_Q8_0) {  // 34-byte blocks: d, 32 codes
				const char* b = row + 34 * (ch / 4);
				const float d = kb_h2f(*(const u16*)b);
				const u16* cs = (const u16*)(b + 2 + 8 * (ch % 4));
#pragma unroll
				for (int i = 0; i < 4; i++) {
					const u32 x = cs[i];
					f[2 * i] = (float)(i8)(x & 0xffu) * d;
					f[2 * i + 1] = (float)(i8)(x >> 8) * d;
				}
			} else {  // q4_0, 18-byte blocks: d, then element e < 16 in the low nibble of byte e, e + 16 in its high one
				const char* b = row + 18 * (ch / 4);
				const float d = kb_h2f(*(const u16*)b);
				const u16* cs = (const u16*)(b + 2 + 8 * (ch & 1));
				const int sh = 4 * ((ch >> 1) & 1);
#pragma unroll
				for (int i = 0; i < 4; i++) {
					const u32 x = cs[i];
					f[2 * i] = (float)((int)((x >> sh) & 15u) - 8) * d;
					f[2 * i + 1] = (float)((int)((x >> (8 + sh)) & 15u) - 8) * d;
				}
			}
#pragma unroll
			for (int i = 0; i < 4; i++) {
				w[i] = fm_h2(f[2 * i], f[2 * i + 1]);
				bad |= fm_bad(w[i]);
			}
		}
		kb_st16(dst + r * LD + 8 * ch, (int)w[0], (int)w[1], (int)w[2], (int)w[3]);
	}
	return bad;
}

// fm_check reports whether a chunk of the tile at src that this thread
// copied (fm_load's chunks, rows below n) holds an f16 that is not finite;
// the copies must have landed (kb_cp_async_wait).
template <int D, int KT>
__device__ __forceinline__ bool fm_check(const u16* src, int n) {
	constexpr int CH = D / 8, LD = D + 8;
	const int tid = threadIdx.x + 32 * threadIdx.y;
	bool bad = false;
	for (int c = tid; c < n * CH; c += FM_THREADS) {
		const uint4 u = kb_ld16u(src + (c / CH) * LD + 8 * (c % CH));
		bad |= fm_bad(u.x) || fm_bad(u.y) || fm_bad(u.z) || fm_bad(u.w);
	}
	return bad;
}

// fm_mask is the mask term of key j for a row whose mask row is mr (null
// with no mask) and ALiBi slope sl: -Inf leaves the key out.
__device__ __forceinline__ float fm_mask(const char* mr, const kb_tensor& tm, int mtype, float sl, i64 j) {
	if (!mr) return 0.0f;
	const char* mp = mr + j * tm.nb[0];
	const float mk = mtype == KB_F16 ? kb_h2f(*(const u16*)mp) : *(const float*)mp;
	return mk == -INFINITY ? -INFINITY : sl * mk;
}

// fm_mask2 sets x0 and x1 to the mask terms of keys j and j+1 (j even)
// for a valid row (fm_mask's mr and sl), -Inf for keys from nkv on: an f16
// mask's two terms in one 4-byte load where they are aligned (a quarter
// warp then reads 32 contiguous bytes of each of 8 rows).
__device__ __forceinline__ void fm_mask2(const char* mr, const kb_tensor& tm, int mtype, float sl, i64 j, i64 nkv,
                                         float& x0, float& x1) {
	if (mr && mtype == KB_F16 && tm.nb[0] == 2 && j + 1 < nkv && ((u64)(mr + 2 * j) & 3) == 0) {
		const u32 w = *(const u32*)(mr + 2 * j);
		const float a = kb_h2f((u16)(w & 0xffffu)), b = kb_h2f((u16)(w >> 16));
		x0 = a == -INFINITY ? -INFINITY : sl * a;
		x1 = b == -INFINITY ? -INFINITY : sl * b;
		return;
	}
	x0 = j < nkv ? fm_mask(mr, tm, mtype, sl, j) : -INFINITY;
	x1 = j + 1 < nkv ? fm_mask(mr, tm, mtype, sl, j + 1) : -INFINITY;
}

// flash_attn_mma: grid (row blocks, n_head_kv * splits, q3); block (32,
// FM_WARPS); fm_shape<D>'s shared memory.
template <int D>
__device__ __forceinline__ void flash_attn_mma(const char* q, const kb_tensor& tq, const char* k, const kb_tensor& tk,
                                               const char* v, const kb_tensor& tv, const char* mask,
                                               const kb_tensor& tm, const char* sinks, const kb_tensor& ts, char* dst,
                                               const kb_tensor& td, float* part, const kb_fa_params& p) {
	using SH = fm_shape<D>;
	constexpr int KT = SH::KT, LD = SH::LD, NK = KT / 8, ND = D / 8;
	extern __shared__ float kb_fa_smem[];
	u16* const st0 = (u16*)kb_fa_smem + SH::QS;  // stage s: K tile at st0 + 2s*TILE, V after it
	u16* const Qs = SH::QREG ? st0 + 2 * SH::TILE : (u16*)kb_fa_smem;  // q rows: stage 1's K tile, or their own
	const int lane = threadIdx.x, warp = threadIdx.y, g = lane >> 2, t = lane & 3;
	const int tid = lane + 32 * warp;
	const i64 nq = tq.ne[1], nh = tq.ne[2], nkv = tk.ne[1], nhk = tk.ne[2];
	const i64 G = p.group, nrow = nq * G;
	const i64 hk = blockIdx.y % nhk, split = blockIdx.y / nhk;
	const i64 i3 = blockIdx.z, i3k = i3 / (tq.ne[3] / tk.ne[3]);
	const i64 row0 = (i64)blockIdx.x * FM_ROWS;
	const char* kbase = k + hk * tk.nb[2] + i3k * tk.nb[3];
	const char* vbase = v + hk * tv.nb[2] + i3k * tv.nb[3];

	// The lane's rows h = 0, 1: row 16*warp + g + 8h of the block is
	// query rho / G of head hk*G + rho % G (rho = row0 + row).
	bool valid[2];
	i64 qi[2], hi[2];
	const char* mrow[2];
	float slope[2];
#pragma unroll
	for (int h = 0; h < 2; h++) {
		const i64 rho = row0 + 16 * warp + g + 8 * h;
		valid[h] = rho < nrow;
		qi[h] = rho / G;
		hi[h] = hk * G + rho % G;
		slope[h] = kb_alibi_slope(p.m0, p.m1, p.n_log2, hi[h]);
		mrow[h] = mask && valid[h] ? mask + qi[h] * tm.nb[1] + (hi[h] % tm.ne[2]) * tm.nb[2] + (i3 % tm.ne[3]) * tm.nb[3] : 0;
	}

	const int ntiles = (int)((nkv + KT - 1) / KT);
	const int t_beg = (int)split * p.tiles;
	int t_end = min(ntiles, t_beg + p.tiles);
	if (mask) {
		// Drop the tiles at the end that every row of the block masks:
		// thread tid checks row tid/2's even or odd keys.
		const i64 rho = row0 + (tid >> 1);
		const i64 h = hk * G + rho % G;
		const char* mr = rho < nrow ? mask + (rho / G) * tm.nb[1] + (h % tm.ne[2]) * tm.nb[2] + (i3 % tm.ne[3]) * tm.nb[3] : 0;
		while (t_end > t_beg) {
			const i64 j0 = (i64)(t_end - 1) * KT;
			bool live = false;
			for (int j = tid & 1; mr && j < KT && j0 + j < nkv; j += 2) live |= fm_mask(mr, tm, p.mtype, 1.0f, j0 + j) != -INFINITY;
			if (__syncthreads_or(live)) break;
			t_end--;
		}
	}

	bool vbad = false;  // a value this thread stored in the next tile's V is not finite
	if (t_beg < t_end) {
		const i64 j0 = (i64)t_beg * KT;
		const int n = (int)min((i64)KT, nkv - j0);
		fm_load<D, KT>(p.ktype, st0, kbase + j0 * tk.nb[1], tk.nb[1], n);
		vbad = fm_load<D, KT>(p.vtype, st0 + SH::TILE, vbase + j0 * tv.nb[1], tv.nb[1], n);
	}
	kb_cp_async_commit();

	// The warp's q rows as f16 (each warp stores and reads its own).
	for (int i = 0; i < 16; i++) {
		const int r = 16 * warp + i;
		const i64 rho = row0 + r;
		const char* qr = rho < nrow ? q + kb_offset(tq, 0, rho / G, hk * G + rho % G, i3) : 0;
		for (int d0 = 0; d0 < D; d0 += 32) {
			const int d = d0 + lane;
			float x = qr && d < D ? *(const float*)(qr + d * tq.nb[0]) : 0.0f;
			if (p.ktype == KB_Q8_0 || p.ktype == KB_Q4_0) {  // q8_0 blocks of 32, as the tiled kernel
				const float amax = kb_warp_max(fabsf(x));
				const float dq = amax / 127.0f, id = dq != 0.0f ? 1.0f / dq : 0.0f;
				x = roundf(x * id) * kb_h2f(kb_f2h(dq));
			}
			if (d < D) Qs[r * LD + d] = kb_f2h(x);
		}
	}
	__syncwarp();
	const u16* qrow = Qs + (16 * warp + (lane & 15)) * LD + 8 * (lane >> 4);
	u32 qf[SH::QREG ? D / 16 : 1][4];
	if constexpr (SH::QREG) {
#pragma unroll
		for (int kk = 0; kk < D / 16; kk++) kb_ldmatrix_x4(qf[kk], qrow + 16 * kk);
	}

	float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f}, acc[ND][4];
	bool nan[2] = {false, false};
#pragma unroll
	for (int i = 0; i < ND; i++)
#pragma unroll
		for (int e = 0; e < 4; e++) acc[i][e] = 0.0f;

	for (int tt = t_beg; tt < t_end; tt++) {
		const int st = (tt - t_beg) & 1;
		const u16* Ks = st0 + 2 * st * SH::TILE;
		const u16* Vs = Ks + SH::TILE;
		const i64 j0 = (i64)tt * KT;
		const int n = (int)min((i64)KT, nkv - j0);
		// The mask terms of the lane's (row, key) pairs, loaded while the
		// tile lands.
		float mk[NK][4];
		bool live = false;
#pragma unroll
		for (int i = 0; i < NK; i++)
#pragma unroll
			for (int h = 0; h < 2; h++) {
				float x0 = -INFINITY, x1 = -INFINITY;
				if (valid[h]) fm_mask2(mrow[h], tm, p.mtype, slope[h], j0 + 8 * i + 2 * t, nkv, x0, x1);
				mk[i][2 * h] = x0;
				mk[i][2 * h + 1] = x1;
				live |= x0 != -INFINITY || x1 != -INFINITY;
			}
		kb_cp_async_wait<0>();
		if (p.vtype == KB_F16) vbad |= fm_check<D, KT>(Vs, n);
		// The barrier shows the tile to every warp, tells whether its V
		// holds a value that is not finite, and that the other stage
		// (tile tt-1) has been read: the next tile goes there.
		const bool bad = __syncthreads_or(vbad);
		vbad = false;
		if (tt + 1 < t_end) {
			const i64 j1 = j0 + KT;
			const int n1 = (int)min((i64)KT, nkv - j1);
			u16* Kn = st0 + 2 * (st ^ 1) * SH::TILE;
			fm_load<D, KT>(p.ktype, Kn, kbase + j1 * tk.nb[1], tk.nb[1], n1);
			vbad = fm_load<D, KT>(p.vtype, Kn + SH::TILE, vbase + j1 * tv.nb[1], tv.nb[1], n1);
		}
		kb_cp_async_commit();
		if (!__any_sync(0xffffffffu, live)) continue;  // every row of the warp masks the tile

		// S = Q K^T: ldmatrix x4 gives the B fragments of keys 8i..8i+7
		// and 8i+8..8i+15 (K rows, k pairs along the row).
		float s[NK][4];
#pragma unroll
		for (int i = 0; i < NK; i++)
#pragma unroll
			for (int e = 0; e < 4; e++) s[i][e] = 0.0f;
#pragma unroll
		for (int kk = 0; kk < D / 16; kk++) {
			u32 a[4];
			if constexpr (SH::QREG) {
#pragma unroll
				for (int e = 0; e < 4; e++) a[e] = qf[kk][e];
			} else {
				kb_ldmatrix_x4(a, qrow + 16 * kk);
			}
#pragma unroll
			for (int i = 0; i < NK; i += 2) {
				u32 r[4];
				kb_ldmatrix_x4(r, Ks + (8 * i + (lane & 7) + 8 * (lane >> 4)) * LD + 16 * kk + 8 * ((lane >> 3) & 1));
				const u32 b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
				kb_mma_f16(s[i], a, b0);
				kb_mma_f16(s[i + 1], a, b1);
			}
		}

		// Online softmax: s becomes the weights exp(x - m).
		float cm[2] = {-INFINITY, -INFINITY};
#pragma unroll
		for (int i = 0; i < NK; i++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				float x = s[i][e] * p.scale;
				if (p.softcap > 0.0f) x = p.softcap * tanhf(x);
				x = mk[i][e] == -INFINITY ? -INFINITY : x + mk[i][e];
				nan[e >> 1] |= x != x;
				cm[e >> 1] = fmaxf(cm[e >> 1], x);
				s[i][e] = x;
			}
		float alpha[2], rs[2] = {0.0f, 0.0f};
#pragma unroll
		for (int h = 0; h < 2; h++) {
			cm[h] = fmaxf(cm[h], __shfl_xor_sync(0xffffffffu, cm[h], 1));
			cm[h] = fmaxf(cm[h], __shfl_xor_sync(0xffffffffu, cm[h], 2));
			const float mnew = fmaxf(m[h], cm[h]);
			alpha[h] = mnew == -INFINITY ? 1.0f : expf(m[h] - mnew);
			m[h] = mnew;
		}
#pragma unroll
		for (int i = 0; i < NK; i++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				const int h = e >> 1;
				const float w = m[h] == -INFINITY ? 0.0f : expf(s[i][e] - m[h]);
				s[i][e] = w;
				rs[h] += w;
			}
#pragma unroll
		for (int h = 0; h < 2; h++) l[h] = l[h] * alpha[h] + rs[h];
#pragma unroll
		for (int i = 0; i < ND; i++) {
			acc[i][0] *= alpha[0];
			acc[i][1] *= alpha[0];
			acc[i][2] *= alpha[1];
			acc[i][3] *= alpha[1];
		}

		if (!bad) {
			// O += P V: the weights of keys 16kk..16kk+15 are the A
			// fragment as they lie in s; ldmatrix .trans gives V's B
			// fragments of dims 8i..8i+7 and 8i+8..8i+15.
#pragma unroll
			for (int kk = 0; kk < KT / 16; kk++) {
				const u32 a[4] = {fm_h2(s[2 * kk][0], s[2 * kk][1]), fm_h2(s[2 * kk][2], s[2 * kk][3]),
				                  fm_h2(s[2 * kk + 1][0], s[2 * kk + 1][1]), fm_h2(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
				for (int i = 0; i < ND; i += 2) {
					u32 r[4];
					kb_ldmatrix_x4_trans(r, Vs + (16 * kk + (lane & 7) + 8 * ((lane >> 3) & 1)) * LD + 8 * (i + (lane >> 4)));
					const u32 b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
					kb_mma_f16(acc[i], a, b0);
					kb_mma_f16(acc[i + 1], a, b1);
				}
			}
		} else {
			// A V value that is not finite: key by key, a zero weight
			// never multiplied in. Key 8i + jj's weights for rows g and
			// g+8 are in lane 4g + jj/2 (s indexed by constants alone,
			// so that s stays in registers).
#pragma unroll
			for (int i = 0; i < NK; i++) {
#pragma unroll 1
				for (int jj = 0; jj < 8 && 8 * i + jj < n; jj++) {
					float w0 = jj & 1 ? s[i][1] : s[i][0], w1 = jj & 1 ? s[i][3] : s[i][2];
					w0 = __shfl_sync(0xffffffffu, w0, 4 * g + (jj >> 1));
					w1 = __shfl_sync(0xffffffffu, w1, 4 * g + (jj >> 1));
					const u16* vr = Vs + (8 * i + jj) * LD + 2 * t;
#pragma unroll
					for (int c = 0; c < ND; c++) {
						const u32 v2 = *(const u32*)(vr + 8 * c);
						const float v0 = kb_h2f((u16)(v2 & 0xffffu)), v1 = kb_h2f((u16)(v2 >> 16));
						if (w0 != 0.0f) {
							acc[c][0] = fmaf(w0, v0, acc[c][0]);
							acc[c][1] = fmaf(w0, v1, acc[c][1]);
						}
						if (w1 != 0.0f) {
							acc[c][2] = fmaf(w1, v0, acc[c][2]);
							acc[c][3] = fmaf(w1, v1, acc[c][3]);
						}
					}
				}
			}
		}
	}
	kb_cp_async_wait<0>();

	// The rows' sums over their 4 lanes; a NaN score makes the row NaN.
#pragma unroll
	for (int h = 0; h < 2; h++) {
		l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
		l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
		int nn = nan[h];
		nn |= __shfl_xor_sync(0xffffffffu, nn, 1);
		nn |= __shfl_xor_sync(0xffffffffu, nn, 2);
		if (nn) l[h] = NAN;
	}
	const i64 nrows = td.ne[1] * td.ne[2] * td.ne[3];  // output rows (head, query, sequence)
#pragma unroll
	for (int h = 0; h < 2; h++) {
		if (!valid[h]) continue;
		const i64 orow = hi[h] + nh * (qi[h] + nq * i3);
		if (p.splits > 1) {
			float* pa = part + (split * nrows + orow) * D + 2 * t;
#pragma unroll
			for (int i = 0; i < ND; i++) {
				pa[8 * i] = acc[i][2 * h];
				pa[8 * i + 1] = acc[i][2 * h + 1];
			}
			if (t == 0) {
				float* ml = part + (i64)p.splits * nrows * D + (split * nrows + orow) * 2;
				ml[0] = m[h];
				ml[1] = l[h];
			}
			continue;
		}
		float a = 1.0f, sum = l[h];
		const float sk = sinks ? *(const float*)(sinks + hi[h] * ts.nb[0]) : -INFINITY;
		if (sk != -INFINITY) {  // a -Inf sink is none
			const float mn = fmaxf(m[h], sk);
			a = expf(m[h] - mn);
			sum = sum * a + expf(sk - mn);
		}
		const float inv = sum == 0.0f ? 0.0f : a / sum;
		char* out = dst + kb_offset(td, 0, hi[h], qi[h], i3);
#pragma unroll
		for (int i = 0; i < ND; i++) {
			*(float*)(out + (8 * i + 2 * t) * td.nb[0]) = acc[i][2 * h] * inv;
			*(float*)(out + (8 * i + 2 * t + 1) * td.nb[0]) = acc[i][2 * h + 1] * inv;
		}
	}
}

#define KB_FLASH_ATTN_MMA(D)                                                                                          \
	extern "C" __global__ void __launch_bounds__(FM_THREADS, 1) kb_flash_attn_mma_d##D(                               \
	    const char* q, kb_tensor tq, const char* k, kb_tensor tk, const char* v, kb_tensor tv, const char* mask,    \
	    kb_tensor tm, const char* sinks, kb_tensor ts, char* dst, kb_tensor td, float* part, kb_fa_params p) {    \
		flash_attn_mma<D>(q, tq, k, tk, v, tv, mask, tm, sinks, ts, dst, td, part, p);                            \
	}
KB_FLASH_ATTN_MMA(64)
KB_FLASH_ATTN_MMA(80)
KB_FLASH_ATTN_MMA(96)
KB_FLASH_ATTN_MMA(112)
KB_FLASH_ATTN_MMA(128)
KB_FLASH_ATTN_MMA(256)

// The vector (decode) kernel, kb_flash_attn_vec_d<D>_r<R> (f16 K and V
// on 16-byte aligned addresses) and kb_flash_attn_vec_q8_0_d<D>_r<R> (q8_0
// K and V), with rows of D = 64, 128 or 256 elements, for a K/V head with
// at most R (1, 2, 4 or 8) query rows. A block of
// FV_WARPS warps takes the R rows of one (K/V head, sequence, split) and
// reads each key of its split once, straight from global memory:
//
//   - a warp's lanes form 32 / LPK groups of LPK = D/8 lanes; a group takes
//     one key, lane i of it dims 8i..8i+7 (f16: one 16-byte load of K and
//     one of V per key), so a warp request reads whole rows (D=128: two keys,
//     512 contiguous-row bytes); a warp takes U keys per group at a
//     time (all its loads issued before any is used; U * 32/LPK * R is
//     about FV_KEYS, U at most FV_MAXU);
//   - q rows are converted as the tiled kernel converts them (f16 or q8_0
//     for the dot product), held in registers as floats, 8 per lane and
//     row;
//   - scores: 8 products per lane, summed over the group by shuffles;
//     the chunk's maximum over the warp raises the running maximum m
//     (the same in every lane), and each group keeps its own running sum
//     l and accumulator of its dims, all rescaled alike;
//   - after the split the groups' sums are added (shuffles), the warps'
//     (m, l, acc) merged in shared memory as kb_flash_attn_combine merges
//     splits, and the block writes its rows (one split) or their partial
//     results for kb_flash_attn_combine.
//
// Masks, sinks, softcap, ALiBi, NaN and fully masked rows follow the tiled
// kernel: a key masked for every row of the block is not read, a masked
// key's weight is 0 and a 0 weight is never multiplied in.
#define FV_WARPS 4
#define FV_KEYS 16  // keys a warp loads at a time for one row (fewer per row for more rows)
#define FV_MAXU 4   // but at most 4 16-byte loads of K (and of V) per lane


// fv_sts writes a float4 of shared memory as one access (kb_ld16f
// reads one).
__device__ __forceinline__ void fv_sts(float* p, float a, float b, float c, float d) {
#ifdef __KBSIMT__
	typedef float v4 __attribute__((vector_size(16)));
	*(v4*)p = v4{a, b, c, d};
#else
	*(float4*)p = make_float4(a, b, c, d);
#endif
}

// fv_h8 widens the 8 halves of u to floats.
__device__ __forceinline__ void fv_h8(uint4 u, float f[8]) {
	f[0] = kb_h2f((u16)(u.x & 0xffffu));
	f[1] = kb_h2f((u16)(u.x >> 16));
	f[2] = kb_h2f((u16)(u.y & 0xffffu));
	f[3] = kb_h2f((u16)(u.y >> 16));
	f[4] = kb_h2f((u16)(u.z & 0xffffu));
	f[5] = kb_h2f((u16)(u.z >> 16));
	f[6] = kb_h2f((u16)(u.w & 0xffffu));
	f[7] = kb_h2f((u16)(u.w >> 16));
}

// fv_raw<T> loads lane li's 8 elements (dims 8li..8li+7) of the K or V
// row at row, undecoded; fv_dec<T> decodes them to floats. f16: one
// 16-byte load. q8_0: the 8 codes and the scale of their block, lanes
// 4b..4b+3 sharing block b. Blocks are 34 bytes, so in a 4-byte aligned
// row (of an even number of blocks, as D/32 is) an even block starts at
// a word and an odd one 2 bytes into one: the lane reads the words that
// hold its codes (two, or three 2 bytes off, shifted together; never
// past the row, whose last block is odd) and the word that holds the
// scale, 4-byte loads only; rows only 2-byte aligned take 2-byte loads.
template <int T>
__device__ __forceinline__ uint4 fv_raw(const char* row, int li);
template <>
__device__ __forceinline__ uint4 fv_raw<KB_F16>(const char* row, int li) {
	return kb_ld16u(row + 16 * li);
}
template <>
__device__ __forceinline__ uint4 fv_raw<KB_Q8_0>(const char* row, int li) {
	const char* b = row + 34 * (li / 4);
	const char* cp = b + 2 + 8 * (li % 4);
	if (((u64)row & 3) == 0) {
		// Stepping back by pointer arithmetic keeps the loads global ones
		// (LDG; through an integer they would be generic).
		const u32 off = (u32)(u64)cp & 2u;
		const u32* w = (const u32*)(cp - off);
		const u32 sh = off * 8u;  // 0 or 16 bits
		const u32 w0 = w[0], w1 = w[1], w2 = sh ? w[2] : 0u;
		const u32 dw = *(const u32*)(b - ((u64)b & 2));
		const u64 lo = (u64)w1 << 32 | w0, hi = (u64)w2 << 32 | w1;
		return make_uint4((u32)(lo >> sh), (u32)(hi >> sh), ((u64)b & 2) ? dw >> 16 : dw & 0xffffu, 0);
	}
	const u16* c = (const u16*)cp;
	return make_uint4((u32)c[0] | (u32)c[1] << 16, (u32)c[2] | (u32)c[3] << 16, *(const u16*)b, 0);
}
template <int T>
__device__ __forceinline__ void fv_dec(uint4 u, float f[8]);
template <>
__device__ __forceinline__ void fv_dec<KB_F16>(uint4 u, float f[8]) {
	fv_h8(u, f);
}
template <>
__device__ __forceinline__ void fv_dec<KB_Q8_0>(uint4 u, float f[8]) {
	const float d = kb_h2f((u16)u.z);
#pragma unroll
	for (int i = 0; i < 4; i++) {
		f[i] = (float)(i8)((u.x >> (8 * i)) & 0xffu) * d;
		f[4 + i] = (float)(i8)((u.y >> (8 * i)) & 0xffu) * d;
	}
}

// fv_pos is where dim d of a row lies in shared memory (rows FV_LD(D)
// floats apart): lane i's dims 8i..8i+3 at 4i and 8i+4..8i+7 at
// D/2 + 16 + 4i, so that the lanes' float4 accesses are consecutive and
// 32 consecutive dims fall in 32 banks (no bank conflicts either way).
#define FV_LD(D) ((D) + 16)
template <int D>
__device__ __forceinline__ int fv_pos(int d) {
	return ((d >> 2) & 1) * (D / 2 + 16) + (d >> 3) * 4 + (d & 3);
}

template <int T, int D, int R>
__device__ __forceinline__ void flash_attn_vec(const char* q, const kb_tensor& tq, const char* k, const kb_tensor& tk,
                                               const char* v, const kb_tensor& tv, const char* mask,
                                               const kb_tensor& tm, const char* sinks, const kb_tensor& ts, char* dst,
                                               const kb_tensor& td, float* part, const kb_fa_params& p) {
	constexpr int LPK = D / 8, KPW = 32 / LPK;       // lanes per key, keys per warp request
	constexpr int U0 = (FV_KEYS / R > KPW ? FV_KEYS / R : KPW) / KPW;
	constexpr int U = U0 < FV_MAXU ? U0 : FV_MAXU;  // K (and V) requests per chunk
	constexpr int CK = KPW * U;                      // keys per warp chunk
	extern __shared__ float kb_fa_smem[];
	constexpr int LD = FV_LD(D);
	static_assert(CK * R <= 32, "a chunk's mask terms are read a (row, key) per lane");
	float* Qs = kb_fa_smem;               // [R][LD], dims at fv_pos
	float* As = Qs + R * LD;              // [FV_WARPS][R][LD], dims at fv_pos
	float* MLs = As + FV_WARPS * R * LD;  // [FV_WARPS][R][2]
	const int lane = threadIdx.x, warp = threadIdx.y;
	const int g = lane / LPK, li = lane % LPK;
	const i64 nq = tq.ne[1], nh = tq.ne[2], nkv = tk.ne[1], nhk = tk.ne[2];
	const i64 G = p.group;
	const i64 hk = blockIdx.y % nhk, split = blockIdx.y / nhk;
	const i64 i3 = blockIdx.z, i3k = i3 / (tq.ne[3] / tk.ne[3]);
	const i64 row0 = (i64)blockIdx.x * R;

	bool valid[R];
	const char* mrow[R];
	float slope[R];
#pragma unroll
	for (int r = 0; r < R; r++) {
		const i64 rho = row0 + r, qi = rho / G, hi = hk * G + rho % G;
		valid[r] = rho < nq * G;
		slope[r] = kb_alibi_slope(p.m0, p.m1, p.n_log2, hi);
		mrow[r] = mask && valid[r] ? mask + qi * tm.nb[1] + (hi % tm.ne[2]) * tm.nb[2] + (i3 % tm.ne[3]) * tm.nb[3] : 0;
	}
	// q rows to shared memory, converted to f16 values (a warp per row,
	// a lane per dim), then 8 dims per lane into registers.
	for (int r = warp; r < R; r += FV_WARPS) {
		const i64 rho = row0 + r, qi = rho / G, hi = hk * G + rho % G;
		const char* qr = rho < nq * G ? q + kb_offset(tq, 0, qi, hi, i3) : 0;
		for (int d = lane; d < D; d += 32) {
			const float x = qr ? *(const float*)(qr + d * tq.nb[0]) : 0.0f;
			float y = kb_h2f(kb_f2h(x));
			if (T == KB_Q8_0) {  // q8_0 blocks of 32 dims, as the tiled kernel
				const float amax = kb_warp_max(fabsf(x));
				const float dq = amax / 127.0f, id = dq != 0.0f ? 1.0f / dq : 0.0f;
				y = roundf(x * id) * kb_h2f(kb_f2h(dq));
			}
			Qs[r * LD + fv_pos<D>(d)] = y;
		}
	}
	__syncthreads();
	float qf[R][8];
#pragma unroll
	for (int r = 0; r < R; r++) {
		const float4 a = kb_ld16f(Qs + r * LD + 4 * li), b = kb_ld16f(Qs + r * LD + D / 2 + 16 + 4 * li);
		qf[r][0] = a.x, qf[r][1] = a.y, qf[r][2] = a.z, qf[r][3] = a.w;
		qf[r][4] = b.x, qf[r][5] = b.y, qf[r][6] = b.z, qf[r][7] = b.w;
	}

	float m[R], l[R], acc[R][8];
	bool nan[R];
#pragma unroll
	for (int r = 0; r < R; r++) {
		m[r] = -INFINITY;
		l[r] = 0.0f;
		nan[r] = false;
#pragma unroll
		for (int i = 0; i < 8; i++) acc[r][i] = 0.0f;
	}
	const i64 nbk = tk.nb[1], nbv = tv.nb[1];
	const char* kbase = k + hk * tk.nb[2] + i3k * tk.nb[3];
	const char* vbase = v + hk * tv.nb[2] + i3k * tv.nb[3];
	const i64 kbeg = split * (i64)p.tiles * FA_KT, kend = min(nkv, kbeg + (i64)p.tiles * FA_KT);
	for (i64 kc = kbeg + warp * CK; kc < kend; kc += FV_WARPS * CK) {
		// Mask terms (-Inf: left out): lane c reads row c / CK's of key
		// kc + c % CK (one request for the chunk), and each group takes
		// its keys' by shuffles; live[u]: some row takes the group's key u.
		float mc = -INFINITY;
		{
			const int cr = lane / CK;
			const i64 j = kc + lane % CK;
			bool ok = false;
			const char* mp = 0;
			float sl = 1.0f;
#pragma unroll
			for (int r = 0; r < R; r++)
				if (cr == r) {
					ok = valid[r];
					mp = mrow[r];
					sl = slope[r];
				}
			if (ok && j < kend) {
				mc = 0.0f;
				if (mask) {
					mp += j * tm.nb[0];
					const float mk = p.mtype == KB_F16 ? kb_h2f(*(const u16*)mp) : *(const float*)mp;
					mc = mk == -INFINITY ? -INFINITY : sl * mk;
				}
			}
		}
		if (!__any_sync(0xffffffffu, mc != -INFINITY)) continue;  // the same in every lane
		float mv[U][R];
		bool live[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			live[u] = false;
#pragma unroll
			for (int r = 0; r < R; r++) {
				mv[u][r] = __shfl_sync(0xffffffffu, mc, r * CK + u * KPW + g);
				live[u] |= mv[u][r] != -INFINITY;
			}
		}
		uint4 kr[U], vr[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			kr[u] = make_uint4(0, 0, 0, 0);
			vr[u] = make_uint4(0, 0, 0, 0);
			if (live[u]) {
				const i64 j = kc + u * KPW + g;
				kr[u] = fv_raw<T>(kbase + j * nbk, li);
				vr[u] = fv_raw<T>(vbase + j * nbv, li);
			}
		}
		// Scores, summed over the group's lanes.
		float s[U][R];
#pragma unroll
		for (int u = 0; u < U; u++) {
			float kf[8];
			fv_dec<T>(kr[u], kf);
#pragma unroll
			for (int r = 0; r < R; r++) {
				float x = 0.0f;
#pragma unroll
				for (int i = 0; i < 8; i++) x = fmaf(qf[r][i], kf[i], x);
#pragma unroll
				for (int o = LPK / 2; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
				s[u][r] = x;
			}
		}
		// Online softmax: s becomes the key's weight exp(s - m).
#pragma unroll
		for (int r = 0; r < R; r++) {
			float cm = -INFINITY;
#pragma unroll
			for (int u = 0; u < U; u++) {
				float x = s[u][r] * p.scale;
				if (p.softcap > 0.0f) x = p.softcap * tanhf(x);
				x = mv[u][r] == -INFINITY ? -INFINITY : x + mv[u][r];
				nan[r] |= x != x;
				s[u][r] = x;
				cm = fmaxf(cm, x);
			}
#pragma unroll
			for (int o = LPK; o < 32; o <<= 1) cm = fmaxf(cm, __shfl_xor_sync(0xffffffffu, cm, o));
			const float mnew = fmaxf(m[r], cm);
			float alpha = 1.0f, sum = 0.0f;
			if (mnew != -INFINITY) alpha = expf(m[r] - mnew);
#pragma unroll
			for (int u = 0; u < U; u++) {
				const float e = mnew == -INFINITY ? 0.0f : expf(s[u][r] - mnew);
				sum += e;
				s[u][r] = e;
			}
			l[r] = l[r] * alpha + sum;
			m[r] = mnew;
#pragma unroll
			for (int i = 0; i < 8; i++) acc[r][i] *= alpha;
		}
		// Weighted values: a zero weight (a masked key) is not multiplied
		// in, so a NaN in its V row stays out.
#pragma unroll
		for (int u = 0; u < U; u++) {
			float vf[8];
			fv_dec<T>(vr[u], vf);
#pragma unroll
			for (int r = 0; r < R; r++) {
				const float w = s[u][r];
#pragma unroll
				for (int i = 0; i < 8; i++) acc[r][i] = w != 0.0f ? fmaf(w, vf[i], acc[r][i]) : acc[r][i];
			}
		}
	}
	// The groups' sums and accumulators (m is the same in all of them).
#pragma unroll
	for (int r = 0; r < R; r++) {
#pragma unroll
		for (int o = LPK; o < 32; o <<= 1) {
			l[r] += __shfl_xor_sync(0xffffffffu, l[r], o);
#pragma unroll
			for (int i = 0; i < 8; i++) acc[r][i] += __shfl_xor_sync(0xffffffffu, acc[r][i], o);
		}
		// A NaN score makes the row NaN: fmaxf passes over it, so with
		// every other key masked it would weigh nothing.
		if (__any_sync(0xffffffffu, nan[r])) l[r] = NAN;
		if (g == 0) {
			float* a = As + (warp * R + r) * LD;
			fv_sts(a + 4 * li, acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
			fv_sts(a + D / 2 + 16 + 4 * li, acc[r][4], acc[r][5], acc[r][6], acc[r][7]);
		}
		if (lane == 0) {
			MLs[(warp * R + r) * 2] = m[r];
			MLs[(warp * R + r) * 2 + 1] = l[r];
		}
	}
	__syncthreads();

	// The warps' results merged: thread t takes dim t of a row.
	const i64 nrows = td.ne[1] * td.ne[2] * td.ne[3];  // output rows (head, query, sequence)
	const int DV = D;
	for (int x = threadIdx.y * 32 + lane; x < R * D; x += FV_WARPS * 32) {
		const int r = x / D, e = x % D, pos = fv_pos<D>(e);
		const i64 rho = row0 + r;
		if (rho >= nq * G) continue;
		const i64 qi = rho / G, hi = hk * G + rho % G;
		float mx = -INFINITY;
		for (int w = 0; w < FV_WARPS; w++) mx = fmaxf(mx, MLs[(w * R + r) * 2]);
		float sum = 0.0f, o = 0.0f;
		for (int w = 0; w < FV_WARPS; w++) {
			const float mw = MLs[(w * R + r) * 2];
			const float a = mw == -INFINITY ? 0.0f : expf(mw - mx);
			sum += a * MLs[(w * R + r) * 2 + 1];  // 0 * NaN: NaN
			if (a != 0.0f) o += a * As[(w * R + r) * LD + pos];
		}
		const i64 orow = hi + nh * (qi + nq * i3);
		if (p.splits > 1) {
			part[(split * nrows + orow) * DV + e] = o;
			if (e == 0) {
				float* ml = part + (i64)p.splits * nrows * DV + (split * nrows + orow) * 2;
				ml[0] = mx;
				ml[1] = sum;
			}
			continue;
		}
		float a = 1.0f;
		const float sk = sinks ? *(const float*)(sinks + hi * ts.nb[0]) : -INFINITY;
		if (sk != -INFINITY) {  // a -Inf sink is none
			const float mn = fmaxf(mx, sk);
			a = expf(mx - mn);
			sum = sum * a + expf(sk - mn);
		}
		const float inv = sum == 0.0f ? 0.0f : a / sum;
		*(float*)(dst + kb_offset(td, e, hi, qi, i3)) = o * inv;
	}
}

#define KB_FLASH_ATTN_VEC(TN, T, D, R)                                                                              \
	extern "C" __global__ void kb_flash_attn_vec_##TN##d##D##_r##R(                                                \
	    const char* q, kb_tensor tq, const char* k, kb_tensor tk, const char* v, kb_tensor tv, const char* mask,   \
	    kb_tensor tm, const char* sinks, kb_tensor ts, char* dst, kb_tensor td, float* part, kb_fa_params p) {   \
		flash_attn_vec<T, D, R>(q, tq, k, tk, v, tv, mask, tm, sinks, ts, dst, td, part, p);                     \
	}
KB_FLASH_ATTN_VEC(, KB_F16, 64, 1)
KB_FLASH_ATTN_VEC(, KB_F16, 64, 2)
KB_FLASH_ATTN_VEC(, KB_F16, 64, 4)
KB_FLASH_ATTN_VEC(, KB_F16, 64, 8)
KB_FLASH_ATTN_VEC(, KB_F16, 128, 1)
KB_FLASH_ATTN_VEC(, KB_F16, 128, 2)
KB_FLASH_ATTN_VEC(, KB_F16, 128, 4)
KB_FLASH_ATTN_VEC(, KB_F16, 128, 8)
KB_FLASH_ATTN_VEC(, KB_F16, 256, 1)
KB_FLASH_ATTN_VEC(, KB_F16, 256, 2)
KB_FLASH_ATTN_VEC(, KB_F16, 256, 4)
KB_FLASH_ATTN_VEC(, KB_F16, 256, 8)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 64, 1)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 64, 2)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 64, 4)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 64, 8)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 128, 1)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 128, 2)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 128, 4)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 128, 8)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 256, 1)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 256, 2)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 256, 4)
KB_FLASH_ATTN_VEC(q8_0_, KB_Q8_0, 256, 8)

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
	if (threadIdx.x < splits) {
		const float ms = ml[(threadIdx.x * nrows + orow) * 2];
		w[threadIdx.x] = ms == -INFINITY ? 0.0f : expf(ms - mx);
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
