// mm.cuh: what the MUL_MAT and MUL_MAT_ID kernels share: the launch
// parameters, the quantized activation block, every quantized weight
// block decoded to int8 codes with a scale and an offset per 16 elements,
// and the tensor-core products (inline PTX on sm_80 and later; the same
// per-lane fragment contract computed with warp shuffles elsewhere, which
// is what the SIMT emulator runs).
#pragma once
#include "common.cuh"
#include "quants.cuh"

// kb_mm is one matrix product's parameters, passed by value (every field
// 8 bytes). MUL_MAT: out[i, j, i2, i3] = w[:, i, i2/r2, i3/r3] . x[:, j, i2,
// i3] over n columns j and b2*b3 batches. MUL_MAT_ID (ids != 0): pair p =
// slot + used*token computes out[i, slot, token] = w[:, i, ids[slot,
// token]] . x[:, slot % b1, token]; n is the number of pairs.
struct kb_mm {
	const char* w;  // weights: rows of k elements of the weight type
	i64 w_nb1, w_nb2, w_nb3;
	const char* x;  // activations as the kernel reads them (prepared)
	i64 x_nb1, x_nb2, x_nb3;
	char* d;        // f32 output, elements packed
	i64 d_nb1, d_nb2, d_nb3;
	i64 m, n, k;
	i64 b2, r2, r3;
	const char* ids;  // MUL_MAT_ID: i32 [used, tokens], or null
	i64 ids_nb0, ids_nb1, used, b1, n_expert;
	const int* pairs;   // pairs grouped by expert (tiled MUL_MAT_ID)
	const int* tiles;   // (expert, first pair, pairs) per column tile
	const int* ntiles;  // the tiles' count
	int* status;        // an id out of range: (1, the id)
	// Split-k (the integer tiled kernels, MUL_MAT): nsplit > 1 splits the
	// k chunks of 32 in runs of kspl (a multiple of KB_QC), grid z being
	// split * batches + batch; split s writes its partial products where
	// d would have them, but at part + s * part_nb, and kb_mmq_splitk_sum
	// adds them up into d.
	char* part;
	i64 part_nb, kspl, nsplit;
};

// kb_q8a is a block of 32 activations quantized for the integer dot
// products (ggml's q8_1 with a float scale): x[e] ~ d * qs[e], and the
// sums of the codes of each half of 16, for the weight formats with an
// offset.
struct kb_q8a {
	float d;
	short s[2];
	int qs[8];  // 32 int8 codes, four to an int, little-endian
};

// kb_ld32 reads 4 bytes at a 2-byte aligned address (every block format
// has even size and its fields even offsets) as two 16-bit loads.
__device__ __forceinline__ int kb_ld32(const u8* p) {
	const u16* h = (const u16*)p;
	return (int)((u32)h[0] | ((u32)h[1] << 16));
}
__device__ __forceinline__ float kb_ldh(const u8* p) { return kb_h2f(*(const u16*)p); }

// kb_bits4 spreads 4 bits (b & 15) to bit 0 of each byte of an int.
__device__ __forceinline__ int kb_bits4(u32 b) {
	return (int)((b & 1u) | ((b & 2u) << 7) | ((b & 4u) << 14) | ((b & 8u) << 21));
}

// kb_decode<T>(blk, sub, q, dm) decodes the 32 weights of chunk sub (0 for
// the 32-element formats, 0..7 for the 256-element K formats) of the block
// at blk: q holds 32 int8 codes c[e] (four to an int) and dm[h] = (s, o)
// gives the weights of half h (elements 16h..16h+15) as s * c[e] + o. The
// scales are the products the dequantizers compute (d * sub-block scale),
// so w matches kb_value<T> up to float rounding.
template <int T>
__device__ __forceinline__ void kb_decode(const u8* blk, int sub, int q[8], float2 dm[2]);

