// mmq32.cuh: the tiled integer products on 64x32 warp tiles (mmq32),
// shared by mul_mat_q.cu (the legacy and K formats) and mul_mat_iq.cu
// (the formats of issue 26 with one scale, and at most one offset, per
// 32 elements in super-blocks of 256): kb_k32, kb_k16 and kb_kmin say
// which formats take it and how, mmq_mma picks it or mmq.cuh's mmq.
#pragma once
#include "common.cuh"
#include "quants.cuh"
#include "mm.cuh"
#include "mmq.cuh"

// ---------------------------------------------------------------------
// The tensor-core path of the formats with one scale (and offset) per 32
// elements (q4_0, q4_1, q5_0, q5_1, q8_0, q4_K, q5_K, and of issue 26's
// MXFP4, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, IQ2_XXS, IQ3_XXS, IQ3_S, IQ1_S): one m16n8k32
// product per chunk and 16x8 tile, rescaled once, with every per-element
// cost of the epilogue taken out of the loop:
//
//   - codes are stored unsigned where the format has a zero point (q4_0's
//     c - 8, q5_0's c - 16): the zero point times the activations' code
//     sum is the product's C input, per column, so the decoding is two
//     masks per word of nibbles;
//   - C also adds 0x4B400000, the bits of 1.5 * 2^23: the product's int32
//     is then the bits of the float 1.5 * 2^23 + dot (|dot| < 2^22 for
//     every format here), and one FADD, on the FP32 pipe, converts it
//     exactly;
//   - per step, the activations' heads become (scale, C) pairs (or
//     (scale, scale * code sum) for the formats with an offset) once, in
//     shared memory, read as 16 bytes per two columns;
//   - the chunk loop is unrolled (a step past k is zero codes and zero
//     scales), and a warp's column halves past the tile's columns are
//     skipped per step, not per product.
//
// The epilogue is then FADD, FMUL (the weight scale times the activation
// scale) and FFMA per output element, one FFMA more with an offset.

#define KB_MAGIC 0x4B400000
#define KB_MAGICF 12582912.0f

// kb_k32<T> describes format T on this path: ofs, an offset per block
// (the q4_1 kind); zp, the zero point its unsigned codes carry (mmq32
// stores them less zp, as signed codes: see kb_zp); rw, the
// words of a raw weight row of the tile: at least the KB_QC blocks, 2
// mod 4, so that a warp's 8-byte reads of 32 consecutive rows at one
// offset take the two wavefronts 256 bytes need.
//
// Issue 26's formats with one scale per 32 take it too: IQ4_NL's blocks
// (q4_0's layout, the codes through its table) and MXFP4's (a byte's
// E8M0 scale, then q4_0's nibbles through its table) as the legacy
// formats', the super-blocks' decoded from global memory by quants_iq.cuh's
// kb_decode<T> (signed int8 codes, no zero point) a chunk per job, IQ1_S's
// delta its offset (dl * +-1/8 per chunk). raw: the 32-element formats
// whose blocks kb_decode32 reads from the raw tile (kb_mmq32_decode),
// copied in 8-byte pieces, or 4-byte ones for MXFP4 (a step's four
// 17-byte blocks are 68 bytes; its rows then need 4-byte alignment).
template <int T>
struct kb_k32 {
	static constexpr bool ok = kb_scale32<T>::ok;
	static constexpr bool ofs = T == KB_Q4_1 || T == KB_Q5_1 || T == KB_Q4_K || T == KB_Q5_K || T == KB_IQ1_S;
	static constexpr bool raw = ok && kb_type<T>::block == 32;
	static constexpr int zp = T == KB_Q4_0 ? 8 : T == KB_Q5_0 ? 16 : 0;
	static constexpr int words = KB_QC * kb_type<T>::bytes / 4;
	static constexpr int rw = words + (6 - words % 4) % 4;
	// piece: the bytes of a raw copy (cp.async), which a raw row's
	// address and stride must be a multiple of.
	static constexpr int piece = KB_QC * kb_type<T>::bytes % 8 == 0 ? 8 : 4;
};

// kb_k16<T>: format T takes mmq32's warp tiles with a scale per 16
// elements and no offset (q3_K, q6_K, and issue 26's IQ2_XS, IQ2_S and
// IQ1_M, whose delta kb_decode folds into the codes: kb_decode gives
// signed codes and zero offsets): two m16n8k16 products per chunk and
// tile, one per half, each rescaled by its half's scale (kb_mmq16_mma).
template <int T>
struct kb_k16 {
	static constexpr bool ok = T == KB_Q3_K || T == KB_Q6_K || T == KB_IQ2_XS || T == KB_IQ2_S || T == KB_IQ1_M;
};

// kb_kmin<T>: format T takes mmq32's warp tiles with a 4-bit scale and a
// 4-bit min per 16 elements (q2_K): its 2-bit codes are stored times
// their half's scale (at most 45, an int8; a 32-element dot at most 2^18
// in magnitude), so that one m16n8k32 product per chunk and tile,
// rescaled by the super-block's d, is the chunk's scaled part, as for
// the kb_k32 formats. The mins part is a second m16n8k32 product on the
// same B fragments: an A fragment whose row holds its first half's min
// in k 0..15 and its second half's in k 16..31 (each register one min's
// byte four times), so that the product is min0 * (the column's first
// half's code sum) + min1 * (its second's) exactly (at most 15 * 127 *
// 32 in magnitude), rescaled by -dmin and the column's scale: one FFMA
// per output. The row's two mins are kept packed in a word a chunk.
template <int T>
struct kb_kmin {
	static constexpr bool ok = T == KB_Q2_K;
};

