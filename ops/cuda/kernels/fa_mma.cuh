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
//     K, q8_0 values for quantized K), stored as f16 (in stage 1's K and
//     V tiles, before the first tile goes there), and taken by ldmatrix
//     into registers once (D <= 128) or per tile (D = 256);
//   - K and V tiles of KT keys (FM_KT) are stored as f16 rows of D + 8
//     halves: an odd number of 16-byte chunks, so the 8 rows an ldmatrix
//     matrix reads at one chunk column fall in 8 distinct bank groups.
//     f16 rows come by 16-byte cp.async copies (where 128 threads cover
//     whole rows, each thread's addresses step by constants); q8_0 and
//     q4_0 rows are dequantized by the threads, 8 elements and one
//     16-byte store each. Two stages: tile t+1 loads while tile t is
//     computed. ldmatrix and cp.async take 32-bit shared addresses
//     (fm_sp) whose constant offsets fold into the instructions;
//   - S = Q K^T: K fragments by ldmatrix (K rows are the B operand's
//     columns); the online softmax in registers: each lane holds rows g
//     and g+8 (g = lane/4) of its warp at keys 8i + 2(lane%4) + {0, 1},
//     the running maximum per row reduced over the row's 4 lanes, the
//     running sum kept per lane and added at the end. Logits are in base
//     2 (log2(e) folded into the scale and the ALiBi slopes), a weight is
//     one ex2; the accumulator is rescaled only when a row's maximum rose
//     in the warp;
//   - the mask: where it is f16 with 4-byte aligned rows, a full tile's
//     terms come in 4-byte pairs loaded before the tile's wait (a pair of
//     -Inf halves tells the warp it may skip the tile); other masks (f32,
//     unaligned, the last partial tile) term by term;
//   - O += P V: P rounded to f16 in the A fragment layout straight from
//     S's accumulators (one cvt per pair), V fragments by ldmatrix .trans.
//
// Masks, ALiBi, softcap, sinks, splits, NaN and fully masked rows follow
// the tiled kernel: a NaN logit makes its weight and so the row's sum NaN
// (a row with every key so far left out subtracts a maximum of 0, not
// -Inf, so that NaN survives). A masked key's weight is 0, and in the
// product 0 * NaN would carry a NaN V row into the rows that mask the
// key: a tile whose V holds a value that is not finite (checked where it
// lands in shared memory: one f16x2 fma per word, fm_nf) is weighed one
// key at a time instead, a zero weight never multiplied in. Tiles at the
// end of a block's keys masked for every row of the block (causal
// prefill) are neither loaded nor computed; a warp skips the product of
// any tile masked for all its rows.
#define FM_WARPS 4
#define FM_ROWS (16 * FM_WARPS)
#define FM_THREADS (32 * FM_WARPS)
#define FM_LOG2E 1.4426950408889634f
#define FM_LN2 0.6931471805599453f

// fm_shape is kb_flash_attn_mma_d<D>'s tiling; the host computes the
// same shared memory size (faMMAGeometryFor).
template <int D, int KT_>
struct fm_shape {
	static constexpr int KT = KT_;                         // keys per tile
	static constexpr bool QREG = D <= 128;                 // q fragments held in registers
	static constexpr int LD = D + 8;                       // halves per tile row
	static constexpr int TILE = KT * LD;                   // halves per K or V tile
	static constexpr int QS = QREG ? 0 : FM_ROWS * LD;     // halves of q kept in shared memory
	static_assert(!QREG || FM_ROWS <= 2 * KT, "q is staged in stage 1's K and V tiles");
};