template <>
__device__ __forceinline__ void kb_decode<KB_Q4_0>(const u8* b, int, int q[8], float2 dm[2]) {
	float d = kb_ldh(b);
#pragma unroll
	for (int j = 0; j < 4; j++) {
		int v = kb_ld32(b + 2 + 4 * j);
		q[j] = __vsub4(v & 0x0f0f0f0f, 0x08080808);
		q[j + 4] = __vsub4((v >> 4) & 0x0f0f0f0f, 0x08080808);
	}
	dm[0] = dm[1] = make_float2(d, 0.0f);
}

template <>
__device__ __forceinline__ void kb_decode<KB_Q4_1>(const u8* b, int, int q[8], float2 dm[2]) {
	float d = kb_ldh(b), m = kb_ldh(b + 2);
#pragma unroll
	for (int j = 0; j < 4; j++) {
		int v = kb_ld32(b + 4 + 4 * j);
		q[j] = v & 0x0f0f0f0f;
		q[j + 4] = (v >> 4) & 0x0f0f0f0f;
	}
	dm[0] = dm[1] = make_float2(d, m);
}

template <>
__device__ __forceinline__ void kb_decode<KB_Q5_0>(const u8* b, int, int q[8], float2 dm[2]) {
	float d = kb_ldh(b);
	u32 qh = (u32)kb_ld32(b + 2);
#pragma unroll
	for (int j = 0; j < 4; j++) {
		int v = kb_ld32(b + 6 + 4 * j);
		q[j] = __vsub4((v & 0x0f0f0f0f) | (kb_bits4(qh >> (4 * j)) << 4), 0x10101010);
		q[j + 4] = __vsub4(((v >> 4) & 0x0f0f0f0f) | (kb_bits4(qh >> (16 + 4 * j)) << 4), 0x10101010);
	}
	dm[0] = dm[1] = make_float2(d, 0.0f);
}

template <>
__device__ __forceinline__ void kb_decode<KB_Q5_1>(const u8* b, int, int q[8], float2 dm[2]) {
	float d = kb_ldh(b), m = kb_ldh(b + 2);
	u32 qh = (u32)kb_ld32(b + 4);
#pragma unroll
	for (int j = 0; j < 4; j++) {
		int v = kb_ld32(b + 8 + 4 * j);
		q[j] = (v & 0x0f0f0f0f) | (kb_bits4(qh >> (4 * j)) << 4);
		q[j + 4] = ((v >> 4) & 0x0f0f0f0f) | (kb_bits4(qh >> (16 + 4 * j)) << 4);
	}
	dm[0] = dm[1] = make_float2(d, m);
}

template <>
__device__ __forceinline__ void kb_decode<KB_Q8_0>(const u8* b, int, int q[8], float2 dm[2]) {
	float d = kb_ldh(b);
#pragma unroll
	for (int j = 0; j < 8; j++) q[j] = kb_ld32(b + 2 + 4 * j);
	dm[0] = dm[1] = make_float2(d, 0.0f);
}

// Q2_K: scales[16] at 0, qs[64] at 16, d at 80, dmin at 82. Chunk sub
// takes bits 2*(sub%4) of qs[32*(sub/4) ...]; each 16 has a 4-bit scale
// and min.
template <>
__device__ __forceinline__ void kb_decode<KB_Q2_K>(const u8* b, int sub, int q[8], float2 dm[2]) {
	const u8* qs = b + 16 + 32 * (sub / 4);
	int sh = 2 * (sub % 4);
#pragma unroll
	for (int j = 0; j < 8; j++) q[j] = (kb_ld32(qs + 4 * j) >> sh) & 0x03030303;
	float d = kb_ldh(b + 80), dmin = kb_ldh(b + 82);
#pragma unroll
	for (int h = 0; h < 2; h++) {
		int s = b[2 * sub + h];
		dm[h] = make_float2(d * (float)(s & 15), -(dmin * (float)(s >> 4)));
	}
}

