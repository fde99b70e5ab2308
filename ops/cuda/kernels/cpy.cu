// cpy.cu: CPY (f32, f16 or bf16 into any float type over any strides,
// or quantized into a packed destination with package quant's reference
// quantizers, bit for bit: the legacy and K formats, MXFP4, IQ4_NL,
// IQ4_XS, TQ1_0 and TQ2_0) and CONT (a packed copy of any type, whole
// blocks for the quantized ones).
#include "common.cuh"
#include "quants.cuh"
#include "quantize.cuh"

// kb_src_value returns logical element k of a float tensor of type st
// (KB_F32, KB_F16 or KB_BF16); packed: a is contiguous, so element k is
// at k*nb0.
__device__ __forceinline__ float kb_src_value(const char* a, const kb_tensor& ta, int st, i64 k, int packed) {
	i64 off;
	if (packed) {
		off = k * ta.nb[0];
	} else {
		i64 i0, i1, i2, i3;
		kb_unravel(ta, k, i0, i1, i2, i3);
		off = kb_offset(ta, i0, i1, i2, i3);
	}
	if (st == KB_F16) return kb_h2f(*(const u16*)(a + off));
	if (st == KB_BF16) return kb_bf2f(*(const u16*)(a + off));
	return *(const float*)(a + off);
}

// ---------------------------------------------------------------------
// CPY between float types: logical element k of a to logical element k of
// d, a grid-stride loop over the elements.

template <int D>
__device__ __forceinline__ void kb_store_float(char* p, float v) {
	if (D == KB_F16) {
		*(u16*)p = kb_f2h(v);
	} else if (D == KB_BF16) {
		*(u16*)p = kb_f2bf(v);
	} else {
		*(float*)p = v;
	}
}

template <int S, int D>
__device__ __forceinline__ void kb_cpy_float(const char* a, const kb_tensor& ta, char* d, const kb_tensor& td) {
	i64 n = kb_count(td);
	for (i64 k = kb_first(); k < n; k += kb_stride()) {
		i64 i0, i1, i2, i3;
		kb_unravel(ta, k, i0, i1, i2, i3);
		float v = kb_value<S>((const u8*)(a + kb_offset(ta, i0, i1, i2, i3)), 0);
		kb_unravel(td, k, i0, i1, i2, i3);
		kb_store_float<D>(d + kb_offset(td, i0, i1, i2, i3), v);
	}
}

#define KB_CPY_FLOAT(sn, S, dn, D)                                                                          \
	extern "C" __global__ void kb_cpy_##sn##_##dn(const char* a, kb_tensor ta, char* d, kb_tensor td) { \
		kb_cpy_float<S, D>(a, ta, d, td);                                                               \
	}
#define KB_CPY_FROM(sn, S)                \
	KB_CPY_FLOAT(sn, S, f32, KB_F32)      \
	KB_CPY_FLOAT(sn, S, f16, KB_F16)      \
	KB_CPY_FLOAT(sn, S, bf16, KB_BF16)
KB_CPY_FROM(f32, KB_F32)
KB_CPY_FROM(f16, KB_F16)
KB_CPY_FROM(bf16, KB_BF16)

// ---------------------------------------------------------------------
// CPY into a legacy format: a block of 64 threads stages 64 blocks' source
// values in shared memory (coalesced loads when a is packed; rows padded
// to 33 floats so that the threads' reads fall in different banks), then
// each thread quantizes one 32-element block. Grid: ceil(nblocks/64).

