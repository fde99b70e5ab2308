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
//     a 64x32 tile of the result (64 weight rows by 32 activation
//     columns, each simdgroup 32x16 with 4x2 float accumulators); per
//     32-long step of the row each thread decodes 16 contiguous weights
//     with a whole-block decoder (dequant.h) and reads 8 activations as
//     vectors, both into threadgroup memory as half (float for the types
//     whose tolerance is f32's), and the simdgroups multiply half (or
//     float) 8x8 simdgroup matrices. The tile is left in threadgroup
//     memory for the caller to write out.
#pragma once
#include "dequant.h"

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

// The simdgroup-matrix tile: MM_BM weight rows by MM_BN activation
// columns per threadgroup of MM_THREADS (four simdgroups, each MM_BM/2 x
// MM_BN/2 of the result), MM_BK of the row per step.
#define MM_BM 64
#define MM_BN 32
#define MM_BK 32
#define MM_THREADS 128
// MM_LD is the row stride of the weight and activation tiles in
// threadgroup memory: 8 elements of padding, so the eight rows an 8x8
// simdgroup load reads start on different banks.
#define MM_LD (MM_BK + 8)
// MM_LDC is the column stride of the result tile (column-major, float):
// 8 floats of padding, so a transposed 8x8 store spreads over the banks.
#define MM_LDC (MM_BM + 8)

// kb_mm_elem<T>::type (and type4, its 4-vector) is the element type of the tiles in threadgroup
// memory, and so of the simdgroup matrices, for weights of type T: half,
// whose products the matrix units run at twice float's rate, except for
// the types whose tolerance is f32's (f32, bf16 with its 8-bit exponent,
// and q8_1 and q8_K, whose dot products ggml runs against f32
// activations), which keep float tiles.
template <int T>
struct kb_mm_elem {
	typedef half type;
	typedef half4 type4;
};
template <>
struct kb_mm_elem<KB_F32> {
	typedef float type;
	typedef float4 type4;
};
template <>
struct kb_mm_elem<KB_BF16> {
	typedef float type;
	typedef float4 type4;
};
template <>
struct kb_mm_elem<KB_Q8_1> {
	typedef float type;
	typedef float4 type4;
};
template <>
struct kb_mm_elem<KB_Q8_K> {
	typedef float type;
	typedef float4 type4;
};

// How kb_mm_tile reads the activations (the host's bvec argument): one
// element at a time (any type and stride), or eight as two float4 (f32,
// contiguous, every column 16-byte aligned) or as two half4 (f16, every
// column 8-byte aligned).
#define MM_B_SCALAR 0
#define MM_B_F32X4 1
#define MM_B_F16X4 2

// kb_mm_act8 reads activations l .. l+3 and l+16 .. l+19 of the column at
// bcol (zeros past k, or for a column past the last, col_ok false): the
// four threads of a column read 64 contiguous bytes of f32 per load.
inline void kb_mm_act8(device const char *bcol, bool col_ok, long l, long k, int btype, long b_nb0, int bvec,
		thread float4 &x0, thread float4 &x1) {
	if (col_ok && l + 20 <= k && bvec == MM_B_F32X4) {
		device const float4 *p = (device const float4 *)(bcol + l * 4);
		x0 = p[0];
		x1 = p[4];
	} else if (col_ok && l + 20 <= k && bvec == MM_B_F16X4) {
		device const half4 *p = (device const half4 *)(bcol + l * 2);
		x0 = float4(p[0]);
		x1 = float4(p[4]);
	} else {
		float x[8];
		for (int t = 0; t < 8; t++) {
			const long e = l + t % 4 + 16 * (t / 4);
			x[t] = col_ok && e < k ? kb_act(btype, bcol + e * b_nb0) : 0.0f;
		}
		x0 = float4(x[0], x[1], x[2], x[3]);
		x1 = float4(x[4], x[5], x[6], x[7]);
	}
}

