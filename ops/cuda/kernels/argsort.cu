// argsort.cu: ARGSORT (stable, NaN first ascending and last descending)
// of f32 rows.
//
// ARGSORT sorts 64-bit keys: the value mapped to an unsigned integer that
// orders as the floats do (NaN below -Inf, -0 equal to +0; complemented
// for descending order) in the high word, the element's index in the low
// word. Keys are distinct, so any sorting network sorts them into the
// stable order. Rows are padded to a power of two with keys above every
// real one. A row of up to KB_SORT_TILE keys is sorted by a bitonic
// network in shared memory, several short rows to a block; longer rows
// are sorted in a global scratch buffer: tiles of KB_SORT_TILE keys in
// shared memory, and the network's steps wider than a tile in global
// memory, a launch each.
#include "common.cuh"

// KB_SORT_TILE is the most keys a block sorts in shared memory (32 KiB).
#define KB_SORT_TILE 4096

// kb_sort_key maps x to an unsigned integer in the order of the sort:
// ascending, NaN first; descending (desc), NaN last.
__device__ __forceinline__ u32 kb_sort_key(float x, int desc) {
	u32 k;
	if (x != x) {
		k = 0;
	} else {
		u32 b = x == 0.0f ? 0u : __float_as_uint(x);
		k = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
	}
	return desc ? ~k : k;
}

// kb_row_key returns the key of element i of row r of a (rows over ne1,
// ne2, ne3), or the padding key past the row's end.
__device__ __forceinline__ u64 kb_row_key(const char* a, const kb_tensor& ta, i64 r, i64 i, int desc) {
	if (i >= ta.ne[0]) return ~0ull;
	i64 i1 = r % ta.ne[1], i2 = (r / ta.ne[1]) % ta.ne[2], i3 = r / (ta.ne[1] * ta.ne[2]);
	float x = *(const float*)(a + kb_offset(ta, i, i1, i2, i3));
	return ((u64)kb_sort_key(x, desc) << 32) | (u64)i;
}

// kb_write_index writes the index held by key k to element i of row r of d.
__device__ __forceinline__ void kb_write_index(char* d, const kb_tensor& td, i64 r, i64 i, u64 k) {
	i64 i1 = r % td.ne[1], i2 = (r / td.ne[1]) % td.ne[2], i3 = r / (td.ne[1] * td.ne[2]);
	*(i32*)(d + kb_offset(td, i, i1, i2, i3)) = (i32)(u32)k;
}

// kb_bitonic runs the steps (k, j) of the bitonic network for k from k0
// to kmax (doubling) and, for each, j from min(k/2, jmax) down to 1, over
// segs segments of n keys (a power of two) in shared memory. Position i
// of a segment sorts ascending when (base + i) & k is zero: base is the
// segment's place in its row (tiles of a long row). The block's threads share the n/2*segs compare-exchanges of each
// step; a barrier follows each step.
__device__ __forceinline__ void kb_bitonic(u64* keys, int n, int segs, i64 base, i64 k0, i64 kmax, int jmax) {
	int half = n >> 1;
	int pairs = half * segs;
	for (i64 k = k0; k <= kmax; k <<= 1) {
		for (int j = (int)min(k >> 1, (i64)jmax); j > 0; j >>= 1) {
			for (int p = threadIdx.x; p < pairs; p += blockDim.x) {
				int s = p / half, q = p - s * half;
				int i = 2 * j * (q / j) + (q % j);
				u64* seg = keys + (i64)s * n;
				u64 x = seg[i], y = seg[i + j];
				bool asc = ((base + i) & k) == 0;
				if ((x > y) == asc) {
					seg[i] = y;
					seg[i + j] = x;
				}
			}
			__syncthreads();
		}
	}
}