template <int T>
__device__ __forceinline__ void kb_quantize_legacy(const char* a, const kb_tensor& ta, int st, int packed, u8* d, i64 nblocks, float* xs) {
	i64 b0 = (i64)blockIdx.x * 64;
	for (int e = threadIdx.x; e < 64 * 32; e += blockDim.x) {
		if (b0 + e / 32 < nblocks) xs[(e / 32) * 33 + e % 32] = kb_src_value(a, ta, st, b0 * 32 + e, packed);
	}
	__syncthreads();
	i64 b = b0 + threadIdx.x;
	if (b >= nblocks) return;
	const float* x = xs + threadIdx.x * 33;
	u8* out = d + b * kb_type<T>::bytes;
	if (T == KB_Q4_0) kb_q4_0_block(x, out);
	if (T == KB_Q4_1) kb_q4_1_block(x, out);
	if (T == KB_Q5_0) kb_q5_0_block(x, out);
	if (T == KB_Q5_1) kb_q5_1_block(x, out);
	if (T == KB_Q8_0) kb_q8_0_block(x, out);
	if (T == KB_MXFP4) kb_mxfp4_block(x, out);
}

// CPY into IQ4_NL: as the legacy formats, a block per thread. The
// reference keeps one code buffer for a row, so a block whose largest
// magnitude is below 1e-15 (scale 0: it decodes to zeros whatever its
// codes) keeps the codes of the latest earlier block of its row that is
// not, or all 8 when there is none: such a thread refits that block from
// a (in global memory) to find them. A row is ne0 of the destination
// (rowblocks blocks): the CPU quantizes each row in one QuantizeRow call
// (its runs of 4096 elements split rows longer than that when the source
// is not packed f32, which changes only such blocks' codes).
__device__ __forceinline__ void kb_quantize_iq4nl(const char* a, const kb_tensor& ta, int st, int packed, u8* d, i64 nblocks, i64 rowblocks,
                                                  float* xs) {
	i64 b0 = (i64)blockIdx.x * 64;
	for (int e = threadIdx.x; e < 64 * 32; e += blockDim.x) {
		if (b0 + e / 32 < nblocks) xs[(e / 32) * 33 + e % 32] = kb_src_value(a, ta, st, b0 * 32 + e, packed);
	}
	__syncthreads();
	i64 b = b0 + threadIdx.x;
	if (b >= nblocks) return;
	const float* x = xs + threadIdx.x * 33;
	u8* out = d + b * kb_type<KB_IQ4_NL>::bytes;
	u8 L[32];
	float dl;
	if (!kb_iq4_fit(x, -1, L, dl)) {
		for (int j = 0; j < 32; j++) L[j] = 8;
		float y[32], unused;
		for (i64 p = b - 1; p >= b - b % rowblocks; p--) {
			for (int j = 0; j < 32; j++) y[j] = kb_src_value(a, ta, st, p * 32 + j, packed);
			if (kb_iq4_fit(y, -1, L, unused)) break;
		}
	}
	kb_put_f16(out, dl);
	kb_iq4_pack(L, out + KB_IQ4_NL_qs);
}

// ---------------------------------------------------------------------
// CPY into a K format: a block of 64 threads takes 64/NSB super-blocks, a
// thread per sub-block (NSB of them, 8 of 32 elements or 16 of 16). The
// source values are staged in shared memory; each thread fits its
// sub-block (codes to shared L); after a barrier every thread of a
// super-block reads all the fits in order (as the reference's sequential
// loop does), writes its share of the scale bytes and requantizes its
// sub-block against the scales as stored; after another barrier the
// threads pack the codes, each a share of the bytes.

template <int T>
struct kb_kformat;
template <>
struct kb_kformat<KB_Q2_K> {
	static constexpr int nsb = 16;
};
template <>
struct kb_kformat<KB_Q3_K> {
	static constexpr int nsb = 16;
};
template <>
struct kb_kformat<KB_Q4_K> {
	static constexpr int nsb = 8;
};
template <>
struct kb_kformat<KB_Q5_K> {
	static constexpr int nsb = 8;
};
template <>
struct kb_kformat<KB_Q6_K> {
	static constexpr int nsb = 16;
};
template <>
struct kb_kformat<KB_IQ4_XS> {
	static constexpr int nsb = 8;
};

