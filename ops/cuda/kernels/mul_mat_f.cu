// mul_mat_f.cu: the tiled MUL_MAT and MUL_MAT_ID kernels of the float
// paths (see mul_mat.cu): 64 weight rows by 64 columns per block of 128
// threads; f32 FMAs (kb_mmf_*) or f16/bf16 tensor cores (kb_mmh_*); and
// the large f16/bf16 tiles, 128 rows by 128 or 64 columns per block
// of 256 threads, fed by cp.async and ldmatrix (kb_mmh128x128_*,
// kb_mmh128x64_*; MUL_MAT_ID's column tiles too, where rows allow).
#include "common.cuh"
#include "quants.cuh"
#include "mm.cuh"

// The __shared__ tiles are declared in the extern "C" kernels and passed
// to the templates, not declared in the templates: g++ makes a template's
// function statics process-wide unique symbols, so on the SIMT emulator
// two builds of this file in one process (a test's patched copy) would
// share them, out of the checker's sight.

// The f32 tiles: KB_FK elements of k per step, stored k-major (rows
// padded by one: the loads' transposed stores spread over the banks).
#define KB_FK 32

struct kb_ftiles {
	float (*ws)[KB_BM + 1];
	float (*xs)[KB_BN + 1];
	i64 *xo, *dof;
};
#define KB_FTILES                              \
	__shared__ float ws[KB_FK][KB_BM + 1];       \
	__shared__ float xs[KB_FK][KB_BN + 1];       \
	__shared__ i64 xo[KB_BN], dof[KB_BN];        \
	kb_ftiles s = {ws, xs, xo, dof};

// mmf: weights dequantized to f32 and f32 activation rows in shared
// memory, an 8x4 register tile of FMAs per thread.
template <int T>
__device__ __forceinline__ void mmf(const kb_mm& p, const kb_ftiles& s) {
	float (*ws)[KB_BM + 1] = s.ws;
	float (*xs)[KB_BN + 1] = s.xs;
	i64 *xo = s.xo, *dof = s.dof;
	const char* w;
	int ncols = kb_tile_cols(p, w, xo, dof, blockIdx.z);
	if (ncols == 0) return;
	__syncthreads();
	const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
	const i64 row0 = (i64)blockIdx.x * KB_BM;
	// Each k step's products are summed apart, then added to the total:
	// rounding grows with KB_FK + k/KB_FK terms, not k (a single running
	// sum over k = 4096 costs the f32 dot products of q8_1 and q8_K their
	// 1e-12 NMSE bound).
	float tot[32];
#pragma unroll
	for (int i = 0; i < 32; i++) tot[i] = 0.0f;
	for (i64 k0 = 0; k0 < p.k; k0 += KB_FK) {
		for (int job = tid; job < KB_BM * KB_FK; job += KB_NT) {
			int r = job / KB_FK, kk = job % KB_FK;
			i64 gr = min(row0 + r, p.m - 1);
			ws[kk][r] = k0 + kk < p.k ? kb_at<T>((const u8*)(w + gr * p.w_nb1), k0 + kk) : 0.0f;
		}
		for (int job = tid; job < KB_BN * KB_FK; job += KB_NT) {
			int j = job / KB_FK, kk = job % KB_FK;
			xs[kk][j] = j < ncols && k0 + kk < p.k ? ((const float*)(p.x + xo[j]))[k0 + kk] : 0.0f;
		}
		__syncthreads();
		const int nk = (int)min((i64)KB_FK, p.k - k0);
		float acc[32];
#pragma unroll
		for (int i = 0; i < 32; i++) acc[i] = 0.0f;
		for (int kk = 0; kk < nk; kk++) {
			float wv[8], xv[4];
#pragma unroll
			for (int i = 0; i < 8; i++) wv[i] = ws[kk][ty + 8 * i];
#pragma unroll
			for (int j = 0; j < 4; j++) xv[j] = xs[kk][tx + 16 * j];
#pragma unroll
			for (int i = 0; i < 8; i++)
#pragma unroll
				for (int j = 0; j < 4; j++) acc[4 * i + j] = fmaf(wv[i], xv[j], acc[4 * i + j]);
		}
#pragma unroll
		for (int i = 0; i < 32; i++) tot[i] += acc[i];
		__syncthreads();
	}
#pragma unroll
	for (int i = 0; i < 8; i++) {
		const i64 r = row0 + ty + 8 * i;
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const int col = tx + 16 * j;
			if (r < p.m && col < ncols) *(float*)(p.d + dof[col] + r * 4) = tot[4 * i + j];
		}
	}
}