// kb_decode_kmin decodes chunk sub of the q2_K block at blk (global
// memory, 2-byte aligned; see kb_decode<KB_Q2_K>) for kb_kmin: codes
// times their half's scale (the bytes' products carry into no other
// byte), the super-block's d and -dmin, and the halves' mins packed as
// min0 | min1 << 8.
__device__ __forceinline__ void kb_decode_kmin(const u8* b, int sub, int q[8], float& d, float& ndmin, u32& mins) {
	const u8* qs = b + 16 + 32 * (sub / 4);
	const int sh = 2 * (sub % 4);
	const u32 sm = *(const u16*)(b + 2 * sub);  // the halves' (scale | min << 4)
	const int s0 = (int)(sm & 15u), s1 = (int)((sm >> 8) & 15u);
#pragma unroll
	for (int j = 0; j < 8; j++) q[j] = ((kb_ld32(qs + 4 * j) >> sh) & 0x03030303) * (j < 4 ? s0 : s1);
	d = kb_ldh(b + 80);
	ndmin = -kb_ldh(b + 82);
	mins = ((sm >> 4) & 15u) | ((sm >> 4) & 0xf00u);
}

// kb_zp<ZP> subtracts ZP from each of q's four unsigned byte codes (each
// below 128, ZP at most 16), giving signed int8 codes: the bytes' top
// bits set first, so that no byte borrows from the next, and cleared
// after.
template <int ZP>
__device__ __forceinline__ int kb_zp(int q) {
	if constexpr (ZP == 0)
		return q;
	else
		return (int)((((u32)q | 0x80808080u) - (u32)ZP * 0x01010101u) ^ 0x80808080u);
}

// kb_wv<O> is the little-endian 32 bits at byte O of words v; kb_wh<O>
// the f16 at byte O (even), as a float; kb_wb<O> the byte at O.
template <int O>
__device__ __forceinline__ u32 kb_wv(const u32* v) {
	if constexpr (O % 4 == 0)
		return v[O / 4];
	else
		return __funnelshift_r(v[O / 4], v[O / 4 + 1], 8 * (O % 4));
}
template <int O>
__device__ __forceinline__ u32 kb_wb(const u32* v) {
	return (v[O / 4] >> (8 * (O % 4))) & 0xffu;
}
template <int O>
__device__ __forceinline__ float kb_wh(const u32* v) {
	return kb_h2f((u16)(v[O / 4] >> (8 * (O % 4))));
}

// kb_hi4x is bit 4 of each byte of an int from the 4 bits n & 15 (a
// multiply places bit i at bit 8i+4, the partial products not
// overlapping).
__device__ __forceinline__ int kb_hi4x(u32 n) {
	return (int)(((n & 15u) * 0x02040810u) & 0x10101010u);
}

// kb_wnibbles_lut<Q> decodes the 32 4-bit codes of 16 bytes at byte Q
// of words v (q4_0's order: element e < 16 the low nibble of byte e,
// e >= 16 the high nibble of byte e-16) through the table t.
template <int Q>
__device__ __forceinline__ void kb_wnibbles_lut(const u32* v, const u32 t[4], int q[8]) {
#pragma unroll
	for (int j = 0; j < 4; j++) {
		const u32 x = j == 0 ? kb_wv<Q>(v) : j == 1 ? kb_wv<Q + 4>(v) : j == 2 ? kb_wv<Q + 8>(v) : kb_wv<Q + 12>(v);
		q[j] = kb_lut16(x & 0x0f0f0f0fu, t);
		q[j + 4] = kb_lut16((x >> 4) & 0x0f0f0f0fu, t);
	}
}

