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
//     columns, each simdgroup 32x16 with 4x2 float accumulators); for
//     the legacy types and the K-quants the threadgroup first copies the
//     raw bytes of 256 elements of its 64 rows into threadgroup memory,
//     16-byte loads of consecutive words spread over its threads
//     (kb_mm_wload); per 32-long step of the row each thread decodes 16
//     contiguous weights with a whole-block decoder (dequant.h), from
//     that copy or, for the other types, from device memory, and reads 8
//     activations as vectors, both into threadgroup memory as half (float
//     for the types whose tolerance is f32's), and the simdgroups
//     multiply half (or float) 8x8 simdgroup matrices. The tile is left
//     in threadgroup memory for the caller to write out.
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

// The raw copy (kb_mm_wload<T, true>): MM_KS elements of each of the
// tile's rows a stage, for the types of kb_mm_coop: whole blocks of 32
// (eight of them) or one super-block of 256, whose 2-byte aligned fields
// the decoders read from threadgroup memory as from device memory.
#define MM_KS 256

// kb_mm_coop says whether the tile copies rows of type t raw into
// threadgroup memory: the legacy 4-, 5- and 8-bit types, IQ4_NL and the
// 2- to 6-bit K-quants. The others decode from device memory: the float
// types (no decoding to share), q8_1 and q8_K (float tiles, which leave
// no room for the copy), MXFP4 (17-byte blocks, odd addresses) and the
// codebook and ternary formats (their decoders read device memory
// only).
constexpr bool kb_mm_coop(int t) {
	return t == KB_Q4_0 || t == KB_Q4_1 || t == KB_Q5_0 || t == KB_Q5_1 || t == KB_Q8_0 || t == KB_IQ4_NL ||
			t == KB_Q2_K || t == KB_Q3_K || t == KB_Q4_K || t == KB_Q5_K || t == KB_Q6_K;
}

// kb_mm_raw_stride is the threadgroup memory of one row's copy, in bytes
// (0 where there is none): the 16-byte words that hold MM_KS elements'
// bytes starting at any even offset of a word, and 8 more, so that the
// rows are an odd number of 8-byte words apart and the 16 rows a
// simdgroup decodes start on 16 different banks (words are stored as two
// 8-byte halves). The host's mmRawStride says the same.
constexpr int kb_mm_raw_stride(int t) {
	return !kb_mm_coop(t) ? 0 : 16 * ((kb_bytes(t) * (MM_KS / kb_block(t)) + 29) / 16) + 8;
}

// kb_mm_wload<T> reads the tile's weights for kb_mm_tile: init binds the
// tile's rows (rows i0 .. i0+MM_BM-1 of m at abase + row*a_nb1, rows past
// m read as row m-1; abase lies amis bytes past a 16-byte boundary),
// stage(k0) prepares elements k0 .. k0+MM_KS-1 of them (all the
// threadgroup's threads call it), and row16(k0, l, w) decodes elements l
// .. l+15 (in that stage) of the row of thread tpitg, tpitg/2.
template <int T, bool C = kb_mm_coop(T)>
struct kb_mm_wload;

// kb_mm_row16_vec reads the 16 f32, f16 or bf16 values at p (16-byte
// aligned) with 16-byte loads: 64 or 32 contiguous bytes a thread.
template <int T>
inline void kb_mm_row16_vec(device const uchar *p, thread float *w) {
	// The vectors are copied whole into registers first (the emulator's
	// g++ would otherwise split a load whose components are used one by
	// one into scalar loads, which a Metal compiler does not).
	if (T == KB_F32) {
		device const float4 *q = (device const float4 *)p;
		float4 x[4];
		for (int v = 0; v < 4; v++) x[v] = q[v];
		for (int v = 0; v < 4; v++) {
			w[4 * v] = x[v].x;
			w[4 * v + 1] = x[v].y;
			w[4 * v + 2] = x[v].z;
			w[4 * v + 3] = x[v].w;
		}
		return;
	}
	device const uint4 *q = (device const uint4 *)p;
	uint4 x[2];
	for (int v = 0; v < 2; v++) x[v] = q[v];
	for (int v = 0; v < 2; v++) {
		const uint u[4] = {x[v].x, x[v].y, x[v].z, x[v].w};
		for (int i = 0; i < 8; i++) {
			const ushort h = ushort(i % 2 == 0 ? u[i / 2] & 0xffffu : u[i / 2] >> 16);
			w[8 * v + i] = T == KB_BF16 ? kb_bf2f(h) : kb_h2f(h);
		}
	}
}

