// flash_attn_ext.metal: FLASH_ATTN_EXT, fused attention with an online
// softmax, for K and V of f32, f16, q8_0 and q4_0 (each its own type),
// head sizes up to FA_DMAX, f16 or f32 masks, ALiBi, softcap and sinks.
//
// kb_fa_vec_<k>_<v> takes one query row of one head per threadgroup of
// nsg simdgroups: the simdgroups take the keys in turn (key ik goes to
// simdgroup ik % nsg), and the 32 lanes of a simdgroup split the head:
// lane l holds query and output elements l, l+32, ... . Per key, q·k is a
// simd_sum of the lanes' partial dot products; the running maximum M, sum
// S and output accumulator are rescaled when M rises (the online
// softmax). Keys whose mask term is -Inf are skipped before their K or V
// row is read. At the end the simdgroups' states meet in threadgroup
// memory and simdgroup 0 merges them with the sink logit.
#include "quants.h"

#define FA_DMAX 256
#define FA_EPL (FA_DMAX / 32) // elements per lane

struct kb_fa_args {
	kb_tensor q, k, v, m, d;
	float scale, max_bias, softcap, m0, m1;
	int n_head_log2, has_mask, mask_f16, has_sinks;
};

inline float kb_fa_slope(constant kb_fa_args &args, long h) {
	if (args.max_bias <= 0.0f) return 1.0f;
	return h < args.n_head_log2 ? pow(args.m0, float(h + 1)) : pow(args.m1, float(2 * (h - args.n_head_log2) + 1));
}

