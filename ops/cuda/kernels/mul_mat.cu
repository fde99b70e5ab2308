// mul_mat.cu: MUL_MAT and MUL_MAT_ID, the activations' preparation and the
// matrix-vector kernels; the tiled kernels are mul_mat_q.cu (integer) and
// mul_mat_f.cu (float), MUL_MAT_ID's grouping of pairs by expert
// mul_mat_id.cu.
//
// Activations are prepared once per product (kb_quantize_q8a: 32-element
// int8 blocks for the integer paths; kb_convert_act: packed f32, f16 or
// bf16 rows for the float paths). Then, over the prepared rows:
//   - kb_mmv*: matrix-vector, for up to 8 columns (kb_mmvq1_*, kb_mmvf1_*:
//     one), the weights read in wide loads: the integer paths stage
//     each warp's row (and the block's activation blocks) in shared memory
//     per k step and decode whole chunks of 32 weights from there (__dp4a);
//     the float paths read f32/f16/bf16 rows directly (16 or 8 bytes a
//     load), 1, 2 or 4 warps a row; sums reduced with warp shuffles (see
//     "Matrix-vector" below);
//   - kb_mmq*, kb_mmf*, kb_mmh* (mul_mat_q.cu, mul_mat_f.cu): tiled
//     matrix-matrix, 64 weight rows by 64 columns per block of 128
//     threads, weights (decoded) and activations staged in shared memory
//     per k step: int8 codes with tensor-core s8 products (m16n8k32, one
//     float rescale per 32-element block, where the format has one scale
//     per block; fragments by ldmatrix; the next step's activations, and
//     raw weight blocks of the 32-element formats, copied by cp.async
//     while a step computes) or __dp4a, f16/bf16 tensor-core products, or
//     f32 FMAs with an 8x4 register tile per thread.
// MUL_MAT_ID runs the same kernels: the matrix-vector ones with a pair
// (slot, token) per grid row, the tiled ones over column tiles of the
// pairs grouped by expert (kb_mmid_group, mul_mat_id.cu).
#include "common.cuh"
#include "quants.cuh"
#include "reduce.cuh"
#include "mm.cuh"

// ---------------------------------------------------------------------
// Activation preparation.

// kb_act reads an activation element of type t (f32, f16 or bf16).
__device__ __forceinline__ float kb_act(const char* p, int t) {
	if (t == KB_F16) return kb_h2f(*(const u16*)p);
	if (t == KB_BF16) return kb_bf2f(*(const u16*)p);
	return *(const float*)p;
}

// kb_quantize_q8a quantizes the rows of x (type xt, any strides; rows
// over dims 1-3) to kb_q8a blocks, row r = i1 + ne1*(i2 + ne2*i3) at
// out + r*(k/32). A warp quantizes one block: the absolute maximum and the
// halves' code sums by shuffles. A block holding a NaN gets a NaN scale
// and zero codes.
extern "C" __global__ void kb_quantize_q8a(const char* x, kb_tensor tx, int xt, kb_q8a* out) {
	i64 kc = tx.ne[0] / 32;
	i64 nblk = kc * tx.ne[1] * tx.ne[2] * tx.ne[3];
	int lane = threadIdx.x & 31;
	i64 warps = (i64)gridDim.x * (blockDim.x >> 5);
	for (i64 w = (i64)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); w < nblk; w += warps) {
		i64 r = w / kc, c = w % kc;
		i64 i1 = r % tx.ne[1], i2 = (r / tx.ne[1]) % tx.ne[2], i3 = r / (tx.ne[1] * tx.ne[2]);
		float v = kb_act(x + kb_offset(tx, c * 32 + lane, i1, i2, i3), xt);
		float amax = kb_warp_max(fabsf(v));
		// A NaN in the block makes its scale NaN, so that the products
		// that read it are NaN: the maximum (fmaxf) passes over it.
		if (__any_sync(0xffffffffu, v != v)) amax = NAN;
		float d = amax / 127.0f;
		int q = amax == 0.0f || d != d ? 0 : (int)roundf(v / d);
		int s = q;
#pragma unroll
		for (int o = 8; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
		kb_q8a* b = out + w;
		((i8*)b->qs)[lane] = (i8)q;
		if (lane == 0) b->d = d;
		if ((lane & 15) == 0) b->s[lane >> 4] = (short)s;
	}
}