// fm_sp is a position in shared memory as ldmatrix and cp.async take it:
// the shared window's 32-bit address on a GPU (byte offsets added to it
// fold into the instructions' immediates), a pointer on the emulator.
#ifdef KB_MMA_PTX
typedef u32 fm_sp;
__device__ __forceinline__ fm_sp fm_sp_of(const void* p) { return kb_smem(p); }
__device__ __forceinline__ void fm_ldsm(u32 r[4], fm_sp a) {
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
	             : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
	             : "r"(a));
}
__device__ __forceinline__ void fm_ldsm_t(u32 r[4], fm_sp a) {
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
	             : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
	             : "r"(a));
}
__device__ __forceinline__ void fm_cp16(fm_sp dst, const void* src, int src_bytes) {
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
#else
typedef const char* fm_sp;
__device__ __forceinline__ fm_sp fm_sp_of(const void* p) { return (const char*)p; }
__device__ __forceinline__ void fm_ldsm(u32 r[4], fm_sp a) { kb_ldmatrix_x4(r, a); }
__device__ __forceinline__ void fm_ldsm_t(u32 r[4], fm_sp a) { kb_ldmatrix_x4_trans(r, a); }
__device__ __forceinline__ void fm_cp16(fm_sp dst, const void* src, int src_bytes) {
	kb_cp_async<16>((void*)dst, src, src_bytes);
}
#endif

// fm_exp2 is 2^x: ex2.approx (one MUFU.EX2; -Inf gives 0, results below
// 2^-126 flush to 0) on a GPU, exp2f elsewhere.
__device__ __forceinline__ float fm_exp2(float x) {
#ifdef KB_MMA_PTX
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
#else
	return exp2f(x);
#endif
}

// fm_h2 packs a and b as f16 (a in the low half), rounding to nearest.
__device__ __forceinline__ u32 fm_h2(float a, float b) {
#ifdef KB_MMA_PTX
	u32 r;
	asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(b), "f"(a));
	return r;
#else
	return (u32)kb_f2h(a) | (u32)kb_f2h(b) << 16;
#endif
}

// fm_nf folds the word w of two f16 into a, a word that stays zero (either
// sign) while every folded value is finite and has a bit of 0x7fff7fff
// set (fm_nf_any) once one is Inf or NaN: on a GPU one f16x2 fma, a =
// w * 0 + a (Inf * 0 is NaN, and NaN stays); elsewhere the exponents'
// all-ones test, both halves in one add.
__device__ __forceinline__ u32 fm_nf(u32 a, u32 w) {
#ifdef KB_MMA_PTX
	u32 r;
	asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(w), "r"(0u), "r"(a));
	return r;
#else
	return a | (((w & 0x7c007c00u) + 0x04000400u) & 0x80008000u) >> 1;
#endif
}
__device__ __forceinline__ bool fm_nf_any(u32 a) { return (a & 0x7fff7fffu) != 0; }

// fm_load starts filling the tile at dst with the n rows (K or V, of
// type type) at base, nb1 bytes apart, as f16, and zeros past n: thread
// tid takes 16-byte chunks tid, tid + FM_THREADS, ... (chunk c: row
// c / (D/8), elements 8(c % (D/8))..+7). f16 chunks are cp.async copies
// (the caller commits them); q8_0 and q4_0 chunks are dequantized and
// stored, and fm_load returns nf with fm_nf of each word stored folded
// in.
template <int D, int KT>
__device__ __forceinline__ u32 fm_load(int type, u16* dst, const char* base, i64 nb1, int n, u32 nf) {
	constexpr int CH = D / 8, LD = D + 8;
	const int tid = threadIdx.x + 32 * threadIdx.y;
	if (type == KB_F16) {
		const fm_sp sd = fm_sp_of(dst);
		if constexpr (FM_THREADS % CH == 0 && KT * CH % FM_THREADS == 0) {
			// Every pass covers RS whole rows: the thread's chunk column
			// and row offset are fixed, its addresses step by constants.
			constexpr int RS = FM_THREADS / CH;
			const int r0 = tid / CH, ch = tid % CH;
			const char* src = base + r0 * nb1 + 16 * ch;
			const i64 step = RS * nb1;
			const fm_sp d = sd + 2 * (r0 * LD + 8 * ch);
#pragma unroll
			for (int it = 0; it < KT / RS; it++) {
				const bool ok = r0 + RS * it < n;
				fm_cp16(d + 2 * RS * LD * it, ok ? src : base, ok ? 16 : 0);
				src += step;
			}
		} else {
			for (int c = tid; c < KT * CH; c += FM_THREADS) {
				const int r = c / CH, ch = c % CH;
				const bool ok = r < n;
				fm_cp16(sd + 2 * (r * LD + 8 * ch), ok ? base + r * nb1 + 16 * ch : base, ok ? 16 : 0);
			}
		}
		return nf;
	}
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
				nf = fm_nf(nf, w[i]);
			}
		}
		kb_st16(dst + r * LD + 8 * ch, (int)w[0], (int)w[1], (int)w[2], (int)w[3]);
	}
	return nf;
}

