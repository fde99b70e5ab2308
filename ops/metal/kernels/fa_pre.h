// fa_pre.h: kb_fa_pre, FLASH_ATTN_EXT's prefill kernel on half simdgroup
// matrices, included at the end of flash_attn_ext.metal, whose argument
// struct, tile types, loaders and output helpers it uses.

#ifndef KB_FA_PRE_H
#define KB_FA_PRE_H

// kb_fa_pre_<k>_<v>, the prefill kernel (head sizes a multiple of 8, the
// threadgroup memory permitting; else kb_fa_mm): a threadgroup takes 8*nsg
// rows of one K/V head's GQA group, a simdgroup 8 of them, over every key
// in steps of FA_PKB = 32 keys. The group's rows are its query heads
// interleaved by query: row R is query R/G of head hk*G + R%G (G query
// heads per K/V head), so the heads of a query, which see the same keys
// under a mask shared by the heads, sit side by side, and each K/V tile
// comes into threadgroup memory once for all the group's heads the
// threadgroup holds (with G = 1, rows are the queries of one head):
//
//  1. lane l takes row l/4's mask terms for keys 8(l%4) .. +7 (a float4
//     or half4 pair where the mask rows are aligned); a key no row of the
//     threadgroup sees is never read, and a step they all mask is skipped;
//  2. K comes into threadgroup memory as half (float for f32 K; q8_0 and
//     q4_0 dequantized on the way), once for the threadgroup, and each
//     simdgroup computes its 8x32 S = Q K^T with 8x8 simdgroup products
//     (half Q and K, float accumulators), leaving out the 8-key blocks
//     its 8 rows all mask (as P V does: P is 0 there);
//  3. lane l turns row l/4's eight scores into weights P (half) with the
//     row's running maximum and sum (shuffles over the row's four lanes),
//     and the output accumulator O (float simdgroup matrices, dv/8 of
//     them, kept out of threadgroup memory so that more rows fit) is
//     rescaled 8 columns at a time through threadgroup memory (left out
//     where every row's factor is 1);
//  4. V comes into threadgroup memory as K did, and O += P V with 8x8
//     simdgroup products; where the tile holds a NaN or Inf, P V is summed
//     without the zero weights instead (0 * NaN would reach rows the key
//     is masked for), 8 columns of O at a time through threadgroup memory.
//
// The rows are written with the sink at the end, 8 columns at a time
// through threadgroup memory (as kb_fa_out1 does).
#define FA_PKB 32
// FA_PPAD: the tiles' row padding (elements), so that the rows of an 8x8
// load fall in different banks; FA_PSS: the S/P rows' length.
#define FA_PPAD 8
#define FA_PSS (FA_PKB + FA_PPAD)