// kb_mm_tile computes the tile of weight rows i0 .. i0+MM_BM-1 (of m, at
// abase + row*a_nb1) by MM_BN activation columns into the result tile of
// shmem: column-major floats, row i and column j at shmem[j*MM_LDC + i],
// left there for the caller to write out (after a barrier).
//
// Per MM_BK step, thread t decodes 16 contiguous weights of row t/2 (a
// whole-block decoder, kb_row16) and reads 8 activations of column t/4
// (kb_mm_act8: two vectors where bvec allows; the caller gives that
// column as bcol, with col_ok false past the last: zeros), both stored as
// rows of threadgroup memory in kb_mm_elem<T>'s type (the activation tile
// as its columns, loaded transposed by the simdgroups). Simdgroup s multiplies
// rows 32*(s%2) .. +31 by columns 16*(s/2) .. +15 with 8x8 simdgroup
// matrices of that type into 4x2 float accumulators.
template <int T>
inline void kb_mm_tile(long k, long m, device const char *abase, long a_nb1, long i0, device const char *bcol, bool col_ok,
		int btype, long b_nb0, int bvec, threadgroup float *shmem, ushort tpitg, ushort sgitg) {
	typedef typename kb_mm_elem<T>::type S;
	typedef typename kb_mm_elem<T>::type4 S4;
	threadgroup S *sa = (threadgroup S *)shmem; // [MM_BM][MM_LD]: row i, element l
	threadgroup S *sb = sa + MM_BM * MM_LD;     // [MM_BN][MM_LD]: column j, element l
	const int si = (sgitg % 2) * 32, sj = (sgitg / 2) * 16;
	simdgroup_float8x8 acc[4][2];
	for (int x = 0; x < 4; x++)
		for (int y = 0; y < 2; y++) acc[x][y] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
	// What this thread loads: 16 weights of one row, 8 activations of
	// one column.
	const int lr = tpitg / 2, la = (tpitg % 2) * 16, sw = tpitg % 2;
	const int lc = tpitg / 4, lb = (tpitg % 4) * 4;
	const long row = i0 + lr;
	device const uchar *arow = (device const uchar *)(abase + kb_minl(row, m - 1) * a_nb1);
	threadgroup S4 *wa = (threadgroup S4 *)(sa + lr * MM_LD + la);
	threadgroup S4 *wb = (threadgroup S4 *)(sb + lc * MM_LD + lb);
	for (long k0 = 0; k0 < k; k0 += MM_BK) {
		const long l = k0 + la;
		float w[16];
		if (l + 16 <= k) {
			kb_row16<T>(arow, l / 16, w);
		} else {
			// The row's tail (float types only: a block type's row is whole
			// blocks of 32 or 256).
			for (int t = 0; t < 16; t++) w[t] = l + t < k ? kb_at<T>(arow, l + t) : 0.0f;
		}
		// The second half of a row (la = 16) starts 8 words after the
		// first, on the bank where the first half of row lr+2 starts; it
		// stores its four vectors in the order 1, 0, 3, 2 (a select, not
		// an indexed register), so that the 16 threads of each phase of
		// an 8-byte store hit 32 distinct banks.
		for (int v = 0; v < 4; v += 2) {
			const float4 p = float4(w[4 * v], w[4 * v + 1], w[4 * v + 2], w[4 * v + 3]);
			const float4 q = float4(w[4 * v + 4], w[4 * v + 5], w[4 * v + 6], w[4 * v + 7]);
			wa[v + sw] = S4(sw ? q : p);
			wa[v + 1 - sw] = S4(sw ? p : q);
		}
		float4 x0, x1;
		kb_mm_act8(bcol, col_ok, k0 + lb, k, btype, b_nb0, bvec, x0, x1);
		wb[0] = S4(x0);
		wb[4] = S4(x1);
		threadgroup_barrier(mem_flags::mem_threadgroup);
		for (int kk = 0; kk < MM_BK; kk += 8) {
			simdgroup_matrix<S, 8, 8> ma[4], mb[2];
			for (int x = 0; x < 4; x++) simdgroup_load(ma[x], sa + (si + 8 * x) * MM_LD + kk, MM_LD);
			for (int y = 0; y < 2; y++) simdgroup_load(mb[y], sb + (sj + 8 * y) * MM_LD + kk, MM_LD, 0, true);
			for (int x = 0; x < 4; x++)
				for (int y = 0; y < 2; y++) simdgroup_multiply_accumulate(acc[x][y], ma[x], mb[y], acc[x][y]);
		}
		threadgroup_barrier(mem_flags::mem_threadgroup);
	}
	for (int x = 0; x < 4; x++)
		for (int y = 0; y < 2; y++)
			simdgroup_store(acc[x][y], shmem + (sj + 8 * y) * MM_LDC + si + 8 * x, MM_LDC, 0, true);
	threadgroup_barrier(mem_flags::mem_threadgroup);
}