// The f16/bf16 tiles: KB_HK elements of k per step, rows padded by 8
// halves (a warp's fragment loads hit 32 banks), aligned for the 4- and
// 16-byte accesses.
#define KB_HK 32
#define KB_HW (KB_HK + 8)

struct kb_htiles {
	u16 (*ws)[KB_HW];
	u16 (*xs)[KB_HW];
	i64 *xo, *dof;
};
#define KB_HTILES                                   \
	__shared__ __align__(16) u16 ws[KB_BM][KB_HW];    \
	__shared__ __align__(16) u16 xs[KB_BN][KB_HW];    \
	__shared__ i64 xo[KB_BN], dof[KB_BN];             \
	kb_htiles s = {ws, xs, xo, dof};

// mmh: f16 or bf16 weights and activation rows of the same type in shared
// memory, tensor-core m16n8k16 products with f32 accumulators; 4 warps of
// 32x32 (sub-tiles wholly past the rows or columns skipped).
template <bool BF>
__device__ __forceinline__ void mmh(const kb_mm& p, const kb_htiles& s) {
	u16 (*ws)[KB_HW] = s.ws;
	u16 (*xs)[KB_HW] = s.xs;
	i64 *xo = s.xo, *dof = s.dof;
	const char* w;
	int ncols = kb_tile_cols(p, w, xo, dof, blockIdx.z);
	if (ncols == 0) return;
	__syncthreads();
	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wm = warp & 1, wn = warp >> 1, g = lane >> 2, t = lane & 3;
	const i64 row0 = (i64)blockIdx.x * KB_BM;
	const int nrows = (int)min((i64)KB_BM, p.m - row0);
	float acc[2][4][4];
#pragma unroll
	for (int i = 0; i < 2; i++)
#pragma unroll
		for (int j = 0; j < 4; j++)
#pragma unroll
			for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;
	// Rows in whole 16-byte pieces (k % 8 == 0, aligned): 8 values a load.
	const bool vec = p.k % 8 == 0 && (((u64)w | (u64)p.w_nb1 | (u64)p.x | (u64)p.x_nb1 | (u64)p.x_nb2 | (u64)p.x_nb3) & 15) == 0;
	for (i64 k0 = 0; k0 < p.k; k0 += KB_HK) {
		if (vec) {
			for (int job = tid; job < KB_BM * KB_HK / 8; job += KB_NT) {
				int r = job / (KB_HK / 8), kk = 8 * (job % (KB_HK / 8));
				i64 gr = min(row0 + r, p.m - 1);
				uint4 v = make_uint4(0, 0, 0, 0);
				if (k0 + kk < p.k) v = *(const uint4*)(w + gr * p.w_nb1 + 2 * (k0 + kk));
				*(uint4*)&ws[r][kk] = v;
			}
			for (int job = tid; job < KB_BN * KB_HK / 8; job += KB_NT) {
				int j = job / (KB_HK / 8), kk = 8 * (job % (KB_HK / 8));
				uint4 v = make_uint4(0, 0, 0, 0);
				if (j < ncols && k0 + kk < p.k) v = *(const uint4*)(p.x + xo[j] + 2 * (k0 + kk));
				*(uint4*)&xs[j][kk] = v;
			}
		} else {
			for (int job = tid; job < KB_BM * KB_HK; job += KB_NT) {
				int r = job / KB_HK, kk = job % KB_HK;
				i64 gr = min(row0 + r, p.m - 1);
				ws[r][kk] = k0 + kk < p.k ? ((const u16*)(w + gr * p.w_nb1))[k0 + kk] : (u16)0;
			}
			for (int job = tid; job < KB_BN * KB_HK; job += KB_NT) {
				int j = job / KB_HK, kk = job % KB_HK;
				xs[j][kk] = j < ncols && k0 + kk < p.k ? ((const u16*)(p.x + xo[j]))[k0 + kk] : (u16)0;
			}
		}
		__syncthreads();
#pragma unroll
		for (int ks = 0; ks < KB_HK; ks += 16) {
#pragma unroll
			for (int mt = 0; mt < 2; mt++) {
				if (32 * wm + 16 * mt >= nrows) continue;  // warp-uniform: a sub-tile past the rows
				const int r = 32 * wm + 16 * mt + g;
				u32 a[4] = {*(const u32*)&ws[r][ks + 2 * t], *(const u32*)&ws[r + 8][ks + 2 * t],
				            *(const u32*)&ws[r][ks + 2 * t + 8], *(const u32*)&ws[r + 8][ks + 2 * t + 8]};
#pragma unroll
				for (int nt = 0; nt < 4; nt++) {
					if (32 * wn + 8 * nt >= ncols) continue;  // or past the columns
					const int col = 32 * wn + 8 * nt + g;
					u32 b[2] = {*(const u32*)&xs[col][ks + 2 * t], *(const u32*)&xs[col][ks + 2 * t + 8]};
					if (BF)
						kb_mma_bf16(acc[mt][nt], a, b);
					else
						kb_mma_f16(acc[mt][nt], a, b);
				}
			}
		}
		__syncthreads();
	}
#pragma unroll
	for (int mt = 0; mt < 2; mt++)
#pragma unroll
		for (int nt = 0; nt < 4; nt++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				const i64 r = row0 + 32 * wm + 16 * mt + g + 8 * (e >> 1);
				const int j = 32 * wn + 8 * nt + 2 * t + (e & 1);
				if (r < p.m && j < ncols) *(float*)(p.d + dof[j] + r * 4) = acc[mt][nt][e];
			}
}

