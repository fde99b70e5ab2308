// flash_attn_ext.metal: FLASH_ATTN_EXT, fused attention with an online
// softmax, for K and V of f32, f16, q8_0 and q4_0 (each its own type),
// head sizes up to FA_DMAX, f16 or f32 masks, ALiBi, softcap and sinks.
//
// kb_fa_vec_<k>_<v>, the decode kernel (few query rows): a threadgroup
// takes the query rows of one K/V head (the GQA group's query heads times
// the query positions, a simdgroup a row, up to FA_VNSG) over one split of
// the keys, in blocks of 32 keys:
//
//  1. each simdgroup's lane l takes key k0+l's mask term for its row; a
//     key masked for every row of the threadgroup is never read, and a
//     block masked for all of them is skipped;
//  2. K comes into threadgroup memory FA_VCH head elements at a time (as
//     half, or float for f32 K; four elements a thread, half4 or float4
//     loads where the rows are aligned), once for all the rows, and lane
//     l accumulates q·k of key k0+l from it;
//  3. the block's scores meet in one simd_max and one simd_sum per
//     simdgroup (the online softmax: M, S and the output rescaled), and
//     each lane leaves its key's weight p in threadgroup memory;
//  4. V comes into threadgroup memory the same way, and lane l adds p·v
//     for its two output elements of each FA_VCH-element chunk, key by
//     key, leaving out the keys of weight 0 (a NaN or Inf in a V row of a
//     key masked for this row must not reach it).
//
// With a single split the threadgroup writes the rows (with the sink);
// with several (long KV), each writes its unnormalized output, M and S
// to a scratch buffer and kb_fa_combine merges them per row.
//
// kb_fa_pre_<k>_<v> is the prefill kernel (from 4 queries per head) on
// half simdgroup matrices, and kb_fa_mm_<k>_<v> the prefill kernel where
// kb_fa_pre's threadgroup memory does not fit; both are described below.
#include "quants.h"

#define FA_DMAX 256
#define FA_EPL (FA_DMAX / 32) // elements per lane
#define FA_VNSG 8             // rows (simdgroups) per threadgroup at most
#define FA_VCH 64             // head elements per K/V chunk
#define FA_VPAD 4             // a tile row's padding (elements)

struct kb_fa_args {
	kb_tensor q, k, v, m, d;
	float scale, max_bias, softcap, m0, m1;
	int n_head_log2, has_mask, mask_f16, has_sinks;
	// The decode kernel's: keys per split (a multiple of 32) and the
	// splits, whether K and V rows take vector loads, and the rows'
	// chunks per K/V head (grid y = K/V heads * chunks).
	int split, nsplit, kvec, vvec, chunks;
	// The prefill kernel's: whether the mask rows take vector loads.
	int mvec;
};

inline float kb_fa_slope(constant kb_fa_args &args, long h) {
	if (args.max_bias <= 0.0f) return 1.0f;
	return h < args.n_head_log2 ? pow(args.m0, float(h + 1)) : pow(args.m1, float(2 * (h - args.n_head_log2) + 1));
}

// kb_fa_tile<T>::type is the element type of a K or V tile of T in
// threadgroup memory: float for f32 (its tolerance is f32's), else half.
template <int T>
struct kb_fa_tile {
	typedef half type;
	typedef half4 type4;
	typedef half2 type2;
};
template <>
struct kb_fa_tile<KB_F32> {
	typedef float type;
	typedef float4 type4;
	typedef float2 type2;
};

