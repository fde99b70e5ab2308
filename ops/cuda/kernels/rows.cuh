// rows.cuh: what the GET_ROWS kernels (get_rows.cu, mul_mat_iq.cu) share.
#pragma once
#include "common.cuh"

// kb_row_id reads the id of output row r (over n, a2, a3) and checks it
// against the table's rows: a bad id sets status (1, the id) and gives -1.
__device__ __forceinline__ i64 kb_row_id(const char* ids, const kb_tensor& tid, const kb_tensor& ta, i64 r, i64& i1, i64& i2, i64& i3, int* status) {
	i1 = r % tid.ne[0];
	i2 = (r / tid.ne[0]) % tid.ne[1];
	i3 = r / (tid.ne[0] * tid.ne[1]);
	i64 id = *(const i32*)(ids + i1 * tid.nb[0] + i2 * tid.nb[1] + i3 * tid.nb[2]);
	if (id < 0 || id >= ta.ne[1]) {
		if (threadIdx.x == 0) {
			atomicMax(&status[0], 1);
			atomicExch(&status[1], (int)id);
		}
		return -1;
	}
	return id;
}
