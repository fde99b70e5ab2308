// mm.h: the matrix-vector and matrix-matrix cores MUL_MAT and MUL_MAT_ID
// share: dot products of weight rows of any type (through the templated
// dequantizers) with activation columns of f32, f16 or bf16 at any
// stride.
//
//   - kb_mv_rows: a simdgroup takes MV_R weight rows against one column;
//     its lanes stride over the row eight elements at a time (the
//     activations loaded once for the MV_R rows, each weight chunk through
//     kb_deq8), and a simd_sum per row ends it.
//   - kb_mm_tile: a threadgroup of four simdgroups (128 threads) computes
//     a MM_BM x MM_BN tile of the result; per MM_BK-long step of the row
//     it dequantizes the weight tile and converts the activation tile
//     into threadgroup memory (float), and each simdgroup multiplies its
//     16x16 part with 8x8 simdgroup matrices (2x2 accumulators). The tile
//     is left in threadgroup memory for the caller to write out.
#pragma once
#include "quants.h"

// kb_act returns the activation at p, of type btype (KB_F32, KB_F16 or
// KB_BF16).
inline float kb_act(int btype, device const char *p) {
	switch (btype) {
	case KB_F16: return float(*(device const half *)p);
	case KB_BF16: return kb_bf2f(*(device const ushort *)p);
	default: return *(device const float *)p;
	}
}

#define MV_NSG 2
#define MV_R 4

// kb_mv_rows returns in sums[r] (in every lane) the dot product of weight
// row r0+r (at abase + row*a_nb1; rows m and past are skipped, their sums
// left 0) with the column at bcol, for r < MV_R.
template <int T>
inline void kb_mv_rows(long k, long m, device const char *abase, long a_nb1, long r0, device const char *bcol,
		int btype, long b_nb0, ushort tiisg, thread float *sums) {
	float acc[MV_R];
	for (int r = 0; r < MV_R; r++) acc[r] = 0.0f;
	for (long c = tiisg; 8 * c < k; c += 32) {
		const long n = kb_minl(8, k - 8 * c);
		float x[8];
		for (int t = 0; t < 8; t++) x[t] = t < n ? kb_act(btype, bcol + (8 * c + t) * b_nb0) : 0.0f;
		for (int r = 0; r < MV_R; r++) {
			if (r0 + r >= m) break;
			device const uchar *arow = (device const uchar *)(abase + (r0 + r) * a_nb1);
			float w[8];
			if (n == 8) {
				kb_deq8<T>(arow, c, w);
			} else {
				for (int t = 0; t < 8; t++) w[t] = t < n ? kb_at<T>(arow, 8 * c + t) : 0.0f;
			}
			float s = 0.0f;
			for (int t = 0; t < 8; t++) s = fma(w[t], x[t], s);
			acc[r] += s;
		}
	}
	for (int r = 0; r < MV_R; r++) sums[r] = simd_sum(acc[r]);
}

#define MM_BM 32
#define MM_BN 32
#define MM_BK 32
#define MM_THREADS 128
// MM_SHMEM is the threadgroup memory kb_mm_tile takes, in floats: the
// weight tile, the activation tile and the result tile.
#define MM_SHMEM ((MM_BM + MM_BN) * MM_BK + MM_BM * MM_BN)

// kb_mm_tile computes the tile of weight rows i0 .. i0+MM_BM-1 (of m, at
// abase + row*a_nb1) by MM_BN activation columns, into shmem's result
// tile [MM_BM][MM_BN] (row i, column j at MM_SHMEM - MM_BM*MM_BN + i*MM_BN
// + j). Thread t loads column t/4 of the tile, which the caller gives as
// bcol (col_ok false for a column past the last: zeros).
template <int T>
inline void kb_mm_tile(long k, long m, device const char *abase, long a_nb1, long i0, device const char *bcol, bool col_ok,
		int btype, long b_nb0, threadgroup float *shmem, ushort tpitg, ushort sgitg) {
	threadgroup float *sa = shmem;                           // [MM_BM][MM_BK]: row i, element l
	threadgroup float *sb = shmem + MM_BM * MM_BK;           // [MM_BK][MM_BN]: element l, column j
	threadgroup float *sc = shmem + (MM_BM + MM_BN) * MM_BK; // [MM_BM][MM_BN]
	// This simdgroup's 16x16 part of the tile.
	const int si = (sgitg / 2) * 16, sj = (sgitg % 2) * 16;
	simdgroup_float8x8 acc[2][2];
	for (int x = 0; x < 2; x++)
		for (int y = 0; y < 2; y++) acc[x][y] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
	// What this thread loads: eight elements of one weight row and of one
	// activation column.
	const int lr = tpitg / 4, lk = (tpitg % 4) * 8;
	const long row = i0 + lr;
	device const uchar *arow = (device const uchar *)(abase + kb_minl(row, m - 1) * a_nb1);
	for (long k0 = 0; k0 < k; k0 += MM_BK) {
		const long l = k0 + lk;
		float w[8];
		if (row < m && l + 8 <= k) {
			kb_deq8<T>(arow, l / 8, w);
		} else {
			for (int t = 0; t < 8; t++) w[t] = row < m && l + t < k ? kb_at<T>(arow, l + t) : 0.0f;
		}
		for (int t = 0; t < 8; t++) sa[lr * MM_BK + lk + t] = w[t];
		for (int t = 0; t < 8; t++) sb[(lk + t) * MM_BN + lr] = col_ok && l + t < k ? kb_act(btype, bcol + (l + t) * b_nb0) : 0.0f;
		threadgroup_barrier(mem_flags::mem_threadgroup);
		for (int kk = 0; kk < MM_BK; kk += 8) {
			simdgroup_float8x8 ma[2], mb[2];
			simdgroup_load(ma[0], sa + si * MM_BK + kk, MM_BK);
			simdgroup_load(ma[1], sa + (si + 8) * MM_BK + kk, MM_BK);
			simdgroup_load(mb[0], sb + kk * MM_BN + sj, MM_BN);
			simdgroup_load(mb[1], sb + kk * MM_BN + sj + 8, MM_BN);
			for (int x = 0; x < 2; x++)
				for (int y = 0; y < 2; y++) simdgroup_multiply_accumulate(acc[x][y], ma[x], mb[y], acc[x][y]);
		}
		threadgroup_barrier(mem_flags::mem_threadgroup);
	}
	for (int x = 0; x < 2; x++)
		for (int y = 0; y < 2; y++) simdgroup_store(acc[x][y], sc + (si + 8 * x) * MM_BN + sj + 8 * y, MM_BN);
	threadgroup_barrier(mem_flags::mem_threadgroup);
}
