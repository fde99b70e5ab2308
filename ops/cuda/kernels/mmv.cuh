// mmv.cuh: the integer matrix-vector product (mmvq) that MUL_MAT and
// MUL_MAT_ID run for up to KB_MMV_COLS columns of activations quantized
// to kb_q8a blocks: mul_mat.cu instantiates it for the legacy and K
// formats, mul_mat_iq.cu for the formats of quants_iq.cuh, each through
// its kb_decode<T> (mm.cuh, quants_iq.cuh).
#pragma once
#include "common.cuh"
#include "quants.cuh"
#include "reduce.cuh"
#include "mm.cuh"

// Matrix-vector, for up to 8 columns.
//
// Integer paths (kb_mmvq_*): grid (ceil(m/4), groups), 128 threads, a warp
// per weight row. The block walks k in steps of KB_MMVQ_SEG chunks (32
// weights each; one column: about KB_MMVQ1_BYTES of a row's weights, see
// kb_mmvq_geom): every warp copies its row's bytes of the step into
// shared memory with 16-byte loads (all of a lane's loads issued before
// any store), the block copies the step's kb_q8a activation blocks of every
// column there once, and then each lane decodes whole chunks from shared
// memory and dots them with every column (__dp4a). Rows whose bytes are
// not 16-byte aligned are copied 2 bytes a load (a byte a load where
// they are not 2-byte aligned, or the blocks' size is odd: MXFP4).

#define KB_MMV_COLS 8
#define KB_MMV_WARPS 4  // warps per block
#define KB_MMVQ_SEG 64  // chunks per k step of kb_mmvq


// kb_mmv_sum reduces each column's partial sums over the warp: lane j
// returns column j's.
template <int NC>
__device__ __forceinline__ float kb_mmv_sum(const float acc[NC], int ncols) {
	int lane = threadIdx.x & 31;
	float mine = 0.0f;
#pragma unroll
	for (int j = 0; j < NC; j++) {
		if (j < ncols) {
			float s = kb_warp_sum(acc[j]);
			if (lane == j) mine = s;
		}
	}
	return mine;
}

// kb_mmvq_geom<T, NC>: the chunks per block, the chunks per k step, the
// bytes per k step, the shared memory a warp of kb_mmvq<T, NC> stages its
// weights in (a step's bytes rounded up to 16, and 16 more), and the
// 16-byte loads per lane a step takes. Several columns: KB_MMVQ_SEG chunks
// a step, loaded into registers. One column (decode): as many whole
// blocks as fit in KB_MMVQ1_BYTES, a multiple of the blocks whose bytes
// are a multiple of 16 (so that every step starts 16-byte aligned),
// copied by cp.async (no registers held; KB_MMVQ_ASYNC: sm_80 and later
// and the emulator; older GPUs copy 2560-byte steps through registers,
// 5 16-byte loads a lane), so that a warp has its whole
// 4096-wide row in flight at once in every type up to q8_0 (4352 bytes;
// KB_MMVQ_SEG chunks are 1152 bytes of q4_0 but 2176 of q8_0), a single
// load latency a row.
#if defined(KB_MMA_PTX) || defined(__KBSIMT__)
#define KB_MMVQ_ASYNC 1
#else
#define KB_MMVQ_ASYNC 0
#endif
#define KB_MMVQ1_BYTES (KB_MMVQ_ASYNC ? 4352 : 2560)  // older GPUs: 5 16-byte loads a lane
KB_BLOCKS_FN int kb_gcd16(int b) { return (b & 15) == 0 ? 16 : (b & 7) == 0 ? 8 : (b & 3) == 0 ? 4 : (b & 1) == 0 ? 2 : 1; }
template <int T, int NC>
struct kb_mmvq_geom {
	static constexpr int CPB = kb_type<T>::block / 32;  // chunks per block
	static constexpr int BALIGN = 16 / kb_gcd16(kb_type<T>::bytes);  // blocks whose bytes are a multiple of 16
	static constexpr int NB1 = KB_MMVQ1_BYTES / kb_type<T>::bytes / BALIGN * BALIGN;
	static constexpr int SEG = NC > 1 ? KB_MMVQ_SEG : (NB1 > BALIGN ? NB1 : BALIGN) * CPB;  // chunks per step
	static constexpr int STEP = SEG / CPB * kb_type<T>::bytes;  // bytes per step
	static constexpr int WBYTES = (STEP + 15) / 16 * 16 + 16;   // kb_decode_s reads past a block
	static constexpr int U = (STEP + 511) / 512;                // 16-byte loads per lane
};

