// mul_mat_iq.cu: the formats of issue 26 (quants_iq.cuh's KB_FOR_IQ_TYPES: MXFP4,
// IQ4_NL, IQ4_XS, TQ1_0, TQ2_0 and the IQ1/IQ2/IQ3 codebook formats):
//   - kb_get_rows_*: GET_ROWS, one output row per block, a thread per
//     group of eight elements;
//   - kb_mmvq_*, kb_mmvq1_*: MUL_MAT and MUL_MAT_ID's matrix-vector
//     product for up to 8 columns (one): mmv.cuh's integer kernel, as
//     for the legacy and K formats, over activations quantized to kb_q8a
//     blocks (mul_mat.cu's kb_quantize_q8a), each 32-element chunk decoded
//     to int8 codes with its scales by quants_iq.cuh's kb_decode<T> and
//     dotted by __dp4a;
//   - kb_dequant_f16_*: the weights decoded to packed f16 rows (MUL_MAT_ID:
//     the experts kb_iq_used_experts marks), which the f16 tensor-core
//     tiled product (mul_mat_f.cu's kb_mmh*) then takes for more columns
//     (op_mul_mat_iq.go).
#include "common.cuh"
#include "quants.cuh"
#include "quants_iq.cuh"
#include "reduce.cuh"
#include "rows.cuh"
#include "mm.cuh"
#include "mmv.cuh"


template <int T>
__device__ __forceinline__ void iq_get_rows(const char* a, const kb_tensor& ta, const char* ids, const kb_tensor& tid, char* d, const kb_tensor& td, int* status) {
	i64 i1, i2, i3;
	i64 id = kb_row_id(ids, tid, ta, blockIdx.x, i1, i2, i3, status);
	if (id < 0) return;
	const u8* row = (const u8*)(a + id * ta.nb[1] + i2 * ta.nb[2] + i3 * ta.nb[3]);
	char* out = d + i1 * td.nb[1] + i2 * td.nb[2] + i3 * td.nb[3];
	const int G = kb_type<T>::block / 8;
	for (i64 g = threadIdx.x; g < td.ne[0] / 8; g += blockDim.x) {
		float w[8];
		kb_iq8<T>(row + (g / G) * kb_type<T>::bytes, (int)(g % G), w);
#pragma unroll
		for (int i = 0; i < 8; i++) *(float*)(out + (8 * g + i) * td.nb[0]) = w[i];
	}
}

// dequant_f16: the rows of w (k elements each; m rows a matrix, n2 x n3
// matrices, at strides nb1, nb2, nb3) decoded to packed f16 rows at out,
// a thread per group of eight (one 16-byte store); where used is not
// null, only the matrices i2 (MUL_MAT_ID's experts) with used[i2] set.
template <int T>
__device__ __forceinline__ void dequant_f16(const char* w, i64 nb1, i64 nb2, i64 nb3, i64 k, i64 m, i64 n2, i64 n3, const int* used, uint4* out) {
	const int G = kb_type<T>::block / 8;
	const i64 rg = k / 8, total = rg * m * n2 * n3;
	for (i64 i = kb_first(); i < total; i += kb_stride()) {
		const i64 g = i % rg, r = i / rg;
		const i64 i1 = r % m, i2 = (r / m) % n2, i3 = r / (m * n2);
		if (used && !used[i2]) continue;
		const u8* row = (const u8*)(w + i1 * nb1 + i2 * nb2 + i3 * nb3);
		float v[8];
		kb_iq8<T>(row + (g / G) * kb_type<T>::bytes, (int)(g % G), v);
		u32 h[4];
#pragma unroll
		for (int j = 0; j < 4; j++) h[j] = (u32)kb_f2h(v[2 * j]) | ((u32)kb_f2h(v[2 * j + 1]) << 16);
		out[i] = make_uint4(h[0], h[1], h[2], h[3]);
	}
}

// kb_iq_used_experts sets used[e] to 1 for each expert e that a (slot,
// token) pair of ids (i32, [n_used, tokens] at strides nb0, nb1) names,
// 0 for the others, so that MUL_MAT_ID's f16 copy decodes only those. One
// block; ids out of range are left to the product's check.
extern "C" __global__ void kb_iq_used_experts(const char* ids, i64 nb0, i64 nb1, i64 n_used, i64 tokens, i64 n_expert, int* used) {
	for (i64 e = threadIdx.x; e < n_expert; e += blockDim.x) used[e] = 0;
	__syncthreads();
	for (i64 q = threadIdx.x; q < n_used * tokens; q += blockDim.x) {
		const i64 id = *(const i32*)(ids + (q % n_used) * nb0 + (q / n_used) * nb1);
		if (id >= 0 && id < n_expert) used[id] = 1;
	}
}

#define KB_IQ_KERNELS(name, T)                                                                                           \
	extern "C" __global__ void kb_get_rows_##name(const char* a, kb_tensor ta, const char* ids, kb_tensor tid, char* d,    \
	                                                kb_tensor td, int* status) {                                           \
		iq_get_rows<T>(a, ta, ids, tid, d, td, status);                                                                  \
	}                                                                                                                    \
	extern "C" __global__ void kb_mmvq_##name(kb_mm p) { mmvq<T, KB_MMV_COLS>(p); }                                   \
	extern "C" __global__ void __launch_bounds__(128, 8) kb_mmvq1_##name(kb_mm p) { mmvq<T, 1>(p); }                   \
	extern "C" __global__ void kb_dequant_f16_##name(const char* w, i64 nb1, i64 nb2, i64 nb3, i64 k, i64 m, i64 n2, i64 n3, \
	                                                 const int* used, uint4* out) {                                        \
		dequant_f16<T>(w, nb1, nb2, nb3, k, m, n2, n3, used, out);                                                       \
	}
KB_FOR_IQ_TYPES(KB_IQ_KERNELS)

