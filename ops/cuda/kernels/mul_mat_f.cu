// mul_mat_f.cu: the tiled MUL_MAT and MUL_MAT_ID kernels of the float
// paths (see mul_mat.cu): 64 weight rows by 64 columns per block of 128
// threads; f32 FMAs (kb_mmf_*) or f16/bf16 tensor cores (kb_mmh_*).
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
	int ncols = kb_tile_cols(p, w, xo, dof);
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
	int ncols = kb_tile_cols(p, w, xo, dof);
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
