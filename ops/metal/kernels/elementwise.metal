// elementwise.metal: ADD, MUL, SCALE, SILU, GELU, SWIGLU and SWIGLU_OAI on f32, over
// any strides (views, permutations). A threadgroup takes one row of the
// output (grid: ne1 x ne2 x ne3 threadgroups) and its threads stride
// along the row, so consecutive threads touch consecutive elements of
// contiguous rows, and no thread divides a linear index by the shape.
// Every kernel reads an element before writing it, so a node computed in
// its source's storage (the planner's in-place ops) is right.
#include "common.h"

struct kb_binary_args {
	kb_tensor a, b, d;
};

// ADD and MUL: b (f32 or f16) repeats to a's shape (ggml's broadcast).
template <int OP, typename TB>
kernel void kb_binary(
		constant kb_binary_args &args [[buffer(0)]],
		device const char *a [[buffer(1)]],
		device const char *b [[buffer(2)]],
		device char *d [[buffer(3)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort ntg [[threads_per_threadgroup]]) {
	const long i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
	device const char *ar = a + kb_row(args.a, i1, i2, i3);
	device const char *br = b + kb_row(args.b, i1 % args.b.ne[1], i2 % args.b.ne[2], i3 % args.b.ne[3]);
	device char *dr = d + kb_row(args.d, i1, i2, i3);
	const long nb0 = args.b.ne[0];
	for (long i0 = tpitg; i0 < args.d.ne[0]; i0 += ntg) {
		float x = *(device const float *)(ar + i0 * args.a.nb[0]);
		float y = float(*(device const TB *)(br + (i0 % nb0) * args.b.nb[0]));
		*(device float *)(dr + i0 * args.d.nb[0]) = OP == 0 ? x + y : x * y;
	}
}

typedef decltype(kb_binary<0, float>) kb_binary_t;
template [[host_name("kb_add_f32")]] kernel kb_binary_t kb_binary<0, float>;
template [[host_name("kb_add_f32_f16")]] kernel kb_binary_t kb_binary<0, half>;
template [[host_name("kb_mul_f32")]] kernel kb_binary_t kb_binary<1, float>;
template [[host_name("kb_mul_f32_f16")]] kernel kb_binary_t kb_binary<1, half>;

struct kb_unary_args {
	kb_tensor a, d;
	int op; // 0 SCALE (s*x + bias), 1 SILU, 2 GELU (tanh approximation)
	float s, bias;
};

inline float kb_silu(float x) { return x / (1.0f + exp(-x)); }

inline float kb_gelu(float x) {
	const float c = 0.7978845608028654f; // sqrt(2/pi)
	return 0.5f * x * (1.0f + tanh(c * (x + 0.044715f * x * x * x)));
}

kernel void kb_unary_f32(
		constant kb_unary_args &args [[buffer(0)]],
		device const char *a [[buffer(1)]],
		device char *d [[buffer(2)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort ntg [[threads_per_threadgroup]]) {
	const long i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
	device const char *ar = a + kb_row(args.a, i1, i2, i3);
	device char *dr = d + kb_row(args.d, i1, i2, i3);
	for (long i0 = tpitg; i0 < args.d.ne[0]; i0 += ntg) {
		float x = *(device const float *)(ar + i0 * args.a.nb[0]);
		float y = args.op == 0 ? args.s * x + args.bias : args.op == 1 ? kb_silu(x) : kb_gelu(x);
		*(device float *)(dr + i0 * args.d.nb[0]) = y;
	}
}

struct kb_swiglu_args {
	kb_tensor g, u, d;
};

// SWIGLU: silu(g) * u, with g and u two tensors shaped like the output
// (the host passes the two halves of one source's rows as two views).
kernel void kb_swiglu_f32(
		constant kb_swiglu_args &args [[buffer(0)]],
		device const char *g [[buffer(1)]],
		device const char *u [[buffer(2)]],
		device char *d [[buffer(3)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort ntg [[threads_per_threadgroup]]) {
	const long i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
	device const char *gr = g + kb_row(args.g, i1, i2, i3);
	device const char *ur = u + kb_row(args.u, i1, i2, i3);
	device char *dr = d + kb_row(args.d, i1, i2, i3);
	for (long i0 = tpitg; i0 < args.d.ne[0]; i0 += ntg) {
		float x = *(device const float *)(gr + i0 * args.g.nb[0]);
		float y = *(device const float *)(ur + i0 * args.u.nb[0]);
		*(device float *)(dr + i0 * args.d.nb[0]) = kb_silu(x) * y;
	}
}

struct kb_swiglu_oai_args {
	kb_tensor g, u, d;
	float alpha, limit;
};

// SWIGLU_OAI (gpt-oss): x = min(g, limit), y = clamp(u, -limit, limit),
// x * sigmoid(alpha*x) * (y + 1), with g and u shaped like the output.
// min and clamp keep a NaN, as ggml's std::min and std::clamp do (Metal's
// min and clamp may return the limit).
kernel void kb_swiglu_oai_f32(
		constant kb_swiglu_oai_args &args [[buffer(0)]],
		device const char *g [[buffer(1)]],
		device const char *u [[buffer(2)]],
		device char *d [[buffer(3)]],
		uint3 tgpig [[threadgroup_position_in_grid]],
		ushort tpitg [[thread_index_in_threadgroup]],
		ushort ntg [[threads_per_threadgroup]]) {
	const long i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
	device const char *gr = g + kb_row(args.g, i1, i2, i3);
	device const char *ur = u + kb_row(args.u, i1, i2, i3);
	device char *dr = d + kb_row(args.d, i1, i2, i3);
	for (long i0 = tpitg; i0 < args.d.ne[0]; i0 += ntg) {
		float x = *(device const float *)(gr + i0 * args.g.nb[0]);
		float y = *(device const float *)(ur + i0 * args.u.nb[0]);
		x = args.limit < x ? args.limit : x;
		y = y < -args.limit ? -args.limit : args.limit < y ? args.limit : y;
		*(device float *)(dr + i0 * args.d.nb[0]) = x / (1.0f + exp(-args.alpha * x)) * (y + 1.0f);
	}
}