// kb_fit fits sub-block j (x, W elements) of a super-block of T: the
// codes to L, the scale to *sc, the min to *mn where the format has one.
template <int T>
__device__ __forceinline__ void kb_fit(const float* x, u8* L, float* sc, float* mn) {
	if constexpr (T == KB_Q4_K || T == KB_Q5_K) {
		float sum_x2 = 0.0f;
		for (int l = 0; l < 32; l++) sum_x2 = __fadd_rn(sum_x2, kb_mul(x[l], x[l]));
		float av_x = sqrtf(sum_x2 / 32.0f);
		float w[32];
		for (int l = 0; l < 32; l++) w[l] = av_x + fabsf(x[l]);
		if (T == KB_Q4_K) {
			*sc = kb_make_qkx2(32, 15, x, w, L, -1.0f, 0.1f, 20, false, *mn);
		} else {
			*sc = kb_make_qkx2(32, 31, x, w, L, -0.5f, 0.1f, 15, false, *mn);
		}
	} else if constexpr (T == KB_Q2_K) {
		float w[16];
		for (int l = 0; l < 16; l++) w[l] = fabsf(x[l]);
		*sc = kb_make_qkx2(16, 3, x, w, L, -0.5f, 0.1f, 15, true, *mn);
	} else if constexpr (T == KB_Q3_K) {
		*sc = kb_make_q3(16, 4, x, (i8*)L);
	} else if constexpr (T == KB_IQ4_XS) {
		kb_iq4_fit(x, 7, L, *sc);
	} else {
		*sc = kb_make_qx(16, 32, x, (i8*)L);
	}
}

// kb_f16_round returns f rounded to f16 and back, the value a stored
// scale has.
__device__ __forceinline__ float kb_f16_round(float f) { return kb_h2f(kb_f2h(f)); }

// kb_k4_codes returns sub-block j's 6-bit scale and min codes (Q4_K,
// Q5_K) from the super-block's fits.
__device__ __forceinline__ void kb_k4_codes(const float* sc, const float* mn, float inv_scale, float inv_min, int j, int& ls, int& lm) {
	ls = min(63, (int)(u8)kb_nearest(kb_mul(inv_scale, sc[j])));
	lm = min(63, (int)(u8)kb_nearest(kb_mul(inv_min, mn[j])));
}

// kb_q3_code returns sub-block j's 6-bit scale code (Q3_K), biased by 32.
__device__ __forceinline__ int kb_q3_code(const float* sc, float iscale, int j) {
	return kb_clamp((int)(i8)kb_nearest(kb_mul(iscale, sc[j])), -32, 31) + 32;
}

// kb_signed_max returns the fit of largest magnitude (the first on ties)
// and sets amax to its magnitude (Q3_K, Q6_K).
__device__ __forceinline__ float kb_signed_max(const float* sc, int n, float& amax) { return kb_abs_max_signed(sc, n, amax); }

// kb_iq4xs_code returns sub-block j's scale code in [-32, 31] against
// the super-block scale's inverse id (IQ4_XS).
__device__ __forceinline__ int kb_iq4xs_code(const float* sc, float id, int j) { return kb_clamp(kb_nearest(kb_mul(id, sc[j])), -32, 31); }