// kb_fa_ld4<T> returns elements e .. e+3 (e a multiple of 4) of the row
// at r; vec: the row is aligned for a float4 or half4 load.
template <int T>
inline float4 kb_fa_ld4(device const uchar *r, int e, bool vec) {
	float4 x;
	for (int t = 0; t < 4; t++) x[t] = kb_at<T>(r, e + t);
	return x;
}
template <>
inline float4 kb_fa_ld4<KB_F32>(device const uchar *r, int e, bool vec) {
	if (vec) return *(device const float4 *)(r + 4 * e);
	device const float *p = (device const float *)r + e;
	return float4(p[0], p[1], p[2], p[3]);
}
template <>
inline float4 kb_fa_ld4<KB_F16>(device const uchar *r, int e, bool vec) {
	if (vec) return float4(*(device const half4 *)(r + 2 * e));
	device const half *p = (device const half *)r + e;
	return float4(p[0], p[1], p[2], p[3]);
}
template <>
inline float4 kb_fa_ld4<KB_Q8_0>(device const uchar *r, int e, bool) {
	device const uchar *b = r + (e / 32) * 34;
	const float d = float(*(device const half *)b);
	device const ushort *q = (device const ushort *)(b + 2 + e % 32);
	const uint w = uint(q[0]) | uint(q[1]) << 16;
	return float4(float(kb_i8(uchar(w))), float(kb_i8(uchar(w >> 8))), float(kb_i8(uchar(w >> 16))), float(kb_i8(uchar(w >> 24)))) * d;
}
template <>
inline float4 kb_fa_ld4<KB_Q4_0>(device const uchar *r, int e, bool) {
	device const uchar *b = r + (e / 32) * 18;
	const float d = float(*(device const half *)b);
	const int i = e % 32, sh = i < 16 ? 0 : 4;
	device const ushort *q = (device const ushort *)(b + 2 + i % 16);
	const uint w = (uint(q[0]) | uint(q[1]) << 16) >> sh;
	return (float4(float(w & 15), float((w >> 8) & 15), float((w >> 16) & 15), float((w >> 24) & 15)) - 8.0f) * d;
}

// kb_fa_load_chunk fills tile[c][i] (rows of FA_VCH+FA_VPAD elements)
// with elements ch*FA_VCH + i of row k0+c (at base + (k0+c)*nb1), for the
// keys live[c] marks (others, and elements past n, zeros), by all ntg
// threads of the threadgroup.
template <int T>
inline void kb_fa_load_chunk(threadgroup typename kb_fa_tile<T>::type *tile, device const char *base, long nb1, long k0,
		int ch, int n, bool vec, threadgroup const float *live, ushort tpitg, ushort ntg) {
	typedef typename kb_fa_tile<T>::type4 T4;
	for (int g = tpitg; g < 32 * FA_VCH / 4; g += ntg) {
		const int c = g / (FA_VCH / 4), i = 4 * (g % (FA_VCH / 4)), e = ch * FA_VCH + i;
		float4 x = float4(0.0f);
		if (live[c] != 0.0f && e < n) x = kb_fa_ld4<T>((device const uchar *)(base + (k0 + c) * nb1), e, vec);
		*(threadgroup T4 *)(tile + c * (FA_VCH + FA_VPAD) + i) = T4(x);
	}
}

// kb_fa_finish writes row dr of the output from the n partial states
// (M, S, then dv output elements; stride floats apart) at st, merged with
// the sink: a state that saw no key (S 0) counts for nothing, nor does a
// -Inf sink; a NaN score, sink or value makes the row NaN; no key and no
// sink give zeros. Lane tiisg writes elements tiisg, tiisg+32, ... .
template <typename P>
inline void kb_fa_finish(P st, int n, long stride, int dv, bool has_sink, float sink, device char *dr, long nb0,
		ushort tiisg) {
	float Mt = has_sink ? sink : -INFINITY;
	for (int g = 0; g < n; g++) Mt = max(Mt, st[g * stride]);
	float St = has_sink && sink != -INFINITY ? exp(sink - Mt) : 0.0f;
	for (int g = 0; g < n; g++) St += st[g * stride + 1] == 0.0f ? 0.0f : st[g * stride + 1] * exp(st[g * stride] - Mt);
	const float inv = St == 0.0f ? 0.0f : 1.0f / St;
	for (int e = tiisg; e < dv; e += 32) {
		float acc = 0.0f;
		for (int g = 0; g < n; g++) {
			if (st[g * stride + 1] != 0.0f) acc += st[g * stride + 2 + e] * exp(st[g * stride] - Mt);
		}
		*(device float *)(dr + e * nb0) = acc * inv;
	}
}