// kb_decode32<T, O> decodes the 32-element block at byte O of words v:
// 32 codes (unsigned where kb_k32<T>::zp is set), the scale d and the
// offset m (w = d * c + m, or d * (c - zp)).
template <int T, int O>
__device__ __forceinline__ void kb_decode32(const u32* v, int q[8], float& d, float& m) {
	m = 0.0f;
	if constexpr (T == KB_Q4_0 || T == KB_Q4_1) {
		constexpr int Q = T == KB_Q4_0 ? O + 2 : O + 4;
		d = kb_wh<O>(v);
		if constexpr (T == KB_Q4_1) m = kb_wh<O + 2>(v);
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const u32 x = j == 0 ? kb_wv<Q>(v) : j == 1 ? kb_wv<Q + 4>(v) : j == 2 ? kb_wv<Q + 8>(v) : kb_wv<Q + 12>(v);
			q[j] = (int)(x & 0x0f0f0f0fu);
			q[j + 4] = (int)((x >> 4) & 0x0f0f0f0fu);
		}
	} else if constexpr (T == KB_Q5_0 || T == KB_Q5_1) {
		constexpr int H = T == KB_Q5_0 ? O + 2 : O + 4, Q = H + 4;
		d = kb_wh<O>(v);
		if constexpr (T == KB_Q5_1) m = kb_wh<O + 2>(v);
		const u32 qh = kb_wv<H>(v);
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const u32 x = j == 0 ? kb_wv<Q>(v) : j == 1 ? kb_wv<Q + 4>(v) : j == 2 ? kb_wv<Q + 8>(v) : kb_wv<Q + 12>(v);
			q[j] = (int)(x & 0x0f0f0f0fu) | kb_hi4x(qh >> (4 * j));
			q[j + 4] = (int)((x >> 4) & 0x0f0f0f0fu) | kb_hi4x(qh >> (16 + 4 * j));
		}
	} else if constexpr (T == KB_MXFP4) {
		// The E8M0 scale's byte, then q4_0's nibbles through MXFP4's
		// table (its values doubled, the scale halved: kb_e8m0_half).
		const u32 t[4] = KB_LUT16(KB_MXFP4_VALUES);
		d = kb_e8m0_half(kb_wb<O + KB_MXFP4_e>(v));
		kb_wnibbles_lut<O + KB_MXFP4_qs>(v, t, q);
	} else if constexpr (T == KB_IQ4_NL) {
		// q4_0's layout, the codes through IQ4_NL's table.
		const u32 t[4] = KB_LUT16(KB_IQ4NL_VALUES);
		d = kb_wh<O>(v);
		kb_wnibbles_lut<O + 2>(v, t, q);
	} else {
		static_assert(T == KB_Q8_0, "kb_decode32: a 32-element format");
		d = kb_wh<O>(v);
		q[0] = (int)kb_wv<O + 2>(v);
		q[1] = (int)kb_wv<O + 6>(v);
		q[2] = (int)kb_wv<O + 10>(v);
		q[3] = (int)kb_wv<O + 14>(v);
		q[4] = (int)kb_wv<O + 18>(v);
		q[5] = (int)kb_wv<O + 22>(v);
		q[6] = (int)kb_wv<O + 26>(v);
		q[7] = (int)kb_wv<O + 30>(v);
	}
}

// kb_decode_k32 decodes chunk sub of the block at blk in global memory
// (2-byte aligned, but MXFP4's): a raw format's of even size as
// kb_decode32 does, the others' by kb_decode<T>.
template <int T>
__device__ __forceinline__ void kb_decode_k32(const u8* blk, int sub, int q[8], float& d, float& m) {
	if constexpr (kb_k32<T>::raw && kb_type<T>::bytes % 2 == 0) {
		constexpr int NW = (kb_type<T>::bytes + 3) / 4;
		u32 v[NW + 1];
#pragma unroll
		for (int j = 0; j < NW; j++) v[j] = 4 * j + 4 <= kb_type<T>::bytes ? (u32)kb_ld32(blk + 4 * j) : (u32) * (const u16*)(blk + 4 * j);
		v[NW] = 0;
		kb_decode32<T, 0>(v, q, d, m);
	} else {
		float2 dm[2];
		kb_decode<T>(blk, sub, q, dm);
		d = dm[0].x;
		m = dm[0].y;
	}
}

// kb_mmq32_decode<T, H> decodes chunks 2H and 2H+1 of raw row r (words
// at wr) into the code tile (signed: less the zero point) and the row's
// scales (and offsets): 8-byte
// reads of the words that hold the two blocks, each block's fields at
// offsets known here. Chunks past k were copied as zero bytes: zero
// codes, scales and offsets.
template <int T, int H>
__device__ __forceinline__ void kb_mmq32_decode(const u32* wr, int* qr, float* dr, float* mr) {
	constexpr int B = kb_type<T>::bytes;
	// NW words from W0 (even), read two at a time but a last one alone
	// past the row's data words (MXFP4's 17).
	constexpr int W0 = (H * 2 * B / 4) & ~1, OFF = H * 2 * B - 4 * W0, NW = ((OFF + 2 * B + 3) / 4 + 1) & ~1;
	constexpr int WR = kb_k32<T>::words - W0 < NW ? kb_k32<T>::words - W0 : NW;
	static_assert(WR >= NW - 1 && WR >= (OFF + 2 * B + 3) / 4, "kb_mmq32_decode reads the tile's data words only");
	u32 v[NW];
#pragma unroll
	for (int j = 0; j < NW; j += 2) {
		if (j + 1 < WR) {
			const uint2 x = kb_ld8(wr + W0 + j);
			v[j] = x.x;
			v[j + 1] = x.y;
		} else {
			v[j] = wr[W0 + j];
			v[j + 1] = 0u;
		}
	}
	float d[2], m[2];
#pragma unroll
	for (int i = 0; i < 2; i++) {
		int q[8];
		if (i == 0)
			kb_decode32<T, OFF>(v, q, d[0], m[0]);
		else
			kb_decode32<T, OFF + B>(v, q, d[1], m[1]);
#pragma unroll
		for (int j = 0; j < 8; j++) q[j] = kb_zp<kb_k32<T>::zp>(q[j]);
		kb_st16(qr + (2 * H + i) * 8, q[0], q[1], q[2], q[3]);
		kb_st16(qr + (2 * H + i) * 8 + 4, q[4], q[5], q[6], q[7]);
	}
	*(float2*)(dr + 2 * H) = make_float2(d[0], d[1]);
	if (kb_k32<T>::ofs) *(float2*)(mr + 2 * H) = make_float2(m[0], m[1]);
}

