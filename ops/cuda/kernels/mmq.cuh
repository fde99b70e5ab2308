// mmq.cuh: the tiled integer product's tiles and its general kernel body
// (mmq: weights decoded by kb_decode<T> into int8 code tiles with a
// (scale, offset) per 16 elements, activations' kb_q8a blocks, tensor-core
// s8 products or __dp4a), which mul_mat_q.cu instantiates for the legacy
// and K formats and mul_mat_iq.cu for the formats of quants_iq.cuh; see
// mul_mat_q.cu.
#pragma once
#include "common.cuh"
#include "quants.cuh"
#include "mm.cuh"


// The __shared__ tiles are declared in the extern "C" kernels and passed
// to the templates, not declared in the templates: g++ makes a template's
// function statics process-wide unique symbols, so on the SIMT emulator
// two builds of this file in one process (a test's patched copy) would
// share them, out of the checker's sight.

#define KB_QC 4
// KB_BM2 is the weight rows of kb_mmq128_*'s tile.
#define KB_BM2 128
// Ints per code row: KB_QC chunks of 32 int8 codes, padded by 16 bytes so
// that ldmatrix's eight 16-byte rows (row stride 36 words) fall in 32
// different banks.
#define KB_QW (KB_QC * 8 + 4)
// Raw weight bytes per row and step: KB_QC blocks of the largest
// 32-element format (q8_0, 34 bytes) and a 4-byte pad (see kb_qraw).
#define KB_QRAW (KB_QC * 34 + 4)

// kb_qds is the head of a kb_q8a block: the scale and the halves' code
// sums.
struct __align__(8) kb_qds {
	float d;
	short s[2];
};

// kb_ld_qds reads a head from shared memory in one 8-byte load.
__device__ __forceinline__ kb_qds kb_ld_qds(const kb_qds* p) {
	uint2 v = kb_ld8(p);
	kb_qds h;
	h.d = __uint_as_float(v.x);
	h.s[0] = (short)(v.y & 0xffffu);
	h.s[1] = (short)(v.y >> 16);
	return h;
}

// The tiles: the weights' int8 codes (four to an int) and per chunk the
// (scale, offset) of each half, decoded per step (rows padded by one
// float4, so that the eight rows a quarter-warp stores fall in different
// banks); the raw weight blocks of a step, copied with cp.async where the
// rows allow; the activations' codes and heads in two buffers (step s in
// buffer s%2, filled by cp.async while step s-1 computes), their rows
// padded as the weights' (and the heads' by one block, so that the four
// columns 2t a warp reads fall in different banks); each column's
// activation and output offsets.
struct kb_qtiles {
	int (*wq)[KB_QW];
	float4 (*wdm)[KB_QC + 1];
	u8 (*wraw)[KB_QRAW];
	int (*xq)[KB_BN][KB_QW];
	kb_qds (*xds)[KB_BN][KB_QC + 1];
	i64 *xo, *dof;
};
#define KB_QTILES                                            \
	__shared__ __align__(16) int wq[KB_BM][KB_QW];           \
	__shared__ __align__(16) float4 wdm[KB_BM][KB_QC + 1];   \
	__shared__ __align__(16) u8 wraw[KB_BM][KB_QRAW];        \
	__shared__ __align__(16) int xq[2][KB_BN][KB_QW];        \
	__shared__ __align__(16) kb_qds xds[2][KB_BN][KB_QC + 1]; \
	__shared__ i64 xo[KB_BN], dof[KB_BN];                    \
	kb_qtiles s = {wq, wdm, wraw, xq, xds, xo, dof};

// KB_QSMEM(BM) is the bytes of the tiles but xo and dof for BM weight
// rows: what kb_mmq128_* takes as dynamic shared memory (mmqShared in
// op_mul_mat.go computes the same).
#define KB_QSMEM(BM) ((BM) * (KB_QW * 4 + (KB_QC + 1) * 16 + KB_QRAW) + 2 * KB_BN * (KB_QW * 4 + (KB_QC + 1) * 8))