// fm_check folds into nf (fm_nf) the f16 of the chunks of the tile at src
// that this thread copied (fm_load's chunks, rows below n); the copies
// must have landed (kb_cp_async_wait).
template <int D, int KT>
__device__ __forceinline__ u32 fm_check(const u16* src, int n, u32 nf) {
	constexpr int CH = D / 8, LD = D + 8;
	const int tid = threadIdx.x + 32 * threadIdx.y;
	if constexpr (FM_THREADS % CH == 0 && KT * CH % FM_THREADS == 0) {
		constexpr int RS = FM_THREADS / CH;
		const int r0 = tid / CH;
		const u16* p = src + r0 * LD + 8 * (tid % CH);
#pragma unroll
		for (int it = 0; it < KT / RS; it++) {
			if (r0 + RS * it < n) {
				const uint4 u = kb_ld16u(p + RS * LD * it);
				nf = fm_nf(fm_nf(fm_nf(fm_nf(nf, u.x), u.y), u.z), u.w);
			}
		}
	} else {
		for (int c = tid; c < n * CH; c += FM_THREADS) {
			const uint4 u = kb_ld16u(src + (c / CH) * LD + 8 * (c % CH));
			nf = fm_nf(fm_nf(fm_nf(fm_nf(nf, u.x), u.y), u.z), u.w);
		}
	}
	return nf;
}

// fm_mask is the mask term of key j for a row whose mask row is mr (null
// with no mask) and slope sl: -Inf leaves the key out.
__device__ __forceinline__ float fm_mask(const char* mr, const kb_tensor& tm, int mtype, float sl, i64 j) {
	if (!mr) return 0.0f;
	const char* mp = mr + j * tm.nb[0];
	const float mk = mtype == KB_F16 ? kb_h2f(*(const u16*)mp) : *(const float*)mp;
	return mk == -INFINITY ? -INFINITY : sl * mk;
}

// fm_logit is the base-2 logit of a score s (already through the softcap's
// tanh, if any) scaled by sc, plus the mask term mt (-Inf: the key is left
// out, whatever s is).
__device__ __forceinline__ float fm_logit(float s, float sc, float mt) {
	return mt == -INFINITY ? -INFINITY : fmaf(s, sc, mt);
}