// kb_mmq32_mma<T, NP> is one step's products of warp (wm, wn, kh): rows
// 64wm.. (four m16 tiles), columns 32wn..32wn+16NP-1 (NP column halves
// of 16), the step's chunks kh, kh+2 (the other k half is another
// warp's, see mmq32). Per chunk the four m16 tiles' A fragments and
// scales (and offsets) are loaded once and serve every n8 tile, and each
// n8 tile's B fragment and column heads serve the four m16 tiles: per
// 16 products 4 ldmatrix.x4 and 8 (16 with offsets) 4-byte scale loads,
// 2 ldmatrix.x4 and 4 (8) 8-byte head loads: 40 (56) wavefronts. acc[16mt + 4nt + e] is
// the C/D layout's element e of tile (mt, nt). For kb_kmin's format,
// wm4 holds each row's packed mins a chunk (a word of a float4's slot)
// and wh4 its -dmin, and each chunk and tile takes a second product, of
// the mins (see kb_kmin): per 16 products 8 4-byte mins loads more than
// without offsets, and the step's -dmin once (xc is not read).
template <int T, int NP>
__device__ __forceinline__ void kb_mmq32_mma(const int (*wq)[KB_QW], const float4* wd4, const float4* wm4, const float4* wh4, const int (*xq)[KB_QW], const float (*xd)[KB_BN], const float* xc, int wm, int wn, int kh, int lane, float acc[64]) {
	constexpr bool OFS = kb_k32<T>::ofs, MIN = kb_kmin<T>::ok;
	const int g = lane >> 2, t = lane & 3;
	// Row (16mt + 8e) of these bases is m16 tile mt's (half e's).
	const int* ab = &wq[64 * wm + (lane & 7) + 8 * ((lane >> 3) & 1)][4 * (lane >> 4)];
	const float* wdb = (const float*)(wd4 + 64 * wm + g);
	const float* wmb = (const float*)(wm4 + 64 * wm + g);
	const float* whb = (const float*)(wh4 + 64 * wm + g);
	const u32* wmu = (const u32*)wmb;
	const int* bb = &xq[32 * wn + (lane & 7) + 8 * (lane >> 4)][4 * ((lane >> 3) & 1)];
	// kb_kmin: the scale is the super-block's d, and the mins' -dmin,
	// one each for the step's chunks (a step is KB_QC chunks from a
	// multiple of KB_QC, kRun's split-k runs included, within a
	// super-block of 8), read once: from chunk kh's slot, which is a
	// chunk of the matrix whenever chunk kh + 2 is.
	float wds[4][2], wns[4][2];
#pragma unroll
	for (int mt = 0; mt < 4; mt++) {
#pragma unroll
		for (int e = 0; e < 2; e++) {
			wds[mt][e] = MIN ? wdb[4 * (16 * mt + 8 * e) + kh] : 0.0f;
			wns[mt][e] = MIN ? whb[4 * (16 * mt + 8 * e) + kh] : 0.0f;
		}
	}
#pragma unroll 1
	for (int cc = kh; cc < KB_QC; cc += 2) {
		// A fragments of the four m16 tiles: matrix i of the x4 is rows
		// 8(i&1).. and k 16(i>>1)..
		u32 a[4][4], mn[4][2];
		float wd[4][2], wo[4][2];
#pragma unroll
		for (int mt = 0; mt < 4; mt++) {
			kb_ldmatrix_x4(a[mt], ab + 16 * mt * KB_QW + cc * 8);
#pragma unroll
			for (int e = 0; e < 2; e++) {
				wd[mt][e] = MIN ? wds[mt][e] : wdb[4 * (16 * mt + 8 * e) + cc];
				wo[mt][e] = OFS ? wmb[4 * (16 * mt + 8 * e) + cc] : 0.0f;
				mn[mt][e] = MIN ? wmu[4 * (16 * mt + 8 * e) + cc] : 0u;
			}
		}
#pragma unroll
		for (int np = 0; np < NP; np++) {
			// B fragments of two n8 tiles: matrix i is columns 8(i>>1)..
			// and k 16(i&1)..
			u32 bf[4];
			kb_ldmatrix_x4(bf, bb + 16 * np * KB_QW + cc * 8);
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const int nt = 2 * np + h, col = 32 * wn + 8 * nt + 2 * t;
				// The scales of columns col and col+1, and C (their zero
				// point terms) or their scales times their code sums.
				const uint2 xv = kb_ld8(&xd[cc][col]);
				const float xd0 = __uint_as_float(xv.x), xd1 = __uint_as_float(xv.y);
				// With offsets, the columns' scales times their code
				// sums; C is the magic number alone (the codes are signed,
				// less any zero point, see mmq32).
				uint2 cv = make_uint2(0u, 0u);
				if (OFS) cv = kb_ld8(xc + cc * KB_BN + col);
				const int c[4] = {KB_MAGIC, KB_MAGIC, KB_MAGIC, KB_MAGIC};
				const int bk[2] = {(int)bf[2 * h], (int)bf[2 * h + 1]};
#pragma unroll
				for (int mt = 0; mt < 4; mt++) {
					int d[4];
					kb_mma_s8_k32c(d, (const int*)a[mt], bk, c);
					float* o = acc + 16 * mt + 4 * nt;
					o[0] = fmaf(__int_as_float(d[0]) - KB_MAGICF, wd[mt][0] * xd0, o[0]);
					o[1] = fmaf(__int_as_float(d[1]) - KB_MAGICF, wd[mt][0] * xd1, o[1]);
					o[2] = fmaf(__int_as_float(d[2]) - KB_MAGICF, wd[mt][1] * xd0, o[2]);
					o[3] = fmaf(__int_as_float(d[3]) - KB_MAGICF, wd[mt][1] * xd1, o[3]);
					if (OFS) {
						const float xs0 = __uint_as_float(cv.x), xs1 = __uint_as_float(cv.y);
						o[0] = fmaf(wo[mt][0], xs0, o[0]);
						o[1] = fmaf(wo[mt][0], xs1, o[1]);
						o[2] = fmaf(wo[mt][1], xs0, o[2]);
						o[3] = fmaf(wo[mt][1], xs1, o[3]);
					}
					if (MIN) {
						// The mins' A fragment: rows g and g + 8 (e), k
						// 0..15 (min0) and 16..31 (min1), each byte four
						// times a register.
						const int am[4] = {(int)__byte_perm(mn[mt][0], 0u, 0x0000), (int)__byte_perm(mn[mt][1], 0u, 0x0000),
						                   (int)__byte_perm(mn[mt][0], 0u, 0x1111), (int)__byte_perm(mn[mt][1], 0u, 0x1111)};
						int dm[4];
						kb_mma_s8_k32c(dm, am, bk, c);
						o[0] = fmaf(__int_as_float(dm[0]) - KB_MAGICF, wns[mt][0] * xd0, o[0]);
						o[1] = fmaf(__int_as_float(dm[1]) - KB_MAGICF, wns[mt][0] * xd1, o[1]);
						o[2] = fmaf(__int_as_float(dm[2]) - KB_MAGICF, wns[mt][1] * xd0, o[2]);
						o[3] = fmaf(__int_as_float(dm[3]) - KB_MAGICF, wns[mt][1] * xd1, o[3]);
					}
				}
			}
		}
	}
}