// ---------------------------------------------------------------------
// The large f16/bf16 tiles (kb_mmh128x*, MUL_MAT and MUL_MAT_ID with
// 16-byte rows: k % 8 == 0 and every row 16-byte aligned, which the host
// checks): 128
// weight rows by BN (128 or 64) columns per block of WARPS_M x WARPS_N
// warps (8 warps of 64x32 or 32x32, or 4 of 64x64), k in steps of KB_LK =
// 32 halves through an S-stage cp.async pipeline, fragments by ldmatrix.
#define KB_LM 128
#define KB_LK 32

// kb_swz is where element (r, 8c) of a tile of KB_LK-half rows is
// stored, in halves: row r's 16-byte chunk c goes to chunk c ^ ((r/2)%4)
// of the row. A row is 64 bytes, so two rows share a 128-byte line; the
// XOR puts the 8 rows an ldmatrix matrix reads at one chunk, and the 8
// chunks (2 rows) of a quarter-warp's 16-byte copies, in 8 distinct
// 16-byte bank groups: neither the copies nor the fragment loads
// conflict.
__device__ __forceinline__ int kb_swz(int r, int c) { return r * KB_LK + 8 * (c ^ ((r >> 1) & 3)); }

// kb_lcols is a large tile's column block: ncols activation rows from x
// (x_nb1 apart), outputs to d (d_nb1 apart), weights w; for MUL_MAT_ID
// (pairs non-null) column j is pair pairs[j] of kb_mmid_group's list,
// its row and output at kb_pair_xo and kb_pair_do from x and d.
struct kb_lcols {
	const char *w, *x;
	char* d;
	const int* pairs;
	int ncols;
};

// kb_lsrc is where a thread's copies of each k step read: the starts of
// the rows of its weight chunks (a) and activation chunks (b), a row past
// the matrix or the column block clamped into it and its bit in aok or
// bok clear. Slot i of a thread is row (tid/4 + i*NT/4), chunk tid%4.
template <int BN, int NT>
struct kb_lsrc {
	static constexpr int IA = KB_LM * (KB_LK / 8) / NT, IB = BN * (KB_LK / 8) / NT;
	const char* a[IA];
	const char* b[IB];
	u32 aok, bok;
};

template <int BN, int NT>
__device__ __forceinline__ void mmh_srcs(const kb_mm& p, const kb_lcols& c, i64 row0, kb_lsrc<BN, NT>& s) {
	const int r0 = threadIdx.x >> 2;
	s.aok = s.bok = 0;
#pragma unroll
	for (int i = 0; i < s.IA; i++) {
		const i64 r = row0 + r0 + i * (NT / 4);
		s.a[i] = c.w + min(r, p.m - 1) * p.w_nb1;
		s.aok |= (u32)(r < p.m) << i;
	}
#pragma unroll
	for (int i = 0; i < s.IB; i++) {
		const int j = r0 + i * (NT / 4);
		if (c.pairs)
			s.b[i] = c.x + (j < c.ncols ? kb_pair_xo(p, c.pairs[j]) : 0);
		else
			s.b[i] = c.x + (j < c.ncols ? j : 0) * p.x_nb1;
		s.bok |= (u32)(j < c.ncols) << i;
	}
}

