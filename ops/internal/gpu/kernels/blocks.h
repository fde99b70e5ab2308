// blocks.h: the element types kernbench's GPU kernels compute with, their
// type numbers (ggml_type, as package quant numbers them) and their block
// formats, shared by the CUDA (NVRTC and the SIMT emulator) and Metal
// (the Metal compiler and the emulator) kernels, as ggml keeps one
// ggml-common.h for C, CUDA and Metal: the type table is plain C++ (its
// functions qualified by KB_BLOCKS_FN), the blocks' decoding below takes
// the few dialect differences from macros. Package ops/internal/gpu
// embeds it and hands it to each compiler as an include; its tests check
// every number here against package quant.
//
// Block layouts, in order of their bytes (d, m: binary16 scale and min,
// or for Q8_1 d and d*sum; qs: the codes; qh: the codes' high bits;
// scales: packed sub-block scales; Q8_K's d is a float32 and bsums 16
// int16 sums of 16 codes each), all fields little-endian:
//   Q4_0 d, qs[16]                  Q4_1 d, m, qs[16]
//   Q5_0 d, qh[4], qs[16]           Q5_1 d, m, qh[4], qs[16]
//   Q8_0 d, qs[32]                  Q8_1 d, s, qs[32]
//   Q2_K scales[16], qs[64], d, dmin
//   Q3_K hmask[32], qs[64], scales[12], d
//   Q4_K d, dmin, scales[12], qs[128]
//   Q5_K d, dmin, scales[12], qh[32], qs[128]
//   Q6_K ql[128], qh[64], scales[16] (int8), d
//   Q8_K d (float32), qs[256] (int8), bsums[16] (int16)
//   IQ4_NL d, qs[16] (codes index KB_IQ4NL_VALUES)
//   IQ4_XS d, scales_h (uint16: 2 high bits per sub-block of 32),
//          scales_l[4] (4 low bits per sub-block), qs[128]
//   TQ1_0 qs[48] (5 trits a byte), qh[4] (4 trits a byte), d
//   TQ2_0 qs[64] (2-bit codes, value code-1), d
//   MXFP4 e (E8M0 scale), qs[16] (codes index KB_MXFP4_VALUES, the E2M1
//          values doubled, so the scale is 2^(e-128))
//   IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M: codebook
//          formats (grid indices, sign bits, scale codes), their fields
//          in KB_IQ_FIELDS below; the grids are quant's IQ2XXSGrid ...
//          IQ1SGrid, which each backend keeps in its own dialect (CUDA:
//          ops/cuda/kernels/iq_grids.cuh; Metal: ops/metal's
//          kernels/iqgrids.h; both generated from quant)
// (package quant's layout.go says where each element's bits are).
// CUDA's and Metal's kernels take these twelve.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KB_BLOCKS_FN __host__ __device__ constexpr inline
#else
#define KB_BLOCKS_FN constexpr inline
#endif

// KB_BLOCK_TYPES(X) applies X(name, type number, elements per block,
// bytes per block) to every type.
#define KB_BLOCK_TYPES(X)  \
	X(F32, 0, 1, 4)        \
	X(F16, 1, 1, 2)        \
	X(Q4_0, 2, 32, 18)     \
	X(Q4_1, 3, 32, 20)     \
	X(Q5_0, 6, 32, 22)     \
	X(Q5_1, 7, 32, 24)     \
	X(Q8_0, 8, 32, 34)     \
	X(Q8_1, 9, 32, 36)     \
	X(Q2_K, 10, 256, 84)   \
	X(Q3_K, 11, 256, 110)  \
	X(Q4_K, 12, 256, 144)  \
	X(Q5_K, 13, 256, 176)  \
	X(Q6_K, 14, 256, 210)  \
	X(Q8_K, 15, 256, 292)  \
	X(IQ2_XXS, 16, 256, 66) \
	X(IQ2_XS, 17, 256, 74) \
	X(IQ3_XXS, 18, 256, 98) \
	X(IQ1_S, 19, 256, 50)  \
	X(IQ4_NL, 20, 32, 18)  \
	X(IQ3_S, 21, 256, 110) \
	X(IQ2_S, 22, 256, 82)  \
	X(IQ4_XS, 23, 256, 136) \
	X(I8, 24, 1, 1)        \
	X(I16, 25, 1, 2)       \
	X(I32, 26, 1, 4)       \
	X(IQ1_M, 29, 256, 56)  \
	X(BF16, 30, 1, 2)      \
	X(TQ1_0, 34, 256, 54)  \
	X(TQ2_0, 35, 256, 66)  \
	X(MXFP4, 39, 32, 17)

// The code tables of IQ4_NL/IQ4_XS and of MXFP4, as initializer lists
// (ggml's kvalues_iq4nl and kvalues_mxfp4).
#define KB_IQ4NL_VALUES -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113
#define KB_MXFP4_VALUES 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12

