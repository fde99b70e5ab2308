// mul_mat_q.cu: the tiled MUL_MAT and MUL_MAT_ID kernels of the integer
// paths (see mul_mat.cu): BM weight rows by 64 columns per block of 2*BM
// threads, k in steps of KB_QC chunks of 32. kb_mmq_* and kb_mmq_dp4a_*
// have BM = 64 and static shared memory; kb_mmq128_* (tensor cores) BM =
// 128, 8 warps, and KB_QSMEM(128) bytes of dynamic shared memory (above
// the 48 kB a launch gets without cuFuncSetAttribute).
#include "common.cuh"
#include "quants.cuh"
#include "mm.cuh"
#include "mmq.cuh"
#include "mmq32.cuh"

#define KB_MMQ(name, T)                                                                   \
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
KB_INT_TYPES(KB_MMQ)

// kb_mmq_splitk_sum adds the nsplit partial products of a split-k
// MUL_MAT (see kb_mm) into d, in split order: total elements, m by n by
// the batches, over a grid-stride loop.
extern "C" __global__ void kb_mmq_splitk_sum(kb_mm p, i64 total) {
	for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (i64)gridDim.x * blockDim.x) {
		const i64 r = e % p.m, j = e / p.m % p.n, z = e / (p.m * p.n), i2 = z % p.b2, i3 = z / p.b2;
		const i64 off = j * p.d_nb1 + i2 * p.d_nb2 + i3 * p.d_nb3 + r * 4;
		float sum = 0.0f;
		for (i64 sp = 0; sp < p.nsplit; sp++) sum += *(const float*)(p.part + sp * p.part_nb + off);
		*(float*)(p.d + off) = sum;
	}
}