// mmh_load starts the copies of k step k0 into stage buffers ws, xs:
// rows past the matrix or the column block and chunks past k are zero
// filled (the source address stays at the row's start, unread).
template <int BN, int NT>
__device__ __forceinline__ void mmh_load(const kb_lsrc<BN, NT>& s, i64 k, i64 k0, u16* ws, u16* xs) {
	const int r0 = threadIdx.x >> 2, ch = threadIdx.x & 3;
	const i64 kk = k0 + 8 * ch;
	const bool kin = kk < k;
#pragma unroll
	for (int i = 0; i < s.IA; i++) {
		const bool ok = kin && (s.aok >> i & 1);
		kb_cp_async<16>(ws + kb_swz(r0 + i * (NT / 4), ch), ok ? s.a[i] + 2 * kk : s.a[i], ok ? 16 : 0);
	}
#pragma unroll
	for (int i = 0; i < s.IB; i++) {
		const bool ok = kin && (s.bok >> i & 1);
		kb_cp_async<16>(xs + kb_swz(r0 + i * (NT / 4), ch), ok ? s.b[i] + 2 * kk : s.b[i], ok ? 16 : 0);
	}
}

// mmhl: the large tile's product, S stages of ws (KB_LM x KB_LK) and xs
// (BN x KB_LK) halves, f32 accumulators in registers.
template <bool BF, int BN, int WARPS_M, int WARPS_N, int S>
__device__ __forceinline__ void mmhl(const kb_mm& p, u16* ws0, u16* xs0) {
	constexpr int WM = KB_LM / WARPS_M, WN = BN / WARPS_N, MT = WM / 16, NT = WN / 8, THREADS = 32 * WARPS_M * WARPS_N;
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wm = warp % WARPS_M, wn = warp / WARPS_M;
	const int g = lane >> 2, t = lane & 3;
	const i64 row0 = (i64)blockIdx.x * KB_LM;
	kb_lcols c;
	if (p.ids) {
		// MUL_MAT_ID: column tile blockIdx.y of kb_mmid_group's list (a
		// slot past the list has nothing to do).
		const int tl = blockIdx.y;
		if (tl >= *p.ntiles) return;
		c.w = p.w + p.tiles[3 * tl] * p.w_nb2;
		c.pairs = p.pairs + p.tiles[3 * tl + 1];
		c.ncols = p.tiles[3 * tl + 2];
		c.x = p.x;
		c.d = p.d;
	} else {
		const i64 z = blockIdx.z, i2 = z % p.b2, i3 = z / p.b2, c0 = (i64)blockIdx.y * BN;
		c.ncols = (int)min((i64)BN, p.n - c0);
		c.w = p.w + (i2 / p.r2) * p.w_nb2 + (i3 / p.r3) * p.w_nb3;
		c.x = p.x + c0 * p.x_nb1 + i2 * p.x_nb2 + i3 * p.x_nb3;
		c.d = p.d + c0 * p.d_nb1 + i2 * p.d_nb2 + i3 * p.d_nb3;
		c.pairs = nullptr;
	}
	// A warp whose sub-tile lies wholly past the rows or the columns only
	// copies and waits (warp-uniform).
	const bool active = row0 + wm * WM < p.m && wn * WN < c.ncols;
	kb_lsrc<BN, THREADS> src;
	mmh_srcs(p, c, row0, src);
	float acc[MT][NT][4];
#pragma unroll
	for (int i = 0; i < MT; i++)
#pragma unroll
		for (int j = 0; j < NT; j++)
#pragma unroll
			for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;
	const int nk = (int)((p.k + KB_LK - 1) / KB_LK);
#pragma unroll
	for (int s = 0; s < S - 1; s++) {
		if (s < nk) mmh_load(src, p.k, (i64)s * KB_LK, ws0 + s * KB_LM * KB_LK, xs0 + s * BN * KB_LK);
		kb_cp_async_commit();
	}
	for (int s = 0; s < nk; s++) {
		// Step s's group is done once at most the S-2 newer ones are in
		// flight; the barrier shows its copies to every thread and tells
		// that step s-1's buffer, refilled next, has been read.
		kb_cp_async_wait<S - 2>();
		__syncthreads();
		const int nxt = s + S - 1;
		if (nxt < nk) mmh_load(src, p.k, (i64)nxt * KB_LK, ws0 + (nxt % S) * KB_LM * KB_LK, xs0 + (nxt % S) * BN * KB_LK);
		kb_cp_async_commit();
		if (!active) continue;
		const u16* ws = ws0 + (s % S) * KB_LM * KB_LK;
		const u16* xs = xs0 + (s % S) * BN * KB_LK;
#pragma unroll
		for (int ks = 0; ks < KB_LK / 8; ks += 2) {
			// A: matrices (rows 0-7, chunk ks), (8-15, ks), (0-7, ks+1),
			// (8-15, ks+1) of each 16-row sub-tile: a[0..3]. B: (columns
			// 0-7, ks), (0-7, ks+1), (8-15, ks), (8-15, ks+1) of each
			// 16 columns: b[nt][0..1], b[nt+1][0..1].
			u32 a[MT][4], b[NT][2];
#pragma unroll
			for (int mt = 0; mt < MT; mt++)
				kb_ldmatrix_x4(a[mt], ws + kb_swz(wm * WM + 16 * mt + (lane & 15), ks + (lane >> 4)));
#pragma unroll
			for (int nt = 0; nt < NT; nt += 2) {
				u32 r[4];
				kb_ldmatrix_x4(r, xs + kb_swz(wn * WN + 8 * nt + (lane & 7) + 8 * (lane >> 4), ks + ((lane >> 3) & 1)));
				b[nt][0] = r[0];
				b[nt][1] = r[1];
				b[nt + 1][0] = r[2];
				b[nt + 1][1] = r[3];
			}
#pragma unroll
			for (int mt = 0; mt < MT; mt++)
#pragma unroll
				for (int nt = 0; nt < NT; nt++) {
					if (BF)
						kb_mma_bf16(acc[mt][nt], a[mt], b[nt]);
					else
						kb_mma_f16(acc[mt][nt], a[mt], b[nt]);
				}
		}
	}
	kb_cp_async_wait<0>();
	// MUL_MAT_ID: the columns' output offsets, in the spent stage
	// buffers once every warp is done reading them (block-uniform).
	i64* dof = (i64*)ws0;
	if (c.pairs) {
		__syncthreads();
		for (int j = threadIdx.x; j < c.ncols; j += THREADS) dof[j] = kb_pair_do(p, c.pairs[j]);
		__syncthreads();
	}
	if (!active) return;
#pragma unroll
	for (int mt = 0; mt < MT; mt++)
#pragma unroll
		for (int nt = 0; nt < NT; nt++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				const i64 r = row0 + wm * WM + 16 * mt + g + 8 * (e >> 1);
				const int j = wn * WN + 8 * nt + 2 * t + (e & 1);
				if (r < p.m && j < c.ncols) *(float*)(c.d + (c.pairs ? dof[j] : j * p.d_nb1) + r * 4) = acc[mt][nt][e];
			}
}

