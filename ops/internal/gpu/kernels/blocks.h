// blocks.h: the element types kernbench's GPU kernels compute with, their
// type numbers (ggml_type, as package quant numbers them) and their block
// formats, shared by the CUDA (NVRTC and the SIMT emulator) and Metal
// (the Metal compiler and the emulator) kernels, as ggml keeps one
// ggml-common.h for C, CUDA and Metal. It is plain C++ with no dialect
// of its own but KB_BLOCKS_FN, the qualifiers of its functions. Package
// ops/internal/gpu embeds it and hands it to each compiler as an include;
// its tests check every number here against package quant.
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
	X(I8, 24, 1, 1)        \
	X(I16, 25, 1, 2)       \
	X(I32, 26, 1, 4)       \
	X(BF16, 30, 1, 2)

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