// kb_mmq16_mma<NP> is kb_mmq32_mma for the kb_k16 formats: per chunk and
// 16x8 tile, two m16n8k16 products (the chunk's halves, the A fragment's
// registers 0-1 and 2-3, the B fragment's two registers), each with the
// magic number as C and rescaled by its half's scale: wd4 holds the
// first halves' scales of the step's chunks (a float4 per row), wh4 the
// second halves'. Per 32 products a warp loads 4 A and 2 B ldmatrix.x4,
// 16 4-byte scales and 4 8-byte heads: 44 wavefronts.
template <int NP>
__device__ __forceinline__ void kb_mmq16_mma(const int (*wq)[KB_QW], const float4* wd4, const float4* wh4, const int (*xq)[KB_QW], const float (*xd)[KB_BN], int wm, int wn, int kh, int lane, float acc[64]) {
	const int g = lane >> 2, t = lane & 3;
	const int* ab = &wq[64 * wm + (lane & 7) + 8 * ((lane >> 3) & 1)][4 * (lane >> 4)];
	const float* wdb = (const float*)(wd4 + 64 * wm + g);
	const float* whb = (const float*)(wh4 + 64 * wm + g);
	const int* bb = &xq[32 * wn + (lane & 7) + 8 * (lane >> 4)][4 * ((lane >> 3) & 1)];
#pragma unroll 1
	for (int cc = kh; cc < KB_QC; cc += 2) {
		u32 a[4][4];
		float wd[4][2], wh[4][2];
#pragma unroll
		for (int mt = 0; mt < 4; mt++) {
			kb_ldmatrix_x4(a[mt], ab + 16 * mt * KB_QW + cc * 8);
#pragma unroll
			for (int e = 0; e < 2; e++) {
				wd[mt][e] = wdb[4 * (16 * mt + 8 * e) + cc];
				wh[mt][e] = whb[4 * (16 * mt + 8 * e) + cc];
			}
		}
#pragma unroll
		for (int np = 0; np < NP; np++) {
			u32 bf[4];
			kb_ldmatrix_x4(bf, bb + 16 * np * KB_QW + cc * 8);
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const int nt = 2 * np + h, col = 32 * wn + 8 * nt + 2 * t;
				const uint2 xv = kb_ld8(&xd[cc][col]);
				const float xd0 = __uint_as_float(xv.x), xd1 = __uint_as_float(xv.y);
				const int c[4] = {KB_MAGIC, KB_MAGIC, KB_MAGIC, KB_MAGIC};
#pragma unroll
				for (int mt = 0; mt < 4; mt++) {
					int d[4], e[4];
					kb_mma_s8c(d, (const int*)a[mt], (int)bf[2 * h], c);
					kb_mma_s8c(e, (const int*)a[mt] + 2, (int)bf[2 * h + 1], c);
					float* o = acc + 16 * mt + 4 * nt;
#pragma unroll
					for (int i = 0; i < 4; i++) {
						const float lo = __int_as_float(d[i]) - KB_MAGICF, hi = __int_as_float(e[i]) - KB_MAGICF;
						o[i] = fmaf(fmaf(lo, wd[mt][i >> 1], hi * wh[mt][i >> 1]), i & 1 ? xd1 : xd0, o[i]);
					}
				}
			}
		}
	}
}