// kb_encode writes super-block b's header (scales, d) for sub-block j's
// share and requantizes sub-block j (x, L) against the stored scales.
template <int T>
__device__ __forceinline__ void kb_encode(const float* x, u8* L, const float* sc, const float* mn, int j, u8* b) {
	if constexpr (T == KB_IQ4_XS) {
		// The super-block scale is the sub-block scale of largest
		// magnitude (the first on ties) over -32; the 6-bit codes and
		// then the 4-bit ones are fitted against it as a float32, not
		// as the f16 stored.
		float max_scale = 0.0f, amax_scale = 0.0f;
		for (int k = 0; k < 8; k++) {
			if (fabsf(sc[k]) > amax_scale) {
				amax_scale = fabsf(sc[k]);
				max_scale = sc[k];
			}
		}
		const float ds = -max_scale / 32.0f;
		const float id = kb_inverse(ds);
		if (j == 0) {
			kb_put_f16(b + KB_IQ4_XS_d, ds);
			u32 h = 0;
			for (int k = 0; k < 8; k++) {
				const int l = kb_iq4xs_code(sc, id, k) + 32;
				if (k % 2 == 0) {
					b[KB_IQ4_XS_scales_l + k / 2] = (u8)(l & 15);
				} else {
					b[KB_IQ4_XS_scales_l + k / 2] |= (u8)((l & 15) << 4);
				}
				h |= (u32)(l >> 4) << (2 * k);
			}
			kb_put16(b + KB_IQ4_XS_scales_h, (u16)h);
		}
		const float idl = kb_inverse(kb_mul(ds, (float)kb_iq4xs_code(sc, id, j)));
		for (int i = 0; i < 32; i++) L[i] = (u8)kb_iq4_index(kb_mul(idl, x[i]));
	} else if constexpr (T == KB_Q4_K || T == KB_Q5_K) {
		const int nmax = T == KB_Q4_K ? 15 : 31;
		float max_scale = 0.0f, max_min = 0.0f;
		for (int k = 0; k < 8; k++) {
			if (sc[k] > max_scale) max_scale = sc[k];
			if (mn[k] > max_min) max_min = mn[k];
		}
		float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
		float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
		int ls, lm, ls4, lm4;
		kb_k4_codes(sc, mn, inv_scale, inv_min, j, ls, lm);
		// The 12 scale bytes at b+4: sub-blocks 0..3 in bytes 0..7 with
		// the top bits of 4..7's codes, 4..7's low bits in bytes 8..11.
		if (j < 4) {
			kb_k4_codes(sc, mn, inv_scale, inv_min, j + 4, ls4, lm4);
			b[4 + j] = (u8)(ls | ((ls4 >> 4) << 6));
			b[8 + j] = (u8)(lm | ((lm4 >> 4) << 6));
		} else {
			b[8 + j] = (u8)((ls & 15) | ((lm & 15) << 4));
		}
		if (j == 0) {
			kb_put_f16(b, max_scale / 63.0f);
			kb_put_f16(b + 2, max_min / 63.0f);
		}
		float d = kb_f16_round(max_scale / 63.0f) * (float)ls;
		if (d == 0.0f) return;
		float dm = kb_mul(kb_f16_round(max_min / 63.0f), (float)lm);
		for (int i = 0; i < 32; i++) L[i] = (u8)kb_clamp(kb_nearest((x[i] + dm) / d), 0, nmax);
	} else if constexpr (T == KB_Q2_K) {
		float max_scale = 0.0f, max_min = 0.0f;
		for (int k = 0; k < 16; k++) {
			if (sc[k] > max_scale) max_scale = sc[k];
			if (mn[k] > max_min) max_min = mn[k];
		}
		u8 s = 0;
		if (max_scale > 0.0f) s = (u8)kb_nearest(kb_mul(15.0f / max_scale, sc[j]));
		if (max_min > 0.0f) s |= (u8)(kb_nearest(kb_mul(15.0f / max_min, mn[j])) << 4);
		b[j] = s;
		float dv = max_scale > 0.0f ? max_scale / 15.0f : 0.0f, mv = max_min > 0.0f ? max_min / 15.0f : 0.0f;
		if (j == 0) {
			kb_put_f16(b + 80, dv);
			kb_put_f16(b + 82, mv);
		}
		float d = kb_f16_round(dv) * (float)(s & 15);
		if (d == 0.0f) return;
		float dm = kb_mul(kb_f16_round(mv), (float)(s >> 4));
		for (int i = 0; i < 16; i++) L[i] = (u8)kb_clamp(kb_nearest((x[i] + dm) / d), 0, 3);
	} else if constexpr (T == KB_Q3_K) {
		float amax;
		float max_scale = kb_signed_max(sc, 16, amax);
		float iscale = -32.0f / max_scale;
		// The 12 scale bytes at b+96: low nibbles of sub-blocks 0..7 and
		// 8..15 in bytes 0..7, the top bits of j, j+4, j+8, j+12 in byte
		// 8+j.
		if (j < 12) {
			u8 v = 0;
			if (max_scale != 0.0f) {
				if (j < 8) {
					v = (u8)((kb_q3_code(sc, iscale, j) & 15) | ((kb_q3_code(sc, iscale, j + 8) & 15) << 4));
				} else {
					for (int k = j - 8; k < 16; k += 4) v |= (u8)((kb_q3_code(sc, iscale, k) >> 4) << (2 * (k / 4)));
				}
			}
			b[96 + j] = v;
		}
		float dv = max_scale != 0.0f ? 1.0f / iscale : 0.0f;
		if (j == 0) kb_put_f16(b + 108, dv);
		int q3 = max_scale != 0.0f ? kb_q3_code(sc, iscale, j) - 32 : -32;
		float d = kb_f16_round(dv) * (float)q3;
		if (d == 0.0f) return;
		for (int i = 0; i < 16; i++) L[i] = (u8)(kb_clamp(kb_nearest(x[i] / d), -4, 3) + 4);
	} else {
		float amax;
		float max_scale = kb_signed_max(sc, 16, amax);
		if (amax < 1e-15f) {
			// A super-block of zeros: all 210 bytes 0.
			for (int k = 14 * j; k < min(14 * j + 14, 210); k++) b[k] = 0;
			return;
		}
		float iscale = -128.0f / max_scale;
		int s = (i8)min(127, kb_nearest(kb_mul(iscale, sc[j])));
		b[192 + j] = (u8)s;
		if (j == 0) kb_put_f16(b + 208, 1.0f / iscale);
		float d = kb_f16_round(1.0f / iscale) * (float)s;
		if (d == 0.0f) return;
		for (int i = 0; i < 16; i++) L[i] = (u8)(kb_clamp(kb_nearest(x[i] / d), -32, 31) + 32);
	}
}

