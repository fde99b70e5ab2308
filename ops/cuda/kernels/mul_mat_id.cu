// mul_mat_id.cu: MUL_MAT_ID's grouping of the (slot, token) pairs by
// expert; the products run mul_mat.cu's, mul_mat_q.cu's and mul_mat_f.cu's
// kernels over the groups.
#include "common.cuh"
#include "mm.cuh"

// kb_mmid_group counts the pairs of each expert (checking every id), lays
// the experts' pairs out one after another in pairs (the order within an
// expert is not fixed: each pair's output is its own) and lists the
// column tiles, (expert, first pair, count) with count <= bn, in tiles
// and their count in ntiles. One block; dynamic shared memory holds 2
// ints per expert.
extern "C" __global__ void kb_mmid_group(kb_mm p, int* pairs, int* tiles, int* ntiles, int bn) {
	extern __shared__ int cnt[];
	int* next = cnt + p.n_expert;
	for (i64 e = threadIdx.x; e < p.n_expert; e += blockDim.x) cnt[e] = 0;
	__syncthreads();
	for (i64 q = threadIdx.x; q < p.n; q += blockDim.x) {
		i64 id = kb_pair_id(p, q, true);
		if (id >= 0) atomicAdd(&cnt[id], 1);
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		int first = 0, nt = 0;
		for (i64 e = 0; e < p.n_expert; e++) {
			next[e] = first;
			for (int s = 0; s < cnt[e]; s += bn) {
				tiles[3 * nt] = (int)e;
				tiles[3 * nt + 1] = first + s;
				tiles[3 * nt + 2] = min(bn, cnt[e] - s);
				nt++;
			}
			first += cnt[e];
		}
		*ntiles = nt;
	}
	__syncthreads();
	for (i64 q = threadIdx.x; q < p.n; q += blockDim.x) {
		i64 id = kb_pair_id(p, q, false);
		if (id >= 0) pairs[atomicAdd(&next[id], 1)] = (int)q;
	}
}