// mmq32 is mmq's tensor-core kernel for the kb_k32 formats (see above),
// and in kb_mmq128_* for the kb_k16 ones (kb_mmq16_mma's products) and
// kb_kmin's (kb_mmq32_mma's, with the mins' product):
// BM weight rows by KB_BN columns, 2*BM threads, split-k as mmq. Per
// step: the activations' codes and heads are copied with cp.async into
// buffer step%2 while the previous step computes; the raw weight blocks
// (32-element formats on 8-byte aligned rows, MXFP4's on 4-byte aligned
// ones) are copied into the raw tile in 8-byte pieces (MXFP4's 4-byte),
// each thread's pieces' offsets computed once;
// then thread (r, h) decodes chunks 2h, 2h+1 of row r. Other rows (the
// K formats, unaligned rows) are decoded from global memory, a chunk per
// job, as mmq does.
template <int T, int BM>
__device__ __forceinline__ void mmq32(const kb_mm& p, const kb_qtiles& s) {
	static_assert(KB_QC == 4, "mmq32: a float4 of scales per row and step");
	constexpr int NT = 2 * BM, B = kb_type<T>::bytes, CPB = kb_type<T>::block / 32, RW = kb_k32<T>::rw;
	constexpr bool OFS = kb_k32<T>::ofs, K16 = kb_k16<T>::ok, MIN = kb_kmin<T>::ok;
	static_assert(kb_k32<T>::ok || K16 || MIN, "mmq32: a kb_k32, kb_k16 or kb_kmin format");
	// The raw tile's pieces of PS bytes (8, or 4 for MXFP4): per row,
	// per thread.
	constexpr bool RAW = kb_k32<T>::raw;
	constexpr int PS = kb_k32<T>::piece;
	// PR pieces per row, in SL slots of threads: PR, or with 4-byte
	// pieces a row's RW words (MXFP4's 17 pieces in 18 slots, the last
	// idle), so that a warp's 32 lanes store to 32 consecutive words of
	// the tile (banks): rows RW words apart with 17 lanes a row put two
	// lanes of each warp in one bank. A pass of NT threads copies RP
	// whole rows (the last NT % SL threads idle), NU passes.
	constexpr int PR = RAW ? KB_QC * B / PS : 1, SL = PS == 4 ? RW : PR, RP = NT / SL, NU = (BM + RP - 1) / RP;
	static_assert(SL >= PR, "mmq32: a slot per piece");
	static_assert(!RAW || (KB_QC * B % PS == 0 && RW * 4 <= KB_QRAW), "mmq32: the raw tile");
	const i64 batches = p.nsplit > 1 ? gridDim.z / p.nsplit : gridDim.z, split = blockIdx.z / batches;
	const char* w;
	const int ncols = kb_tile_cols(p, w, s.xo, s.dof, blockIdx.z % batches);
	if (ncols == 0) return;
	__syncthreads();
	// Warp (wm, wn, kh) computes rows 64wm.., columns 32wn.. over the
	// step's chunks kh, kh+2: BM/64 by 2 warp tiles of 64x32, each k
	// half by its own warp (BM/16 warps), the halves added at the end.
	static_assert(BM % 64 == 0 && KB_BN == 64 && KB_QC % 2 == 0, "mmq32: 64x32 warp tiles");
	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wt = warp % (BM / 32), kh = warp / (BM / 32), wm = wt % (BM / 64), wn = wt / (BM / 64),
	          g = lane >> 2, t = lane & 3;
	const i64 row0 = (i64)blockIdx.x * BM, kb = p.nsplit > 1 ? split * p.kspl : 0, kc = p.nsplit > 1 ? min(p.k / 32, kb + p.kspl) : p.k / 32;
	// Raw copies: PS-byte aligned rows, BM rows' offsets within 31 bits.
	const bool raw = RAW && (((u64)w | (u64)p.w_nb1) & (PS - 1)) == 0 && p.w_nb1 < (((i64)1 << 31) / BM);
	// The scales (and offsets) of the step's chunks, a float4 per row;
	// per chunk, the activations' scales (xd) and, with offsets, their
	// scales times their code sums (xc): carved from wdm (BM * (KB_QC +
	// 1) float4s). The codes are stored signed, less the format's zero
	// point, so that no product needs a zero-point term in C. kb_kmin's
	// format has a third float4 a row, wh4: wm4 holds its packed mins a
	// chunk, wh4 its -dmin (and xc is not used).
	constexpr int WT = MIN ? 3 : 2;
	static_assert(WT * BM + 2 * KB_QC * KB_BN / 4 <= BM * (KB_QC + 1), "mmq32: the scales' tiles");
	float4* wd4 = &s.wdm[0][0];
	float4* wm4 = wd4 + BM;
	float4* wh4 = wd4 + 2 * BM;
	float* xc = (float*)(wd4 + WT * BM);
	float(*xd)[KB_BN] = (float(*)[KB_BN])(wd4 + WT * BM + KB_QC * KB_BN / 4);
	u32* wraw = (u32*)&s.wraw[0][0];
	// This thread's raw pieces: piece q of rows r, r + RP, ... (a warp's
	// 32 pieces consecutive in memory, as far as rows allow); rows past m
	// (and an idle thread's) are zeros.
	const int wqp = PS * (tid % SL), wr0 = tid < RP * SL && tid % SL < PR ? tid / SL : BM;
	const int nrows = (int)min((i64)BM, p.m - row0);
	const char* wsrc = w + (row0 + min(wr0, BM - 1)) * p.w_nb1 + kb * B + wqp;
	const int wdst = wr0 * RW * 4 + wqp;
	const i64 wstride = RP * p.w_nb1;
	float acc[64];
#pragma unroll
	for (int i = 0; i < 64; i++) acc[i] = 0.0f;

	// This thread's activation pieces: codes (16 threads per column, 8
	// bytes each, chunk pc/4) and heads (a half-warp takes four columns
	// 4 apart, see kb_mmq_load_x); columns past the tile's read its last
	// column (their products are not stored).
	constexpr int NX = KB_BN * KB_QC * 4 / NT, NH = KB_BN * KB_QC / NT;
	const int pc = tid % 16;
	const char* xk = p.x + kb * 40;

	// load starts step c0's copies into buffer b: chunks past k are
	// zeros (read from the last chunk, 0 bytes).
	auto load = [&](int b, i64 c0) {
		// (Offsets within a row of activations: 32 bits.)
		const int c0i = (int)(c0 - kb), kci = (int)(kc - kb);
		{
			const int ch = c0i + pc / 4, off = min(ch, kci - 1) * 40 + 8 + 8 * (pc % 4);
			int* dst = &s.xq[b][tid / 16][2 * pc];
			const int n = ch < kci ? 8 : 0;
#pragma unroll
			for (int u = 0; u < NX; u++) kb_cp_async<8>(dst + (NT / 16) * u * KB_QW, xk + s.xo[min(tid / 16 + (NT / 16) * u, ncols - 1)] + off, n);
		}
#pragma unroll
		for (int u = 0; u < NH; u++) {
			const int i = tid + NT * u, l = i % 16, j = 16 * (i / 64) + (i / 16) % 4 + 4 * (l / 4), ch = c0i + l % 4;
			kb_cp_async<8>(&s.xds[b][j][l % 4], xk + s.xo[min(j, ncols - 1)] + min(ch, kci - 1) * 40, ch < kci ? 8 : 0);
		}
		if (raw) {
			char* dst = (char*)wraw + wdst;
			const char* src = wsrc + c0i * B;
			if (c0 + KB_QC <= kc && nrows == BM) {
				if (wr0 < BM) {
#pragma unroll
					for (int u = 0; u < NU; u++)
						if (u < NU - 1 || wr0 + RP * u < BM) kb_cp_async<PS>(dst + u * RP * RW * 4, src + u * wstride, PS);
				}
			} else {
				// Pieces past k (the last step, short) and rows past m
				// are zeros.
				const int rem = (kci - c0i) * B - wqp, n = rem >= PS ? PS : max(rem, 0);
#pragma unroll
				for (int u = 0; u < NU; u++) {
					const int r = wr0 + RP * u;
					if (r < BM) kb_cp_async<PS>(dst + u * RP * RW * 4, r < nrows && n > 0 ? src + u * wstride : w, r < nrows ? n : 0);
				}
			}
		}
	};

	load(0, kb);
	kb_cp_async_commit();
	for (i64 c0 = kb, step = 0; c0 < kc; c0 += KB_QC, step++) {
		const int b = (int)(step & 1);
		// Step c0's copies have landed, and every thread is done with
		// the previous step's tiles.
		kb_cp_async_wait<0>();
		__syncthreads();
		if (raw) {
			if constexpr (RAW) {
				// A warp decodes 32 consecutive rows' chunk pair h.
				const int r = tid % BM, h = tid / BM;
				const u32* wr = wraw + r * RW;
				if (h == 0)
					kb_mmq32_decode<T, 0>(wr, s.wq[r], (float*)(wd4 + r), (float*)(wm4 + r));
				else
					kb_mmq32_decode<T, 1>(wr, s.wq[r], (float*)(wd4 + r), (float*)(wm4 + r));
			}
		} else {
			// KB_QC consecutive chunks of 8 rows, a quarter-warp per
			// chunk (for the stores' banks), as mmq.
			for (int job = tid; job < BM * KB_QC; job += NT) {
				const int r = 8 * (job / (8 * KB_QC)) + job % 8, cc = job / 8 % KB_QC;
				const i64 ch = c0 + cc;
				int q[8];
				float d = 0.0f, m = 0.0f;  // scale and offset (K16: the halves' scales)
				float ndmin = 0.0f;         // MIN: -dmin
				u32 mins = 0u;              // MIN: the halves' mins, packed
				if (ch < kc) {
					const i64 gr = min(row0 + r, p.m - 1);
					const u8* blk = (const u8*)(w + gr * p.w_nb1) + (ch / CPB) * B;
					if constexpr (K16) {
						float2 dm[2];
						kb_decode<T>(blk, (int)(ch % CPB), q, dm);
						d = dm[0].x;
						m = dm[1].x;
					} else if constexpr (MIN) {
						kb_decode_kmin(blk, (int)(ch % CPB), q, d, ndmin, mins);
					} else {
						kb_decode_k32<T>(blk, (int)(ch % CPB), q, d, m);
#pragma unroll
						for (int i = 0; i < 8; i++) q[i] = kb_zp<kb_k32<T>::zp>(q[i]);
					}
				} else {
#pragma unroll
					for (int i = 0; i < 8; i++) q[i] = 0;
				}
				kb_st16(&s.wq[r][cc * 8], q[0], q[1], q[2], q[3]);
				kb_st16(&s.wq[r][cc * 8 + 4], q[4], q[5], q[6], q[7]);
				((float*)(wd4 + r))[cc] = d;
				if (OFS || K16) ((float*)(wm4 + r))[cc] = m;
				if (MIN) {
					((u32*)(wm4 + r))[cc] = mins;
					((float*)(wh4 + r))[cc] = ndmin;
				}
			}
		}
		// The activations' heads: scales, and with offsets scale * sum
		// (8-byte reads: heads are 2 words apart, so 4-byte reads of the
		// scales alone would take as many wavefronts, in conflicts).
#pragma unroll
		for (int u = 0; u < KB_QC * KB_BN / NT; u++) {
			const int i = tid + NT * u, cc = i / KB_BN, col = i % KB_BN;
			const kb_qds x = kb_ld_qds(&s.xds[b][col][cc]);
			xd[cc][col] = x.d;
			if (OFS) xc[cc * KB_BN + col] = x.d * (float)(x.s[0] + x.s[1]);
		}
		__syncthreads();
		// The next step's copies run while this one computes.
		if (c0 + KB_QC < kc) load(b ^ 1, c0 + KB_QC);
		kb_cp_async_commit();
		const int ncw = ncols - 32 * wn;
		if constexpr (K16) {
			if (ncw > 16)
				kb_mmq16_mma<2>(s.wq, wd4, wm4, s.xq[b], xd, wm, wn, kh, lane, acc);
			else if (ncw > 0)
				kb_mmq16_mma<1>(s.wq, wd4, wm4, s.xq[b], xd, wm, wn, kh, lane, acc);
		} else {
			if (ncw > 16)
				kb_mmq32_mma<T, 2>(s.wq, wd4, wm4, wh4, s.xq[b], xd, xc, wm, wn, kh, lane, acc);
			else if (ncw > 0)
				kb_mmq32_mma<T, 1>(s.wq, wd4, wm4, wh4, s.xq[b], xd, xc, wm, wn, kh, lane, acc);
		}
	}
	kb_cp_async_wait<0>();
	// The k halves added: in two rounds of 32 sums a lane (BM/32 warp
	// tiles of 4 KB each, in the activations' code tiles, free now), the
	// kh = 1 warps store theirs (a warp's 32 lanes on 32 consecutive
	// words), the kh = 0 warps add them.
	float* red = (float*)&s.xq[0][0][0];
	static_assert((BM / 32) * 32 * 32 * 4 <= 2 * KB_BN * KB_QW * 4, "mmq32: the k halves' sums");
#pragma unroll
	for (int half = 0; half < 2; half++) {
		__syncthreads();
		if (kh == 1) {
#pragma unroll
			for (int i = 0; i < 32; i++) red[(wt * 32 + i) * 32 + lane] = acc[32 * half + i];
		}
		__syncthreads();
		if (kh == 0) {
#pragma unroll
			for (int i = 0; i < 32; i++) acc[32 * half + i] += red[(wt * 32 + i) * 32 + lane];
		}
	}
	if (kh != 0) return;
	// A split's partial products go to its copy of the output's layout.
	char* out = p.nsplit > 1 ? p.part + split * p.part_nb : p.d;
#pragma unroll
	for (int i = 0; i < 64; i++) {
		const int mt = i >> 4, nt = (i >> 2) & 3, e = i & 3;
		const i64 r = row0 + 64 * wm + 16 * mt + g + 8 * (e >> 1);
		const int j = 32 * wn + 8 * nt + 2 * t + (e & 1);
		if (r < p.m && j < ncols) *(float*)(out + s.dof[j] + r * 4) = acc[i];
	}
}

