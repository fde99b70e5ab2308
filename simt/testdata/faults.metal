// Faulty Metal kernels (faults_test.go).
#include <metal_stdlib>
using namespace metal;

// Reads a neighbour's threadgroup value with no barrier.
kernel void tg_no_barrier(device const float * x [[buffer(0)]], device float * out [[buffer(1)]], uint t [[thread_index_in_threadgroup]]) {
	threadgroup float buf[64];
	buf[t] = x[t];
	out[t] = buf[63 - t];
}

// The last thread writes one past the threadgroup region.
kernel void tg_overrun(device float * out [[buffer(0)]], threadgroup float * shm [[threadgroup(0)]], uint t [[thread_index_in_threadgroup]]) {
	shm[t + 1] = t;
	threadgroup_barrier(mem_flags::mem_threadgroup);
	out[t] = shm[t];
}

// A barrier only even threads reach.
kernel void tg_divergent_barrier(device float * out [[buffer(0)]], uint t [[thread_index_in_threadgroup]]) {
	if (t % 2 == 0) {
		threadgroup_barrier(mem_flags::mem_threadgroup);
	}
	out[t] = 1.0f;
}

// The last thread reads one past a threadgroup array.
kernel void tg_array_overrun(device float * out [[buffer(0)]], uint t [[thread_index_in_threadgroup]]) {
	threadgroup float a[64];
	a[t] = t;
	threadgroup_barrier(mem_flags::mem_threadgroup);
	out[t] = a[t + 1];
}