// kb_pack2 packs 4 2-bit codes of L (Q2_K, Q3_K's low bits) into byte k
// of 64: in each half of 128 elements, byte l holds elements l, l+32,
// l+64 and l+96. q3: a code above 3 goes in as code - 4 (Q3_K's low
// bits; the high bit is in hmask).
__device__ __forceinline__ u8 kb_pack2(const u8* L, int k, bool q3) {
	int e = 128 * (k / 32) + k % 32;
	u8 v = 0;
	for (int g = 0; g < 4; g++) {
		int l = L[e + 32 * g];
		if (q3 && l > 3) l -= 4;
		v |= (u8)(l << (2 * g));
	}
	return v;
}

// kb_pack writes sub-block thread j's share of the packed codes of a
// super-block (its codes in L).
template <int T>
__device__ __forceinline__ void kb_pack(const u8* L, const float* sc, int j, u8* b) {
	if constexpr (T == KB_IQ4_XS) {
		kb_iq4_pack(L + 32 * j, b + KB_IQ4_XS_qs + 16 * j);
	} else if constexpr (T == KB_Q4_K || T == KB_Q5_K) {
		u8* qs = b + (T == KB_Q4_K ? 16 : 48);
		for (int k = 16 * j; k < 16 * j + 16; k++) {
			int e = 64 * (k / 32) + k % 32;
			qs[k] = (u8)((L[e] & 15) | ((L[e + 32] & 15) << 4));
		}
		if (T == KB_Q5_K) {
			// High bits: element e's in bit e/32 of qh[e%32].
			for (int m = 4 * j; m < 4 * j + 4; m++) {
				u8 v = 0;
				for (int k = 0; k < 8; k++) v |= (u8)((L[m + 32 * k] > 15) << k);
				b[16 + m] = v;
			}
		}
	} else if constexpr (T == KB_Q2_K || T == KB_Q3_K) {
		const bool q3 = T == KB_Q3_K;
		u8* qs = b + (q3 ? 32 : 16);
		for (int k = 4 * j; k < 4 * j + 4; k++) qs[k] = kb_pack2(L, k, q3);
		if (q3) {
			for (int m = 2 * j; m < 2 * j + 2; m++) {
				u8 v = 0;
				for (int k = 0; k < 8; k++) v |= (u8)((L[m + 32 * k] > 3) << k);
				b[m] = v;
			}
		}
	} else {
		float amax;
		kb_signed_max(sc, 16, amax);
		if (amax < 1e-15f) return;
		// ql: byte k of half h holds element 128h + 32g + l (l = k%32,
		// g = (k%64)/32) in its low nibble and that of g+2 in its high.
		for (int k = 8 * j; k < 8 * j + 8; k++) {
			int e = 128 * (k / 64) + k % 64;
			b[k] = (u8)((L[e] & 15) | ((L[e + 64] & 15) << 4));
		}
		// qh: byte m of half h holds bits 4..5 of elements 128h + 32g + l
		// (l = m%32) in bit pair g.
		for (int m = 4 * j; m < 4 * j + 4; m++) {
			int e = 128 * (m / 32) + m % 32;
			u8 v = 0;
			for (int g = 0; g < 4; g++) v |= (u8)(((L[e + 32 * g] >> 4) & 3) << (2 * g));
			b[128 + m] = v;
		}
	}
}