// kb_convert_act writes the rows of x (type xt, any strides) packed as
// type ot (f32, f16, bf16): element i0 of row r at out + (r*k + i0)*size.
extern "C" __global__ void kb_convert_act(const char* x, kb_tensor tx, int xt, char* out, int ot) {
	i64 n = kb_count(tx);
	for (i64 i = kb_first(); i < n; i += kb_stride()) {
		i64 i0, i1, i2, i3;
		kb_unravel(tx, i, i0, i1, i2, i3);
		float v = kb_act(x + kb_offset(tx, i0, i1, i2, i3), xt);
		if (ot == KB_F16)
			((u16*)out)[i] = kb_f2h(v);
		else if (ot == KB_BF16)
			((u16*)out)[i] = kb_f2bf(v);
		else
			((float*)out)[i] = v;
	}
}

// ---------------------------------------------------------------------
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
// not 16-byte aligned are copied 2 bytes a load.
//
// Float paths (kb_mmvf_*): blocks of (32*W, 4/W) threads: W warps split a
// row's k (threadIdx.x/32), 4/W rows per block (threadIdx.y). Aligned f32,
// f16 and bf16 rows are read 4 elements a lane and load (16 bytes of f32,
// 8 of f16/bf16, so that the float4 loads of the f32 activations beside
// them are contiguous across the warp too), 2 KB a warp in flight before
// the products; f32 accumulation throughout.

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
			if (valid)
				for (int i = 16 * n16 + 2 * lane; i < nb; i += 64) *(u16*)(ws + i) = *(const u16*)(src + i);
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
				for (int i = 16 * n16 + 2 * lane; i < nb; i += 64) *(u16*)(ws + i) = *(const u16*)(src + i);
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

// kb_mmvf_ld4 loads 4 elements of a plain float type T at the aligned
// address p (16 bytes of f32, 8 of f16/bf16: the widths at which a warp's
// weight loads and its loads of the matching f32 activations are both
// contiguous) as one access each.
template <int T>
struct kb_mmvf_ld4 {
	typedef uint2 V;
	static __device__ __forceinline__ V load(const u8* p) { return kb_ld8(p); }
	static __device__ __forceinline__ void unpack(const V& v, float w[4]) {
		u32 e[2] = {v.x, v.y};
#pragma unroll
		for (int i = 0; i < 2; i++) {
			w[2 * i] = T == KB_F16 ? kb_h2f((u16)e[i]) : kb_bf2f((u16)e[i]);
			w[2 * i + 1] = T == KB_F16 ? kb_h2f((u16)(e[i] >> 16)) : kb_bf2f((u16)(e[i] >> 16));
		}
	}
};

template <>
struct kb_mmvf_ld4<KB_F32> {
	typedef uint4 V;
	static __device__ __forceinline__ V load(const u8* p) { return kb_ld16u(p); }
	static __device__ __forceinline__ void unpack(const V& v, float w[4]) {
		w[0] = __uint_as_float(v.x);
		w[1] = __uint_as_float(v.y);
		w[2] = __uint_as_float(v.z);
		w[3] = __uint_as_float(v.w);
	}
};