template <int TK, int TV>
kernel void kb_fa_pre(
		constant kb_fa_args &args [[buffer(0)]],
		device const char *q [[buffer(1)]],
		device const char *k [[buffer(2)]],
		device const char *v [[buffer(3)]],
		device const char *mask [[buffer(4)]],
		device const float *sinks [[buffer(5)]],
		device char *d [[buffer(6)]],
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
	typedef typename kb_fa_tile<TV>::type4 TV4;
	const long hk = tgpig.y, i3 = tgpig.z;
	const int dk = int(args.k.ne[0]), dv = int(args.v.ne[0]);
	const long nq = args.q.ne[1], nkv = args.k.ne[1];
	const long G = args.q.ne[2] / args.k.ne[2], nr = G * nq; // the group's heads and rows
	const long r0 = long(tgpig.x) * 8 * nsg + 8 * sgitg;      // this simdgroup's first row
	const long i3k = i3 / (args.q.ne[3] / args.k.ne[3]);
	device const char *kb = k + hk * args.k.nb[2] + i3k * args.k.nb[3];
	device const char *vb = v + hk * args.v.nb[2] + i3k * args.v.nb[3];

	// Threadgroup memory (rows padded by FA_PPAD): the K/V tile (FA_PKB
	// rows of dk or dv), then per simdgroup its Q rows [8][dk], S
	// [8][FA_PSS] (float; P [8][FA_PSS] in its place once read), the
	// rows' rescale factors and output weights and S [3][8], and an 8x8
	// float scratch (8 columns of O); then the
	// simdgroups' live-key words (two sets, by the step's parity) and
	// non-finite V flags.
	const int dks = dk + FA_PPAD, dvs = dv + FA_PPAD;
	const int tileb = max(FA_PKB * dks * int(sizeof(TKT)), FA_PKB * dvs * int(sizeof(TVT)));
	const int perb = 8 * dks * int(sizeof(TKT)) + 8 * FA_PSS * 4 + 24 * 4 + 64 * 4;
	threadgroup TKT *tk = (threadgroup TKT *)shmem;
	threadgroup TVT *tv = (threadgroup TVT *)shmem;
	threadgroup char *mine = shmem + tileb + sgitg * perb;
	threadgroup TKT *sq = (threadgroup TKT *)mine;
	threadgroup float *ss = (threadgroup float *)(mine + 8 * dks * int(sizeof(TKT)));
	threadgroup TVT *sp = (threadgroup TVT *)ss;
	threadgroup float *sx = ss + 8 * FA_PSS;
	threadgroup float *sd = sx + 24;
	threadgroup uint *flags = (threadgroup uint *)(shmem + tileb + nsg * perb);

	for (int e = tiisg; e < 8 * dk; e += 32) {
		const long R = r0 + e / dk;
		const int c = e % dk;
		sq[(e / dk) * dks + c] = TKT(R < nr ? *(device const float *)(q + kb_row(args.q, R / G, hk * G + R % G, i3) + c * args.q.nb[0]) : 0.0f);
	}
	simdgroup_float8x8 mo[FA_DMAX / 8];
	for (int i = 0; i < dv / 8; i++) mo[i] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);

	// Lane tiisg: row r (query iq of head h; in the group where ok),
	// keys 8*qd .. 8*qd+7 of a step.
	const int r = tiisg / 4, qd = tiisg % 4;
	const bool ok = r0 + r < nr;
	const long iq = (r0 + r) / G, h = hk * G + (r0 + r) % G;
	const float slope = kb_fa_slope(args, h);
	device const char *mr = mask + (args.has_mask && ok ? kb_row(args.m, iq, h % args.m.ne[2], i3 % args.m.ne[3]) : 0);
	float M = -INFINITY, S = 0.0f;
	int par = 0; // the step's parity
	for (long k0 = 0; k0 < nkv; k0 += FA_PKB, par ^= 1) {
		// 1. Mask terms, and the keys some row sees.
		float mv[8];
		const long kq = k0 + 8 * qd;
		if (args.has_mask && args.mvec && ok && k0 + FA_PKB <= nkv) {
			float4 a, b;
			if (args.mask_f16) {
				a = float4(((device const half4 *)mr)[kq / 4]);
				b = float4(((device const half4 *)mr)[kq / 4 + 1]);
			} else {
				a = ((device const float4 *)mr)[kq / 4];
				b = ((device const float4 *)mr)[kq / 4 + 1];
			}
			for (int t = 0; t < 4; t++) {
				mv[t] = slope * a[t];
				mv[4 + t] = slope * b[t];
			}
		} else {
			for (int t = 0; t < 8; t++) {
				mv[t] = -INFINITY;
				if (ok && kq + t < nkv) {
					mv[t] = args.has_mask ? slope * (args.mask_f16 ? float(((device const half *)mr)[kq + t]) : ((device const float *)mr)[kq + t]) : 0.0f;
				}
			}
		}
		if (!ok) {
			for (int t = 0; t < 8; t++) mv[t] = -INFINITY;
		}
		uint lw = 0;
		for (int t = 0; t < 8; t++) lw |= mv[t] != -INFINITY ? 1u << (8 * qd + t) : 0u;
		lw = simd_or(lw);
		if (tiisg == 0) flags[par * nsg + sgitg] = lw;
		threadgroup_barrier(mem_flags::mem_threadgroup);
		uint live = 0;
		for (int g = 0; g < nsg; g++) live |= flags[par * nsg + g];
		if (live == 0) continue; // every row masks every key of the step

		// 2. The K tile, and S = Q K^T.
		for (int g = tpitg; g < FA_PKB * dk / 4; g += ntg) {
			const int c = g / (dk / 4), i = 4 * (g % (dk / 4));
			float4 x = float4(0.0f);
			if ((live >> c) & 1) x = kb_fa_ld4<TK>((device const uchar *)(kb + (k0 + c) * args.k.nb[1]), i, args.kvec != 0);
			*(threadgroup TK4 *)(tk + c * dks + i) = TK4(x);
		}
		threadgroup_barrier(mem_flags::mem_threadgroup);
		simdgroup_float8x8 ms[FA_PKB / 8];
		for (int j = 0; j < FA_PKB / 8; j++) ms[j] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
		for (int i = 0; i < dk; i += 8) {
			simdgroup_matrix<TKT, 8, 8> mq;
			simdgroup_load(mq, sq + i, dks);
			for (int j = 0; j < FA_PKB / 8; j++) {
				if (((lw >> (8 * j)) & 255) == 0) continue; // this simdgroup's rows mask these 8 keys
				simdgroup_matrix<TKT, 8, 8> mk;
				simdgroup_load(mk, tk + 8 * j * dks + i, dks, 0, true);
				simdgroup_multiply_accumulate(ms[j], mq, mk, ms[j]);
			}
		}
		for (int j = 0; j < FA_PKB / 8; j++) simdgroup_store(ms[j], ss + 8 * j, FA_PSS);
		simdgroup_barrier(mem_flags::mem_threadgroup);

		// 3. P and the running state of row r (its four lanes agree).
		float sc[8], mx = -INFINITY;
		const float4 s0 = *(threadgroup const float4 *)(ss + r * FA_PSS + 8 * qd);
		const float4 s1 = *(threadgroup const float4 *)(ss + r * FA_PSS + 8 * qd + 4);
		for (int t = 0; t < 8; t++) {
			float s = t < 4 ? s0[t] : s1[t - 4];
			s = args.softcap > 0.0f ? args.softcap * tanh(args.scale * s / args.softcap) + mv[t] : args.scale * s + mv[t];
			sc[t] = mv[t] == -INFINITY ? -INFINITY : s;
			mx = max(mx, sc[t]);
		}
		mx = max(mx, simd_shuffle_xor(mx, 1));
		mx = max(mx, simd_shuffle_xor(mx, 2));
		const float Mn = max(M, mx);
		float ps = 0.0f, pr[8];
		for (int t = 0; t < 8; t++) {
			pr[t] = sc[t] == -INFINITY ? 0.0f : exp(sc[t] - Mn);
			ps += pr[t];
		}
		simdgroup_barrier(mem_flags::mem_threadgroup); // S is read: P takes its place
		*(threadgroup TV4 *)(sp + r * FA_PSS + 8 * qd) = TV4(float4(pr[0], pr[1], pr[2], pr[3]));
		*(threadgroup TV4 *)(sp + r * FA_PSS + 8 * qd + 4) = TV4(float4(pr[4], pr[5], pr[6], pr[7]));
		ps += simd_shuffle_xor(ps, 1);
		ps += simd_shuffle_xor(ps, 2);
		const float f = Mn == -INFINITY ? 1.0f : exp(M - Mn);
		S = S * f + ps;
		M = Mn;
		if (!simd_all(f == 1.0f)) {
			// O's rows times their factors, 8 columns at a time (a
			// product with diag(f) would add 0 * Inf of one row to
			// another).
			if (qd == 0) sx[r] = f;
			for (int i = 0; i < dv / 8; i++) {
				simdgroup_store(mo[i], sd, 8);
				simdgroup_barrier(mem_flags::mem_threadgroup);
				for (int e = tiisg; e < 64; e += 32) sd[e] *= sx[e / 8];
				simdgroup_barrier(mem_flags::mem_threadgroup);
				simdgroup_load(mo[i], sd, 8);
				simdgroup_barrier(mem_flags::mem_threadgroup);
			}
		}
		threadgroup_barrier(mem_flags::mem_threadgroup); // the K tile is done with

		// 4. The V tile, and O += P V.
		uint bad = 0;
		for (int g = tpitg; g < FA_PKB * dv / 4; g += ntg) {
			const int c = g / (dv / 4), i = 4 * (g % (dv / 4));
			float4 x = float4(0.0f);
			if ((live >> c) & 1) x = kb_fa_ld4<TV>((device const uchar *)(vb + (k0 + c) * args.v.nb[1]), i, args.vvec != 0);
			const TV4 y = TV4(x);
			*(threadgroup TV4 *)(tv + c * dvs + i) = y;
			for (int t = 0; t < 4; t++) bad |= isfinite(float(y[t])) ? 0u : 1u;
		}
		bad = simd_or(bad);
		if (tiisg == 0) flags[2 * nsg + sgitg] = bad;
		threadgroup_barrier(mem_flags::mem_threadgroup);
		for (int g = 0; g < nsg; g++) bad |= flags[2 * nsg + g];
		if (bad == 0) {
			simdgroup_matrix<TVT, 8, 8> mp[FA_PKB / 8];
			for (int j = 0; j < FA_PKB / 8; j++) simdgroup_load(mp[j], sp + 8 * j, FA_PSS);
			for (int i = 0; i < dv / 8; i++) {
				for (int j = 0; j < FA_PKB / 8; j++) {
					if (((lw >> (8 * j)) & 255) == 0) continue; // P is 0 there
					simdgroup_matrix<TVT, 8, 8> mvv;
					simdgroup_load(mvv, tv + 8 * j * dvs + 8 * i, dvs);
					simdgroup_multiply_accumulate(mo[i], mp[j], mvv, mo[i]);
				}
			}
		} else {
			for (int i = 0; i < dv / 8; i++) {
				simdgroup_store(mo[i], sd, 8);
				simdgroup_barrier(mem_flags::mem_threadgroup);
				for (int e = tiisg; e < 64; e += 32) {
					const int rr = e / 8, c8 = 8 * i + e % 8;
					float o = sd[e];
					for (int c = 0; c < FA_PKB; c++) {
						const float pv = float(sp[rr * FA_PSS + c]);
						if (pv != 0.0f) o += pv * float(tv[c * dvs + c8]);
					}
					sd[e] = o;
				}
				simdgroup_barrier(mem_flags::mem_threadgroup);
				simdgroup_load(mo[i], sd, 8);
				simdgroup_barrier(mem_flags::mem_threadgroup);
			}
		}
		simdgroup_barrier(mem_flags::mem_threadgroup);
	}
	// The rows, with the sink (as kb_fa_out1): lane tiisg takes row
	// tiisg/4's weight, and elements e = tiisg, tiisg+32 of each 8
	// columns (row e/8).
	{
		const float sink = args.has_sinks && ok ? sinks[h] : 0.0f;
		const float Mt = args.has_sinks ? max(sink, M) : M;
		float St = args.has_sinks && sink != -INFINITY ? exp(sink - Mt) : 0.0f;
		St += S == 0.0f ? 0.0f : S * exp(M - Mt);
		const float inv = St == 0.0f ? 0.0f : 1.0f / St;
		if (qd == 0) sx[r] = S == 0.0f ? 0.0f : exp(M - Mt) * inv;
		if (qd == 0) sx[8 + r] = S;
	}
	simdgroup_barrier(mem_flags::mem_threadgroup);
	for (int i = 0; i < dv / 8; i++) {
		simdgroup_store(mo[i], sd, 8);
		simdgroup_barrier(mem_flags::mem_threadgroup);
		for (int e = tiisg; e < 64; e += 32) {
			const int rr = e / 8;
			const long R = r0 + rr;
			if (R >= nr) continue;
			const float o = sx[8 + rr] == 0.0f ? 0.0f : sd[e] * sx[rr];
			*(device float *)(d + kb_row(args.d, hk * G + R % G, R / G, i3) + (8 * i + e % 8) * args.d.nb[0]) = o;
		}
		simdgroup_barrier(mem_flags::mem_threadgroup);
	}
}

typedef decltype(kb_fa_pre<KB_F16, KB_F16>) kb_fa_pre_t;
#define KB_FA_PRE(kn, K, vn, V) template [[host_name(KB_STR(kb_fa_pre_##kn##_##vn))]] kernel kb_fa_pre_t kb_fa_pre<K, V>;
#define KB_FA_PRE_V(kn, K)      \
	KB_FA_PRE(kn, K, f32, KB_F32) \
	KB_FA_PRE(kn, K, f16, KB_F16) \
	KB_FA_PRE(kn, K, q8_0, KB_Q8_0) \
	KB_FA_PRE(kn, K, q4_0, KB_Q4_0)
KB_FA_PRE_V(f32, KB_F32)
KB_FA_PRE_V(f16, KB_F16)
KB_FA_PRE_V(q8_0, KB_Q8_0)
KB_FA_PRE_V(q4_0, KB_Q4_0)

#endif // KB_FA_PRE_H