// kb_decode_s<T> is kb_decode<T> of a block in shared memory that may be
// read up to 4 bytes past its end: q4_0's and q8_0's codes, 2-byte
// aligned, as 4-byte words shifted into place (5 or 9 shared loads for 4
// or 8 ints, where kb_ld32 takes two 2-byte loads an int).
template <int T>
__device__ __forceinline__ void kb_decode_s(const u8* b, int sub, int q[8], float2 dm[2]) {
	kb_decode<T>(b, sub, q, dm);
}

// kb_words_s reads the N ints at the 2-byte aligned shared address p.
template <int N>
__device__ __forceinline__ void kb_words_s(const u8* p, int q[N]) {
	// p less 0 or 2 bytes, as pointer arithmetic so that the compiler
	// still knows the loads for shared ones.
	const u32 off = (u32)(u64)p & 2u;
	const u32* a = (const u32*)(p - off);
	u32 sh = off * 8u, w[N + 1];
#pragma unroll
	for (int j = 0; j <= N; j++) w[j] = a[j];
#pragma unroll
	for (int j = 0; j < N; j++) q[j] = (int)__funnelshift_r(w[j], w[j + 1], sh);
}

template <>
__device__ __forceinline__ void kb_decode_s<KB_Q4_0>(const u8* b, int, int q[8], float2 dm[2]) {
	int v[4];
	kb_words_s<4>(b + 2, v);
#pragma unroll
	for (int j = 0; j < 4; j++) {
		q[j] = __vsub4(v[j] & 0x0f0f0f0f, 0x08080808);
		q[j + 4] = __vsub4((v[j] >> 4) & 0x0f0f0f0f, 0x08080808);
	}
	float d = kb_ldh(b);
	dm[0] = dm[1] = make_float2(d, 0.0f);
}

template <>
__device__ __forceinline__ void kb_decode_s<KB_Q8_0>(const u8* b, int, int q[8], float2 dm[2]) {
	kb_words_s<8>(b + 2, q);
	float d = kb_ldh(b);
	dm[0] = dm[1] = make_float2(d, 0.0f);
}

// kb_copy_block copies n bytes (a multiple of 8; both addresses 8-byte
// aligned) from global src to shared dst with the block's threads, 16 bytes
// a load where both allow it.
__device__ __forceinline__ void kb_copy_block(u8* dst, const u8* src, int n, int tid, int nt) {
	if ((((u64)src | (u64)n) & 15) == 0) {
		for (int i = tid; i < n / 16; i += nt) {
			uint4 v = kb_ld16u(src + 16 * i);
			kb_st16(dst + 16 * i, (int)v.x, (int)v.y, (int)v.z, (int)v.w);
		}
	} else {
		for (int i = tid; i < n / 8; i += nt) *(uint2*)(dst + 8 * i) = kb_ld8(src + 8 * i);
	}
}

// kb_copy_block_async is kb_copy_block by cp.async (16 or 8 bytes a copy)
// where KB_MMVQ_ASYNC, joining the thread's open group.
__device__ __forceinline__ void kb_copy_block_async(u8* dst, const u8* src, int n, int tid, int nt) {
	if (!KB_MMVQ_ASYNC) {
		kb_copy_block(dst, src, n, tid, nt);
	} else if ((((u64)src | (u64)n) & 15) == 0) {
		for (int i = tid; i < n / 16; i += nt) kb_cp_async<16>(dst + 16 * i, src + 16 * i, 16);
	} else {
		for (int i = tid; i < n / 8; i += nt) kb_cp_async<8>(dst + 8 * i, src + 8 * i, 8);
	}
}

// kb_copy_tail copies bytes from .. nb of a step's weights at src to
// ws with a warp's lanes: 2 bytes a load where the block size and src
// are even (every type but MXFP4's 17-byte blocks), else a byte a load.
template <int T>
__device__ __forceinline__ void kb_copy_tail(u8* ws, const u8* src, int from, int nb, int lane) {
	if (kb_type<T>::bytes % 2 == 0 && ((u64)src & 1) == 0) {
		for (int i = from + 2 * lane; i < nb; i += 64) *(u16*)(ws + i) = *(const u16*)(src + i);
	} else {
		for (int i = from + lane; i < nb; i += 32) ws[i] = src[i];
	}
}

