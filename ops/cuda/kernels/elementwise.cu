// elementwise.cu: ADD, MUL, SCALE, SILU, GELU, SWIGLU and SWIGLU_OAI on f32, over any
// strides (views, permutations), in a grid-stride loop over the output's
// elements. Every kernel reads an element before writing it, so a node
// computed in its source's storage (the planner's in-place ops) is right.
#include "common.cuh"

// kb_load reads an f32 (F16 false) or f16 element.
template <bool F16>
__device__ __forceinline__ float kb_load(const char* p) {
	return F16 ? kb_h2f(*(const u16*)p) : *(const float*)p;
}

// ADD and MUL: b (f32 or f16) repeats to a's shape (ggml's broadcast).
template <int OP, bool F16>
__device__ __forceinline__ void binary(const char* a, kb_tensor ta, const char* b, kb_tensor tb, char* d, kb_tensor td) {
	i64 n = kb_count(td);
	for (i64 i = kb_first(); i < n; i += kb_stride()) {
		i64 i0, i1, i2, i3;
		kb_unravel(td, i, i0, i1, i2, i3);
		float x = *(const float*)(a + kb_offset(ta, i0, i1, i2, i3));
		float y = kb_load<F16>(b + kb_offset(tb, i0 % tb.ne[0], i1 % tb.ne[1], i2 % tb.ne[2], i3 % tb.ne[3]));
		*(float*)(d + kb_offset(td, i0, i1, i2, i3)) = OP == 0 ? x + y : x * y;
	}
}

#define KB_BINARY(name, op, f16)                                                                                   \
	extern "C" __global__ void name(const char* a, kb_tensor ta, const char* b, kb_tensor tb, char* d, kb_tensor td) { \
		binary<op, f16>(a, ta, b, tb, d, td);                                                                      \
	}
KB_BINARY(kb_add_f32, 0, false)
KB_BINARY(kb_add_f32_f16, 0, true)
KB_BINARY(kb_mul_f32, 1, false)
KB_BINARY(kb_mul_f32_f16, 1, true)

// Unary ops: 0 SCALE (s*x + bias), 1 SILU, 2 GELU (tanh approximation).
__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }

__device__ __forceinline__ float gelu(float x) {
	const float c = 0.7978845608028654f; // sqrt(2/pi)
	return 0.5f * x * (1.0f + tanhf(c * (x + 0.044715f * x * x * x)));
}

extern "C" __global__ void kb_unary_f32(const char* a, kb_tensor ta, char* d, kb_tensor td, int op, float s, float bias) {
	i64 n = kb_count(td);
	for (i64 i = kb_first(); i < n; i += kb_stride()) {
		i64 i0, i1, i2, i3;
		kb_unravel(td, i, i0, i1, i2, i3);
		float x = *(const float*)(a + kb_offset(ta, i0, i1, i2, i3));
		float y = op == 0 ? s * x + bias : op == 1 ? silu(x) : gelu(x);
		*(float*)(d + kb_offset(td, i0, i1, i2, i3)) = y;
	}
}

// SWIGLU: silu(g) * u, with g and u two tensors shaped like the output,
// or the two halves of each row of one (swapped: u first).
extern "C" __global__ void kb_swiglu_f32(const char* g, kb_tensor tg, const char* u, kb_tensor tu, char* d, kb_tensor td) {
	i64 n = kb_count(td);
	for (i64 i = kb_first(); i < n; i += kb_stride()) {
		i64 i0, i1, i2, i3;
		kb_unravel(td, i, i0, i1, i2, i3);
		float x = *(const float*)(g + kb_offset(tg, i0, i1, i2, i3));
		float y = *(const float*)(u + kb_offset(tu, i0, i1, i2, i3));
		*(float*)(d + kb_offset(td, i0, i1, i2, i3)) = silu(x) * y;
	}
}

// SWIGLU_OAI (gpt-oss): x = min(g, limit), y = clamp(u, -limit, limit),
// x * sigmoid(alpha*x) * (y + 1), with g and u shaped like the output.
// min and clamp keep a NaN (as ggml's std::min and std::clamp do, where
// fminf and fmaxf would return the limit).
extern "C" __global__ void kb_swiglu_oai_f32(const char* g, kb_tensor tg, const char* u, kb_tensor tu, char* d, kb_tensor td, float alpha, float limit) {
	i64 n = kb_count(td);
	for (i64 i = kb_first(); i < n; i += kb_stride()) {
		i64 i0, i1, i2, i3;
		kb_unravel(td, i, i0, i1, i2, i3);
		float x = *(const float*)(g + kb_offset(tg, i0, i1, i2, i3));
		float y = *(const float*)(u + kb_offset(tu, i0, i1, i2, i3));
		x = limit < x ? limit : x;
		y = y < -limit ? -limit : limit < y ? limit : y;
		*(float*)(d + kb_offset(td, i0, i1, i2, i3)) = x / (1.0f + expf(-alpha * x)) * (y + 1.0f);
	}
}