// Q3_K: hmask[32] at 0, qs[64] at 32, scales[12] at 96, d at 108. A clear
// hmask bit subtracts 4.
template <>
__device__ __forceinline__ void kb_decode<KB_Q3_K>(const u8* b, int sub, int q[8], float2 dm[2]) {
	const u8* qs = b + 32 + 32 * (sub / 4);
	int sh = 2 * (sub % 4);
#pragma unroll
	for (int j = 0; j < 8; j++) {
		int lo = (kb_ld32(qs + 4 * j) >> sh) & 0x03030303;
		int hi = (kb_ld32(b + 4 * j) >> sub) & 0x01010101;
		q[j] = __vsub4(lo | (hi << 2), 0x04040404);
	}
	float d = kb_ldh(b + 108);
#pragma unroll
	for (int h = 0; h < 2; h++) dm[h] = make_float2(d * (float)kb_q3_scale(2 * sub + h, b + 96), 0.0f);
}

// Q4_K: d at 0, dmin at 2, scales[12] at 4, qs[128] at 16; chunk sub is
// the low (even sub) or high nibbles of qs[32*(sub/2) ...].
template <>
__device__ __forceinline__ void kb_decode<KB_Q4_K>(const u8* b, int sub, int q[8], float2 dm[2]) {
	const u8* qs = b + 16 + 32 * (sub / 2);
	int sh = 4 * (sub % 2);
#pragma unroll
	for (int j = 0; j < 8; j++) q[j] = (kb_ld32(qs + 4 * j) >> sh) & 0x0f0f0f0f;
	int sc, m;
	kb_k4_scale_min(sub, b + 4, sc, m);
	dm[0] = dm[1] = make_float2(kb_ldh(b) * (float)sc, -(kb_ldh(b + 2) * (float)m));
}

// Q5_K: as Q4_K with qh[32] at 16 (bit sub of qh[e] adds 16) and qs at 48.
template <>
__device__ __forceinline__ void kb_decode<KB_Q5_K>(const u8* b, int sub, int q[8], float2 dm[2]) {
	const u8* qs = b + 48 + 32 * (sub / 2);
	int sh = 4 * (sub % 2);
#pragma unroll
	for (int j = 0; j < 8; j++) {
		int hi = (kb_ld32(b + 16 + 4 * j) >> sub) & 0x01010101;
		q[j] = ((kb_ld32(qs + 4 * j) >> sh) & 0x0f0f0f0f) | (hi << 4);
	}
	int sc, m;
	kb_k4_scale_min(sub, b + 4, sc, m);
	dm[0] = dm[1] = make_float2(kb_ldh(b) * (float)sc, -(kb_ldh(b + 2) * (float)m));
}

// Q6_K: ql[128] at 0, qh[64] at 128, int8 scales[16] at 192, d at 208;
// codes 6 bits less 32.
template <>
__device__ __forceinline__ void kb_decode<KB_Q6_K>(const u8* b, int sub, int q[8], float2 dm[2]) {
	int hb = sub / 4, g = sub % 4;
	const u8* ql = b + 64 * hb + 32 * (g % 2);
	const u8* qh = b + 128 + 32 * hb;
	int sh = 4 * (g / 2);
#pragma unroll
	for (int j = 0; j < 8; j++) {
		int lo = (kb_ld32(ql + 4 * j) >> sh) & 0x0f0f0f0f;
		int hi = (kb_ld32(qh + 4 * j) >> (2 * g)) & 0x03030303;
		q[j] = __vsub4(lo | (hi << 4), 0x20202020);
	}
	float d = kb_ldh(b + 208);
#pragma unroll
	for (int h = 0; h < 2; h++) dm[h] = make_float2(d * (float)(i8)b[192 + 2 * sub + h], 0.0f);
}

// kb_dot16 is the integer dot product of 16 codes (four ints) of a and b.
__device__ __forceinline__ int kb_dot16(const int* a, const int* b) {
	int s = 0;
#pragma unroll
	for (int j = 0; j < 4; j++) s = kb_dp4a(a[j], b[j], s);
	return s;
}