// mmvq: integer dot products of decoded weight chunks with q8a blocks.
// Dynamic shared memory: ncols*seg kb_q8a blocks (rounded up to 16 bytes,
// so that the weights' 16-byte copies land aligned whatever seg is), then a region per warp
// of a step's weights (seg chunks, rounded up to 16 bytes, and 16 more),
// seg the chunks of kb_mmvq_geom<T, NC>::SEG or of a shorter row.
template <int T, int NC>
__device__ __forceinline__ void mmvq(const kb_mm& p) {
	typedef kb_mmvq_geom<T, NC> G;
	extern __shared__ uint4 kb_mmv_smem[];
	bool ok;
	kb_cols c = kb_group_cols(p, blockIdx.y, ok);
	if (!ok) return;  // the whole block's
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const i64 row = (i64)blockIdx.x * KB_MMV_WARPS + warp;
	const bool valid = row < p.m;
	u8* as = (u8*)kb_mmv_smem;
	// The shared layout's steps: G::SEG chunks, or the whole row if it is
	// shorter (the host sizes the memory alike, mmvGeometryK).
	const int seg = (int)min((i64)G::SEG, p.k / 32);
	u8* ws = as + (c.ncols * seg * (int)sizeof(kb_q8a) + 15) / 16 * 16 + warp * ((seg / G::CPB * kb_type<T>::bytes + 15) / 16 * 16 + 16);
	const u8* wr = (const u8*)(c.w + (valid ? row : 0) * p.w_nb1);
	const bool wide = ((u64)wr & 15) == 0;
	const i64 kc = p.k / 32;
	float acc[NC];
#pragma unroll
	for (int j = 0; j < NC; j++) acc[j] = 0.0f;
	for (i64 c0 = 0; c0 < kc; c0 += G::SEG) {
		const int nch = (int)min((i64)G::SEG, kc - c0);
		const u8* src = wr + c0 / G::CPB * kb_type<T>::bytes;
		const int nb = nch / G::CPB * kb_type<T>::bytes, n16 = wide ? nb / 16 : 0;
		if (KB_MMVQ_ASYNC && NC == 1) {
			// One column: the step's weights and activations copied by
			// cp.async, all in flight together, none through registers.
			if (valid)
				for (int i = lane; i < n16; i += 32) kb_cp_async<16>(ws + 16 * i, src + 16 * i, 16);
			kb_copy_block_async(as, (const u8*)c.x + c0 * (i64)sizeof(kb_q8a), nch * (int)sizeof(kb_q8a), threadIdx.x, blockDim.x);
			kb_cp_async_commit();
			if (valid) kb_copy_tail<T>(ws, src, 16 * n16, nb, lane);
			kb_cp_async_wait<0>();
		} else {
			// The weights' loads first, all in flight together ...
			uint4 v[G::U];
#pragma unroll
			for (int u = 0; u < G::U; u++)
				if (valid && lane + 32 * u < n16) v[u] = kb_ld16u(src + 16 * (lane + 32 * u));
			// ... while the block copies the activations ...
			for (int j = 0; j < c.ncols; j++)
				kb_copy_block(as + j * seg * (int)sizeof(kb_q8a), (const u8*)(c.x + j * c.xs) + c0 * (i64)sizeof(kb_q8a),
				              nch * (int)sizeof(kb_q8a), threadIdx.x, blockDim.x);
			// ... then stored, with what 16-byte loads do not cover.
			if (valid) {
#pragma unroll
				for (int u = 0; u < G::U; u++) {
					int i = lane + 32 * u;
					if (i < n16) kb_st16(ws + 16 * i, (int)v[u].x, (int)v[u].y, (int)v[u].z, (int)v[u].w);
				}
				kb_copy_tail<T>(ws, src, 16 * n16, nb, lane);
			}
		}
		__syncthreads();
		if (valid) {
			for (int ch = lane; ch < nch; ch += 32) {
				int q[8];
				float2 dm[2];
				kb_decode_s<T>(ws + (ch / G::CPB) * kb_type<T>::bytes, ch % G::CPB, q, dm);
#pragma unroll
				for (int j = 0; j < NC; j++) {
					if (j < c.ncols) {
						const u8* a = as + (j * seg + ch) * (int)sizeof(kb_q8a);
						uint2 h = kb_ld8(a);
						int aq[8];
#pragma unroll
						for (int i = 0; i < 4; i++) {
							uint2 t = kb_ld8(a + 8 + 8 * i);
							aq[2 * i] = (int)t.x;
							aq[2 * i + 1] = (int)t.y;
						}
						float s0 = dm[0].x * (float)kb_dot16(q, aq) + dm[0].y * (float)(short)(h.y & 0xffffu);
						float s1 = dm[1].x * (float)kb_dot16(q + 4, aq + 4) + dm[1].y * (float)(short)(h.y >> 16);
						acc[j] += __uint_as_float(h.x) * (s0 + s1);
					}
				}
			}
		}
		__syncthreads();
	}
	float s = kb_mmv_sum<NC>(acc, c.ncols);
	if (valid && lane < c.ncols) *(float*)(c.d + lane * c.ds + row * 4) = s;
}

