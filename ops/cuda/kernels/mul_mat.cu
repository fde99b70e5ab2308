// mul_mat.cu: MUL_MAT and MUL_MAT_ID, the activations' preparation and the
// matrix-vector kernels; the tiled kernels are mul_mat_q.cu (integer) and
// mul_mat_f.cu (float), MUL_MAT_ID's grouping of pairs by expert
// mul_mat_id.cu.
//
// Activations are prepared once per product (kb_quantize_q8a: 32-element
// int8 blocks for the integer paths; kb_convert_act: packed f32, f16 or
// bf16 rows for the float paths). Then, over the prepared rows:
//   - kb_mmv*: matrix-vector, for up to 8 columns: a warp per weight row,
//     each lane decoding whole chunks of 32 weights in registers and
//     dotting them with every column (__dp4a for the integer paths),
//     reduced with warp shuffles;
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
// Matrix-vector: grid (ceil(m/warps), groups), a warp per weight row.

#define KB_MMV_COLS 8

// kb_mmv_store reduces each column's partial sums over the warp and
// writes them (lane j writes column j).
__device__ __forceinline__ void kb_mmv_store(float acc[KB_MMV_COLS], const kb_cols& c, i64 row) {
	int lane = threadIdx.x & 31;
	float mine = 0.0f;
#pragma unroll
	for (int j = 0; j < KB_MMV_COLS; j++) {
		if (j < c.ncols) {
			float s = kb_warp_sum(acc[j]);
			if (lane == j) mine = s;
		}
	}
	if (lane < c.ncols) *(float*)(c.d + lane * c.ds + row * 4) = mine;
}

// mmvq: integer dot products of decoded weight chunks with q8a blocks.
template <int T>
__device__ __forceinline__ void mmvq(const kb_mm& p) {
	bool ok;
	kb_cols c = kb_group_cols(p, blockIdx.y, ok);
	i64 row = (i64)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
	if (!ok || row >= p.m) return;
	const int CPB = kb_type<T>::block / 32;  // chunks per weight block
	const u8* wr = (const u8*)(c.w + row * p.w_nb1);
	i64 kc = p.k / 32;
	float acc[KB_MMV_COLS];
#pragma unroll
	for (int j = 0; j < KB_MMV_COLS; j++) acc[j] = 0.0f;
	for (i64 ch = threadIdx.x & 31; ch < kc; ch += 32) {
		int q[8];
		float2 dm[2];
		kb_decode<T>(wr + (ch / CPB) * kb_type<T>::bytes, (int)(ch % CPB), q, dm);
#pragma unroll
		for (int j = 0; j < KB_MMV_COLS; j++) {
			if (j < c.ncols) {
				const kb_q8a* a = (const kb_q8a*)(c.x + j * c.xs) + ch;
				int aq[8];
#pragma unroll
				for (int i = 0; i < 8; i++) aq[i] = a->qs[i];
				float s0 = dm[0].x * (float)kb_dot16(q, aq) + dm[0].y * (float)a->s[0];
				float s1 = dm[1].x * (float)kb_dot16(q + 4, aq + 4) + dm[1].y * (float)a->s[1];
				acc[j] += a->d * (s0 + s1);
			}
		}
	}
	kb_mmv_store(acc, c, row);
}

// mmvf: float dot products of dequantized weights with f32 rows.
template <int T>
__device__ __forceinline__ void mmvf(const kb_mm& p) {
	bool ok;
	kb_cols c = kb_group_cols(p, blockIdx.y, ok);
	i64 row = (i64)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
	if (!ok || row >= p.m) return;
	const u8* wr = (const u8*)(c.w + row * p.w_nb1);
	float acc[KB_MMV_COLS];
#pragma unroll
	for (int j = 0; j < KB_MMV_COLS; j++) acc[j] = 0.0f;
	const int lane = threadIdx.x & 31;
	const bool plain = T == KB_F32 || T == KB_F16 || T == KB_BF16;
	if (plain && p.k % 2 == 0 && (((u64)c.w | (u64)p.w_nb1) & (T == KB_F32 ? 7 : 3)) == 0 && (((u64)c.x | (u64)c.xs) & 7) == 0) {
		// Two elements a load (a warp reads 128 bytes of f16 weights per
		// instruction, 256 of f32), where the rows allow it.
		for (i64 e2 = lane; e2 < p.k / 2; e2 += 32) {
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
			for (int j = 0; j < KB_MMV_COLS; j++) {
				if (j < c.ncols) {
					float2 x = ((const float2*)(c.x + j * c.xs))[e2];
					acc[j] = fmaf(w1, x.y, fmaf(w0, x.x, acc[j]));
				}
			}
		}
	} else {
		for (i64 e = lane; e < p.k; e += 32) {
			float w = kb_at<T>(wr, e);
#pragma unroll
			for (int j = 0; j < KB_MMV_COLS; j++)
				if (j < c.ncols) acc[j] = fmaf(w, ((const float*)(c.x + j * c.xs))[e], acc[j]);
		}
	}
	kb_mmv_store(acc, c, row);
}

// ---------------------------------------------------------------------
// Entry points.

#define KB_MMVQ(name, T) \
	extern "C" __global__ void kb_mmvq_##name(kb_mm p) { mmvq<T>(p); }
KB_INT_TYPES(KB_MMVQ)

#define KB_MMVF(name, T) \
	extern "C" __global__ void kb_mmvf_##name(kb_mm p) { mmvf<T>(p); }
KB_FLOAT_TYPES(KB_MMVF)