// ---------------------------------------------------------------------
// Tensor-core products, warp-wide: every lane of a converged warp calls
// them with its fragments (PTX's layouts; g = lane/4, t = lane%4):
//
// m16n8k16 f16/bf16 (A row-major 16x16, B column-major 16x8, f32 C/D):
//   a[0] = A[g][2t..2t+1], a[1] = A[g+8][2t..2t+1], a[2] = A[g][2t+8..],
//   a[3] = A[g+8][2t+8..]; b[0] = B[2t..2t+1][g], b[1] = B[2t+8..][g];
//   c[0..1] = C[g][2t..2t+1], c[2..3] = C[g+8][2t..2t+1]
//   (two 16-bit values to a register, the lower k first).
// m16n8k16 s8 (int32 C/D, same C layout):
//   a[0] = A[g][4t..4t+3], a[1] = A[g+8][4t..4t+3]; b = B[4t..4t+3][g].
//
// On sm_80 and later they are one mma.sync each. Elsewhere (the SIMT
// emulator, older GPUs) each lane gathers the rows of A and columns of B
// it needs from the lanes holding them with shuffles and computes its
// outputs in k order.

#if !defined(__KBSIMT__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define KB_MMA_PTX 1
#endif

// kb_gather_a16 fetches the 16 k-values of rows g and g+8 of a 16-bit A
// fragment (8 registers each) into ra[0..7] (row g) and ra[8..15] (g+8).
__device__ __forceinline__ void kb_gather_a16(const u32 a[4], u32 ra[16]) {
	int g = (threadIdx.x & 31) >> 2;
#pragma unroll
	for (int t = 0; t < 4; t++) {
		ra[t] = __shfl_sync(0xffffffffu, a[0], 4 * g + t);
		ra[4 + t] = __shfl_sync(0xffffffffu, a[2], 4 * g + t);
		ra[8 + t] = __shfl_sync(0xffffffffu, a[1], 4 * g + t);
		ra[12 + t] = __shfl_sync(0xffffffffu, a[3], 4 * g + t);
	}
}

// kb_gather_b16 fetches columns 2t and 2t+1 of a 16-bit B fragment.
__device__ __forceinline__ void kb_gather_b16(const u32 b[2], u32 rb[16]) {
	int t = threadIdx.x & 3;
#pragma unroll
	for (int c = 0; c < 2; c++) {
#pragma unroll
		for (int s = 0; s < 4; s++) {
			rb[8 * c + s] = __shfl_sync(0xffffffffu, b[0], 4 * (2 * t + c) + s);
			rb[8 * c + 4 + s] = __shfl_sync(0xffffffffu, b[1], 4 * (2 * t + c) + s);
		}
	}
}

// kb_dot_pairs adds the products of 8 register pairs of 16-bit values
// (16 k) to acc, k in order; BF selects bfloat16.
template <bool BF>
__device__ __forceinline__ float kb_dot_pairs(const u32* a, const u32* b, float acc) {
#pragma unroll
	for (int i = 0; i < 8; i++) {
		u32 x = a[i], y = b[i];
		float x0 = BF ? kb_bf2f((u16)x) : kb_h2f((u16)x), x1 = BF ? kb_bf2f((u16)(x >> 16)) : kb_h2f((u16)(x >> 16));
		float y0 = BF ? kb_bf2f((u16)y) : kb_h2f((u16)y), y1 = BF ? kb_bf2f((u16)(y >> 16)) : kb_h2f((u16)(y >> 16));
		acc = fmaf(x0, y0, acc);
		acc = fmaf(x1, y1, acc);
	}
	return acc;
}

template <bool BF>
__device__ __forceinline__ void kb_mma_16816_emu(float c[4], const u32 a[4], const u32 b[2]) {
	u32 ra[16], rb[16];
	kb_gather_a16(a, ra);
	kb_gather_b16(b, rb);
	// The registers gathered per row are k = 2t'.. (t' = 0..3), then
	// 2t'+8..: k in order.
	c[0] = kb_dot_pairs<BF>(ra, rb, c[0]);
	c[1] = kb_dot_pairs<BF>(ra, rb + 8, c[1]);
	c[2] = kb_dot_pairs<BF>(ra + 8, rb, c[2]);
	c[3] = kb_dot_pairs<BF>(ra + 8, rb + 8, c[3]);
}