// KB_QTILES_DYN carves the tiles of BM rows from dynamic shared memory
// (every part a multiple of 16 bytes, so each stays 16-byte aligned).
#define KB_QTILES_DYN(BM)                                                                       \
	extern __shared__ __align__(16) int kb_mmq_smem[];                                          \
	__shared__ i64 xo[KB_BN], dof[KB_BN];                                                       \
	kb_qtiles s;                                                                                \
	{                                                                                           \
		char* sp = (char*)kb_mmq_smem;                                                          \
		s.wq = (int (*)[KB_QW])sp;                                                              \
		sp += (BM) * KB_QW * 4;                                                                 \
		s.wdm = (float4 (*)[KB_QC + 1])sp;                                                      \
		sp += (BM) * (KB_QC + 1) * 16;                                                          \
		s.wraw = (u8 (*)[KB_QRAW])sp;                                                           \
		sp += (BM) * KB_QRAW;                                                                   \
		s.xq = (int (*)[KB_BN][KB_QW])sp;                                                       \
		sp += 2 * KB_BN * KB_QW * 4;                                                            \
		s.xds = (kb_qds (*)[KB_BN][KB_QC + 1])sp;                                               \
		s.xo = xo;                                                                              \
		s.dof = dof;                                                                            \
	}

// kb_mmq_load_x starts the copies of step c0's activations into buffer b
// in 8-byte pieces (pieces past the columns or k are zeros), codes and
// heads apart so that each half-warp's pieces fill the 32 banks once: a
// column's KB_QC*32 codes by 16 consecutive threads (32 consecutive words
// of its row); the KB_QC heads of four columns 4 apart by a half-warp
// (head rows are 10 words apart: 8 consecutive words each, 0, 8, 16 and
// 24 banks on).
template <int NT>
__device__ __forceinline__ void kb_mmq_load_x(const kb_mm& p, const kb_qtiles& s, int b, i64 c0, i64 kc, int ncols) {
	for (int i = threadIdx.x; i < KB_BN * KB_QC * 4; i += NT) {
		const int j = i / (KB_QC * 4), pc = i % (KB_QC * 4), cc = pc / 4;
		const i64 ch = c0 + cc;
		const bool ok = j < ncols && ch < kc;
		kb_cp_async<8>(&s.xq[b][j][2 * pc], ok ? p.x + s.xo[j] + ch * 40 + 8 + 8 * (pc % 4) : p.x, ok ? 8 : 0);
	}
	for (int i = threadIdx.x; i < KB_BN * KB_QC; i += NT) {
		const int l = i % 16, j = 16 * (i / 64) + (i / 16) % 4 + 4 * (l / 4), cc = l % 4;
		const i64 ch = c0 + cc;
		const bool ok = j < ncols && ch < kc;
		kb_cp_async<8>(&s.xds[b][j][cc], ok ? p.x + s.xo[j] + ch * 40 : p.x, ok ? 8 : 0);
	}
}

// kb_qraw is the stride of the raw weight rows of format T in the tile:
// its KB_QC blocks (an even number of words: every 32-element format's
// size is even) and one word more, an odd number of words, so that the
// decoding warp's 32 lanes, 32 consecutive rows at one offset, read 32
// different banks.
template <int T>
__device__ __forceinline__ int kb_qraw() { return KB_QC * kb_type<T>::bytes + 4; }

// kb_mmq_load_w starts the copies of step c0's raw weight blocks (32-
// element formats, rows 4-byte aligned): each row's blocks are
// contiguous, copied in 4-byte pieces (the last one partial where the
// step runs past k). Thread i takes word i of the tile, the pad words
// idle, so that a warp's 32 words fall in 32 banks. Rows past m repeat
// the last row.
template <int T, int BM, int NT>
__device__ __forceinline__ void kb_mmq_load_w(const kb_mm& p, const kb_qtiles& s, const char* w, i64 row0, i64 c0, i64 kc) {
	const int B = kb_type<T>::bytes, RW = kb_qraw<T>() / 4;
	const int bytes = (int)min((i64)KB_QC, kc - c0) * B, np = (bytes + 3) / 4;
	for (int i = threadIdx.x; i < BM * RW; i += NT) {
		const int r = i / RW, q = i % RW;
		if (q >= np) continue;
		const i64 gr = min(row0 + r, p.m - 1);
		kb_cp_async<4>(&s.wraw[0][0] + 4 * i, w + gr * p.w_nb1 + c0 * B + 4 * q, min(4, bytes - 4 * q));
	}
}

