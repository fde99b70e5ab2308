// Conformance kernels for the SIMT emulator's CUDA dialect. Each writes
// results the Go test (conformance_cuda_test.go) checks against answers it
// computes itself from CUDA's documented semantics.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

// Block reduction through shared memory: one sum per block.
extern "C" __global__ void block_sum(const float* x, float* out, int n) {
	__shared__ float buf[256];
	int t = threadIdx.x;
	float v = 0.0f;
	for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) v += x[i];
	buf[t] = v;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (t < s) buf[t] += buf[t + s];
		__syncthreads();
	}
	if (t == 0) out[blockIdx.x] = buf[0];
}

// Every shuffle at widths 32, 16 and 8: out[thread*12 + k].
extern "C" __global__ void shuffles(int* out, int src, int delta) {
	int lane = threadIdx.x & 31;
	int v = (int)(threadIdx.x * 7 + 3);
	int* o = out + (blockIdx.x * blockDim.x + threadIdx.x) * 12;
	int widths[3] = {32, 16, 8};
	for (int w = 0; w < 3; w++) {
		int width = widths[w];
		o[4 * w + 0] = __shfl_sync(0xffffffffu, v, src + lane, width);
		o[4 * w + 1] = __shfl_up_sync(0xffffffffu, v, delta, width);
		o[4 * w + 2] = __shfl_down_sync(0xffffffffu, v, delta, width);
		o[4 * w + 3] = __shfl_xor_sync(0xffffffffu, v, delta, width);
	}
}

// Shuffles of a float, a half2 and a double, and a warp reduction.
extern "C" __global__ void shuffle_types(float* outf, __half2* outh, double* outd, float* sum) {
	int lane = threadIdx.x & 31;
	float f = lane * 0.5f;
	outf[threadIdx.x] = __shfl_xor_sync(0xffffffffu, f, 1);
	__half2 h = __floats2half2_rn(lane, -lane);
	outh[threadIdx.x] = __shfl_down_sync(0xffffffffu, h, 2);
	double d = lane * 1.25;
	outd[threadIdx.x] = __shfl_sync(0xffffffffu, d, 31 - lane);
	float s = lane;
	for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
	sum[threadIdx.x] = s;
}

// Votes with the full mask and, in lanes 0-15 only, a half mask.
extern "C" __global__ void votes(unsigned* out) {
	int lane = threadIdx.x & 31;
	unsigned* o = out + threadIdx.x * 7;
	o[0] = __ballot_sync(0xffffffffu, lane % 3 == 0);
	o[1] = __any_sync(0xffffffffu, lane == 17);
	o[2] = __all_sync(0xffffffffu, lane < 32);
	o[3] = __all_sync(0xffffffffu, lane < 31);
	o[4] = 0;
	if (lane < 16) o[4] = __ballot_sync(0x0000ffffu, lane & 1);
	o[5] = __match_any_sync(0xffffffffu, lane / 4);
	o[6] = __reduce_add_sync(0xffffffffu, (unsigned)lane);
}

// Atomics under contention from every thread of every block.
extern "C" __global__ void atomics(int* count, float* fsum, int* imax, unsigned* cas, int* per_block) {
	__shared__ int local;
	if (threadIdx.x == 0) local = 0;
	__syncthreads();
	int id = blockIdx.x * blockDim.x + threadIdx.x;
	atomicAdd(count, 1);
	atomicAdd(fsum, 0.5f);
	atomicMax(imax, id * 3 % 1001);
	unsigned old = *cas, seen;
	do {
		seen = old;
		old = atomicCAS(cas, seen, seen + 2);
	} while (old != seen);
	atomicAdd(&local, 1);
	__syncthreads();
	if (threadIdx.x == 0) per_block[blockIdx.x] = local;
}

// Dynamic shared memory: reverse a block's values through it.
extern "C" __global__ void dyn_reverse(const float* x, float* out) {
	extern __shared__ float tile[];
	int t = threadIdx.x, n = blockDim.x;
	tile[t] = x[blockIdx.x * n + t];
	__syncthreads();
	out[blockIdx.x * n + t] = tile[n - 1 - t];
}

