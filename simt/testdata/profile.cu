// Kernels with known profile counters (profile_test.go). Every count the
// tests expect is worked out by hand beside the kernel.

// A coalesced copy: lane l of a warp reads and writes word l of 32
// consecutive floats: one 128-byte line, 4 sectors a request.
extern "C" __global__ void copy_f32(const float* in, float* out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = in[i];
}

// A stride-32 read: lane l reads float 32*l, each in a sector of its
// own: 32 sectors a request. The store is coalesced (4).
extern "C" __global__ void stride32(const float* in, float* out) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	out[i] = in[32 * i];
}

// A 32x32 float transpose through shared memory, one block of 32x32
// threads: the store tile[ty][tx] puts lane tx in bank tx (no conflict);
// the load tile[tx][ty] puts every lane of a warp in bank ty, 32 distinct
// words: 32 wavefronts a request, 31 of them conflicts.
extern "C" __global__ void transpose32(const float* in, float* out) {
	__shared__ float tile[32][32];
	int tx = threadIdx.x, ty = threadIdx.y;
	tile[ty][tx] = in[ty * 32 + tx];
	__syncthreads();
	out[ty * 32 + tx] = tile[tx][ty];
}

// The same with a row of 33 floats: lane tx reads word 33*tx+ty, bank
// (tx+ty)%32, all different: no conflict.
extern "C" __global__ void transpose33(const float* in, float* out) {
	__shared__ float tile[32][33];
	int tx = threadIdx.x, ty = threadIdx.y;
	tile[ty][tx] = in[ty * 32 + tx];
	__syncthreads();
	out[ty * 32 + tx] = tile[tx][ty];
}

// Even lanes only copy: every memory instruction runs with 16 of 32
// lanes, 50% efficiency.
extern "C" __global__ void half_branch(const float* in, float* out) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (threadIdx.x % 2 == 0) out[i] = in[i];
}

// Lanes of a warp add to the same counter: 32 lanes, one address, 31
// of them behind another.
extern "C" __global__ void atomic_same(int* counter) {
	atomicAdd(counter, 1);
}

// C (m x n) = A (m x k, row-major) * B (k x n, row-major), one warp per
// 16x8 tile of C, in m16n8k16 steps each reported as one tensor-core
// product: (m/16)*(n/8)*(k/16) products of 2*16*8*16 FLOPs, 2*m*n*k in
// all. Lane l computes C elements 4l..4l+3 of the tile.
extern "C" __global__ void mma_gemm(const float* A, const float* B, float* C, int m, int n, int k) {
	int tile = blockIdx.x;
	int tm = tile / (n / 8), tn = tile % (n / 8);
	int lane = threadIdx.x;
	float acc[4] = {0, 0, 0, 0};
	for (int k0 = 0; k0 < k; k0 += 16) {
		__kbsimt_mma(KBS_MMA_M16N8K16_F16);
		for (int e = 0; e < 4; e++) {
			int r = (4 * lane + e) / 8, c = (4 * lane + e) % 8;
			for (int kk = 0; kk < 16; kk++)
				acc[e] += A[(tm * 16 + r) * k + k0 + kk] * B[(k0 + kk) * n + tn * 8 + c];
		}
	}
	for (int e = 0; e < 4; e++) {
		int r = (4 * lane + e) / 8, c = (4 * lane + e) % 8;
		C[(tm * 16 + r) * n + tn * 8 + c] = acc[e];
	}
}
