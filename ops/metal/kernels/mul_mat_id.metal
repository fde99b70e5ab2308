// mul_mat_id.metal: MUL_MAT_ID, the matrix products of a MoE layer:
// dst[:, e, t] = experts[:, :, ids[e, t]] · b[:, e % b1, t] for every slot
// e of every token t (a "pair" p = e + used*t).
//
//   - kb_mul_mv_id_<type>: for few tokens, one threadgroup per pair and
//     MV_NSG*MV_R expert rows, as MUL_MAT's matrix-vector kernel;
//   - grouped by expert for more: kb_mmid_map lists, per expert, the
//     pairs that use it (one simdgroup per expert, in pair order, by
//     prefix sums of a ballot), then kb_mul_mm_id_<type> runs the
//     simdgroup-matrix tile of MUL_MAT (64 expert rows by 32 pairs, half
//     for most types) over each expert's rows times the activation
//     columns of its pairs (gathered through the map), scattering the
//     results.
//     Threadgroups past an expert's count return at once.
//
// An id outside [0, n_expert) sets the status words (1, the id); its
// pair's output is left as it was.
#include "mm.h"

struct kb_mmid_args {
	kb_tensor a, b, ids, d;
	int btype;
	int used, b1, n_pairs;
	int bvec; // how kb_mm_tile reads the activations (MM_B_*)
	int amis; // the weights' binding offset modulo 16 (kb_mm_tile's amis)
};

// kb_mmid_id reads the expert of pair p and checks it.
inline int kb_mmid_id(constant kb_mmid_args &args, device const char *ids, long p, thread long &e, thread long &t) {
	e = p % args.used;
	t = p / args.used;
	return *(device const int *)(ids + e * args.ids.nb[0] + t * args.ids.nb[1]);
}

inline void kb_mmid_bad(device atomic_int *status, int id) {
	atomic_fetch_max_explicit(&status[0], 1, memory_order_relaxed);
	atomic_exchange_explicit(&status[1], id, memory_order_relaxed);
}

template <int T>
kernel void kb_mul_mv_id(
		constant kb_mmid_args &args [[buffer(0)]],
		device const char *a [[buffer(1)]],
		device const char *b [[buffer(2)]],
		device const char *ids [[buffer(3)]],
		device char *d [[buffer(4)]],
		device atomic_int *status [[buffer(5)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tiisg [[thread_index_in_simdgroup]],
		ushort sgitg [[simdgroup_index_in_threadgroup]]) {
	const long m = args.a.ne[1];
	long e, t;
	const int id = kb_mmid_id(args, ids, tgpig.y, e, t);
	if (id < 0 || id >= args.a.ne[2]) {
		if (tgpig.x == 0 && sgitg == 0 && tiisg == 0) kb_mmid_bad(status, id);
		return;
	}
	const long r0 = (long(tgpig.x) * MV_NSG + sgitg) * MV_R;
	device const char *bcol = b + (e % args.b1) * args.b.nb[1] + t * args.b.nb[2];
	float sums[MV_R];
	kb_mv_rows<T>(args.a.ne[0], m, a + id * args.a.nb[2], args.a.nb[1], r0, bcol, args.btype, args.b.nb[0], tiisg, sums);
	device char *dcol = d + e * args.d.nb[1] + t * args.d.nb[2];
	for (int r = 0; r < MV_R; r++) {
		if (tiisg == 0 && r0 + r < m) *(device float *)(dcol + (r0 + r) * args.d.nb[0]) = sums[r];
	}
}

// kb_mmid_map writes, for expert x = the threadgroup, the count of pairs
// that use it at map[x] and their numbers, in order, at map[n_expert +
// x*n_pairs ...]. One simdgroup per expert.
kernel void kb_mmid_map(
		constant kb_mmid_args &args [[buffer(0)]],
		device const char *ids [[buffer(1)]],
		device int *map [[buffer(2)]],
		device atomic_int *status [[buffer(3)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tiisg [[thread_index_in_simdgroup]]) {
	const int x = tgpig.x;
	const long nexp = args.a.ne[2];
	device int *rows = map + nexp + long(x) * args.n_pairs;
	int count = 0;
	for (long p0 = 0; p0 < args.n_pairs; p0 += 32) {
		const long p = p0 + tiisg;
		int use = 0;
		if (p < args.n_pairs) {
			long e, t;
			const int id = kb_mmid_id(args, ids, p, e, t);
			if (id < 0 || id >= nexp) {
				if (x == 0) kb_mmid_bad(status, id);
			} else {
				use = id == x ? 1 : 0;
			}
		}
		const int at = simd_prefix_exclusive_sum(use);
		if (use) rows[count + at] = int(p);
		count += simd_sum(use);
	}
	if (tiisg == 0) map[x] = count;
}

template <int T>
kernel void kb_mul_mm_id(
		constant kb_mmid_args &args [[buffer(0)]],
		device const char *a [[buffer(1)]],
		device const char *b [[buffer(2)]],
		device const int *map [[buffer(3)]],
		device char *d [[buffer(4)]],
		threadgroup float *shmem [[threadgroup(0)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort sgitg [[simdgroup_index_in_threadgroup]]) {
	const long x = tgpig.z, nexp = args.a.ne[2];
	const int count = map[x];
	const long i0 = long(tgpig.x) * MM_BM, j0 = long(tgpig.y) * MM_BN;
	if (j0 >= count) return; // the whole threadgroup: no pair of this expert here
	device const int *rows = map + nexp + x * args.n_pairs;
	const long m = args.a.ne[1];
	const long col = j0 + tpitg / 4;
	const int p = rows[kb_minl(col, long(count - 1))];
	const long e = p % args.used, t = p / args.used;
	device const char *bcol = b + (e % args.b1) * args.b.nb[1] + t * args.b.nb[2];
	kb_mm_tile<T>(args.a.ne[0], m, a + x * args.a.nb[2], args.a.nb[1], int((args.amis + x * args.a.nb[2]) & 15), i0, bcol,
			col < count, args.btype, args.b.nb[0], args.bvec, shmem, tpitg, sgitg);
	const long dnb0 = args.d.nb[0], dnb1 = args.d.nb[1], dnb2 = args.d.nb[2]; // read once, not per store
	const int used = args.used;
	for (int idx = tpitg; idx < MM_BM * MM_BN; idx += MM_THREADS) {
		const int ii = idx % MM_BM, jj = idx / MM_BM;
		if (i0 + ii < m && j0 + jj < count) {
			const int q = rows[j0 + jj];
			const long qe = q % used, qt = q / used;
			*(device float *)(d + (i0 + ii) * dnb0 + qe * dnb1 + qt * dnb2) = shmem[jj * MM_LDC + ii];
		}
	}
}

typedef decltype(kb_mul_mv_id<KB_F32>) kb_mul_mv_id_t;
typedef decltype(kb_mul_mm_id<KB_F32>) kb_mul_mm_id_t;
#define KB_MUL_MAT_ID(name, T)                                                                  \
	template [[host_name(KB_STR(kb_mul_mv_id_##name))]] kernel kb_mul_mv_id_t kb_mul_mv_id<T>; \
	template [[host_name(KB_STR(kb_mul_mm_id_##name))]] kernel kb_mul_mm_id_t kb_mul_mm_id<T>;
KB_FOR_WEIGHT_TYPES(KB_MUL_MAT_ID)