template <int T>
__device__ __forceinline__ void kb_quantize_k(const char* a, const kb_tensor& ta, int st, int packed, u8* d, i64 nblocks, float* xs, u8* Ls,
                                              float* scs, float* mns) {
	const int NSB = kb_kformat<T>::nsb, W = 256 / NSB, SB = 64 / NSB;
	i64 b0 = (i64)blockIdx.x * SB;
	for (int e = threadIdx.x; e < SB * 256; e += blockDim.x) {
		if (b0 + e / 256 < nblocks) xs[e] = kb_src_value(a, ta, st, b0 * 256 + e, packed);
	}
	__syncthreads();
	const int s = threadIdx.x / NSB, j = threadIdx.x % NSB;
	const i64 b = b0 + s;
	const bool valid = b < nblocks;
	u8* out = d + b * kb_type<T>::bytes;
	if (valid) kb_fit<T>(xs + s * 256 + j * W, Ls + s * 256 + j * W, scs + threadIdx.x, mns + threadIdx.x);
	__syncthreads();
	if (valid) kb_encode<T>(xs + s * 256 + j * W, Ls + s * 256 + j * W, scs + s * NSB, mns + s * NSB, j, out);
	__syncthreads();
	if (valid) kb_pack<T>(Ls + s * 256, scs + s * NSB, j, out);
}

// ---------------------------------------------------------------------
// CPY into TQ1_0 or TQ2_0: a block of 64 threads stages 8 super-blocks;
// 8 threads share each, every one finding the scale (a sequential scan,
// as the reference's, for its NaN handling) and writing every eighth
// code byte; the first writes d.