// flash_attn_mma: grid (row blocks, n_head_kv * splits, q3); block (32,
// FM_WARPS); fm_shape<D>'s shared memory.
template <int D, int KT_>
__device__ __forceinline__ void flash_attn_mma(const char* q, const kb_tensor& tq, const char* k, const kb_tensor& tk,
                                               const char* v, const kb_tensor& tv, const char* mask,
                                               const kb_tensor& tm, const char* sinks, const kb_tensor& ts, char* dst,
                                               const kb_tensor& td, float* part, const kb_fa_params& p) {
	using SH = fm_shape<D, KT_>;
	constexpr int KT = SH::KT, LD = SH::LD, NK = KT / 8, ND = D / 8;
	extern __shared__ float kb_fa_smem[];
	u16* const st0 = (u16*)kb_fa_smem + SH::QS;  // stage s: K tile at st0 + 2s*TILE, V after it
	u16* const Qs = SH::QREG ? st0 + 2 * SH::TILE : (u16*)kb_fa_smem;  // q rows: stage 1's tiles, or their own
	const int lane = threadIdx.x, warp = threadIdx.y, g = lane >> 2, t = lane & 3;
	const int tid = lane + 32 * warp;
	const i64 nq = tq.ne[1], nh = tq.ne[2], nkv = tk.ne[1], nhk = tk.ne[2];
	const i64 G = p.group, nrow = nq * G;
	const int hk = (int)blockIdx.y % (int)nhk, split = (int)blockIdx.y / (int)nhk;
	const int i3 = blockIdx.z, i3k = i3 / (int)(tq.ne[3] / tk.ne[3]);
	const i64 row0 = (i64)blockIdx.x * FM_ROWS;
	const char* kbase = k + hk * tk.nb[2] + i3k * tk.nb[3];
	const char* vbase = v + hk * tv.nb[2] + i3k * tv.nb[3];
	// Logits are kept in base 2: x * log2(e) with the factor folded into
	// the score scale (sc) and the mask's slopes, so that a weight is one
	// exp2.
	const float sc = (p.softcap > 0.0f ? p.softcap : p.scale) * FM_LOG2E;

	// The lane's rows h = 0, 1: row 16*warp + g + 8h of the block is
	// query rho / G of head hk*G + rho % G (rho = row0 + row). A row past
	// the last reads the last row's mask (its output is not written).
	const char* mrow[2];
	float slope[2];
#pragma unroll
	for (int h = 0; h < 2; h++) {
		const i64 rho = row0 + 16 * warp + g + 8 * h, rc = min(rho, nrow - 1);
		const i64 hc = hk * G + rc % G;
		slope[h] = kb_alibi_slope(p.m0, p.m1, p.n_log2, hc) * FM_LOG2E;
		mrow[h] = mask ? mask + (rc / G) * tm.nb[1] + (hc % tm.ne[2]) * tm.nb[2] + (i3 % tm.ne[3]) * tm.nb[3] : 0;
	}
	// An f16 mask of contiguous, 4-byte aligned rows: a full tile's terms
	// come as pairs in 4-byte loads (a quarter warp reads 32 contiguous
	// bytes of each of 8 rows).
	const bool mpairs = mask && p.mtype == KB_F16 && tm.nb[0] == 2 &&
	                    (((u64)mask | (u64)tm.nb[1] | (u64)tm.nb[2] | (u64)tm.nb[3]) & 3) == 0;

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

	u32 vnf = 0;  // fm_nf of the values this thread stored in the next tile's V
	if (t_beg < t_end) {
		const i64 j0 = (i64)t_beg * KT;
		const int n = (int)min((i64)KT, nkv - j0);
		fm_load<D, KT>(p.ktype, st0, kbase + j0 * tk.nb[1], tk.nb[1], n, 0);
		vnf = fm_load<D, KT>(p.vtype, st0 + SH::TILE, vbase + j0 * tv.nb[1], tv.nb[1], n, vnf);
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
	const fm_sp qrow = fm_sp_of(Qs + (16 * warp + (lane & 15)) * LD + 8 * (lane >> 4));
	u32 qf[SH::QREG ? D / 16 : 1][4];
	if constexpr (SH::QREG) {
#pragma unroll
		for (int kk = 0; kk < D / 16; kk++) fm_ldsm(qf[kk], qrow + 32 * kk);
	}
	// The lane's ldmatrix rows in a stage's K and V tiles (bytes from the
	// stage; the fragments' constant offsets are added to them).
	const fm_sp sp0 = fm_sp_of(st0);
	const int koff = 2 * (((lane & 7) + 8 * (lane >> 4)) * LD + 8 * ((lane >> 3) & 1));
	const int voff = 2 * (SH::TILE + ((lane & 7) + 8 * ((lane >> 3) & 1)) * LD + 8 * (lane >> 4));

	float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f}, acc[ND][4];
#pragma unroll
	for (int i = 0; i < ND; i++)
#pragma unroll
		for (int e = 0; e < 4; e++) acc[i][e] = 0.0f;

	for (int tt = t_beg; tt < t_end; tt++) {
		const int st = (tt - t_beg) & 1;
		const u16* Ks = st0 + 2 * st * SH::TILE;
		const u16* Vs = Ks + SH::TILE;
		const fm_sp sps = sp0 + 4 * st * SH::TILE;
		const i64 j0 = (i64)tt * KT;
		const int n = (int)min((i64)KT, nkv - j0);
		// A full tile under an f16 mask of aligned rows: the lane's mask
		// pairs (keys 8i + 2t, +1 of rows g and g+8), loaded while the
		// tile lands; a pair of -Inf (0xfc00) halves leaves both keys out.
		const bool pairs = mpairs && n == KT;
		u32 mw[NK][2];
		bool live = true;
		if (pairs) {
			live = false;
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const char* mp = mrow[h] + 2 * j0 + 4 * t;
#pragma unroll
				for (int i = 0; i < NK; i++) {
					mw[i][h] = *(const u32*)(mp + 16 * i);
					live |= mw[i][h] != 0xfc00fc00u;
				}
			}
		}
		kb_cp_async_wait<0>();
		if (p.vtype == KB_F16) vnf = fm_check<D, KT>(Vs, n, vnf);
		// The barrier shows the tile to every warp, tells whether its V
		// holds a value that is not finite, and that the other stage
		// (tile tt-1) has been read: the next tile goes there.
		const bool bad = __syncthreads_or(fm_nf_any(vnf));
		vnf = 0;
		if (tt + 1 < t_end) {
			const i64 j1 = j0 + KT;
			const int n1 = (int)min((i64)KT, nkv - j1);
			u16* Kn = st0 + 2 * (st ^ 1) * SH::TILE;
			// K and V's bases again from the head's indexes (fa_keep):
			// two pointers kept through the loop spilled on sm_80.
			const int hkk = fa_keep(hk), i3kk = fa_keep(i3k);
			fm_load<D, KT>(p.ktype, Kn, k + hkk * tk.nb[2] + i3kk * tk.nb[3] + j1 * tk.nb[1], tk.nb[1], n1, 0);
			vnf = fm_load<D, KT>(p.vtype, Kn + SH::TILE, v + hkk * tv.nb[2] + i3kk * tv.nb[3] + j1 * tv.nb[1], tv.nb[1], n1, vnf);
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
				fm_ldsm(a, qrow + 32 * kk);
			}
#pragma unroll
			for (int i = 0; i < NK; i += 2) {
				u32 r[4];
				fm_ldsm(r, sps + koff + 2 * (8 * i * LD + 16 * kk));
				const u32 b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
				kb_mma_f16(s[i], a, b0);
				kb_mma_f16(s[i + 1], a, b1);
			}
		}

		// The logits (base 2): the softcap's tanh, the scale, the mask.
		if (p.softcap > 0.0f) {
#pragma unroll
			for (int i = 0; i < NK; i++)
#pragma unroll
				for (int e = 0; e < 4; e++) s[i][e] = tanhf(s[i][e] * p.scale);
		}
		if (pairs) {
#pragma unroll
			for (int i = 0; i < NK; i++)
#pragma unroll
				for (int h = 0; h < 2; h++) {
					const float a = kb_h2f((u16)(mw[i][h] & 0xffffu)), b = kb_h2f((u16)(mw[i][h] >> 16));
					s[i][2 * h] = a == -INFINITY ? -INFINITY : fmaf(s[i][2 * h], sc, slope[h] * a);
					s[i][2 * h + 1] = b == -INFINITY ? -INFINITY : fmaf(s[i][2 * h + 1], sc, slope[h] * b);
				}
		} else {
#pragma unroll
			for (int i = 0; i < NK; i++)
#pragma unroll
				for (int e = 0; e < 4; e++) {
					const i64 j = j0 + 8 * i + 2 * t + (e & 1);
					const float mt = j < nkv ? fm_mask(mrow[e >> 1], tm, p.mtype, slope[e >> 1], j) : -INFINITY;
					s[i][e] = fm_logit(s[i][e], sc, mt);
				}
		}

		// Online softmax: s becomes the weights 2^(x - m). A NaN logit
		// gives a NaN weight, and the row's sum stays NaN (a row whose
		// keys are all left out so far subtracts 0, not -Inf).
		float cm[2] = {-INFINITY, -INFINITY};