// kb_scale32<T>: format T has one scale (and at most one offset) per
// 32-element chunk: the legacy formats, q4_K and q5_K, and of
// quants_iq.cuh's all but IQ2_XS, IQ2_S and IQ1_M, whose scales change
// every 16 elements (IQ1_S's halves share theirs). mmq takes one k32
// product a chunk for them; mmq32.cuh's kb_k32 takes them all.
template <int T>
struct kb_scale32 {
	static constexpr bool ok = T == KB_Q4_0 || T == KB_Q4_1 || T == KB_Q5_0 || T == KB_Q5_1 || T == KB_Q8_0 || T == KB_Q4_K || T == KB_Q5_K ||
	                           T == KB_MXFP4 || T == KB_IQ4_NL || T == KB_IQ4_XS || T == KB_TQ1_0 || T == KB_TQ2_0 || T == KB_IQ2_XXS ||
	                           T == KB_IQ3_XXS || T == KB_IQ3_S || T == KB_IQ1_S;
};

// mmq: weights decoded to int8 codes and per-16 (scale, offset) pairs,
// activations' q8a blocks, in shared memory; MMA: tensor-core s8 products
// (4 warps of 32x32, 2x4 m16n8 tiles each, sub-tiles wholly past the rows
// or columns skipped) on fragments loaded with ldmatrix: one m16n8k32
// product per 32-element block and tile where the format has one scale
// (and offset) per block, rescaled once: out += xd * (s * dot + o *
// xsum); two m16n8k16 ones where it has one per 16 (q3_K, q6_K and
// IQ2_XS, IQ2_S, IQ1_M in the 64-row kb_mmq_*; kb_mmq128_* and the other
// formats take mmq32.cuh's mmq32 instead).
// Else __dp4a with an 8x4 register tile per thread, per 16. The
// activations of step s+1 (and the raw weights, for the 32-element formats
// on aligned rows) are copied with cp.async while step s computes. BM is
// the tile's weight rows: 64 or 128, over 2*BM threads (BM/16 warps of
// 32x32 for the MMA, 16 of them per row pair of the dp4a's).
template <int T, bool MMA, int BM>
__device__ __forceinline__ void mmq(const kb_mm& p, const kb_qtiles& s) {
	int (*wq)[KB_QW] = s.wq;
	float4 (*wdm)[KB_QC + 1] = s.wdm;
	// Split-k: this block's run of k chunks, [kb, kc).
	const i64 batches = p.nsplit > 1 ? gridDim.z / p.nsplit : gridDim.z, split = blockIdx.z / batches;
	const char* w;
	int ncols = kb_tile_cols(p, w, s.xo, s.dof, blockIdx.z % batches);
	if (ncols == 0) return;
	__syncthreads();
	const int CPB = kb_type<T>::block / 32;
	// One scale (and offset) per 32-element chunk: one k32 product.
	const bool K32 = kb_scale32<T>::ok;
	const int tid = threadIdx.x;
	const int NT = 2 * BM;
	const i64 row0 = (i64)blockIdx.x * BM, kb = p.nsplit > 1 ? split * p.kspl : 0, kc = p.nsplit > 1 ? min(p.k / 32, kb + p.kspl) : p.k / 32;
	const int nrows = (int)min((i64)BM, p.m - row0);
	const bool raw = CPB == 1 && (((u64)w | (u64)p.w_nb1) & 3) == 0;
	// MMA: warp (wm, wn) computes rows 32wm.., columns 32wn..; lane (g, t).
	const int lane = tid & 31, warp = tid >> 5, wm = warp % (BM / 32), wn = warp / (BM / 32), g = lane >> 2, t = lane & 3;
	// dp4a: thread (tx, ty) computes rows ty + (BM/8)i, columns tx + 16j.
	const int tx = tid & 15, ty = tid >> 4;
	float acc[32];
#pragma unroll
	for (int i = 0; i < 32; i++) acc[i] = 0.0f;

	kb_mmq_load_x<NT>(p, s, 0, kb, kc, ncols);
	if (raw) kb_mmq_load_w<T, BM, NT>(p, s, w, row0, kb, kc);
	kb_cp_async_commit();
	for (i64 c0 = kb, step = 0; c0 < kc; c0 += KB_QC, step++) {
		const int b = (int)(step & 1);
		// Step c0's copies have landed, and every thread is done with
		// the previous step's tiles.
		kb_cp_async_wait<0>();
		__syncthreads();
		// From the raw tile, a warp decodes one chunk of 32 consecutive
		// rows: its reads of the raw rows (an odd number of words apart)
		// and its stores of codes and scales (rows 36 and 20 words apart,
		// quarter-warps of eight rows) fall in different banks. From
		// global memory, KB_QC consecutive chunks of 8 rows (for fewer
		// sectors), a quarter-warp per chunk (for the stores' banks).
		for (int job = tid; job < BM * KB_QC; job += NT) {
			const int r = raw ? job % BM : 8 * (job / (8 * KB_QC)) + job % 8, cc = raw ? job / BM : job / 8 % KB_QC;
			const i64 ch = c0 + cc;
			int q[8];
			float2 dm[2];
			if (ch < kc) {
				const u8* blk;
				if (raw) {
					blk = &s.wraw[0][0] + r * kb_qraw<T>() + cc * kb_type<T>::bytes;
				} else {
					const i64 gr = min(row0 + r, p.m - 1);  // rows past m: any row, not stored
					blk = (const u8*)(w + gr * p.w_nb1) + (ch / CPB) * kb_type<T>::bytes;
				}
				kb_decode<T>(blk, (int)(ch % CPB), q, dm);
			} else {
#pragma unroll
				for (int i = 0; i < 8; i++) q[i] = 0;
				dm[0] = dm[1] = make_float2(0.0f, 0.0f);
			}
			kb_st16(&wq[r][cc * 8], q[0], q[1], q[2], q[3]);
			kb_st16(&wq[r][cc * 8 + 4], q[4], q[5], q[6], q[7]);
			kb_st16(&wdm[r][cc], __float_as_int(dm[0].x), __float_as_int(dm[0].y), __float_as_int(dm[1].x), __float_as_int(dm[1].y));
		}
		__syncthreads();
		// The next step's copies run while this one computes.
		if (c0 + KB_QC < kc) {
			kb_mmq_load_x<NT>(p, s, b ^ 1, c0 + KB_QC, kc, ncols);
			if (raw) kb_mmq_load_w<T, BM, NT>(p, s, w, row0, c0 + KB_QC, kc);
		}
		kb_cp_async_commit();
		int (*xq)[KB_QW] = s.xq[b];
		kb_qds(*xds)[KB_QC + 1] = s.xds[b];
		const int nc = (int)min((i64)KB_QC, kc - c0);
		if (MMA) {
			for (int cc = 0; cc < nc; cc++) {
				// A fragments of both m16 tiles: matrix i of the x4 is rows
				// 8(i&1).. and k 16(i>>1)..
				u32 a[2][4];
				float4 dm[2][2];
#pragma unroll
				for (int mt = 0; mt < 2; mt++) {
					const int r0 = 32 * wm + 16 * mt;
					if (r0 >= nrows) continue;  // warp-uniform: a sub-tile past the rows
					kb_ldmatrix_x4(a[mt], &wq[r0 + (lane & 7) + 8 * ((lane >> 3) & 1)][cc * 8 + 4 * (lane >> 4)]);
					if (K32) {
						// One (scale, offset) per chunk: half the bytes.
						const uint2 u0 = kb_ld8(&wdm[r0 + g][cc]), u1 = kb_ld8(&wdm[r0 + g + 8][cc]);
						dm[mt][0] = make_float4(__uint_as_float(u0.x), __uint_as_float(u0.y), 0.0f, 0.0f);
						dm[mt][1] = make_float4(__uint_as_float(u1.x), __uint_as_float(u1.y), 0.0f, 0.0f);
					} else {
						dm[mt][0] = kb_ld16f(&wdm[r0 + g][cc]);
						dm[mt][1] = kb_ld16f(&wdm[r0 + g + 8][cc]);
					}
				}
#pragma unroll
				for (int np = 0; np < 2; np++) {
					const int colp = 32 * wn + 16 * np;
					if (colp >= ncols) continue;  // or past the columns
					// B fragments of two n8 tiles: matrix i is columns
					// 8(i>>1).. and k 16(i&1)..
					u32 bf[4];
					kb_ldmatrix_x4(bf, &xq[colp + (lane & 7) + 8 * (lane >> 4)][cc * 8 + 4 * ((lane >> 3) & 1)]);
#pragma unroll
					for (int h = 0; h < 2; h++) {
						const int col = colp + 8 * h, nt = 2 * np + h;
						if (col >= ncols) continue;
						const int bk[2] = {(int)bf[2 * h], (int)bf[2 * h + 1]};
						const kb_qds x0 = kb_ld_qds(&xds[col + 2 * t][cc]), x1 = kb_ld_qds(&xds[col + 2 * t + 1][cc]);
#pragma unroll
						for (int mt = 0; mt < 2; mt++) {
							if (32 * wm + 16 * mt >= nrows) continue;
							const int* am = (const int*)a[mt];
							float* o = acc + 16 * mt + 4 * nt;
							const float4 d0 = dm[mt][0], d1 = dm[mt][1];
							int d[4];
							if (K32) {
								kb_mma_s8_k32(d, am, bk);
								const float xs0 = (float)(x0.s[0] + x0.s[1]), xs1 = (float)(x1.s[0] + x1.s[1]);
								o[0] += x0.d * (d0.x * (float)d[0] + d0.y * xs0);
								o[1] += x1.d * (d0.x * (float)d[1] + d0.y * xs1);
								o[2] += x0.d * (d1.x * (float)d[2] + d1.y * xs0);
								o[3] += x1.d * (d1.x * (float)d[3] + d1.y * xs1);
							} else {
								int e[4];
								kb_mma_s8(d, am, bk[0]);
								kb_mma_s8(e, am + 2, bk[1]);
								o[0] += x0.d * (d0.x * (float)d[0] + d0.y * (float)x0.s[0] + (d0.z * (float)e[0] + d0.w * (float)x0.s[1]));
								o[1] += x1.d * (d0.x * (float)d[1] + d0.y * (float)x1.s[0] + (d0.z * (float)e[1] + d0.w * (float)x1.s[1]));
								o[2] += x0.d * (d1.x * (float)d[2] + d1.y * (float)x0.s[0] + (d1.z * (float)e[2] + d1.w * (float)x0.s[1]));
								o[3] += x1.d * (d1.x * (float)d[3] + d1.y * (float)x1.s[0] + (d1.z * (float)e[3] + d1.w * (float)x1.s[1]));
							}
						}
					}
				}
			}
		} else {
			for (int hh = 0; hh < 2 * nc; hh++) {
				const int cc = hh >> 1, h = hh & 1;
				int xv[4][4];
				float xdv[4], xsv[4];
#pragma unroll
				for (int j = 0; j < 4; j++) {
					const int col = tx + 16 * j;
#pragma unroll
					for (int i = 0; i < 4; i++) xv[j][i] = xq[col][4 * hh + i];
					const kb_qds x = kb_ld_qds(&xds[col][cc]);
					xdv[j] = x.d;
					xsv[j] = (float)(h ? x.s[1] : x.s[0]);
				}
#pragma unroll
				for (int i = 0; i < 8; i++) {
					const int r = ty + (BM / 8) * i;
					int wv[4];
#pragma unroll
					for (int e = 0; e < 4; e++) wv[e] = wq[r][4 * hh + e];
					const float4 d4 = kb_ld16f(&wdm[r][cc]);
					const float ds = h ? d4.z : d4.x, dof = h ? d4.w : d4.y;
#pragma unroll
					for (int j = 0; j < 4; j++)
						acc[4 * i + j] += xdv[j] * (ds * (float)kb_dot16(wv, xv[j]) + dof * xsv[j]);
				}
			}
		}
	}
	kb_cp_async_wait<0>();
	// A split's partial products go to its copy of the output's layout.
	char* out = p.nsplit > 1 ? p.part + split * p.part_nb : p.d;
	if (MMA) {
#pragma unroll
		for (int i = 0; i < 32; i++) {
			const int mt = i >> 4, nt = (i >> 2) & 3, e = i & 3;
			const i64 r = row0 + 32 * wm + 16 * mt + g + 8 * (e >> 1);
			const int j = 32 * wn + 8 * nt + 2 * t + (e & 1);
			if (r < p.m && j < ncols) *(float*)(out + s.dof[j] + r * 4) = acc[i];
		}
	} else {
#pragma unroll
		for (int i = 0; i < 8; i++) {
			const i64 r = row0 + ty + (BM / 8) * i;
#pragma unroll
			for (int j = 0; j < 4; j++) {
				const int col = tx + 16 * j;
				if (r < p.m && col < ncols) *(float*)(out + s.dof[col] + r * 4) = acc[4 * i + j];
			}
		}
	}
}