// kb_mma_f16: c += A * B, f16 inputs, f32 accumulators.
__device__ __forceinline__ void kb_mma_f16(float c[4], const u32 a[4], const u32 b[2]) {
#ifdef KB_MMA_PTX
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
	             : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
	             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
#ifdef __KBSIMT__
	__kbsimt_mma(KBS_MMA_M16N8K16_F16); // counted by the emulator's profiler
#endif
	kb_mma_16816_emu<false>(c, a, b);
#endif
}

// kb_mma_bf16: c += A * B, bf16 inputs, f32 accumulators.
__device__ __forceinline__ void kb_mma_bf16(float c[4], const u32 a[4], const u32 b[2]) {
#ifdef KB_MMA_PTX
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
	             : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
	             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
#ifdef __KBSIMT__
	__kbsimt_mma(KBS_MMA_M16N8K16_BF16);
#endif
	kb_mma_16816_emu<true>(c, a, b);
#endif
}

// kb_mma_s8: d = A * B in int32, int8 inputs (a fresh product: no C).
__device__ __forceinline__ void kb_mma_s8(int d[4], const int a[2], int b) {
#ifdef KB_MMA_PTX
	asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
	             : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
	             : "r"(a[0]), "r"(a[1]), "r"(b), "r"(0), "r"(0), "r"(0), "r"(0));
#else
#ifdef __KBSIMT__
	__kbsimt_mma(KBS_MMA_M16N8K16_S8);
#endif
	int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
	int ra[8], rb[8];
#pragma unroll
	for (int s = 0; s < 4; s++) {
		ra[s] = __shfl_sync(0xffffffffu, a[0], 4 * g + s);
		ra[4 + s] = __shfl_sync(0xffffffffu, a[1], 4 * g + s);
		rb[s] = __shfl_sync(0xffffffffu, b, 4 * (2 * t) + s);
		rb[4 + s] = __shfl_sync(0xffffffffu, b, 4 * (2 * t + 1) + s);
	}
	d[0] = kb_dot16(ra, rb);
	d[1] = kb_dot16(ra, rb + 4);
	d[2] = kb_dot16(ra + 4, rb);
	d[3] = kb_dot16(ra + 4, rb + 4);
#endif
}

// kb_mma_s8c: d = A * B + C in int32, int8 inputs, k = 16 (kb_mma_s8
// with a C input).
__device__ __forceinline__ void kb_mma_s8c(int d[4], const int a[2], int b, const int c[4]) {
#ifdef KB_MMA_PTX
	asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
	             : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
	             : "r"(a[0]), "r"(a[1]), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
#else
	kb_mma_s8(d, a, b);
#pragma unroll
	for (int i = 0; i < 4; i++) d[i] += c[i];
#endif
}

// kb_mma_s8_k32c: d = A * B + C in int32, int8 inputs, k = 32: a[0..1]
// are kb_mma_s8's a for k 0..15, a[2..3] for k 16..31; b[0] and b[1]
// its b for the two halves; c in the C/D layout.
__device__ __forceinline__ void kb_mma_s8_k32c(int d[4], const int a[4], const int b[2], const int c[4]) {
#ifdef KB_MMA_PTX
	asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
	             : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
	             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
#elif defined(__KBSIMT__)
	__kbsimt_mma_m16n8k32_s8(d, a, b, c);
#else
	int d1[4];
	kb_mma_s8(d, a, b[0]);
	kb_mma_s8(d1, a + 2, b[1]);
#pragma unroll
	for (int i = 0; i < 4; i++) d[i] += d1[i] + c[i];
#endif
}

// kb_mma_s8_k32: kb_mma_s8_k32c with C = 0 (a fresh product).
__device__ __forceinline__ void kb_mma_s8_k32(int d[4], const int a[4], const int b[2]) {
	const int zero[4] = {0, 0, 0, 0};
	kb_mma_s8_k32c(d, a, b, zero);
}