// Without the copy: each thread decodes from device memory, the float
// types with 16-byte loads where every row is 16-byte aligned (a
// simdgroup's request then reads the 32 or 64 contiguous bytes of each of
// its 16 rows: no byte moved that is not used).
template <int T>
struct kb_mm_wload<T, false> {
	device const uchar *arow;
	long k;
	bool vec;
	inline void init(device const char *abase, long a_nb1, long m, long i0, long k_, int amis, threadgroup uchar *,
			ushort tpitg) {
		arow = (device const uchar *)(abase + kb_minl(i0 + tpitg / 2, m - 1) * a_nb1);
		k = k_;
		vec = (T == KB_F32 || T == KB_F16 || T == KB_BF16) && amis == 0 && (a_nb1 & 15) == 0;
	}
	inline void stage(long) {}
	inline void row16(long, long l, thread float *w) {
		if (vec && l + 16 <= k) {
			kb_mm_row16_vec<T>(arow + l * kb_bytes(T), w);
		} else if (l + 16 <= k) {
			kb_row16<T>(arow, l / 16, w);
		} else {
			// The row's tail (float types only: a block type's row is
			// whole blocks of 32 or 256).
			for (int t = 0; t < 16; t++) w[t] = l + t < k ? kb_at<T>(arow, l + t) : 0.0f;
		}
	}
};

// With the copy: stage copies each row's bytes of the stage, [s, s+len)
// from abase, as the aligned 16-byte words that hold them, word w of row
// r at raw + r*RS + 16w (RS = kb_mm_raw_stride); consecutive threads take consecutive words of a
// row, then of the next, so a simdgroup's request reads contiguous bytes
// of two or three rows. A word that is not wholly inside the tile's rows
// (before the first row's start, past the last row's end) is copied a
// byte at a time, its bytes of the range only. The bytes of a word
// outside [s, s+len) belong to the row's other stages or a neighboring
// row: read, never decoded.
template <int T>
struct kb_mm_wload<T, true> {
	device const char *abase;
	long a_nb1, m, i0, k, hi;
	int amis;
	threadgroup uchar *raw;
	ushort tpitg;
	threadgroup const uchar *mine; // this thread's row in the copy, at byte s