// KB_IQ_FIELDS(X) applies X(type, field, first byte, end byte) to every
// field of the blocks of MXFP4, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0 and the
// codebook formats, in the order of their bytes, as quant's layout.go
// gives them (its tests compare them); KB_<type>_<field> is the first
// byte (KB_IQ2_S_signs = 34).
#define KB_IQ_FIELDS(X)             \
	X(MXFP4, e, 0, 1)               \
	X(MXFP4, qs, 1, 17)             \
	X(IQ4_NL, d, 0, 2)              \
	X(IQ4_NL, qs, 2, 18)            \
	X(IQ4_XS, d, 0, 2)              \
	X(IQ4_XS, scales_h, 2, 4)       \
	X(IQ4_XS, scales_l, 4, 8)       \
	X(IQ4_XS, qs, 8, 136)           \
	X(TQ1_0, qs, 0, 48)             \
	X(TQ1_0, qh, 48, 52)            \
	X(TQ1_0, d, 52, 54)             \
	X(TQ2_0, qs, 0, 64)             \
	X(TQ2_0, d, 64, 66)             \
	X(IQ2_XXS, d, 0, 2)             \
	X(IQ2_XXS, qs, 2, 66)           \
	X(IQ2_XS, d, 0, 2)              \
	X(IQ2_XS, qs, 2, 66)            \
	X(IQ2_XS, scales, 66, 74)       \
	X(IQ2_S, d, 0, 2)               \
	X(IQ2_S, qs, 2, 34)             \
	X(IQ2_S, signs, 34, 66)         \
	X(IQ2_S, qh, 66, 74)            \
	X(IQ2_S, scales, 74, 82)        \
	X(IQ3_XXS, d, 0, 2)             \
	X(IQ3_XXS, qs, 2, 66)           \
	X(IQ3_XXS, ss, 66, 98)          \
	X(IQ3_S, d, 0, 2)               \
	X(IQ3_S, qs, 2, 66)             \
	X(IQ3_S, qh, 66, 74)            \
	X(IQ3_S, signs, 74, 106)        \
	X(IQ3_S, scales, 106, 110)      \
	X(IQ1_S, d, 0, 2)               \
	X(IQ1_S, qs, 2, 34)             \
	X(IQ1_S, qh, 34, 50)            \
	X(IQ1_M, qs, 0, 32)             \
	X(IQ1_M, qh, 32, 48)            \
	X(IQ1_M, scales, 48, 56)

enum {
#define KB_FIELDS_ENUM(type, field, first, end) KB_##type##_##field = first,
	KB_IQ_FIELDS(KB_FIELDS_ENUM)
#undef KB_FIELDS_ENUM
};

// Type numbers: KB_F32, KB_Q4_0, ...
enum {
#define KB_BLOCKS_ENUM(name, num, block, bytes) KB_##name = num,
	KB_BLOCK_TYPES(KB_BLOCKS_ENUM)
#undef KB_BLOCKS_ENUM
};

// kb_block(t) is the elements per block of type t, kb_bytes(t) its bytes;
// both 0 for a number that is no type here.
#define KB_BLOCKS_ELEMS(name, num, block, bytes) t == num ? block:
#define KB_BLOCKS_BYTES(name, num, block, bytes) t == num ? bytes:
KB_BLOCKS_FN int kb_block(int t) { return KB_BLOCK_TYPES(KB_BLOCKS_ELEMS) 0; }
KB_BLOCKS_FN int kb_bytes(int t) { return KB_BLOCK_TYPES(KB_BLOCKS_BYTES) 0; }
#undef KB_BLOCKS_ELEMS
#undef KB_BLOCKS_BYTES


// The blocks' shared decoding, one source for both dialects: little-endian
// reads at any alignment (blocks of 18 or 22 bytes leave their fields
// unaligned) and the packed codes and scales. Per dialect, KB_BLOCKS_DEV
// qualifies a device function, KB_BLOCKS_PTR is a pointer to a block's
// bytes in device memory and KB_BLOCKS_REF(T) a reference to a thread's
// T. The dialect's common header (kb_h2f) comes first; in plain C++ this
// part is left out.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KB_BLOCKS_DEV __device__ __forceinline__
#define KB_BLOCKS_PTR const unsigned char*
#define KB_BLOCKS_REF(T) T&
#elif defined(__METAL_VERSION__)
#define KB_BLOCKS_DEV inline
#define KB_BLOCKS_PTR device const uchar*
#define KB_BLOCKS_REF(T) thread T&
#endif

#ifdef KB_BLOCKS_DEV
KB_BLOCKS_DEV unsigned short kb_rd16(KB_BLOCKS_PTR p) { return (unsigned short)(p[0] | (p[1] << 8)); }
KB_BLOCKS_DEV unsigned int kb_rd32(KB_BLOCKS_PTR p) {
	return (unsigned int)p[0] | ((unsigned int)p[1] << 8) | ((unsigned int)p[2] << 16) | ((unsigned int)p[3] << 24);
}
KB_BLOCKS_DEV float kb_rdh(KB_BLOCKS_PTR p) { return kb_h2f(kb_rd16(p)); }

// kb_nibble returns the 4-bit code of element e (0..31) of a legacy
// block's 16 code bytes: the low nibble of qs[e] for e < 16, the high
// nibble of qs[e-16] above.
KB_BLOCKS_DEV int kb_nibble(KB_BLOCKS_PTR qs, int e) { return e < 16 ? qs[e] & 15 : qs[e - 16] >> 4; }

// kb_k4_scale_min returns the 6-bit scale and min codes of sub-block j of
// a Q4_K or Q5_K super-block's 12 scale bytes (s a KB_BLOCKS_PTR, or on
// Metal a pointer to the bytes in threadgroup memory).
template <typename P>
KB_BLOCKS_DEV void kb_k4_scale_min(int j, P s, KB_BLOCKS_REF(int) sc, KB_BLOCKS_REF(int) m) {
	if (j < 4) {
		sc = s[j] & 63;
		m = s[j + 4] & 63;
	} else {
		sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
		m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
	}
}

// kb_q3_scale returns the signed scale of sub-block j of a Q3_K
// super-block's 12 scale bytes (s as kb_k4_scale_min's).
template <typename P>
KB_BLOCKS_DEV int kb_q3_scale(int j, P s) {
	int lo = j < 8 ? s[j] & 15 : s[j - 8] >> 4;
	int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
	return (lo | (hi << 4)) - 32;
}
#endif