// ---------------------------------------------------------------------
// Data movement of the tiled kernels (sm_80 PTX: cp.async, ldmatrix; the
// emulator's implementations under __KBSIMT__; plain loads and shuffles
// on older GPUs).

#ifdef KB_MMA_PTX
// kb_smem is the shared-window address of a generic pointer to shared
// memory, as cp.async and ldmatrix take it.
__device__ __forceinline__ u32 kb_smem(const void* p) {
	u32 a;
	asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
	return a;
}
#endif

// kb_cp_async<N> starts copying N bytes (4, 8 or 16; both addresses
// aligned to N) from global src to shared dst, of which only the first
// src_bytes are read and the rest zero-filled. The copy joins the
// thread's open group (kb_cp_async_commit); it may be read after
// kb_cp_async_wait<n> lets its group go, and by other threads after a
// barrier following that.
template <int N>
__device__ __forceinline__ void kb_cp_async(void* dst, const void* src, int src_bytes) {
#ifdef KB_MMA_PTX
	if constexpr (N == 16)
		asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(kb_smem(dst)), "l"(src), "r"(src_bytes) : "memory");
	else
		asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(kb_smem(dst)), "l"(src), "n"(N), "r"(src_bytes) : "memory");
#elif defined(__KBSIMT__)
	__kbsimt_cp_async(dst, src, N, src_bytes);
#else
	for (int i = 0; i < N; i++) ((u8*)dst)[i] = i < src_bytes ? ((const u8*)src)[i] : 0;
#endif
}

// kb_cp_async_commit closes the thread's open group of copies.
__device__ __forceinline__ void kb_cp_async_commit() {
#ifdef KB_MMA_PTX
	asm volatile("cp.async.commit_group;" ::: "memory");
#elif defined(__KBSIMT__)
	__kbsimt_cp_async_commit();
#endif
}

// kb_cp_async_wait<N> waits until at most the thread's newest N
// committed groups are in flight.
template <int N>
__device__ __forceinline__ void kb_cp_async_wait() {
#ifdef KB_MMA_PTX
	asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#elif defined(__KBSIMT__)
	__kbsimt_cp_async_wait(N);
#endif
}

// kb_st16 stores four ints at a 16-byte aligned address as one 16-byte
// access (STS.128 or STG.128; on the emulator one 16-byte store, as its
// profiler must see it, where a struct's copy would be four).
__device__ __forceinline__ void kb_st16(void* p, int a, int b, int c, int d) {
#ifdef __KBSIMT__
	typedef int v4 __attribute__((vector_size(16)));
	*(v4*)p = v4{a, b, c, d};
#else
	*(int4*)p = make_int4(a, b, c, d);
#endif
}

// kb_st8 stores two ints at an 8-byte aligned address as one access.
__device__ __forceinline__ void kb_st8(void* p, int a, int b) {
#ifdef __KBSIMT__
	typedef int v2 __attribute__((vector_size(8)));
	*(v2*)p = v2{a, b};
#else
	*(int2*)p = make_int2(a, b);
#endif
}



// kb_ldmatrix_x4 loads four 8x8 matrices of 16-bit elements (here: 8x16
// int8 codes) from shared memory, warp-wide: lanes 8i..8i+7 give the
// 16-byte aligned rows of matrix i, and every lane gets r[i] = elements
// 2(l%4), 2(l%4)+1 of row l/4 of matrix i: the fragment layout of the mma
// operands (for int8, bytes 4(l%4)..4(l%4)+3 of row l/4).
__device__ __forceinline__ void kb_ldmatrix_x4(u32 r[4], const void* row) {
#ifdef KB_MMA_PTX
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
	             : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
	             : "r"(kb_smem(row)));
#elif defined(__KBSIMT__)
	__kbsimt_ldmatrix(4, false, row, r);