template <int T>
__device__ __forceinline__ void kb_quantize_tq(const char* a, const kb_tensor& ta, int st, int packed, u8* d, i64 nblocks, float* xs) {
	const i64 b0 = (i64)blockIdx.x * 8;
	for (int e = threadIdx.x; e < 8 * 256; e += blockDim.x) {
		if (b0 + e / 256 < nblocks) xs[e] = kb_src_value(a, ta, st, b0 * 256 + e, packed);
	}
	__syncthreads();
	const int s = threadIdx.x / 8, j = threadIdx.x % 8;
	const i64 b = b0 + s;
	if (b >= nblocks) return;
	const float* x = xs + 256 * s;
	u8* out = d + b * kb_type<T>::bytes;
	float id;
	const float scale = kb_ternary_scale(x, id);
	if constexpr (T == KB_TQ1_0) {
		// Bytes 0..31: five trits of elements m + 32n; 32..47: of
		// 160 + m + 16n; 48..51 (qh): four of 240 + m + 4n.
		for (int k = j; k < 52; k += 8) {
			if (k < 32) {
				out[k] = kb_pack_trits(x + k, 32, 5, id);
			} else if (k < 48) {
				out[k] = kb_pack_trits(x + 160 + (k - 32), 16, 5, id);
			} else {
				out[k] = kb_pack_trits(x + 240 + (k - 48), 4, 4, id);
			}
		}
		if (j == 0) kb_put_f16(out + KB_TQ1_0_d, scale);
	} else {
		// Byte 32h + m: the 2-bit codes of elements 128h + 32n + m in
		// bit pair n.
		for (int k = 8 * j; k < 8 * j + 8; k++) {
			const int h = k / 32, m = k % 32;
			u8 q = 0;
			for (int n = 0; n < 4; n++) q = (u8)(q + (u8)((kb_lround_trit(kb_mul(x[128 * h + 32 * n + m], id)) & 3) << (2 * n)));
			out[k] = q;
		}
		if (j == 0) kb_put_f16(out + KB_TQ2_0_d, scale);
	}
}

// One kernel per destination format: a (of type st) is read in logical
// order; d is the packed destination of nblocks blocks. The shared arrays
// are the kernels' own, not static locals of the templates: those would
// be one object per process (STB_GNU_UNIQUE) on the emulator, shared by
// every module that instantiates the template.
#define KB_QUANTIZE_LEGACY(name, T)                                                                                         \
	extern "C" __global__ void kb_quantize_##name(const char* a, kb_tensor ta, int st, int packed, u8* d, i64 nblocks) { \
		__shared__ float xs[64 * 33];                                                                                   \
		kb_quantize_legacy<T>(a, ta, st, packed, d, nblocks, xs);                                                       \
	}
#define KB_QUANTIZE_K(name, T)                                                                                              \
	extern "C" __global__ void kb_quantize_##name(const char* a, kb_tensor ta, int st, int packed, u8* d, i64 nblocks) { \
		__shared__ float xs[8 * 256];                                                                                   \
		__shared__ u8 Ls[8 * 256];                                                                                      \
		__shared__ float scs[64];                                                                                       \
		__shared__ float mns[64];                                                                                       \
		kb_quantize_k<T>(a, ta, st, packed, d, nblocks, xs, Ls, scs, mns);                                              \
	}
KB_QUANTIZE_LEGACY(q4_0, KB_Q4_0)
KB_QUANTIZE_LEGACY(q4_1, KB_Q4_1)
KB_QUANTIZE_LEGACY(q5_0, KB_Q5_0)
KB_QUANTIZE_LEGACY(q5_1, KB_Q5_1)
KB_QUANTIZE_LEGACY(q8_0, KB_Q8_0)
KB_QUANTIZE_K(q2_K, KB_Q2_K)
KB_QUANTIZE_K(q3_K, KB_Q3_K)
KB_QUANTIZE_K(q4_K, KB_Q4_K)
KB_QUANTIZE_K(q5_K, KB_Q5_K)
KB_QUANTIZE_K(q6_K, KB_Q6_K)
KB_QUANTIZE_LEGACY(mxfp4, KB_MXFP4)
KB_QUANTIZE_K(iq4_xs, KB_IQ4_XS)
#define KB_QUANTIZE_TQ(name, T)                                                                                             \
	extern "C" __global__ void kb_quantize_##name(const char* a, kb_tensor ta, int st, int packed, u8* d, i64 nblocks) { \
		__shared__ float xs[8 * 256];                                                                                   \
		kb_quantize_tq<T>(a, ta, st, packed, d, nblocks, xs);                                                           \
	}
