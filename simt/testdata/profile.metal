// Metal kernels with known profile counters and faults (profile_test.go).
#include <metal_stdlib>
using namespace metal;

// One 8x8x8 simdgroup product per simdgroup: C = A * B.
kernel void sg_mma(device const float* A [[buffer(0)]], device const float* B [[buffer(1)]],
                   device float* C [[buffer(2)]], uint sg [[simdgroup_index_in_threadgroup]]) {
	simdgroup_float8x8 a, b, c;
	simdgroup_load(a, A, 8);
	simdgroup_load(b, B, 8);
	simdgroup_multiply(c, a, b);
	simdgroup_store(c, C + 64 * sg, 8);
}

// Lanes 16-31 return; lanes 0-15 then read lanes 16-31 with
// simd_shuffle, which are not active: undefined on the device.
kernel void shuffle_inactive(device float* out [[buffer(0)]], uint lane [[thread_index_in_simdgroup]]) {
	if (lane >= 16) return;
	out[lane] = simd_shuffle(float(lane), ushort(lane + 16));
}

// Lanes 16-31 return; lanes 0-15 read each other: fine.
kernel void shuffle_active(device float* out [[buffer(0)]], uint lane [[thread_index_in_simdgroup]]) {
	if (lane >= 16) return;
	out[lane] = simd_shuffle(float(lane), ushort(15 - lane));
}
