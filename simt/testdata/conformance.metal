// Conformance kernels for the SIMT emulator's Metal dialect; the Go test
// (conformance_metal_test.go) checks their results.
#include <metal_stdlib>
using namespace metal;

constant float kvals[4] = {1.0f, 2.0f, 4.0f, 8.0f};

typedef struct {
	int n;
	float scale;
} args_t;

// Every built-in index attribute, twelve words per thread.
kernel void builtins(
		device uint * out [[buffer(0)]],
		uint3 tpig [[thread_position_in_grid]],
		uint3 tpitg [[thread_position_in_threadgroup]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		uint3 ntg [[threads_per_threadgroup]],
		uint3 ntgs [[threadgroups_per_grid]],
		uint tiitg [[thread_index_in_threadgroup]],
		ushort tiisg [[thread_index_in_simdgroup]],
		ushort sgitg [[simdgroup_index_in_threadgroup]],
		ushort nsg [[simdgroups_per_threadgroup]],
		uint2 tpig2 [[thread_position_in_grid]]) {
	uint w = ntg.x * ntgs.x, h = ntg.y * ntgs.y;
	uint g = tpig.x + tpig.y * w + tpig.z * w * h;
	device uint * o = out + g * 12;
	o[0] = tpig.x;
	o[1] = tpig.y;
	o[2] = tpig.z;
	o[3] = tpitg.x | tpitg.y << 8 | tpitg.z << 16;
	o[4] = tgpig.x | tgpig.y << 8 | tgpig.z << 16;
	o[5] = ntg.x | ntg.y << 8 | ntg.z << 16;
	o[6] = ntgs.x | ntgs.y << 8 | ntgs.z << 16;
	o[7] = tiitg;
	o[8] = tiisg;
	o[9] = sgitg;
	o[10] = nsg;
	o[11] = tpig2.x + tpig2.y * 1000;
}

// SIMD-group functions, sixteen results per thread.
kernel void simd_ops(
		device float * out [[buffer(0)]],
		device uint * ballots [[buffer(1)]],
		ushort tiisg [[thread_index_in_simdgroup]],
		uint tiitg [[thread_index_in_threadgroup]],
		uint tptg [[threads_per_threadgroup]]) {
	float v = tiisg + 1;
	device float * o = out + tiitg * 16;
	// The lanes of this simdgroup: shuffles read only those (reading a
	// lane that is not active is undefined).
	uint n = min(32u, tptg - (tiitg - tiisg));
	o[0] = simd_sum(v);
	o[1] = simd_max(v);
	o[2] = simd_min(v);
	o[3] = simd_product(tiisg < 8 ? v : 1.0f);
	o[4] = simd_prefix_inclusive_sum(v);
	o[5] = simd_prefix_exclusive_sum(v);
	o[6] = simd_shuffle(v, (tiisg + 7) % n);
	o[7] = simd_shuffle_down(v, n == 32 ? 3 : 0);
	o[8] = simd_shuffle_up(v, 3);
	o[9] = simd_shuffle_xor(v, 5);
	o[10] = simd_broadcast(v, 9);
	o[11] = simd_any(tiisg == 30) ? 1.0f : 0.0f;
	o[12] = simd_all(tiisg < 31) ? 1.0f : 0.0f;
	o[13] = quad_sum(v);
	o[14] = simd_broadcast_first(v);
	o[15] = simd_sum(float2(v, 2 * v)).y;
	ballots[tiitg] = (uint)(ulong)simd_ballot(tiisg % 4 == 0);
}

// Lanes on two sides of a branch reduce among themselves.
kernel void simd_divergent(device float * out [[buffer(0)]], ushort tiisg [[thread_index_in_simdgroup]]) {
	float r;
	if (tiisg < 12) {
		r = simd_sum(1.0f);
	} else {
		r = simd_max((float) tiisg);
	}
	out[tiisg] = r;
}

// Threadgroup memory, static and from a [[threadgroup(0)]] argument.
kernel void tg_memory(
		device const float * x [[buffer(0)]],
		device float * out [[buffer(1)]],
		threadgroup float * dyn [[threadgroup(0)]],
		uint tiitg [[thread_index_in_threadgroup]],
		uint ntg [[threads_per_threadgroup]],
		uint tgpig [[threadgroup_position_in_grid]]) {
	threadgroup float stat[64];
	threadgroup float * alias = stat;
	dyn[tiitg] = x[tgpig * ntg + tiitg];
	alias[tiitg] = 2 * x[tgpig * ntg + tiitg];
	threadgroup_barrier(mem_flags::mem_threadgroup);
	out[tgpig * ntg + tiitg] = dyn[ntg - 1 - tiitg] + stat[(tiitg + 1) % ntg];
}

// Atomics on device and threadgroup memory under contention.
kernel void atomics(
		device atomic_int * count [[buffer(0)]],
		device atomic_float * fsum [[buffer(1)]],
		device atomic_uint * mx [[buffer(2)]],
		device int * per [[buffer(3)]],
		uint tpig [[thread_position_in_grid]],
		uint tiitg [[thread_index_in_threadgroup]],
		uint tgpig [[threadgroup_position_in_grid]]) {
	threadgroup atomic_int local;
	if (tiitg == 0) atomic_store_explicit(&local, 0, memory_order_relaxed);
	threadgroup_barrier(mem_flags::mem_threadgroup);
	atomic_fetch_add_explicit(count, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(fsum, 0.25f, memory_order_relaxed);
	atomic_fetch_max_explicit(mx, tpig * 7 % 501, memory_order_relaxed);
	atomic_fetch_add_explicit(&local, 2, memory_order_relaxed);
	threadgroup_barrier(mem_flags::mem_threadgroup);
	if (tiitg == 0) per[tgpig] = atomic_load_explicit(&local, memory_order_relaxed);
}

// Half arithmetic rounds each result to half.
kernel void half_ops(
		device const half * a [[buffer(0)]],
		device const half * b [[buffer(1)]],
		device half * out [[buffer(2)]],
		uint i [[thread_position_in_grid]]) {
	half x = a[i], y = b[i];
	out[4 * i + 0] = x + y;
	out[4 * i + 1] = x * y;
	out[4 * i + 2] = fma(x, y, x);
	half4 v = half4(x, y, x * y, 1.0h);
	out[4 * i + 3] = dot(v, half4(1.0h));
}

// Vector types: constructors, contiguous swizzles, conversions, program
// scope constants and a constant struct argument.
kernel void vectors(
		device const float4 * x [[buffer(0)]],
		device float4 * out [[buffer(1)]],
		device half4 * hout [[buffer(2)]],
		constant args_t & args [[buffer(3)]],
		uint i [[thread_position_in_grid]]) {
	float4 v = x[i];
	// MSL's generic spelling of float4, unqualified under using namespace metal.
	vec<float, 4> w = vec<float, 4>(v.zw, v.xy) * 2.0f + 1;
	float2 p = v.xy + w.zw;
	out[2 * i] = w;
	out[2 * i + 1] = float4(p, dot(v, w), max(v.x, v.w) * args.scale + kvals[i % 4]);
	hout[i] = half4(v);
}

// An 8x8 product of simdgroup matrices: d = a*b^T + c, then a*0.5.
kernel void matmul8(
		device const half * a [[buffer(0)]],
		device const half * b [[buffer(1)]],
		device const float * c [[buffer(2)]],
		device float * d [[buffer(3)]],
		threadgroup half * ta [[threadgroup(0)]],
		ushort tiisg [[thread_index_in_simdgroup]]) {
	for (int i = tiisg; i < 64; i += 32) ta[i] = a[i];
	threadgroup_barrier(mem_flags::mem_threadgroup);
	simdgroup_half8x8 ma, mb;
	simdgroup_float8x8 mc, md;
	simdgroup_load(ma, ta, 8);
	simdgroup_load(mb, b, 8, 0, true);
	simdgroup_load(mc, c, 8);
	simdgroup_multiply_accumulate(md, ma, mb, mc);
	simdgroup_store(md, d, 8);
	simdgroup_float8x8 half_filled = make_filled_simdgroup_matrix<float, 8, 8>(0.5f);
	simdgroup_multiply(md, ma, half_filled);
	simdgroup_store(md, d + 64, 8);
}

// A template kernel instantiated under two host names.
template <typename T>
kernel void kernel_scale(device const T * x [[buffer(0)]], device float * y [[buffer(1)]], uint i [[thread_position_in_grid]]) {
	y[i] = (float) x[i] * 3.0f;
}
typedef decltype(kernel_scale<float>) kernel_scale_t;
template [[host_name("kernel_scale_f32")]] kernel kernel_scale_t kernel_scale<float>;
template [[host_name("kernel_scale_f16")]] kernel kernel_scale_t kernel_scale<half>;