template <int TK, int TV>
kernel void kb_fa_vec(
		constant kb_fa_args &args [[buffer(0)]],
		device const char *q [[buffer(1)]],
		device const char *k [[buffer(2)]],
		device const char *v [[buffer(3)]],
		device const char *mask [[buffer(4)]],
		device const float *sinks [[buffer(5)]],
		device char *d [[buffer(6)]],
		threadgroup float *shmem [[threadgroup(0)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tiisg [[thread_index_in_simdgroup]],
		ushort sgitg [[simdgroup_index_in_threadgroup]],
		ushort nsg [[simdgroups_per_threadgroup]]) {
	const long iq = tgpig.x, h = tgpig.y, i3 = tgpig.z;
	const long dk = args.k.ne[0], dv = args.v.ne[0], nkv = args.k.ne[1];
	const long hk = h / (args.q.ne[2] / args.k.ne[2]);
	const long i3k = i3 / (args.q.ne[3] / args.k.ne[3]);
	device const char *qr = q + kb_row(args.q, iq, h, i3);
	device const char *kb = k + hk * args.k.nb[2] + i3k * args.k.nb[3];
	device const char *vb = v + hk * args.v.nb[2] + i3k * args.v.nb[3];
	device const char *mr = mask + (args.has_mask ? kb_row(args.m, iq, h % args.m.ne[2], i3 % args.m.ne[3]) : 0);
	const float slope = kb_fa_slope(args, h);

	float qv[FA_EPL], o[FA_EPL];
	for (int i = 0; i < FA_EPL; i++) {
		const long e = tiisg + 32 * i;
		qv[i] = e < dk ? *(device const float *)(qr + e * args.q.nb[0]) : 0.0f;
		o[i] = 0.0f;
	}
	float M = -INFINITY, S = 0.0f;
	for (long ik = sgitg; ik < nkv; ik += nsg) {
		float mv = 0.0f;
		if (args.has_mask) {
			mv = args.mask_f16 ? float(((device const half *)mr)[ik]) : ((device const float *)mr)[ik];
			mv *= slope;
			if (mv == -INFINITY) continue; // the key is left out: its K and V are not read
		}
		device const uchar *kr = (device const uchar *)(kb + ik * args.k.nb[1]);
		float part = 0.0f;
		for (int i = 0; i < FA_EPL; i++) {
			const long e = tiisg + 32 * i;
			if (e < dk) part = fma(qv[i], kb_at<TK>(kr, e), part);
		}
		float s = simd_sum(part);
		s = args.softcap > 0.0f ? args.softcap * tanh(args.scale * s / args.softcap) + mv : args.scale * s + mv;
		const float Mn = max(M, s);
		const float ms = exp(M - Mn), vs = exp(s - Mn);
		S = S * ms + vs;
		device const uchar *vr = (device const uchar *)(vb + ik * args.v.nb[1]);
		for (int i = 0; i < FA_EPL; i++) {
			const long e = tiisg + 32 * i;
			o[i] = o[i] * ms + (e < dv ? vs * kb_at<TV>(vr, e) : 0.0f);
		}
		M = Mn;
	}

	// Merge the simdgroups' states: M and S at shmem[2*sg], the
	// accumulators after them, dv floats each.
	threadgroup float *ms_ = shmem;
	threadgroup float *os = shmem + 2 * nsg;
	if (tiisg == 0) {
		ms_[2 * sgitg] = M;
		ms_[2 * sgitg + 1] = S;
	}
	for (int i = 0; i < FA_EPL; i++) {
		const long e = tiisg + 32 * i;
		if (e < dv) os[sgitg * dv + e] = o[i];
	}
	threadgroup_barrier(mem_flags::mem_threadgroup);
	if (sgitg != 0) return;
	float Mt = args.has_sinks ? sinks[h] : -INFINITY;
	for (int g = 0; g < nsg; g++) Mt = max(Mt, ms_[2 * g]);
	device char *dr = d + kb_row(args.d, h, iq, i3);
	if (Mt == -INFINITY) {
		// Every key masked and no sink: zeros.
		for (long e = tiisg; e < dv; e += 32) *(device float *)(dr + e * args.d.nb[0]) = 0.0f;
		return;
	}
	float St = args.has_sinks ? exp(sinks[h] - Mt) : 0.0f;
	for (int g = 0; g < nsg; g++) St += ms_[2 * g + 1] * exp(ms_[2 * g] - Mt);
	const float inv = 1.0f / St;
	for (long e = tiisg; e < dv; e += 32) {
		float acc = 0.0f;
		for (int g = 0; g < nsg; g++) acc += os[g * dv + e] * exp(ms_[2 * g] - Mt);
		*(device float *)(dr + e * args.d.nb[0]) = acc * inv;
	}
}

typedef decltype(kb_fa_vec<KB_F16, KB_F16>) kb_fa_vec_t;
#define KB_FA_VEC(kn, K, vn, V) template [[host_name(KB_STR(kb_fa_vec_##kn##_##vn))]] kernel kb_fa_vec_t kb_fa_vec<K, V>;
#define KB_FA_VEC_V(kn, K)      \
	KB_FA_VEC(kn, K, f32, KB_F32) \
	KB_FA_VEC(kn, K, f16, KB_F16) \
	KB_FA_VEC(kn, K, q8_0, KB_Q8_0) \
	KB_FA_VEC(kn, K, q4_0, KB_Q4_0)
KB_FA_VEC_V(f32, KB_F32)
KB_FA_VEC_V(f16, KB_F16)
KB_FA_VEC_V(q8_0, KB_Q8_0)
KB_FA_VEC_V(q4_0, KB_Q4_0)

// kb_fa_mm_<k>_<v> takes FA_QB query rows of one head per threadgroup with
// simdgroup matrices (head sizes a multiple of 8): the query tile sits in
// threadgroup memory, and each of nsg simdgroups takes blocks of FA_KB
// keys in turn (block b goes to simdgroup b % nsg) with an online softmax
// of its own per row:
//
//  1. the block's mask terms; a block masked for every row is skipped,
//     and a key masked for every row of the tile is never read (its K
//     and V rows are zeros in the tiles);
//  2. K dequantized into a tile, S = Q K^T by 8x8 products over the head;
//  3. eight lanes (a row each) turn S into P with the running maximum and
//     sum, and the rows of the output accumulator are rescaled;
//  4. V dequantized into the tile, O += P V by 8x8 products.
//
// The simdgroups' states meet in threadgroup memory at the end and
// simdgroup 0 merges them with the sink. A key masked for some rows of
// the tile but not all is read, with P zero for those rows (as ggml's
// kernel does): non-finite values in such a key's V row would reach them.
#define FA_QB 8
#define FA_KB 8

template <int TK, int TV>
kernel void kb_fa_mm(
		constant kb_fa_args &args [[buffer(0)]],
		device const char *q [[buffer(1)]],
		device const char *k [[buffer(2)]],
		device const char *v [[buffer(3)]],
		device const char *mask [[buffer(4)]],
		device const float *sinks [[buffer(5)]],
		device char *d [[buffer(6)]],
		threadgroup float *shmem [[threadgroup(0)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort ntg [[threads_per_threadgroup]],
		ushort tiisg [[thread_index_in_simdgroup]],
		ushort sgitg [[simdgroup_index_in_threadgroup]],
		ushort nsg [[simdgroups_per_threadgroup]]) {
	const long iq0 = long(tgpig.x) * FA_QB, h = tgpig.y, i3 = tgpig.z;
	const int dk = int(args.k.ne[0]), dv = int(args.v.ne[0]);
	const int dmax = max(dk, dv);
	const long nq = args.q.ne[1], nkv = args.k.ne[1];
	const long hk = h / (args.q.ne[2] / args.k.ne[2]);
	const long i3k = i3 / (args.q.ne[3] / args.k.ne[3]);
	device const char *kb = k + hk * args.k.nb[2] + i3k * args.k.nb[3];
	device const char *vb = v + hk * args.v.nb[2] + i3k * args.v.nb[3];
	const float slope = kb_fa_slope(args, h);

	// Threadgroup memory: the query tile, then per simdgroup its K/V tile,
	// output accumulator, S/P tile, mask terms, row factors and state.
	threadgroup float *sq = shmem;
	const int per = FA_KB * dmax + FA_QB * dv + 2 * FA_QB * FA_KB + 3 * FA_QB;
	threadgroup float *mine = shmem + FA_QB * dk + sgitg * per;
	threadgroup float *skv = mine;
	threadgroup float *so = skv + FA_KB * dmax;
	threadgroup float *ss = so + FA_QB * dv;
	threadgroup float *smv = ss + FA_QB * FA_KB;
	threadgroup float *srow = smv + FA_QB * FA_KB; // per row: the rescale factor, then M and S at the end

	for (int e = tpitg; e < FA_QB * dk; e += ntg) {
		const int r = e / dk, c = e % dk;
		sq[e] = iq0 + r < nq ? *(device const float *)(q + kb_row(args.q, iq0 + r, h, i3) + c * args.q.nb[0]) : 0.0f;
	}
	for (int e = tiisg; e < FA_QB * dv; e += 32) so[e] = 0.0f;
	threadgroup_barrier(mem_flags::mem_threadgroup);

	// Row r's running maximum and sum live in lane r.
	float M = -INFINITY, S = 0.0f;
	const long nblocks = (nkv + FA_KB - 1) / FA_KB;
	for (long blk = sgitg; blk < nblocks; blk += nsg) {
		const long k0 = blk * FA_KB;
		// 1. Mask terms: -Inf for a masked entry, a key past the end or
		// a query row past the last.
		int live = 0;
		for (int e = tiisg; e < FA_QB * FA_KB; e += 32) {
			const int r = e / FA_KB, c = e % FA_KB;
			float mv = -INFINITY;
			if (iq0 + r < nq && k0 + c < nkv) {
				mv = 0.0f;
				if (args.has_mask) {
					device const char *mr = mask + kb_row(args.m, iq0 + r, h % args.m.ne[2], i3 % args.m.ne[3]);
					mv = slope * (args.mask_f16 ? float(((device const half *)mr)[k0 + c]) : ((device const float *)mr)[k0 + c]);
				}
			}
			smv[e] = mv;
			live += mv != -INFINITY ? 1 : 0;
		}
		if (simd_sum(live) == 0) continue; // the whole block is masked
		simdgroup_barrier(mem_flags::mem_threadgroup);
		// 2. The K tile: keys masked for every row stay zeros.
		for (int e = tiisg; e < FA_KB * dk; e += 32) {
			const int c = e / dk, i = e % dk;
			bool any = false;
			for (int r = 0; r < FA_QB; r++) any = any || smv[r * FA_KB + c] != -INFINITY;
			skv[c * dk + i] = any ? kb_at<TK>((device const uchar *)(kb + (k0 + c) * args.k.nb[1]), i) : 0.0f;
		}
		simdgroup_barrier(mem_flags::mem_threadgroup);
		simdgroup_float8x8 ms = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
		for (int i = 0; i < dk; i += 8) {
			simdgroup_float8x8 mq, mk;
			simdgroup_load(mq, sq + i, dk);
			simdgroup_load(mk, skv + i, dk, 0, true);
			simdgroup_multiply_accumulate(ms, mq, mk, ms);
		}
		simdgroup_store(ms, ss, FA_KB);
		simdgroup_barrier(mem_flags::mem_threadgroup);
		// 3. P and the running state, a row per lane.
		if (tiisg < FA_QB) {
			const int r = tiisg;
			float sc[FA_KB];
			float mx = M;
			for (int c = 0; c < FA_KB; c++) {
				const float mv = smv[r * FA_KB + c];
				float s = ss[r * FA_KB + c];
				s = args.softcap > 0.0f ? args.softcap * tanh(args.scale * s / args.softcap) + mv : args.scale * s + mv;
				sc[c] = mv == -INFINITY ? -INFINITY : s;
				mx = max(mx, sc[c]);
			}
			float f = 1.0f;
			if (mx != -INFINITY) {
				f = exp(M - mx);
				float sum = 0.0f;
				for (int c = 0; c < FA_KB; c++) {
					const float p = sc[c] == -INFINITY ? 0.0f : exp(sc[c] - mx);
					ss[r * FA_KB + c] = p;
					sum += p;
				}
				S = S * f + sum;
				M = mx;
			} else {
				for (int c = 0; c < FA_KB; c++) ss[r * FA_KB + c] = 0.0f;
			}
			srow[r] = f;
		}
		simdgroup_barrier(mem_flags::mem_threadgroup);
		for (int e = tiisg; e < FA_QB * dv; e += 32) so[e] *= srow[e / dv];
		// 4. The V tile and O += P V.
		for (int e = tiisg; e < FA_KB * dv; e += 32) {
			const int c = e / dv, i = e % dv;
			bool any = false;
			for (int r = 0; r < FA_QB; r++) any = any || smv[r * FA_KB + c] != -INFINITY;
			skv[c * dv + i] = any ? kb_at<TV>((device const uchar *)(vb + (k0 + c) * args.v.nb[1]), i) : 0.0f;
		}
		simdgroup_barrier(mem_flags::mem_threadgroup);
		simdgroup_float8x8 mp;
		simdgroup_load(mp, ss, FA_KB);
		for (int i = 0; i < dv; i += 8) {
			simdgroup_float8x8 mo, mvv;
			simdgroup_load(mo, so + i, dv);
			simdgroup_load(mvv, skv + i, dv);
			simdgroup_multiply_accumulate(mo, mp, mvv, mo);
			simdgroup_store(mo, so + i, dv);
		}
		simdgroup_barrier(mem_flags::mem_threadgroup);
	}
	if (tiisg < FA_QB) {
		srow[FA_QB + tiisg] = M;
		srow[2 * FA_QB + tiisg] = S;
	}
	threadgroup_barrier(mem_flags::mem_threadgroup);
	if (sgitg != 0) return;
	// Merge the simdgroups' states, row by row, with the sink.
	const float sink = args.has_sinks ? sinks[h] : -INFINITY;
	for (int r = 0; r < FA_QB; r++) {
		if (iq0 + r >= nq) break;
		float Mt = sink;
		for (int g = 0; g < nsg; g++) Mt = max(Mt, (shmem + FA_QB * dk + g * per + FA_KB * dmax + FA_QB * dv + 2 * FA_QB * FA_KB)[FA_QB + r]);
		device char *dr = d + kb_row(args.d, h, iq0 + r, i3);
		if (Mt == -INFINITY) {
			for (int e = tiisg; e < dv; e += 32) *(device float *)(dr + e * args.d.nb[0]) = 0.0f;
			continue;
		}
		float St = args.has_sinks ? exp(sink - Mt) : 0.0f;
		for (int g = 0; g < nsg; g++) {
			threadgroup const float *st = shmem + FA_QB * dk + g * per + FA_KB * dmax + FA_QB * dv + 2 * FA_QB * FA_KB;
			St += st[2 * FA_QB + r] * exp(st[FA_QB + r] - Mt);
		}
		const float inv = 1.0f / St;
		for (int e = tiisg; e < dv; e += 32) {
			float acc = 0.0f;
			for (int g = 0; g < nsg; g++) {
				threadgroup const float *base = shmem + FA_QB * dk + g * per;
				threadgroup const float *st = base + FA_KB * dmax + FA_QB * dv + 2 * FA_QB * FA_KB;
				acc += (base + FA_KB * dmax)[r * dv + e] * exp(st[FA_QB + r] - Mt);
			}
			*(device float *)(dr + e * args.d.nb[0]) = acc * inv;
		}
	}
}

typedef decltype(kb_fa_mm<KB_F16, KB_F16>) kb_fa_mm_t;
#define KB_FA_MM(kn, K, vn, V) template [[host_name(KB_STR(kb_fa_mm_##kn##_##vn))]] kernel kb_fa_mm_t kb_fa_mm<K, V>;
#define KB_FA_MM_V(kn, K)      \
	KB_FA_MM(kn, K, f32, KB_F32) \
	KB_FA_MM(kn, K, f16, KB_F16) \
	KB_FA_MM(kn, K, q8_0, KB_Q8_0) \
	KB_FA_MM(kn, K, q4_0, KB_Q4_0)
KB_FA_MM_V(f32, KB_F32)
KB_FA_MM_V(f16, KB_F16)
KB_FA_MM_V(q8_0, KB_Q8_0)
KB_FA_MM_V(q4_0, KB_Q4_0)