#pragma unroll
		for (int i = 0; i < NK; i++)
#pragma unroll
			for (int e = 0; e < 4; e++) cm[e >> 1] = fmaxf(cm[e >> 1], s[i][e]);
		float alpha[2], ms[2], rs[2] = {0.0f, 0.0f};
#pragma unroll
		for (int h = 0; h < 2; h++) {
			cm[h] = fmaxf(cm[h], __shfl_xor_sync(0xffffffffu, cm[h], 1));
			cm[h] = fmaxf(cm[h], __shfl_xor_sync(0xffffffffu, cm[h], 2));
			const float mnew = fmaxf(m[h], cm[h]);
			alpha[h] = mnew == -INFINITY ? 1.0f : fm_exp2(m[h] - mnew);
			m[h] = mnew;
			ms[h] = mnew == -INFINITY ? 0.0f : mnew;
		}
#pragma unroll
		for (int i = 0; i < NK; i++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				const float w = fm_exp2(s[i][e] - ms[e >> 1]);
				s[i][e] = w;
				rs[e >> 1] += w;
			}
#pragma unroll
		for (int h = 0; h < 2; h++) l[h] = l[h] * alpha[h] + rs[h];
		if (__any_sync(0xffffffffu, alpha[0] != 1.0f || alpha[1] != 1.0f)) {  // a row's maximum rose
#pragma unroll
			for (int i = 0; i < ND; i++) {
				acc[i][0] *= alpha[0];
				acc[i][1] *= alpha[0];
				acc[i][2] *= alpha[1];
				acc[i][3] *= alpha[1];
			}
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
					fm_ldsm_t(r, sps + voff + 2 * (16 * kk * LD + 8 * i));
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

	// The rows' sums over their 4 lanes; m back to base e.
#pragma unroll
	for (int h = 0; h < 2; h++) {
		l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
		l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
	}
	const i64 nrows = td.ne[1] * td.ne[2] * td.ne[3];  // output rows (head, query, sequence)
	const uint3 bi = fa_block();  // the block's indexes again (fa_block)
	const int ehk = (int)bi.y % (int)nhk, esplit = (int)bi.y / (int)nhk, ei3 = bi.z;
	const i64 erow0 = (i64)bi.x * FM_ROWS;
#pragma unroll
	for (int h = 0; h < 2; h++) {
		const i64 rho = erow0 + 16 * warp + g + 8 * h;
		if (rho >= nrow) continue;
		const i64 qi = rho / G, hi = ehk * G + rho % G;
		const i64 orow = hi + nh * (qi + nq * ei3);
		if (p.splits > 1) {
			float* pa = part + ((i64)esplit * nrows + orow) * D + 2 * t;
#pragma unroll
			for (int i = 0; i < ND; i++) {
				pa[8 * i] = acc[i][2 * h];
				pa[8 * i + 1] = acc[i][2 * h + 1];
			}
			if (t == 0) {
				float* ml = part + (i64)p.splits * nrows * D + ((i64)esplit * nrows + orow) * 2;
				ml[0] = m[h] * FM_LN2;
				ml[1] = l[h];
			}
			continue;
		}
		float a = 1.0f, sum = l[h];
		const float sk = sinks ? *(const float*)(sinks + hi * ts.nb[0]) * FM_LOG2E : -INFINITY;
		if (sk != -INFINITY) {  // a -Inf sink is none
			const float mn = fmaxf(m[h], sk);
			a = exp2f(m[h] - mn);
			sum = sum * a + exp2f(sk - mn);
		}
		const float inv = sum == 0.0f ? 0.0f : a / sum;
		char* out = dst + kb_offset(td, 0, hi, qi, ei3);
#pragma unroll
		for (int i = 0; i < ND; i++) {
			*(float*)(out + (8 * i + 2 * t) * td.nb[0]) = acc[i][2 * h] * inv;
			*(float*)(out + (8 * i + 2 * t + 1) * td.nb[0]) = acc[i][2 * h + 1] * inv;
		}
	}
}

