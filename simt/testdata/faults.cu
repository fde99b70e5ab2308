// Faulty kernels: each has one bug the emulator must report (faults_test.go).

// A reduction that forgets the barrier after filling shared memory.
extern "C" __global__ void sum_no_barrier(const float* x, float* out) {
	__shared__ float buf[128];
	int t = threadIdx.x;
	buf[t] = x[t];
	for (int s = 64; s > 0; s >>= 1) {
		if (t < s) buf[t] += buf[t + s];
		__syncthreads();
	}
	if (t == 0) *out = buf[0];
}

// Every thread writes the same shared word.
extern "C" __global__ void racing_write(int* out) {
	__shared__ int last;
	last = threadIdx.x;
	__syncthreads();
	out[threadIdx.x] = last;
}

// Lanes of one warp exchange through shared memory with no __syncwarp.
extern "C" __global__ void warp_no_sync(int* out) {
	__shared__ int s[32];
	s[threadIdx.x] = threadIdx.x;
	out[threadIdx.x] = s[31 - threadIdx.x];
}

// A barrier inside a branch only some threads take.
extern "C" __global__ void divergent_barrier(float* out) {
	if (threadIdx.x < 16) {
		__syncthreads();
	}
	out[threadIdx.x] = 1.0f;
}

// Threads past n leave before a barrier the others wait at.
extern "C" __global__ void exit_then_barrier(float* out, int n) {
	if ((int)threadIdx.x >= n) return;
	__syncthreads();
	out[threadIdx.x] = 1.0f;
}

// The bound check is off by one: thread n writes one past the end.
extern "C" __global__ void off_by_one(float* out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i <= n) out[i] = 2.0f;
}

// Reads one element past the dynamic shared memory the launch gave.
extern "C" __global__ void dyn_overrun(float* out) {
	extern __shared__ float tile[];
	tile[threadIdx.x] = threadIdx.x;
	__syncthreads();
	out[threadIdx.x] = tile[threadIdx.x + 1];
}

// A shuffle whose full mask names a lane that has returned.
extern "C" __global__ void shfl_exited(int* out) {
	if (threadIdx.x == 5) return;
	out[threadIdx.x] = __shfl_down_sync(0xffffffffu, (int)threadIdx.x, 1);
}

// Half a warp waits at a full-mask shuffle, the other half at a barrier.
extern "C" __global__ void shfl_vs_barrier(int* out) {
	int v = threadIdx.x;
	if (threadIdx.x < 16) v = __shfl_xor_sync(0xffffffffu, v, 1);
	__syncthreads();
	out[threadIdx.x] = v;
}

// Spins on a flag nothing sets.
extern "C" __global__ void spin(volatile int* flag) {
	while (*flag == 0) {
	}
}

extern "C" __global__ void copy(const float* p, float* out) { out[threadIdx.x] = p[threadIdx.x]; }

extern "C" __global__ void assert_fails(int n) { assert((int)threadIdx.x < n); }

__device__ int recurse(int n) {
	volatile char pad[512];
	pad[0] = (char)n;
	return n == 0 ? 0 : recurse(n - 1) + pad[0];
}

// Recursion deeper than a thread's stack.
extern "C" __global__ void deep(int* out, int n) { out[threadIdx.x] = recurse(n); }

// Writes one past a shared array: thread 31 lands in the next variable.
extern "C" __global__ void shared_overrun(float* out) {
	__shared__ float a[32];
	__shared__ float b[32];
	a[threadIdx.x + 1] = 1.0f;
	b[threadIdx.x] = 2.0f;
	__syncthreads();
	out[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x];
}

// Global-memory races (faults_test.go, TestFaultGlobalRace).

// Two blocks store different values to the same element.
extern "C" __global__ void global_ww_blocks(int* out) {
	if (threadIdx.x == 0) out[0] = blockIdx.x + 1;
}

// Two threads of one block store different values to one element, with
// no barrier between.
extern "C" __global__ void global_ww_threads(int* out) {
	if (threadIdx.x < 2) out[0] = threadIdx.x + 1;
}