KB_QUANTIZE_TQ(tq1_0, KB_TQ1_0)
KB_QUANTIZE_TQ(tq2_0, KB_TQ2_0)
// IQ4_NL takes the blocks per row too (kb_quantize_iq4nl).
extern "C" __global__ void kb_quantize_iq4_nl(const char* a, kb_tensor ta, int st, int packed, u8* d, i64 nblocks, i64 rowblocks) {
	__shared__ float xs[64 * 33];
	kb_quantize_iq4nl(a, ta, st, packed, d, nblocks, rowblocks, xs);
}

// ---------------------------------------------------------------------
// CONT: a's elements (blocks, for the quantized types: ne0 counts blocks
// here) in logical order into the packed d, in words of U: an element of
// esize bytes is esize/sizeof(U) words, and the host picks the widest
// word that every stride, size and address is a multiple of. A grid-stride
// loop over d's words, so stores are coalesced.
template <typename U>
__device__ __forceinline__ void kb_cont(const char* a, const kb_tensor& ta, char* d, const kb_tensor& td, i64 esize) {
	const i64 wpe = esize / (i64)sizeof(U);
	i64 n = kb_count(td) * wpe;
	for (i64 u = kb_first(); u < n; u += kb_stride()) {
		i64 e = u / wpe, part = (u % wpe) * (i64)sizeof(U);
		i64 i0, i1, i2, i3;
		kb_unravel(td, e, i0, i1, i2, i3);
		*(U*)(d + kb_offset(td, i0, i1, i2, i3) + part) = *(const U*)(a + kb_offset(ta, i0, i1, i2, i3) + part);
	}
}

#define KB_CONT(W, U)                                                                                             \
	extern "C" __global__ void kb_cont_w##W(const char* a, kb_tensor ta, char* d, kb_tensor td, i64 esize) { \
		kb_cont<U>(a, ta, d, td, esize);                                                                      \
	}
KB_CONT(1, u8)
KB_CONT(2, u16)
KB_CONT(4, u32)
KB_CONT(8, u64)

// kb_transpose: CONT of an a whose dimension 1 is packed (a transposed
// matrix) into the packed d, through 32x32 tiles in shared memory so that
// both the loads (along a's dimension 1) and the stores (along d's
// dimension 0) are coalesced. Grid (ceil(ne0/32), ceil(ne1/32), ne2*ne3),
// block (32, 8); the tile rows are padded against bank conflicts.
template <typename U>
__device__ __forceinline__ void kb_transpose(const char* a, const kb_tensor& ta, char* d, const kb_tensor& td, U (*tile)[33]) {
	i64 i2 = blockIdx.z % ta.ne[2], i3 = blockIdx.z / ta.ne[2];
	i64 x0 = (i64)blockIdx.x * 32, y0 = (i64)blockIdx.y * 32;
	for (int r = threadIdx.y; r < 32; r += blockDim.y) {
		i64 i0 = x0 + r, i1 = y0 + threadIdx.x;
		if (i0 < ta.ne[0] && i1 < ta.ne[1]) tile[r][threadIdx.x] = *(const U*)(a + kb_offset(ta, i0, i1, i2, i3));
	}
	__syncthreads();
	for (int r = threadIdx.y; r < 32; r += blockDim.y) {
		i64 i0 = x0 + threadIdx.x, i1 = y0 + r;
		if (i0 < td.ne[0] && i1 < td.ne[1]) *(U*)(d + kb_offset(td, i0, i1, i2, i3)) = tile[threadIdx.x][r];
	}
}

#define KB_TRANSPOSE(W, U)                                                                                  \
	extern "C" __global__ void kb_transpose_w##W(const char* a, kb_tensor ta, char* d, kb_tensor td) { \
		__shared__ U tile[32][33];                                                                      \
		kb_transpose<U>(a, ta, d, td, tile);                                                            \
	}
KB_TRANSPOSE(2, u16)
KB_TRANSPOSE(4, u32)