	inline void init(device const char *abase_, long a_nb1_, long m_, long i0_, long k_, int amis_,
			threadgroup uchar *raw_, ushort tpitg_) {
		abase = abase_;
		a_nb1 = a_nb1_;
		m = m_;
		i0 = i0_;
		k = k_;
		amis = amis_;
		raw = raw_;
		tpitg = tpitg_;
		hi = (m - 1) * a_nb1 + (k / kb_block(T)) * kb_bytes(T);
	}
	inline void stage(long k0) {
		const int RS = kb_mm_raw_stride(T);
		const long koff = (k0 / kb_block(T)) * kb_bytes(T);
		const long len = (kb_minl(MM_KS, k - k0) / kb_block(T)) * kb_bytes(T);
		// Words per row: the first row's where the rows are 16-byte
		// apart (all alike), else the most any row takes.
		const long s0 = kb_minl(i0, m - 1) * a_nb1 + koff;
		const int nw = (a_nb1 & 15) == 0 ? int((((amis + s0) & 15) + len + 15) / 16) : int((len + 30) / 16);
		for (int idx = tpitg; idx < MM_BM * nw; idx += MM_THREADS) {
			const int r = idx / nw, wi = idx - r * nw;
			const long s = kb_minl(i0 + r, m - 1) * a_nb1 + koff;
			const long as = (amis + s) & 15;
			if (16 * wi >= as + len) continue; // past this row's range
			const long wa = s - as + 16 * wi;
			threadgroup uchar *dst = raw + r * RS + 16 * wi;
			if (wa >= 0 && wa + 16 <= hi) {
				const uint4 v = *(device const uint4 *)(abase + wa);
				threadgroup uint2 *d2 = (threadgroup uint2 *)dst;
				d2[0] = uint2(v.x, v.y);
				d2[1] = uint2(v.z, v.w);
			} else {
				for (int j = 0; j < 16; j++)
					if (wa + j >= s && wa + j < s + len) dst[j] = ((device const uchar *)abase)[wa + j];
			}
		}
		const long s = kb_minl(i0 + tpitg / 2, m - 1) * a_nb1 + koff;
		mine = raw + (tpitg / 2) * RS + ((amis + s) & 15);
		threadgroup_barrier(mem_flags::mem_threadgroup);
	}
	inline void row16(long k0, long l, thread float *w) {
		const int e = int(l - k0);
		kb_dq16<T>(mine + (e / kb_block(T)) * kb_bytes(T), (e % kb_block(T)) / 16, w);
	}
};

// kb_mm_tile computes the tile of weight rows i0 .. i0+MM_BM-1 (of m, at
// abase + row*a_nb1) by MM_BN activation columns into the result tile of
// shmem: column-major floats, row i and column j at shmem[j*MM_LDC + i],
// left there for the caller to write out (after a barrier).
//
// Per MM_BK step, thread t decodes 16 contiguous weights of row t/2 (a
// whole-block decoder through kb_mm_wload, from its raw copy or from
// device memory; abase lies amis bytes past a 16-byte boundary) and
// reads 8 activations of column t/4 (kb_mm_act8: two vectors where bvec
// allows; the caller gives that column as bcol, with col_ok false past
// the last: zeros), both stored as
// rows of threadgroup memory in kb_mm_elem<T>'s type (the activation tile
// as its columns, loaded transposed by the simdgroups). Simdgroup s multiplies
// rows 32*(s%2) .. +31 by columns 16*(s/2) .. +15 with 8x8 simdgroup
// matrices of that type into 4x2 float accumulators.
template <int T>
inline void kb_mm_tile(long k, long m, device const char *abase, long a_nb1, int amis, long i0, device const char *bcol,
		bool col_ok, int btype, long b_nb0, int bvec, threadgroup float *shmem, ushort tpitg, ushort sgitg) {
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
	kb_mm_wload<T> wl;
	wl.init(abase, a_nb1, m, i0, k, amis, (threadgroup uchar *)(sb + MM_BN * MM_LD), tpitg);
	threadgroup S4 *wa = (threadgroup S4 *)(sa + lr * MM_LD + la);
	threadgroup S4 *wb = (threadgroup S4 *)(sb + lc * MM_LD + lb);
	for (long k0 = 0; k0 < k; k0 += MM_KS) {
		wl.stage(k0);
		for (long kk0 = k0; kk0 < kb_minl(k0 + MM_KS, k); kk0 += MM_BK) {
			float w[16];
			wl.row16(k0, kk0 + la, w);
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
			kb_mm_act8(bcol, col_ok, kk0 + lb, k, btype, b_nb0, bvec, x0, x1);
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
	}
	for (int x = 0; x < 4; x++)
		for (int y = 0; y < 2; y++)
			simdgroup_store(acc[x][y], shmem + (sj + 8 * y) * MM_LDC + si + 8 * x, MM_LDC, 0, true);
	threadgroup_barrier(mem_flags::mem_threadgroup);
}