// Conversions: float to half and bfloat16 bits, and back.
extern "C" __global__ void convert(const float* x, unsigned short* h, unsigned short* b, float* hb, float* bb, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	__half hv = __float2half(x[i]);
	__nv_bfloat16 bv = __float2bfloat16(x[i]);
	h[i] = __half_as_ushort(hv);
	b[i] = __bfloat16_as_ushort(bv);
	hb[i] = __half2float(hv);
	bb[i] = __bfloat162float(bv);
}

// Half arithmetic rounds each result to half.
extern "C" __global__ void half_ops(const __half* a, const __half* b, __half* out) {
	int i = threadIdx.x;
	out[4 * i + 0] = a[i] + b[i];
	out[4 * i + 1] = a[i] * b[i];
	out[4 * i + 2] = __hfma(a[i], b[i], a[i]);
	__half2 p = __hmul2(__halves2half2(a[i], b[i]), __half2half2(b[i]));
	out[4 * i + 3] = __low2half(p) + __high2half(p);
}

// Built-in indices of a 3-D grid of 3-D blocks: out[global] = packed ids.
extern "C" __global__ void indices(unsigned* out) {
	unsigned bx = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
	unsigned tx = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	unsigned g = bx * (blockDim.x * blockDim.y * blockDim.z) + tx;
	out[2 * g] = threadIdx.x | threadIdx.y << 8 | threadIdx.z << 16;
	out[2 * g + 1] = blockIdx.x | blockIdx.y << 8 | blockIdx.z << 16;
}

// __syncthreads_count, _and and _or.
extern "C" __global__ void bar_votes(int* out) {
	int t = threadIdx.x;
	int c = __syncthreads_count(t % 5 == 0);
	int a = __syncthreads_and(t < 1000);
	int o = __syncthreads_or(t == 77);
	if (t == 0) {
		out[0] = c;
		out[1] = a;
		out[2] = o;
	}
}

// Warp-synchronous exchange through shared memory, ordered by __syncwarp.
extern "C" __global__ void warp_sync_exchange(int* out) {
	__shared__ int s[64];
	int t = threadIdx.x;
	s[t] = t * t;
	__syncwarp();
	out[t] = s[(t & ~31) + (31 - (t & 31))];
}