// mmq_mma is the tensor-core kernels' body: mmq32 where the format has
// one scale per 32 elements and for kb_kmin's, and for kb_k16's in
// kb_mmq128_* (in the 64-row kb_mmq_*, NVRTC 11.8 spilled kb_k16's two
// products a chunk on either target, at 168 registers or at 255; kb_kmin's
// two, 253 registers on sm_80 and 244 on sm_90, do not spill, and its
// third float4 a row fits the 64-row tiles' wdm since xc lost its pairs),
// else mmq's.
template <int T, int BM>
__device__ __forceinline__ void mmq_mma(const kb_mm& p, const kb_qtiles& s) {
	if constexpr (kb_k32<T>::ok || kb_kmin<T>::ok || (kb_k16<T>::ok && BM == KB_BM2))
		mmq32<T, BM>(p, s);
	else
		mmq<T, true, BM>(p, s);
}

// KB_MMQ128_BLOCKS(T) is the blocks per SM kb_mmq128_* is compiled for:
// one for mmq32's 64x32 warp tiles (64 accumulators a thread, more than
// 128 registers), two for mmq's 32x32 (at most 128 registers a thread).
#define KB_MMQ128_BLOCKS(T) (kb_k32<T>::ok || kb_k16<T>::ok || kb_kmin<T>::ok ? 1 : 2)