// FM_KT(D) is head size D's keys per tile (faMMAKeys on the host),
// FM_MINB(D) the blocks per multiprocessor it is built for: registers
// capped at 65536 / (128 * FM_MINB) = 168 for 3, where NVRTC 11.8 fits
// them without spilling on sm_80 and sm_90 (head 64 at 64 keys, 80 and 96
// at 32; 112 and 128 spill at 168 even with 32 keys, and head 256's 101 KB
// of shared memory allow 2 blocks anyway), so three blocks of 4 warps fit
// (their shared memory too: 36.9, 22.5 and 26.6 KB). On sm_80 that holds
// because nothing derived from the block index lives through the main
// loop (fa_block, fa_keep): head 256 takes all 255 registers there.
#define FM_KT(D) ((D) == 80 || (D) == 96 || (D) > 128 ? 32 : 64)
#define FM_MINB(D) ((D) <= 96 ? 3 : 1)

#define KB_FLASH_ATTN_MMA(D)                                                                                          \
	extern "C" __global__ void __launch_bounds__(FM_THREADS, FM_MINB(D)) kb_flash_attn_mma_d##D(                      \
	    const char* q, kb_tensor tq, const char* k, kb_tensor tk, const char* v, kb_tensor tv, const char* mask,    \
	    kb_tensor tm, const char* sinks, kb_tensor ts, char* dst, kb_tensor td, float* part, kb_fa_params p) {    \
		flash_attn_mma<D, FM_KT(D)>(q, tq, k, tk, v, tv, mask, tm, sinks, ts, dst, td, part, p);                  \
	}
KB_FLASH_ATTN_MMA(64)
KB_FLASH_ATTN_MMA(80)
KB_FLASH_ATTN_MMA(96)
KB_FLASH_ATTN_MMA(112)
KB_FLASH_ATTN_MMA(128)
KB_FLASH_ATTN_MMA(256)