// A deep per-thread array on the fiber stack; each block writes its own
// row of out (two blocks writing one element would be a global race).
extern "C" __global__ void local_array(float* out) {
	float tmp[4096];
	for (int i = 0; i < 4096; i++) tmp[i] = (float)(i ^ threadIdx.x);
	float s = 0;
	for (int i = 0; i < 4096; i += 97) s += tmp[i];
	out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// A device function with inline assembly on the GPU and an emulator
// implementation here: the pattern for mma, ldmatrix, cp.async.
__device__ __forceinline__ unsigned lane_id() {
#ifdef __KBSIMT__
	return threadIdx.x & 31;
#else
	unsigned r;
	asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
	return r;
#endif
}

extern "C" __global__ void lanes(unsigned* out) { out[threadIdx.x] = lane_id(); }

// A partial last warp: a block of 48 threads reduces with the mask of
// the lanes that exist.
extern "C" __global__ void partial_warp(int* out) {
	unsigned mask = __activemask();
	int v = threadIdx.x;
	for (int o = 16; o > 0; o >>= 1) {
		int w = __shfl_xor_sync(mask, v, o);
		if ((mask >> ((threadIdx.x & 31) ^ o)) & 1) v += w;
	}
	out[threadIdx.x] = v;
}

// ---------------------------------------------------------------------
// The sm_75/sm_80 instructions' emulator implementations (kbsimt_cuda.h),
// called as a kernel's device functions call them under __KBSIMT__.

// Every ldmatrix variant over four 8x8 matrices of 16-bit values in
// shared memory: lane (i, j) = (lane/8, lane%8) gives the address of row
// 7-j of matrix i, so the matrices as read are the stored ones upside
// down. out[((2*v + trans)*32 + lane)*4 + i] is register i of variant
// v (x1, x2, x4).
extern "C" __global__ void ldmatrix_all(const unsigned short* in, unsigned* out) {
	__shared__ __align__(16) unsigned short tile[4][8][8];
	int lane = threadIdx.x;
	for (int e = lane; e < 256; e += 32) (&tile[0][0][0])[e] = in[e];
	__syncwarp();
	const void* row = &tile[lane / 8][7 - lane % 8][0];
	for (int v = 0; v < 3; v++) {
		for (int trans = 0; trans < 2; trans++) {
			unsigned r[4] = {0, 0, 0, 0};
			__kbsimt_ldmatrix(1 << v, trans != 0, row, r);
			for (int i = 0; i < 4; i++) out[((2 * v + trans) * 32 + lane) * 4 + i] = r[i];
		}
	}
}

// Asynchronous copies through shared memory, 64 threads: group 0 copies
// 16 bytes a thread into a (from src[0..256)), group 1 copies 8 bytes a
// thread into b (from src[256..384)) and 4 bytes into c (from
// src[384..448)), with thread t's 4-byte copy reading only t%5 bytes of
// its source (the rest zero-filled); after wait_group 1 and a barrier the
// block reads a (group 0) reversed, after wait_group 0 and a barrier b
// and c. out: 256 + 128 + 64 ints.
extern "C" __global__ void cp_async_groups(const int* src, int* out) {
	__shared__ __align__(16) int a[256];
	__shared__ __align__(16) int b[128];
	__shared__ __align__(16) int c[64];
	int t = threadIdx.x;
	__kbsimt_cp_async(&a[4 * t], &src[4 * t], 16, 16);
	__kbsimt_cp_async_commit();
	__kbsimt_cp_async(&b[2 * t], &src[256 + 2 * t], 8, 8);
	__kbsimt_cp_async(&c[t], &src[384 + t], 4, t % 5);
	__kbsimt_cp_async_commit();
	__kbsimt_cp_async_wait(1);
	__syncthreads();
	for (int i = t; i < 256; i += 64) out[i] = a[255 - i];
	__kbsimt_cp_async_wait(0);
	__syncthreads();
	for (int i = t; i < 128; i += 64) out[256 + i] = b[127 - i];
	out[384 + t] = c[63 - t];
}

// One tensor-core product per launch, a warp: each lane passes its
// fragment registers as given and returns its D registers.
extern "C" __global__ void mma_k32_s8(const int* fa, const int* fb, const int* fc, int* fd) {
	int l = threadIdx.x;
	int a[4], b[2], c[4], d[4];
	for (int i = 0; i < 4; i++) a[i] = fa[4 * l + i], c[i] = fc[4 * l + i];
	b[0] = fb[2 * l];
	b[1] = fb[2 * l + 1];
	__kbsimt_mma_m16n8k32_s8(d, a, b, c);
	for (int i = 0; i < 4; i++) fd[4 * l + i] = d[i];
}

extern "C" __global__ void mma_k8_tf32(const unsigned* fa, const unsigned* fb, const float* fc, float* fd) {
	int l = threadIdx.x;
	unsigned a[4], b[2];
	float c[4], d[4];
	for (int i = 0; i < 4; i++) a[i] = fa[4 * l + i], c[i] = fc[4 * l + i];
	b[0] = fb[2 * l];
	b[1] = fb[2 * l + 1];
	__kbsimt_mma_m16n8k8_tf32(d, a, b, c);
	for (int i = 0; i < 4; i++) fd[4 * l + i] = d[i];
}

// cvt.rna.tf32.f32 of n floats.
extern "C" __global__ void cvt_tf32(const float* in, unsigned* out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = __kbsimt_cvt_rna_tf32(in[i]);
}
