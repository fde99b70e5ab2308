// mul_mat_q.cu: the tiled MUL_MAT and MUL_MAT_ID kernels of the integer
// paths (see mul_mat.cu): 64 weight rows by 64 columns per block of 128
// threads.
#include "common.cuh"
#include "quants.cuh"
#include "mm.cuh"

// The __shared__ tiles are declared in the extern "C" kernels and passed
// to the templates, not declared in the templates: g++ makes a template's
// function statics process-wide unique symbols, so on the SIMT emulator
// two builds of this file in one process (a test's patched copy) would
// share them, out of the checker's sight.

#define KB_QC 4
#define KB_QW (KB_QC * 8 + 4)

// The tiles of a k step of KB_QC chunks (32 weights each): int8 codes
// four to an int, rows padded by 4 ints so that a warp's fragment loads
// (rows g, ints t) fall in 32 different banks; per-16 (scale, offset) of
// the weights; the activations' scales and per-16 code sums; and each
// column's activation and output offsets.
struct kb_qtiles {
	int (*wq)[KB_QW];
	float2 (*wdm)[2 * KB_QC];
	int (*xq)[KB_QW];
	float (*xd)[KB_QC];
	float (*xsum)[2 * KB_QC];
	i64 *xo, *dof;
};
#define KB_QTILES                               \
	__shared__ int wq[KB_BM][KB_QW];              \
	__shared__ float2 wdm[KB_BM][2 * KB_QC];      \
	__shared__ int xq[KB_BN][KB_QW];              \
	__shared__ float xd[KB_BN][KB_QC];            \
	__shared__ float xsum[KB_BN][2 * KB_QC];      \
	__shared__ i64 xo[KB_BN], dof[KB_BN];         \
	kb_qtiles s = {wq, wdm, xq, xd, xsum, xo, dof};