// kb_fa_out1 writes row dr of the output from one state (M, S and the
// dv output elements at o), as kb_fa_finish does for n = 1.
template <typename P>
inline void kb_fa_out1(float M, float S, P o, int dv, bool has_sink, float sink, device char *dr, long nb0, ushort tiisg) {
	const float Mt = has_sink ? max(sink, M) : M;
	float St = has_sink && sink != -INFINITY ? exp(sink - Mt) : 0.0f;
	St += S == 0.0f ? 0.0f : S * exp(M - Mt);
	const float inv = St == 0.0f ? 0.0f : 1.0f / St;
	const float w = S == 0.0f ? 0.0f : exp(M - Mt) * inv;
	for (int e = tiisg; e < dv; e += 32) *(device float *)(dr + e * nb0) = S == 0.0f ? 0.0f : o[e] * w;
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
		device float *part [[buffer(7)]],
		threadgroup char *shmem [[threadgroup(0)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort ntg [[threads_per_threadgroup]],
		ushort tiisg [[thread_index_in_simdgroup]],
		ushort sgitg [[simdgroup_index_in_threadgroup]],
		ushort nsg [[simdgroups_per_threadgroup]]) {
	typedef typename kb_fa_tile<TK>::type TKT;
	typedef typename kb_fa_tile<TK>::type4 TK4;
	typedef typename kb_fa_tile<TV>::type TVT;
	typedef typename kb_fa_tile<TV>::type2 TV2;
	const long split = tgpig.x, hk = tgpig.y / args.chunks, i3 = tgpig.z;
	const int dk = int(args.k.ne[0]), dv = int(args.v.ne[0]);
	const long nq = args.q.ne[1], nkv = args.k.ne[1];
	const long G = args.q.ne[2] / args.k.ne[2];
	const long i3k = i3 / (args.q.ne[3] / args.k.ne[3]);
	// This simdgroup's row: query position iq of head h.
	const long row = long(tgpig.y % args.chunks) * nsg + sgitg;
	const bool has_row = row < G * nq;
	const long iq = has_row ? row / G : 0, h = hk * G + (has_row ? row % G : 0);
	device const char *kb = k + hk * args.k.nb[2] + i3k * args.k.nb[3];
	device const char *vb = v + hk * args.v.nb[2] + i3k * args.v.nb[3];
	device const char *mr = mask + (args.has_mask ? kb_row(args.m, iq, h % args.m.ne[2], i3 % args.m.ne[3]) : 0);
	const float slope = kb_fa_slope(args, h);
	const int nck = (dk + FA_VCH - 1) / FA_VCH, ncv = (dv + FA_VCH - 1) / FA_VCH;
	const int per = max(nck, ncv) * FA_VCH + 64; // floats per simdgroup

	// Threadgroup memory: the K/V tile (32 rows of FA_VCH+FA_VPAD), then
	// per simdgroup per floats: its query row (later its state), mask
	// terms and weights (32 each), then the live flags of the block's
	// keys and their count.
	threadgroup TKT *tk = (threadgroup TKT *)shmem;
	threadgroup TVT *tv = (threadgroup TVT *)shmem;
	threadgroup float *sq = (threadgroup float *)(shmem + 32 * (FA_VCH + FA_VPAD) * 4);
	threadgroup float *mine = sq + sgitg * per;
	threadgroup float *smv = mine + per - 64, *sp = smv + 32;
	threadgroup float *live = sq + nsg * per;

	device const char *qr = q + kb_row(args.q, iq, h, i3);
	for (int e = tiisg; e < nck * FA_VCH; e += 32) mine[e] = has_row && e < dk ? *(device const float *)(qr + e * args.q.nb[0]) : 0.0f;

	float o[FA_EPL];
	for (int i = 0; i < FA_EPL; i++) o[i] = 0.0f;
	float M = -INFINITY, S = 0.0f;
	const long kbeg = split * args.split, kend = kb_minl(nkv, kbeg + args.split);
	for (long k0 = kbeg; k0 < kend; k0 += 32) {
		// 1. Mask terms; a key is live if a row sees it.
		const long key = k0 + tiisg;
		float mv = -INFINITY;
		if (has_row && key < kend) {
			mv = 0.0f;
			if (args.has_mask) mv = slope * (args.mask_f16 ? float(((device const half *)mr)[key]) : ((device const float *)mr)[key]);
		}
		smv[tiisg] = mv;
		threadgroup_barrier(mem_flags::mem_threadgroup);
		if (sgitg == 0) {
			bool any = false;
			for (int g = 0; g < nsg; g++) any = any || sq[g * per + per - 64 + tiisg] != -INFINITY;
			live[tiisg] = any ? 1.0f : 0.0f;
			const float n = simd_sum(any ? 1.0f : 0.0f);
			if (tiisg == 0) live[32] = n;
		}
		threadgroup_barrier(mem_flags::mem_threadgroup);
		if (live[32] == 0.0f) continue; // no row sees a key of the block
		// 2. q·k of key k0+tiisg, chunk by chunk.
		float qk = 0.0f;
		for (int ch = 0; ch < nck; ch++) {
			kb_fa_load_chunk<TK>(tk, kb, args.k.nb[1], k0, ch, dk, args.kvec != 0, live, tpitg, ntg);
			threadgroup_barrier(mem_flags::mem_threadgroup);
			threadgroup const TK4 *kr = (threadgroup const TK4 *)(tk + tiisg * (FA_VCH + FA_VPAD));
			threadgroup const float4 *qc = (threadgroup const float4 *)(mine + ch * FA_VCH);
			for (int i = 0; i < FA_VCH / 4; i++) qk += dot(qc[i], float4(kr[i]));
			threadgroup_barrier(mem_flags::mem_threadgroup);
		}
		// 3. The block's online softmax step.
		float s = args.softcap > 0.0f ? args.softcap * tanh(args.scale * qk / args.softcap) + mv : args.scale * qk + mv;
		if (mv == -INFINITY) s = -INFINITY;
		const float Mn = max(M, simd_max(s));
		const float p = s == -INFINITY ? 0.0f : exp(s - Mn);
		const float f = Mn == -INFINITY ? 1.0f : exp(M - Mn);
		S = S * f + simd_sum(p);
		M = Mn;
		sp[tiisg] = p;
		for (int i = 0; i < FA_EPL; i++) o[i] *= f;
		// 4. O += P V, chunk by chunk: lane l has elements 2l, 2l+1 of
		// each chunk (o[2ch], o[2ch+1]).
		for (int ch = 0; ch < ncv; ch++) {
			kb_fa_load_chunk<TV>(tv, vb, args.v.nb[1], k0, ch, dv, args.vvec != 0, live, tpitg, ntg);
			threadgroup_barrier(mem_flags::mem_threadgroup);
			float2 acc = float2(o[2 * ch], o[2 * ch + 1]);
			for (int c = 0; c < 32; c++) {
				const float pc = sp[c];
				if (pc != 0.0f) acc += pc * float2(*(threadgroup const TV2 *)(tv + c * (FA_VCH + FA_VPAD) + 2 * tiisg));
			}
			o[2 * ch] = acc.x;
			o[2 * ch + 1] = acc.y;
			threadgroup_barrier(mem_flags::mem_threadgroup);
		}
	}
	if (!has_row) return;
	// This row's state: lane l has elements ch*FA_VCH + 2l (+1).
	const long prow = (i3 * args.q.ne[2] + h) * nq + iq;
	if (args.nsplit > 1) {
		device float *st = part + (prow * args.nsplit + split) * (dv + 2);
		if (tiisg == 0) {
			st[0] = M;
			st[1] = S;
		}
		for (int ch = 0; ch < ncv; ch++) {
			for (int t = 0; t < 2; t++) {
				const int e = ch * FA_VCH + 2 * tiisg + t;
				if (e < dv) st[2 + e] = o[2 * ch + t];
			}
		}
		return;
	}
	// One split: the state goes through this simdgroup's tile of
	// threadgroup memory (q's place) to kb_fa_finish.
	simdgroup_barrier(mem_flags::mem_threadgroup);
	if (tiisg == 0) {
		mine[0] = M;
		mine[1] = S;
	}
	for (int ch = 0; ch < ncv; ch++) {
		for (int t = 0; t < 2; t++) {
			const int e = ch * FA_VCH + 2 * tiisg + t;
			if (e < dv) mine[2 + e] = o[2 * ch + t];
		}
	}
	simdgroup_barrier(mem_flags::mem_threadgroup);
	kb_fa_finish((threadgroup const float *)mine, 1, 0, dv, args.has_sinks != 0, args.has_sinks ? sinks[h] : 0.0f,
			d + kb_row(args.d, h, iq, i3), args.d.nb[0], tiisg);
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

// kb_fa_combine merges the nsplit partial states of kb_fa_vec's splits
// for one row (query iq of head h, sequence i3) with the sink: a
// threadgroup of one simdgroup per row.
kernel void kb_fa_combine(
		constant kb_fa_args &args [[buffer(0)]],
		device const float *sinks [[buffer(5)]],
		device char *d [[buffer(6)]],
		device const float *part [[buffer(7)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tiisg [[thread_index_in_simdgroup]]) {
	const long iq = tgpig.x, h = tgpig.y, i3 = tgpig.z;
	const int dv = int(args.v.ne[0]);
	const long prow = (i3 * args.q.ne[2] + h) * args.q.ne[1] + iq;
	kb_fa_finish(part + prow * args.nsplit * (dv + 2), args.nsplit, dv + 2, dv, args.has_sinks != 0,
			args.has_sinks ? sinks[h] : 0.0f, d + kb_row(args.d, h, iq, i3), args.d.nb[0], tiisg);
}

// kb_fa_mm_<k>_<v>, the prefill kernel where kb_fa_pre's threadgroup
// memory does not fit (f32 K/V of head size 256), takes FA_QB query rows of one head per threadgroup with
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
// the tile but not all is read, with P zero for those rows; where its V
// row holds a NaN or Inf, the tile's P V is summed without the zero
// weights instead (0 * NaN would reach those rows).
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
			bool nan = false;
			for (int c = 0; c < FA_KB; c++) {
				const float mv = smv[r * FA_KB + c];
				float s = ss[r * FA_KB + c];
				s = args.softcap > 0.0f ? args.softcap * tanh(args.scale * s / args.softcap) + mv : args.scale * s + mv;
				sc[c] = mv == -INFINITY ? -INFINITY : s;
				nan = nan || isnan(sc[c]);
				mx = max(mx, sc[c]);
			}
			// A NaN score makes the row's sum NaN (max passes over it).
			if (nan) S = NAN;
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
		int bad = 0;
		for (int e = tiisg; e < FA_KB * dv; e += 32) {
			const int c = e / dv, i = e % dv;
			bool any = false;
			for (int r = 0; r < FA_QB; r++) any = any || smv[r * FA_KB + c] != -INFINITY;
			const float x = any ? kb_at<TV>((device const uchar *)(vb + (k0 + c) * args.v.nb[1]), i) : 0.0f;
			skv[c * dv + i] = x;
			bad += isfinite(x) ? 0 : 1;
		}
		simdgroup_barrier(mem_flags::mem_threadgroup);
		if (simd_sum(bad) != 0) {
			// A NaN or Inf in V: the product leaves out the zero weights
			// of the rows the key is masked for (0 * NaN would reach them).
			for (int e = tiisg; e < FA_QB * dv; e += 32) {
				const int r = e / dv, i = e % dv;
				float o = so[e];
				for (int c = 0; c < FA_KB; c++) {
					const float pv = ss[r * FA_KB + c];
					if (pv != 0.0f) o += pv * skv[c * dv + i];
				}
				so[e] = o;
			}
			simdgroup_barrier(mem_flags::mem_threadgroup);
			continue;
		}
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
		// As kb_fa_finish: a simdgroup that saw no key counts for nothing, a
		// zero sum gives zeros and a NaN one NaN.
		float St = args.has_sinks && sink != -INFINITY ? exp(sink - Mt) : 0.0f;
		for (int g = 0; g < nsg; g++) {
			threadgroup const float *st = shmem + FA_QB * dk + g * per + FA_KB * dmax + FA_QB * dv + 2 * FA_QB * FA_KB;
			St += st[2 * FA_QB + r] == 0.0f ? 0.0f : st[2 * FA_QB + r] * exp(st[FA_QB + r] - Mt);
		}
		const float inv = St == 0.0f ? 0.0f : 1.0f / St;
		for (int e = tiisg; e < dv; e += 32) {
			float acc = 0.0f;
			for (int g = 0; g < nsg; g++) {
				threadgroup const float *base = shmem + FA_QB * dk + g * per;
				threadgroup const float *st = base + FA_KB * dmax + FA_QB * dv + 2 * FA_QB * FA_KB;
				if (st[2 * FA_QB + r] != 0.0f) acc += (base + FA_KB * dmax)[r * dv + e] * exp(st[FA_QB + r] - Mt);
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

// kb_fa_pre, the prefill kernel on half simdgroup matrices.
#include "fa_pre.h"