#else
	const u32* w = (const u32*)row;
	u32 mine[4] = {w[0], w[1], w[2], w[3]};
	int lane = threadIdx.x & 31;
#pragma unroll
	for (int i = 0; i < 4; i++) {
#pragma unroll
		for (int j = 0; j < 4; j++) {
			u32 v = __shfl_sync(0xffffffffu, mine[j], 8 * i + lane / 4);
			if (j == (lane & 3)) r[i] = v;
		}
	}
#endif
}

// kb_ldmatrix_x4_trans is kb_ldmatrix_x4 of the transposed matrices
// (ldmatrix .trans): every lane gets r[i] = elements (2(l%4), l/4) and
// (2(l%4)+1, l/4) of matrix i, the first in the low half: from 8x8
// blocks stored row-major by k, the B fragment of an mma (the k pairs of
// column l/4).
__device__ __forceinline__ void kb_ldmatrix_x4_trans(u32 r[4], const void* row) {
#ifdef KB_MMA_PTX
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
	             : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
	             : "r"(kb_smem(row)));
#elif defined(__KBSIMT__)
	__kbsimt_ldmatrix(4, true, row, r);
#else
	const u32* w = (const u32*)row;
	u32 mine[4] = {w[0], w[1], w[2], w[3]};
	int lane = threadIdx.x & 31, c = lane >> 2, t = lane & 3;
#pragma unroll
	for (int i = 0; i < 4; i++) {
		u32 lo = 0, hi = 0;
#pragma unroll
		for (int j = 0; j < 4; j++) {
			u32 v0 = __shfl_sync(0xffffffffu, mine[j], 8 * i + 2 * t);
			u32 v1 = __shfl_sync(0xffffffffu, mine[j], 8 * i + 2 * t + 1);
			if (j == c / 2) {
				lo = (v0 >> (16 * (c % 2))) & 0xffffu;
				hi = (v1 >> (16 * (c % 2))) & 0xffffu;
			}
		}
		r[i] = lo | hi << 16;
	}
#endif
}

// ---------------------------------------------------------------------
// The weight types of the integer paths (activations quantized to kb_q8a)
// and of the float paths (f32 activations; q8_1 and q8_K dot products are
// f32 in ggml).

#define KB_INT_TYPES(X) \
	X(q4_0, KB_Q4_0)    \
	X(q4_1, KB_Q4_1)    \
	X(q5_0, KB_Q5_0)    \
	X(q5_1, KB_Q5_1)    \
	X(q8_0, KB_Q8_0)    \
	X(q2_K, KB_Q2_K)    \
	X(q3_K, KB_Q3_K)    \
	X(q4_K, KB_Q4_K)    \
	X(q5_K, KB_Q5_K)    \
	X(q6_K, KB_Q6_K)

#define KB_FLOAT_TYPES(X) \
	X(f32, KB_F32)        \
	X(f16, KB_F16)        \
	X(bf16, KB_BF16)      \
	X(q8_1, KB_Q8_1)      \
	X(q8_K, KB_Q8_K)

// ---------------------------------------------------------------------
// Columns: where a group of columns reads its activations and weights and
// writes its outputs.

// kb_cols is the grid row's columns: ncols of them, column j reading
// x + j*xs and writing d + j*ds, against the weight matrix w.
struct kb_cols {
	const char* w;
	const char* x;
	char* d;
	i64 xs, ds;
	int ncols;
};

// kb_pair_id returns the expert of pair p, or -1 (and sets the status)
// when the id is out of range.
__device__ __forceinline__ i64 kb_pair_id(const kb_mm& p, i64 pair, bool report) {
	i64 slot = pair % p.used, token = pair / p.used;
	i64 id = *(const i32*)(p.ids + slot * p.ids_nb0 + token * p.ids_nb1);
	if (id < 0 || id >= p.n_expert) {
		if (report) {
			atomicMax(&p.status[0], 1);
			atomicExch(&p.status[1], (int)id);
		}
		return -1;
	}
	return id;
}