// kb_argsort_f32 sorts rows of up to KB_SORT_TILE elements (padded to n,
// a power of two), segs rows per block, the keys in dynamic shared memory
// (segs*n*8 bytes).
extern "C" __global__ void kb_argsort_f32(const char* a, kb_tensor ta, char* d, kb_tensor td, int desc, int n, int segs) {
	extern __shared__ u64 keys[];
	i64 rows = ta.ne[1] * ta.ne[2] * ta.ne[3];
	i64 r0 = (i64)blockIdx.x * segs;
	for (int e = threadIdx.x; e < segs * n; e += blockDim.x) {
		int s = e / n, i = e - s * n;
		keys[e] = r0 + s < rows ? kb_row_key(a, ta, r0 + s, i, desc) : ~0ull;
	}
	__syncthreads();
	kb_bitonic(keys, n, segs, 0, 2, n, n >> 1);
	for (int e = threadIdx.x; e < segs * n; e += blockDim.x) {
		int s = e / n, i = e - s * n;
		if (r0 + s < rows && i < ta.ne[0]) kb_write_index(d, td, r0 + s, i, keys[e]);
	}
}

// Long rows: keys in a global scratch buffer, n (a power of two above
// KB_SORT_TILE) per row.

// kb_argsort_keys writes every row's padded keys to scratch.
extern "C" __global__ void kb_argsort_keys(const char* a, kb_tensor ta, u64* scratch, i64 n, int desc) {
	i64 total = ta.ne[1] * ta.ne[2] * ta.ne[3] * n;
	for (i64 e = kb_first(); e < total; e += kb_stride()) scratch[e] = kb_row_key(a, ta, e / n, e % n, desc);
}

// kb_argsort_tiles sorts tiles of KB_SORT_TILE keys in shared memory, a
// tile per block (grid: tiles of every row): the whole network up to
// k = KB_SORT_TILE when first, else the steps j < KB_SORT_TILE of step k.
extern "C" __global__ void kb_argsort_tiles(u64* scratch, i64 n, i64 k, int first) {
	extern __shared__ u64 keys[];
	u64* tile = scratch + (i64)blockIdx.x * KB_SORT_TILE;
	i64 base = ((i64)blockIdx.x * KB_SORT_TILE) % n;
	for (int e = threadIdx.x; e < KB_SORT_TILE; e += blockDim.x) keys[e] = tile[e];
	__syncthreads();
	if (first) {
		kb_bitonic(keys, KB_SORT_TILE, 1, base, 2, KB_SORT_TILE, KB_SORT_TILE / 2);
	} else {
		kb_bitonic(keys, KB_SORT_TILE, 1, base, k, k, KB_SORT_TILE / 2);
	}
	for (int e = threadIdx.x; e < KB_SORT_TILE; e += blockDim.x) tile[e] = keys[e];
}

// kb_argsort_step is step (k, j) of the network, j >= KB_SORT_TILE, over
// every row in global memory: a thread per compare-exchange.
extern "C" __global__ void kb_argsort_step(u64* scratch, i64 n, i64 rows, i64 k, i64 j) {
	i64 half = n >> 1;
	for (i64 p = kb_first(); p < rows * half; p += kb_stride()) {
		i64 r = p / half, q = p % half;
		i64 i = 2 * j * (q / j) + (q % j);
		u64* row = scratch + r * n;
		u64 x = row[i], y = row[i + j];
		bool asc = (i & k) == 0;
		if ((x > y) == asc) {
			row[i] = y;
			row[i + j] = x;
		}
	}
}

// kb_argsort_indices writes the sorted rows' indices to d.
extern "C" __global__ void kb_argsort_indices(const u64* scratch, i64 n, char* d, kb_tensor td) {
	i64 total = td.ne[0] * td.ne[1] * td.ne[2] * td.ne[3];
	for (i64 e = kb_first(); e < total; e += kb_stride()) {
		i64 r = e / td.ne[0], i = e % td.ne[0];
		kb_write_index(d, td, r, i, scratch[r * n + i]);
	}
}
