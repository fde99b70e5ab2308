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

// kb_mul_mv reads its arguments in one request: lane i < 14 takes word
// i of kb_mv_args's 224 bytes (16-byte loads), and simd_shuffle hands
// the eleven words the kernel uses to every lane (kb_mv_lo and kb_mv_hi:
// a word's first and second long), where a field read one by one would
// be a request each (about 23 a simdgroup, as many as the weights of
// four q4_0 rows of k = 4096 take with the raw copy).
static_assert(sizeof(kb_mv_args) == 224, "kb_mv_args: 14 words of 16 bytes");
inline long kb_mv_lo(uint4 v) { return as_type<long>(uint2(v.x, v.y)); }
inline long kb_mv_hi(uint4 v) { return as_type<long>(uint2(v.z, v.w)); }

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
	// The vector is copied whole into registers (see mv.h's kb_mv_x8).
	uint4 wl[1];
	for (int i = 0; i < 1; i++) wl[i] = tiisg < 14 ? ((constant uint4 *)&args)[tiisg] : uint4(0);
	const uint4 w = wl[0];
	const uint4 a_ne01 = simd_shuffle(w, 0), a_nb01 = simd_shuffle(w, 2), a_nb23 = simd_shuffle(w, 3);
	const uint4 b_ne01 = simd_shuffle(w, 4), b_nb01 = simd_shuffle(w, 6), b_nb23 = simd_shuffle(w, 7);
	const uint4 d_ne23 = simd_shuffle(w, 9), d_nb01 = simd_shuffle(w, 10), d_nb23 = simd_shuffle(w, 11);
	const uint4 r23 = simd_shuffle(w, 12), flags = simd_shuffle(w, 13); // btype, bvec, avec, amis
	const int NR = kb_mv<T>::NR;
	const long k = kb_mv_lo(a_ne01), m = kb_mv_hi(a_ne01), a_nb1 = kb_mv_hi(a_nb01);
	const long r0 = (long(tgpig.x) * KB_MV_NSG + sgitg) * NR;
	if (r0 >= m) return;
	const int n = int(kb_mv_hi(b_ne01));
	const long d_ne2 = kb_mv_lo(d_ne23);
	const long i2 = tgpig.z % d_ne2, i3 = tgpig.z / d_ne2;
	const long aoff = (i2 / kb_mv_lo(r23)) * kb_mv_lo(a_nb23) + (i3 / kb_mv_hi(r23)) * kb_mv_hi(a_nb23);
	float acc[NR * KB_MV_NC];
	for (int i = 0; i < NR * KB_MV_NC; i++) acc[i] = 0.0f;
	kb_mv_core<T>::run(k, a + aoff, a_nb1, r0, int(kb_minl(m - r0, NR)), int((long(flags.w) + aoff) & 15),
			(m - 1) * a_nb1 + (k / kb_block(T)) * kb_bytes(T), shmem + sgitg * kb_mv_raw<T>::BYTES,
			b + i2 * kb_mv_lo(b_nb23) + i3 * kb_mv_hi(b_nb23), kb_mv_hi(b_nb01), n, int(flags.x), kb_mv_lo(b_nb01),
			flags.y != 0, flags.z != 0, tiisg, acc);
	const long d_nb0 = kb_mv_lo(d_nb01), d_nb1 = kb_mv_hi(d_nb01);
	device char *dbase = d + i2 * kb_mv_lo(d_nb23) + i3 * kb_mv_hi(d_nb23);
	for (int c = 0; c < KB_MV_NC; c++) {
		if (c >= n) break;
		for (int r = 0; r < NR; r++) {
			const float s = simd_sum(acc[r * KB_MV_NC + c]);
			if (tiisg == 0 && r0 + r < m) *(device float *)(dbase + c * d_nb1 + (r0 + r) * d_nb0) = s;
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
