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
//   - kb_mmq_*, kb_mmq_dp4a_*, kb_mmq128_*: the tiled product for more
//     columns, as mul_mat_q.cu's: each step's chunks decoded by
//     kb_decode<T> (IQ4_NL's by mmq32.cuh's raw-tile decoder) into the
//     int8 code tile with their scales, then tensor-core s8 products on
//     mmq32.cuh's 64x32 warp tiles with the magic-number epilogue: one
//     m16n8k32 per chunk where the format has one scale per 32 (kb_k32:
//     all but MXFP4, IQ2_XS, IQ2_S and IQ1_M), two m16n8k16 where it has
//     one per 16 (kb_k16: IQ2_XS, IQ2_S, IQ1_M, in kb_mmq128_* only;
//     their 64-row kb_mmq_* take mmq.cuh's 32x32 warp tiles); MXFP4 on
//     mmq.cuh's mmq (32x32 warp tiles, its blocks copied by cp.async);
//     or __dp4a.
#include "common.cuh"
#include "quants.cuh"
#include "quants_iq.cuh"
#include "reduce.cuh"
#include "rows.cuh"
#include "mm.cuh"
#include "mmv.cuh"
#include "mmq.cuh"
#include "mmq32.cuh"

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

#define KB_IQ_KERNELS(name, T)                                                                                           \
	extern "C" __global__ void kb_get_rows_##name(const char* a, kb_tensor ta, const char* ids, kb_tensor tid, char* d,    \
	                                                kb_tensor td, int* status) {                                           \
		iq_get_rows<T>(a, ta, ids, tid, d, td, status);                                                                  \
	}                                                                                                                    \
	extern "C" __global__ void kb_mmvq_##name(kb_mm p) { mmvq<T, KB_MMV_COLS>(p); }                                   \
	extern "C" __global__ void __launch_bounds__(128, 8) kb_mmvq1_##name(kb_mm p) { mmvq<T, 1>(p); }
KB_FOR_IQ_TYPES(KB_IQ_KERNELS)

// The tiled integer products, as mul_mat_q.cu's: tensor cores, 64 or 128
// weight rows (mmq32.cuh's mmq_mma picks mmq32's 64x32 warp tiles or
// mmq.cuh's mmq), or __dp4a.
#define KB_IQ_MMQ(name, T)                                                                \
	extern "C" __global__ void __launch_bounds__(KB_NT) kb_mmq_##name(kb_mm p) {          \
		KB_QTILES                                                                         \
		mmq_mma<T, KB_BM>(p, s);                                                          \
	}                                                                                     \
	extern "C" __global__ void __launch_bounds__(KB_NT) kb_mmq_dp4a_##name(kb_mm p) {     \
		KB_QTILES                                                                         \
		mmq<T, false, KB_BM>(p, s);                                                       \
	}                                                                                     \
	extern "C" __global__ void __launch_bounds__(2 * KB_BM2, KB_MMQ128_BLOCKS(T)) kb_mmq128_##name(kb_mm p) { \
		KB_QTILES_DYN(KB_BM2)                                                             \
		mmq_mma<T, KB_BM2>(p, s);                                                         \
	}
KB_FOR_IQ_TYPES(KB_IQ_MMQ)
