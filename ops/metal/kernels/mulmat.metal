// mulmat.metal: MUL_MAT, dst[i, j] = sum_l a[l, i] * b[l, j] per batch,
// for weights a of every float and block type (rows packed) and
// activations b of f32, f16 or bf16 at any strides, with a broadcast over
// dims 2-3. Two kernels:
//
//   - kb_mul_mv_<type>, matrix-vector, for few activation columns: a
//     threadgroup of MV_NSG simdgroups takes MV_NSG*MV_R weight rows of
//     one column; each simdgroup takes MV_R rows, its lanes stride over
//     the row eight elements at a time (the activations loaded once for
//     the MV_R rows, each weight chunk through the type's dequantizer),
//     and a simd_sum per row ends it;
//   - kb_mul_mm_<type>, matrix-matrix: a threadgroup of four simdgroups
//     computes a 32x32 tile of dst; per 32-long step of the row it
//     dequantizes the weight tile and converts the activation tile into
//     threadgroup memory (float), and each simdgroup multiplies its 16x16
//     part with 8x8 simdgroup matrices (2x2 accumulators).
#include "quants.h"

struct kb_mm_args {
	kb_tensor a, b, d;
	long r2, r3; // b2/a2 and b3/a3: the broadcast of a
	int btype;   // the activations' type: KB_F32, KB_F16 or KB_BF16
};

// kb_act returns activation i of a row of b.
inline float kb_act(constant kb_mm_args &args, device const char *row, long i) {
	device const char *p = row + i * args.b.nb[0];
	switch (args.btype) {
	case KB_F16: return float(*(device const half *)p);
	case KB_BF16: return kb_bf2f(*(device const ushort *)p);
	default: return *(device const float *)p;
	}
}

#define MV_NSG 2
#define MV_R 4

template <int T>
kernel void kb_mul_mv(
		constant kb_mm_args &args [[buffer(0)]],
		device const char *a [[buffer(1)]],
		device const char *b [[buffer(2)]],
		device char *d [[buffer(3)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tiisg [[thread_index_in_simdgroup]],
		ushort sgitg [[simdgroup_index_in_threadgroup]]) {
	const long k = args.a.ne[0], m = args.a.ne[1];
	const long r0 = (long(tgpig.x) * MV_NSG + sgitg) * MV_R;
	const long j = tgpig.y;
	const long i2 = tgpig.z % args.d.ne[2], i3 = tgpig.z / args.d.ne[2];
	device const char *bcol = b + kb_row(args.b, j, i2, i3);
	device const char *abase = a + (i2 / args.r2) * args.a.nb[2] + (i3 / args.r3) * args.a.nb[3];
	float acc[MV_R];
	for (int r = 0; r < MV_R; r++) acc[r] = 0.0f;
	for (long c = tiisg; 8 * c < k; c += 32) {
		const long n = min(8L, k - 8 * c);
		float x[8];
		for (int t = 0; t < 8; t++) x[t] = t < n ? kb_act(args, bcol, 8 * c + t) : 0.0f;
		for (int r = 0; r < MV_R; r++) {
			if (r0 + r >= m) break;
			device const uchar *arow = (device const uchar *)(abase + (r0 + r) * args.a.nb[1]);
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
	device char *dcol = d + kb_row(args.d, j, i2, i3);
	for (int r = 0; r < MV_R; r++) {
		const float s = simd_sum(acc[r]);
		if (tiisg == 0 && r0 + r < m) *(device float *)(dcol + (r0 + r) * args.d.nb[0]) = s;
	}
}

// The matrix-matrix tile: MM_BM weight rows by MM_BN activation columns,
// MM_BK elements of the row per step, 128 threads.
#define MM_BM 32
#define MM_BN 32
#define MM_BK 32

template <int T>
kernel void kb_mul_mm(
		constant kb_mm_args &args [[buffer(0)]],
		device const char *a [[buffer(1)]],
		device const char *b [[buffer(2)]],
		device char *d [[buffer(3)]],
		threadgroup float *shmem [[threadgroup(0)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort sgitg [[simdgroup_index_in_threadgroup]]) {
	threadgroup float *sa = shmem;                         // [MM_BM][MM_BK]: row i, element l
	threadgroup float *sb = shmem + MM_BM * MM_BK;         // [MM_BK][MM_BN]: element l, column j
	threadgroup float *sc = shmem + (MM_BM + MM_BN) * MM_BK; // [MM_BM][MM_BN]: the result tile
	const long k = args.a.ne[0], m = args.a.ne[1], n = args.b.ne[1];
	const long i0 = long(tgpig.x) * MM_BM, j0 = long(tgpig.y) * MM_BN;
	const long i2 = tgpig.z % args.d.ne[2], i3 = tgpig.z / args.d.ne[2];
	device const char *abase = a + (i2 / args.r2) * args.a.nb[2] + (i3 / args.r3) * args.a.nb[3];
	device const char *bbase = b + i2 * args.b.nb[2] + i3 * args.b.nb[3];
	// This simdgroup's 16x16 part of the tile.
	const int si = (sgitg / 2) * 16, sj = (sgitg % 2) * 16;
	simdgroup_float8x8 acc[2][2];
	for (int x = 0; x < 2; x++)
		for (int y = 0; y < 2; y++) acc[x][y] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
	// What this thread loads: eight elements of one weight row and of one
	// activation column.
	const int lr = tpitg / 4, lk = (tpitg % 4) * 8;
	const long row = i0 + lr, col = j0 + lr;
	device const uchar *arow = (device const uchar *)(abase + min(row, m - 1) * args.a.nb[1]);
	device const char *bcol = bbase + min(col, n - 1) * args.b.nb[1];
	for (long k0 = 0; k0 < k; k0 += MM_BK) {
		const long l = k0 + lk;
		float w[8];
		if (row < m && l + 8 <= k) {
			kb_deq8<T>(arow, l / 8, w);
		} else {
			for (int t = 0; t < 8; t++) w[t] = row < m && l + t < k ? kb_at<T>(arow, l + t) : 0.0f;
		}
		for (int t = 0; t < 8; t++) sa[lr * MM_BK + lk + t] = w[t];
		for (int t = 0; t < 8; t++) sb[(lk + t) * MM_BN + lr] = col < n && l + t < k ? kb_act(args, bcol, l + t) : 0.0f;
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
	device char *dbase = d + i2 * args.d.nb[2] + i3 * args.d.nb[3];
	for (int idx = tpitg; idx < MM_BM * MM_BN; idx += 128) {
		const int ii = idx % MM_BM, jj = idx / MM_BM;
		if (i0 + ii < m && j0 + jj < n) {
			*(device float *)(dbase + (i0 + ii) * args.d.nb[0] + (j0 + jj) * args.d.nb[1]) = sc[ii * MM_BN + jj];
		}
	}
}

typedef decltype(kb_mul_mv<KB_F32>) kb_mul_mv_t;
typedef decltype(kb_mul_mm<KB_F32>) kb_mul_mm_t;
#define KB_MUL_MAT(name, T)                                                                       \
	template [[host_name(KB_STR(kb_mul_mv_##name))]] kernel kb_mul_mv_t kb_mul_mv<T>;            \
	template [[host_name(KB_STR(kb_mul_mm_##name))]] kernel kb_mul_mm_t kb_mul_mm<T>;
KB_FOR_WEIGHT_TYPES(KB_MUL_MAT)