// mmq: weights decoded to int8 codes and per-16 (scale, offset) pairs,
// activations' q8a blocks, in shared memory; MMA: tensor-core s8 products
// (4 warps of 32x32, 2x4 m16n8k16 tiles each, sub-tiles wholly past the
// rows or columns skipped), else __dp4a with an 8x4 register tile per
// thread. Each product of 16 codes is scaled in f32: out += xd * (s * dot
// + o * xsum).
template <int T, bool MMA>
__device__ __forceinline__ void mmq(const kb_mm& p, const kb_qtiles& s) {
	int (*wq)[KB_QW] = s.wq;
	float2 (*wdm)[2 * KB_QC] = s.wdm;
	int (*xq)[KB_QW] = s.xq;
	float (*xd)[KB_QC] = s.xd;
	float (*xsum)[2 * KB_QC] = s.xsum;
	i64 *xo = s.xo, *dof = s.dof;
	const char* w;
	int ncols = kb_tile_cols(p, w, xo, dof);
	if (ncols == 0) return;
	__syncthreads();
	const int CPB = kb_type<T>::block / 32;
	const int tid = threadIdx.x;
	const i64 row0 = (i64)blockIdx.x * KB_BM, kc = p.k / 32;
	const int nrows = (int)min((i64)KB_BM, p.m - row0);
	// MMA: warp (wm, wn) computes rows 32wm.., columns 32wn..; lane (g, t).
	const int lane = tid & 31, warp = tid >> 5, wm = warp & 1, wn = warp >> 1, g = lane >> 2, t = lane & 3;
	// dp4a: thread (tx, ty) computes rows ty + 8i, columns tx + 16j.
	const int tx = tid & 15, ty = tid >> 4;
	float acc[32];
#pragma unroll
	for (int i = 0; i < 32; i++) acc[i] = 0.0f;

	for (i64 c0 = 0; c0 < kc; c0 += KB_QC) {
		for (int job = tid; job < KB_BM * KB_QC; job += KB_NT) {
			int r = job / KB_QC, cc = job % KB_QC;
			i64 ch = c0 + cc;
			int q[8];
			float2 dm[2];
			if (ch < kc) {
				i64 gr = min(row0 + r, p.m - 1);  // rows past m: any row, not stored
				kb_decode<T>((const u8*)(w + gr * p.w_nb1) + (ch / CPB) * kb_type<T>::bytes, (int)(ch % CPB), q, dm);
			} else {
#pragma unroll
				for (int i = 0; i < 8; i++) q[i] = 0;
				dm[0] = dm[1] = make_float2(0.0f, 0.0f);
			}
#pragma unroll
			for (int i = 0; i < 8; i++) wq[r][cc * 8 + i] = q[i];
			wdm[r][2 * cc] = dm[0];
			wdm[r][2 * cc + 1] = dm[1];
		}
		for (int job = tid; job < KB_BN * KB_QC; job += KB_NT) {
			int j = job / KB_QC, cc = job % KB_QC;
			i64 ch = c0 + cc;
			if (j < ncols && ch < kc) {
				const kb_q8a* a = (const kb_q8a*)(p.x + xo[j]) + ch;
#pragma unroll
				for (int i = 0; i < 8; i++) xq[j][cc * 8 + i] = a->qs[i];
				xd[j][cc] = a->d;
				xsum[j][2 * cc] = (float)a->s[0];
				xsum[j][2 * cc + 1] = (float)a->s[1];
			} else {
#pragma unroll
				for (int i = 0; i < 8; i++) xq[j][cc * 8 + i] = 0;
				xd[j][cc] = 0.0f;
				xsum[j][2 * cc] = xsum[j][2 * cc + 1] = 0.0f;
			}
		}
		__syncthreads();
		const int nh = 2 * (int)min((i64)KB_QC, kc - c0);
		for (int hh = 0; hh < nh; hh++) {
			const int cc = hh >> 1;
			if (MMA) {
#pragma unroll
				for (int mt = 0; mt < 2; mt++) {
					if (32 * wm + 16 * mt >= nrows) continue;  // warp-uniform: a sub-tile past the rows
					const int r = 32 * wm + 16 * mt + g;
					int a[2] = {wq[r][4 * hh + t], wq[r + 8][4 * hh + t]};
					float2 dm0 = wdm[r][hh], dm1 = wdm[r + 8][hh];
#pragma unroll
					for (int nt = 0; nt < 4; nt++) {
						const int col = 32 * wn + 8 * nt;
						if (col >= ncols) continue;  // or past the columns
						int d[4];
						kb_mma_s8(d, a, xq[col + g][4 * hh + t]);
						const int c0c = col + 2 * t;
						float xd0 = xd[c0c][cc], xd1 = xd[c0c + 1][cc];
						float xs0 = xsum[c0c][hh], xs1 = xsum[c0c + 1][hh];
						float* o = acc + 16 * mt + 4 * nt;
						o[0] += xd0 * (dm0.x * (float)d[0] + dm0.y * xs0);
						o[1] += xd1 * (dm0.x * (float)d[1] + dm0.y * xs1);
						o[2] += xd0 * (dm1.x * (float)d[2] + dm1.y * xs0);
						o[3] += xd1 * (dm1.x * (float)d[3] + dm1.y * xs1);
					}
				}
			} else {
				int xv[4][4];
				float xdv[4], xsv[4];
#pragma unroll
				for (int j = 0; j < 4; j++) {
					const int col = tx + 16 * j;
#pragma unroll
					for (int i = 0; i < 4; i++) xv[j][i] = xq[col][4 * hh + i];
					xdv[j] = xd[col][cc];
					xsv[j] = xsum[col][hh];
				}
#pragma unroll
				for (int i = 0; i < 8; i++) {
					const int r = ty + 8 * i;
					int wv[4];
#pragma unroll
					for (int s = 0; s < 4; s++) wv[s] = wq[r][4 * hh + s];
					float2 dm = wdm[r][hh];
#pragma unroll
					for (int j = 0; j < 4; j++)
						acc[4 * i + j] += xdv[j] * (dm.x * (float)kb_dot16(wv, xv[j]) + dm.y * xsv[j]);
				}
			}
		}
		__syncthreads();
	}
	if (MMA) {
#pragma unroll
		for (int i = 0; i < 32; i++) {
			const int mt = i >> 4, nt = (i >> 2) & 3, e = i & 3;
			const i64 r = row0 + 32 * wm + 16 * mt + g + 8 * (e >> 1);
			const int j = 32 * wn + 8 * nt + 2 * t + (e & 1);
			if (r < p.m && j < ncols) *(float*)(p.d + dof[j] + r * 4) = acc[i];
		}
	} else {
#pragma unroll
		for (int i = 0; i < 8; i++) {
			const i64 r = row0 + ty + 8 * i;
#pragma unroll
			for (int j = 0; j < 4; j++) {
				const int col = tx + 16 * j;
				if (r < p.m && col < ncols) *(float*)(p.d + dof[col] + r * 4) = acc[4 * i + j];
			}
		}
	}
}

#define KB_MMQ(name, T)                                                               \
	extern "C" __global__ void __launch_bounds__(KB_NT) kb_mmq_##name(kb_mm p) {      \
		KB_QTILES                                                                         \
		mmq<T, true>(p, s);                                                               \
	}                                                                                 \
	extern "C" __global__ void __launch_bounds__(KB_NT) kb_mmq_dp4a_##name(kb_mm p) { \
		KB_QTILES                                                                         \
		mmq<T, false>(p, s);                                                              \
	}
KB_INT_TYPES(KB_MMQ)
