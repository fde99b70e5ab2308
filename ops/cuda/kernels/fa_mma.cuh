// fa_mma.cuh: FLASH_ATTN_EXT's tensor-core prefill kernels, included by
// flash_attn_ext.cu after its parameters (kb_fa), loaders and the tiled
// kernel, whose definitions these kernels use.
#pragma once

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
