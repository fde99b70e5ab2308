// get_rows.cu: GET_ROWS from a table of any weight type (f32 out; i32 tables
// copy i32), one output row per block.
#include "common.cuh"
#include "quants.cuh"
#include "rows.cuh"

template <int T>
__device__ __forceinline__ void get_rows(const char* a, const kb_tensor& ta, const char* ids, const kb_tensor& tid, char* d, const kb_tensor& td, int* status) {
	i64 i1, i2, i3;
	i64 id = kb_row_id(ids, tid, ta, blockIdx.x, i1, i2, i3, status);
	if (id < 0) return;
	const u8* row = (const u8*)(a + id * ta.nb[1] + i2 * ta.nb[2] + i3 * ta.nb[3]);
	char* out = d + i1 * td.nb[1] + i2 * td.nb[2] + i3 * td.nb[3];
	for (i64 i = threadIdx.x; i < td.ne[0]; i += blockDim.x) *(float*)(out + i * td.nb[0]) = kb_at<T>(row, i);
}

#define KB_GET_ROWS(name, T)                                                                                          \
	extern "C" __global__ void kb_get_rows_##name(const char* a, kb_tensor ta, const char* ids, kb_tensor tid, char* d, \
	                                                kb_tensor td, int* status) {                                        \
		get_rows<T>(a, ta, ids, tid, d, td, status);                                                                  \
	}
KB_FOR_WEIGHT_TYPES(KB_GET_ROWS)

// An i32 table copies its ints unconverted.
extern "C" __global__ void kb_get_rows_i32(const char* a, kb_tensor ta, const char* ids, kb_tensor tid, char* d, kb_tensor td, int* status) {
	i64 i1, i2, i3;
	i64 id = kb_row_id(ids, tid, ta, blockIdx.x, i1, i2, i3, status);
	if (id < 0) return;
	const char* row = a + id * ta.nb[1] + i2 * ta.nb[2] + i3 * ta.nb[3];
	char* out = d + i1 * td.nb[1] + i2 * td.nb[2] + i3 * td.nb[3];
	for (i64 i = threadIdx.x; i < td.ne[0]; i += blockDim.x) *(i32*)(out + i * td.nb[0]) = *(const i32*)(row + i * ta.nb[0]);
}