// mmvf: float dot products of dequantized weights with f32 rows.
template <int T, int NC>
__device__ __forceinline__ void mmvf(const kb_mm& p) {
	__shared__ float part[KB_MMV_WARPS][NC];
	bool ok;
	kb_cols c = kb_group_cols(p, blockIdx.y, ok);
	if (!ok) return;  // the whole block's
	const int lane = threadIdx.x & 31, W = blockDim.x >> 5, wp = threadIdx.x >> 5;
	const i64 row = (i64)blockIdx.x * blockDim.y + threadIdx.y;
	const bool valid = row < p.m;
	const u8* wr = (const u8*)(c.w + (valid ? row : 0) * p.w_nb1);
	float acc[NC];
#pragma unroll
	for (int j = 0; j < NC; j++) acc[j] = 0.0f;
	const bool plain = T == KB_F32 || T == KB_F16 || T == KB_BF16;
	const int ESZ = T == KB_F32 ? 4 : 2, U = T == KB_F32 ? 4 : 8;  // element size, loads in flight
	const i64 first = wp * 32 + lane, stride = 32 * W;
	if (!valid) {
	} else if (plain && p.k % 4 == 0 && (((u64)wr & (ESZ * 4 - 1)) | (((u64)c.x | (u64)c.xs) & 15)) == 0) {
		// 4 elements a load (16 bytes of f32 weights, 8 of f16/bf16) and
		// a float4 of each column's activations: U loads per lane in
		// flight (2 KB a warp), then their products.
		typedef kb_mmvf_ld4<T> L;
		const i64 n4 = p.k / 4;
		for (i64 i0 = first; i0 < n4; i0 += U * stride) {
			typename L::V v[U];
#pragma unroll
			for (int u = 0; u < U; u++)
				if (i0 + u * stride < n4) v[u] = L::load(wr + ESZ * 4 * (i0 + u * stride));
#pragma unroll
			for (int u = 0; u < U; u++) {
				i64 i = i0 + u * stride;
				if (i < n4) {
					float w[4];
					L::unpack(v[u], w);
#pragma unroll
					for (int j = 0; j < NC; j++) {
						if (j < c.ncols) {
							float4 xv = kb_ld16f((const float*)(c.x + j * c.xs) + 4 * i);
							acc[j] = fmaf(w[0], xv.x, acc[j]);
							acc[j] = fmaf(w[1], xv.y, acc[j]);
							acc[j] = fmaf(w[2], xv.z, acc[j]);
							acc[j] = fmaf(w[3], xv.w, acc[j]);
						}
					}
				}
			}
		}
	} else if (plain && p.k % 2 == 0 && (((u64)c.w | (u64)p.w_nb1) & (T == KB_F32 ? 7 : 3)) == 0 && (((u64)c.x | (u64)c.xs) & 7) == 0) {
		// Two elements a load, where the rows allow it.
		for (i64 e2 = first; e2 < p.k / 2; e2 += stride) {
			float w0, w1;
			if (T == KB_F32) {
				float2 v = ((const float2*)wr)[e2];
				w0 = v.x;
				w1 = v.y;
			} else {
				u32 v = ((const u32*)wr)[e2];
				w0 = T == KB_F16 ? kb_h2f((u16)v) : kb_bf2f((u16)v);
				w1 = T == KB_F16 ? kb_h2f((u16)(v >> 16)) : kb_bf2f((u16)(v >> 16));
			}
#pragma unroll
			for (int j = 0; j < NC; j++) {
				if (j < c.ncols) {
					float2 x = ((const float2*)(c.x + j * c.xs))[e2];
					acc[j] = fmaf(w1, x.y, fmaf(w0, x.x, acc[j]));
				}
			}
		}
	} else {
		for (i64 e = first; e < p.k; e += stride) {
			float w = kb_at<T>(wr, e);
#pragma unroll
			for (int j = 0; j < NC; j++)
				if (j < c.ncols) acc[j] = fmaf(w, ((const float*)(c.x + j * c.xs))[e], acc[j]);
		}
	}
	float s = kb_mmv_sum<NC>(acc, c.ncols);
	if (W > 1) {
		// The row's W warps' sums, added in warp order.
		const int slot = threadIdx.y * W + wp;
		if (lane < c.ncols) part[slot][lane] = s;
		__syncthreads();
		if (wp != 0) return;
		for (int w = 1; w < W; w++)
			if (lane < c.ncols) s += part[slot + w][lane];
	}
	if (valid && lane < c.ncols) *(float*)(c.d + lane * c.ds + row * 4) = s;
}

// ---------------------------------------------------------------------
// Entry points.

// kb_mmvq_* and kb_mmvf_* take up to KB_MMV_COLS columns; kb_mmvq1_* and
// kb_mmvf1_* one (decode, and MUL_MAT_ID's pair per grid row), with the
// registers of one column's sums and activations, held to 64 so that 8
// blocks fit an SM (a 4096-row matrix is then one wave on 132 SMs).
#define KB_MMVQ(name, T)                                                           \
	extern "C" __global__ void kb_mmvq_##name(kb_mm p) { mmvq<T, KB_MMV_COLS>(p); } \
	extern "C" __global__ void __launch_bounds__(128, 8) kb_mmvq1_##name(kb_mm p) { mmvq<T, 1>(p); }
KB_INT_TYPES(KB_MMVQ)

#define KB_MMVF(name, T)                                                           \
	extern "C" __global__ void kb_mmvf_##name(kb_mm p) { mmvf<T, KB_MMV_COLS>(p); } \
	extern "C" __global__ void __launch_bounds__(128, 8) kb_mmvf1_##name(kb_mm p) { mmvf<T, 1>(p); }
KB_FLOAT_TYPES(KB_MMVF)