// kb_pair_xo and kb_pair_do are the offsets of pair q's activation row
// in p.x and its output column in p.d.
__device__ __forceinline__ i64 kb_pair_xo(const kb_mm& p, i64 q) {
	const i64 slot = q % p.used, token = q / p.used;
	return (slot % p.b1) * p.x_nb1 + token * p.x_nb2;
}
__device__ __forceinline__ i64 kb_pair_do(const kb_mm& p, i64 q) {
	const i64 slot = q % p.used, token = q / p.used;
	return slot * p.d_nb1 + token * p.d_nb2;
}

// kb_group_cols: MUL_MAT's grid row y is batch y (all n columns, n <= 8);
// MUL_MAT_ID's is pair y (one column). ok is false for a bad id.
__device__ __forceinline__ kb_cols kb_group_cols(const kb_mm& p, i64 y, bool& ok) {
	kb_cols c;
	ok = true;
	if (p.ids) {
		i64 id = kb_pair_id(p, y, threadIdx.x == 0);
		ok = id >= 0;
		i64 slot = y % p.used, token = y / p.used;
		c.w = p.w + (ok ? id : 0) * p.w_nb2;
		c.x = p.x + (slot % p.b1) * p.x_nb1 + token * p.x_nb2;
		c.d = p.d + slot * p.d_nb1 + token * p.d_nb2;
		c.ncols = 1;
	} else {
		i64 i2 = y % p.b2, i3 = y / p.b2;
		c.w = p.w + (i2 / p.r2) * p.w_nb2 + (i3 / p.r3) * p.w_nb3;
		c.x = p.x + i2 * p.x_nb2 + i3 * p.x_nb3;
		c.d = p.d + i2 * p.d_nb2 + i3 * p.d_nb3;
		c.ncols = (int)p.n;
	}
	c.xs = p.x_nb1;
	c.ds = p.d_nb1;
	return c;
}


// ---------------------------------------------------------------------
// Tiled matrix-matrix: grid (ceil(m/64), column tiles, batches), 128
// threads. MUL_MAT's column tile y of batch z is columns 64y.. of it;
// MUL_MAT_ID's is tile y of kb_mmid_group's list (one expert's pairs).

#define KB_BM 64
#define KB_BN 64
#define KB_NT 128

// kb_tile_cols sets the tile's weight matrix, its columns' activation and
// output offsets (xo, dof: shared, KB_BN each) and returns the number of
// columns, or 0 for a tile slot past the list; z is MUL_MAT's batch.
// Thread-uniform; the caller synchronizes before reading xo and dof.
__device__ __forceinline__ int kb_tile_cols(const kb_mm& p, const char*& w, i64* xo, i64* dof, i64 z) {
	int ncols;
	if (p.ids) {
		int t = blockIdx.y;
		if (t >= *p.ntiles) return 0;
		int e = p.tiles[3 * t], first = p.tiles[3 * t + 1];
		ncols = p.tiles[3 * t + 2];
		w = p.w + e * p.w_nb2;
		for (int j = threadIdx.x; j < ncols; j += blockDim.x) {
			const i64 pair = p.pairs[first + j];
			xo[j] = kb_pair_xo(p, pair);
			dof[j] = kb_pair_do(p, pair);
		}
	} else {
		i64 i2 = z % p.b2, i3 = z / p.b2, c0 = (i64)blockIdx.y * KB_BN;
		ncols = (int)min((i64)KB_BN, p.n - c0);
		w = p.w + (i2 / p.r2) * p.w_nb2 + (i3 / p.r3) * p.w_nb3;
		for (int j = threadIdx.x; j < ncols; j += blockDim.x) {
			xo[j] = (c0 + j) * p.x_nb1 + i2 * p.x_nb2 + i3 * p.x_nb3;
			dof[j] = (c0 + j) * p.d_nb1 + i2 * p.d_nb2 + i3 * p.d_nb3;
		}
	}
	return ncols;
}

// The integer tile: KB_QC chunks (32 weights each) per k step. Codes are
// stored four to an int, rows padded by 4 ints so that the fragment loads
