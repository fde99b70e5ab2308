// mul_mat.metal: MUL_MAT, dst[i, j] = sum_l a[l, i] * b[l, j] per batch,
// for weights a of every float and block type (rows packed) and
// activations b of f32, f16 or bf16 at any strides, with a broadcast over
// dims 2-3 (the cores are in mm.h):
//
//   - kb_mul_mv_<type>, matrix-vector, for up to KB_MV_NC (8) activation
//     columns: a threadgroup of KB_MV_NSG simdgroups takes KB_MV_NSG*NR
//     weight rows (NR per type: kb_mv<T>::NR, mv.h) against all the
//     columns, each weight block read once for them (for the legacy
//     types and the K-quants each simdgroup first copies its rows raw
//     into its region of threadgroup memory, kb_mv_core);
//   - kb_mul_mm_<type>, matrix-matrix: a threadgroup computes a 64x32
//     tile of dst (64 weight rows by 32 columns) with simdgroup matrices,
//     half for most weight types (mm.h's kb_mm_tile).
#include "mm.h"
#include "mv.h"

struct kb_mm_args {
	kb_tensor a, b, d;
	long r2, r3; // b2/a2 and b3/a3: the broadcast of a
	int btype;   // the activations' type: KB_F32, KB_F16 or KB_BF16
	int bvec;    // how kb_mm_tile reads them: MM_B_SCALAR, MM_B_F32X4 or MM_B_F16X4
	int amis;    // a's binding offset modulo 16 (kb_mm_tile's amis)
};

// kb_mv_args: kb_mul_mv's arguments, kb_mm_args's first fields, whether the
// columns (bvec) and, for float weights, the rows (avec) take vector
// loads, and a's binding offset modulo 16 (amis, for the raw copy).
struct kb_mv_args {
	kb_tensor a, b, d;
	long r2, r3;
	int btype, bvec, avec, amis;
};

template <int T>
kernel void kb_mul_mv(
		constant kb_mv_args &args [[buffer(0)]],
		device const char *a [[buffer(1)]],
		device const char *b [[buffer(2)]],
		device char *d [[buffer(3)]],
		threadgroup uchar *shmem [[threadgroup(0)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tiisg [[thread_index_in_simdgroup]],
		ushort sgitg [[simdgroup_index_in_threadgroup]]) {
	const int NR = kb_mv<T>::NR;
	const long m = args.a.ne[1];
	const long r0 = (long(tgpig.x) * KB_MV_NSG + sgitg) * NR;
	if (r0 >= m) return;
	const int n = int(args.b.ne[1]);
	const long i2 = tgpig.z % args.d.ne[2], i3 = tgpig.z / args.d.ne[2];
	const long k = args.a.ne[0], a_nb1 = args.a.nb[1];
	const long aoff = (i2 / args.r2) * args.a.nb[2] + (i3 / args.r3) * args.a.nb[3];
	float acc[NR * KB_MV_NC];
	for (int i = 0; i < NR * KB_MV_NC; i++) acc[i] = 0.0f;
	kb_mv_core<T>::run(k, a + aoff, a_nb1, r0, int(kb_minl(m - r0, NR)), int((args.amis + aoff) & 15),
			(m - 1) * a_nb1 + (k / kb_block(T)) * kb_bytes(T), shmem + sgitg * kb_mv_raw<T>::BYTES,
			b + kb_row(args.b, 0, i2, i3), args.b.nb[1], n, args.btype, args.b.nb[0], args.bvec != 0, args.avec != 0,
			tiisg, acc);
	for (int c = 0; c < KB_MV_NC; c++) {
		if (c >= n) break;
		device char *dcol = d + kb_row(args.d, c, i2, i3);
		for (int r = 0; r < NR; r++) {
			const float s = simd_sum(acc[r * KB_MV_NC + c]);
			if (tiisg == 0 && r0 + r < m) *(device float *)(dcol + (r0 + r) * args.d.nb[0]) = s;
		}
	}
}

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
	const long m = args.a.ne[1], n = args.b.ne[1];
	const long i0 = long(tgpig.x) * MM_BM, j0 = long(tgpig.y) * MM_BN;
	const long i2 = tgpig.z % args.d.ne[2], i3 = tgpig.z / args.d.ne[2];
	const long aoff = (i2 / args.r2) * args.a.nb[2] + (i3 / args.r3) * args.a.nb[3];
	device const char *abase = a + aoff;
	const long col = j0 + tpitg / 4;
	device const char *bcol = b + kb_row(args.b, kb_minl(col, n - 1), i2, i3);
	kb_mm_tile<T>(args.a.ne[0], m, abase, args.a.nb[1], int((args.amis + aoff) & 15), i0, bcol, col < n, args.btype,
			args.b.nb[0], args.bvec, shmem, tpitg, sgitg);
	device char *dbase = d + i2 * args.d.nb[2] + i3 * args.d.nb[3];
	const long dnb0 = args.d.nb[0], dnb1 = args.d.nb[1]; // read once, not per store
	for (int idx = tpitg; idx < MM_BM * MM_BN; idx += MM_THREADS) {
		const int ii = idx % MM_BM, jj = idx / MM_BM;
		if (i0 + ii < m && j0 + jj < n) {
			*(device float *)(dbase + (i0 + ii) * dnb0 + (j0 + jj) * dnb1) = shmem[jj * MM_LDC + ii];
		}
	}
}

typedef decltype(kb_mul_mv<KB_F32>) kb_mul_mv_t;
typedef decltype(kb_mul_mm<KB_F32>) kb_mul_mm_t;
#define KB_MUL_MAT(name, T)                                                            \
	template [[host_name(KB_STR(kb_mul_mv_##name))]] kernel kb_mul_mv_t kb_mul_mv<T>; \
	template [[host_name(KB_STR(kb_mul_mm_##name))]] kernel kb_mul_mm_t kb_mul_mm<T>;
KB_FOR_WEIGHT_TYPES(KB_MUL_MAT)