// Block 0 reads an element block 1 writes.
extern "C" __global__ void global_rw_blocks(int* buf, int* out) {
	if (threadIdx.x != 0) return;
	if (blockIdx.x == 0) out[0] = buf[1];
	else buf[1] = 7;
}

// Not races: every thread stores the same value; a barrier orders a
// store and another thread's load; bytes next to each other; atomics.
extern "C" __global__ void global_benign(int* same, int* pub, unsigned char* bytes, int* count, int* out) {
	int t = threadIdx.x;
	same[0] = 42;
	if (t == 0) pub[blockIdx.x] = 5 + blockIdx.x;
	__syncthreads();
	out[blockIdx.x * blockDim.x + t] = pub[blockIdx.x];
	bytes[blockIdx.x * blockDim.x + t] = (unsigned char)t;
	atomicAdd(count, 1);
}

// Not a race: the last block to finish sums the others' partial results,
// published with __threadfence and counted with an atomic.
extern "C" __global__ void global_last_block(float* partial, unsigned* done, float* out) {
	__shared__ bool last;
	if (threadIdx.x == 0) {
		partial[blockIdx.x] = blockIdx.x + 1.0f;
		__threadfence();
		last = atomicAdd(done, 1u) == gridDim.x - 1;
	}
	__syncthreads();
	if (last && threadIdx.x == 0) {
		float s = 0;
		for (unsigned i = 0; i < gridDim.x; i++) s += partial[i];
		out[0] = s;
	}
}

// Block 0's thread 0 stores v: two launches storing different values
// are not a race.
extern "C" __global__ void store_first(int* out, int v) {
	if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = v;
}

// Each thread copies 16 bytes into a shared tile with cp.async and waits
// for only the older of its two groups (wait_group 1) before the block
// reads the newer group's tile: the copy may not have landed.
extern "C" __global__ void cp_async_early_read(const int* src, int* out) {
	__shared__ __align__(16) int old_tile[128];
	__shared__ __align__(16) int new_tile[128];
	int t = threadIdx.x;
	__kbsimt_cp_async(&old_tile[4 * t], &src[4 * t], 16, 16);
	__kbsimt_cp_async_commit();
	__kbsimt_cp_async(&new_tile[4 * t], &src[128 + 4 * t], 16, 16);
	__kbsimt_cp_async_commit();
	__kbsimt_cp_async_wait(1);
	__syncthreads();
	out[t] = old_tile[127 - t] + new_tile[127 - t];
}

// A thread reads its own cp.async destination before any wait_group.
extern "C" __global__ void cp_async_own_read(const int* src, int* out) {
	__shared__ __align__(16) int tile[128];
	int t = threadIdx.x;
	__kbsimt_cp_async(&tile[4 * t], &src[4 * t], 16, 16);
	__kbsimt_cp_async_commit();
	out[t] = tile[4 * t];
	__kbsimt_cp_async_wait(0);
}

// A cp.async whose destination is not aligned to its size.
extern "C" __global__ void cp_async_misaligned(const int* src, int* out) {
	__shared__ __align__(16) int tile[128];
	int t = threadIdx.x;
	__kbsimt_cp_async(&tile[4 * t + 1], &src[4 * t], 16, 16);
	__kbsimt_cp_async_wait(0);
	__syncthreads();
	out[t] = tile[t];
}

// A 16-byte vector load from global memory 8 bytes past a 16-byte
// boundary (the CPU would take it, or crash on an aligned SSE move).
extern "C" __global__ void misaligned_ld16(const int* src, int* out) {
	const int4 v = *(const int4*)(src + 2 + 4 * threadIdx.x);
	out[threadIdx.x] = v.x + v.w;
}

// An 8-byte store into shared memory 4 bytes past an 8-byte boundary,
// then a 4-byte load 2 bytes past a 4-byte boundary.
extern "C" __global__ void misaligned_st8(int* out, int which) {
	__shared__ __align__(16) int tile[64];
	if (which == 0) {
		*(int2*)&tile[2 * threadIdx.x + 1] = make_int2(1, 2);
	} else {
		out[threadIdx.x] = *(const int*)((const char*)out + 2);
	}
	__syncthreads();
	out[threadIdx.x] += tile[threadIdx.x];
}
