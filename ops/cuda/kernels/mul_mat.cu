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
#include "mmv.cuh"

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
// Matrix-vector, float paths.
//
// Float paths (kb_mmvf_*): blocks of (32*W, 4/W) threads: W warps split a
// row's k (threadIdx.x/32), 4/W rows per block (threadIdx.y). Aligned f32,
// f16 and bf16 rows are read 4 elements a lane and load (16 bytes of f32,
// 8 of f16/bf16, so that the float4 loads of the f32 activations beside
// them are contiguous across the warp too), 2 KB a warp in flight before
// the products; f32 accumulation throughout.

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