#define KB_MMF(name, T)                                                          \
	extern "C" __global__ void __launch_bounds__(KB_NT) kb_mmf_##name(kb_mm p) { \
		KB_FTILES                                                                    \
		mmf<T>(p, s);                                                                \
	}
KB_FLOAT_TYPES(KB_MMF)

extern "C" __global__ void __launch_bounds__(KB_NT) kb_mmh_f16(kb_mm p) {
	KB_HTILES
	mmh<false>(p, s);
}
extern "C" __global__ void __launch_bounds__(KB_NT) kb_mmh_bf16(kb_mm p) {
	KB_HTILES
	mmh<true>(p, s);
}

// The large tiles, 3 stages each: 128x128 over 8 warps of 64x32 or 4
// warps of 64x64 (suffix w4), 48 kB of shared memory; 128x64 over 8 warps
// of 32x32, 36 kB.
#define KB_MMHL(tile, BN, WM, WN, S, name, BF)                                                      \
	extern "C" __global__ void __launch_bounds__(32 * WM * WN) kb_mmh##tile##_##name(kb_mm p) { \
		__shared__ __align__(128) u16 ws[S * KB_LM * KB_LK];                                         \
		__shared__ __align__(128) u16 xs[S * BN * KB_LK];                                            \
		mmhl<BF, BN, WM, WN, S>(p, ws, xs);                                                           \
	}
KB_MMHL(128x128, 128, 2, 4, 3, f16, false)
KB_MMHL(128x128, 128, 2, 4, 3, bf16, true)
KB_MMHL(128x128w4, 128, 2, 2, 3, f16, false)
KB_MMHL(128x128w4, 128, 2, 2, 3, bf16, true)
KB_MMHL(128x64, 64, 4, 2, 3, f16, false)
KB_MMHL(128x64, 64, 4, 2, 3, bf16, true)
