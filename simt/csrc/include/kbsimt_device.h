// kbsimt_device.h: what both dialects' compat headers share: the calling
// thread's identity, half and bfloat16 with round-to-nearest-even, warp
// collectives over the runtime, and the kernel table the translator
// fills. Device code of a kernel module includes it through
// kbsimt_cuda.h or <metal_stdlib>.
#ifndef KBSIMT_DEVICE_H
#define KBSIMT_DEVICE_H

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kbsimt_abi.h"

// __KBSIMT__ is defined when a kernel is compiled for the emulator: device
// functions that use inline assembly give their emulator implementation
// under #ifdef __KBSIMT__.
#ifndef __KBSIMT__
#define __KBSIMT__ 1
#endif

#define KBS_INLINE inline __attribute__((always_inline))
#define KBS_SITE const char *kbs_file = __builtin_FILE(), int kbs_line = __builtin_LINE()

namespace kbs {

// self returns the calling thread: its record sits at the top of its
// fiber stack, and stacks are aligned to their size.
KBS_INLINE const kbs_thread* self() {
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	return (const kbs_thread*)((sp | (uintptr_t)(KBS_STACK_SIZE - 1)) + 1 - KBS_FIBER_HDR);
}

template <class To, class From>
KBS_INLINE To bit_cast(const From& f) {
	static_assert(sizeof(To) == sizeof(From), "bit_cast between types of different sizes");
	To t;
	std::memcpy(&t, &f, sizeof t);
	return t;
}

// ---------------------------------------------------------------------
// Half and bfloat16, rounded to nearest even like the hardware.

KBS_INLINE uint16_t f32_to_f16(float f) {
	uint32_t x = bit_cast<uint32_t>(f);
	uint32_t sign = (x >> 16) & 0x8000u;
	uint32_t ax = x & 0x7fffffffu;
	if (ax >= 0x7f800000u) // Inf or NaN (kept quiet, payload truncated)
		return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? (0x200u | ((ax >> 13) & 0x3ffu)) : 0u));
	if (ax >= 0x477ff000u) // 65520 and up round to Inf
		return (uint16_t)(sign | 0x7c00u);
	if (ax >= 0x38800000u) // normal in half
		return (uint16_t)(sign | ((ax - 0x38000000u + 0xfffu + ((ax >> 13) & 1u)) >> 13));
	// Subnormal in half: units of 2^-24.
	int e = (int)(ax >> 23);
	int shift = 126 - e;
	if (shift >= 25) return (uint16_t)sign;
	uint32_t m = (ax & 0x7fffffu) | 0x800000u;
	uint32_t r = m >> shift;
	uint32_t rem = m & ((1u << shift) - 1);
	uint32_t halfway = 1u << (shift - 1);
	if (rem > halfway || (rem == halfway && (r & 1u))) r++;
	return (uint16_t)(sign | r);
}

KBS_INLINE float f16_to_f32(uint16_t h) {
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t e = (h >> 10) & 0x1fu;
	uint32_t m = h & 0x3ffu;
	if (e == 0) {
		float v = (float)m * 5.9604644775390625e-8f; // m * 2^-24, exact
		return sign ? -v : v;
	}
	if (e == 31) return bit_cast<float>(sign | 0x7f800000u | (m ? 0x400000u : 0u) | (m << 13));
	return bit_cast<float>(sign | ((e + 112u) << 23) | (m << 13));
}

KBS_INLINE uint16_t f32_to_bf16(float f) {
	uint32_t x = bit_cast<uint32_t>(f);
	if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 64u); // quiet NaN
	return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

KBS_INLINE float bf16_to_f32(uint16_t b) { return bit_cast<float>((uint32_t)b << 16); }

template <class T>
using if_int = typename std::enable_if<std::is_integral<T>::value, int>::type;

// A 16-bit float: half (IEEE binary16) or bfloat16, by its conversions.
// Arithmetic between two of them rounds the float result back (as the
// hardware's 16-bit ALUs round); with a float or double operand the result
// is that type.
template <uint16_t (*To)(float), float (*From)(uint16_t)>
struct float16 {
	uint16_t bits;
	float16() = default;
	KBS_INLINE float16(float f) : bits(To(f)) {}
	KBS_INLINE float16(double d) : bits(To((float)d)) {}
	template <class I, if_int<I> = 0>
	KBS_INLINE float16(I i) : bits(To((float)i)) {}
	KBS_INLINE operator float() const { return From(bits); }
	static KBS_INLINE float16 from_bits(uint16_t b) {
		float16 h;
		h.bits = b;
		return h;
	}
	KBS_INLINE float16& operator+=(float16 o) { return *this = float16(float(*this) + float(o)); }
	KBS_INLINE float16& operator-=(float16 o) { return *this = float16(float(*this) - float(o)); }
	KBS_INLINE float16& operator*=(float16 o) { return *this = float16(float(*this) * float(o)); }
	KBS_INLINE float16& operator/=(float16 o) { return *this = float16(float(*this) / float(o)); }
	KBS_INLINE float16& operator+=(float o) { return *this = float16(float(*this) + o); }
	KBS_INLINE float16& operator-=(float o) { return *this = float16(float(*this) - o); }
	KBS_INLINE float16& operator*=(float o) { return *this = float16(float(*this) * o); }
	KBS_INLINE float16& operator/=(float o) { return *this = float16(float(*this) / o); }
	KBS_INLINE float16& operator++() { return *this += float16(1.0f); }
	KBS_INLINE float16& operator--() { return *this -= float16(1.0f); }
};

typedef float16<f32_to_f16, f16_to_f32> half;
typedef float16<f32_to_bf16, bf16_to_f32> bfloat16;

#define KBS_H16_OPS(H)                                                                                  \
	KBS_INLINE H operator+(H a, H b) { return H(float(a) + float(b)); }                                 \
	KBS_INLINE H operator-(H a, H b) { return H(float(a) - float(b)); }                                 \
	KBS_INLINE H operator*(H a, H b) { return H(float(a) * float(b)); }                                 \
	KBS_INLINE H operator/(H a, H b) { return H(float(a) / float(b)); }                                 \
	KBS_INLINE H operator-(H a) { return H::from_bits((uint16_t)(a.bits ^ 0x8000u)); }                  \
	KBS_INLINE H operator+(H a) { return a; }                                                           \
	KBS_INLINE float operator+(H a, float b) { return float(a) + b; }                                   \
	KBS_INLINE float operator-(H a, float b) { return float(a) - b; }                                   \
	KBS_INLINE float operator*(H a, float b) { return float(a) * b; }                                   \
	KBS_INLINE float operator/(H a, float b) { return float(a) / b; }                                   \
	KBS_INLINE float operator+(float a, H b) { return a + float(b); }                                   \
	KBS_INLINE float operator-(float a, H b) { return a - float(b); }                                   \
	KBS_INLINE float operator*(float a, H b) { return a * float(b); }                                   \
	KBS_INLINE float operator/(float a, H b) { return a / float(b); }                                   \
	KBS_INLINE double operator+(H a, double b) { return float(a) + b; }                                 \
	KBS_INLINE double operator-(H a, double b) { return float(a) - b; }                                 \
	KBS_INLINE double operator*(H a, double b) { return float(a) * b; }                                 \
	KBS_INLINE double operator/(H a, double b) { return float(a) / b; }                                 \
	KBS_INLINE double operator+(double a, H b) { return a + float(b); }                                 \
	KBS_INLINE double operator-(double a, H b) { return a - float(b); }                                 \
	KBS_INLINE double operator*(double a, H b) { return a * float(b); }                                 \
	KBS_INLINE double operator/(double a, H b) { return a / float(b); }                                 \
	template <class I, if_int<I> = 0> KBS_INLINE H operator+(H a, I b) { return a + H(b); }             \
	template <class I, if_int<I> = 0> KBS_INLINE H operator-(H a, I b) { return a - H(b); }             \
	template <class I, if_int<I> = 0> KBS_INLINE H operator*(H a, I b) { return a * H(b); }             \
	template <class I, if_int<I> = 0> KBS_INLINE H operator/(H a, I b) { return a / H(b); }             \
	template <class I, if_int<I> = 0> KBS_INLINE H operator+(I a, H b) { return H(a) + b; }             \
	template <class I, if_int<I> = 0> KBS_INLINE H operator-(I a, H b) { return H(a) - b; }             \
	template <class I, if_int<I> = 0> KBS_INLINE H operator*(I a, H b) { return H(a) * b; }             \
	template <class I, if_int<I> = 0> KBS_INLINE H operator/(I a, H b) { return H(a) / b; }             \
	KBS_INLINE bool operator==(H a, H b) { return float(a) == float(b); }                               \
	KBS_INLINE bool operator!=(H a, H b) { return float(a) != float(b); }                               \
	KBS_INLINE bool operator<(H a, H b) { return float(a) < float(b); }                                 \
	KBS_INLINE bool operator>(H a, H b) { return float(a) > float(b); }                                 \
	KBS_INLINE bool operator<=(H a, H b) { return float(a) <= float(b); }                               \
	KBS_INLINE bool operator>=(H a, H b) { return float(a) >= float(b); }                               \
	KBS_INLINE bool operator==(H a, float b) { return float(a) == b; }                                  \
	KBS_INLINE bool operator!=(H a, float b) { return float(a) != b; }                                  \
	KBS_INLINE bool operator<(H a, float b) { return float(a) < b; }                                    \
	KBS_INLINE bool operator>(H a, float b) { return float(a) > b; }                                    \
	KBS_INLINE bool operator<=(H a, float b) { return float(a) <= b; }                                  \
	KBS_INLINE bool operator>=(H a, float b) { return float(a) >= b; }                                  \
	KBS_INLINE bool operator==(float a, H b) { return a == float(b); }                                  \
	KBS_INLINE bool operator!=(float a, H b) { return a != float(b); }                                  \
	KBS_INLINE bool operator<(float a, H b) { return a < float(b); }                                    \
	KBS_INLINE bool operator>(float a, H b) { return a > float(b); }                                    \
	KBS_INLINE bool operator<=(float a, H b) { return a <= float(b); }                                  \
	KBS_INLINE bool operator>=(float a, H b) { return a >= float(b); }                                  \
	template <class I, if_int<I> = 0> KBS_INLINE bool operator==(H a, I b) { return float(a) == float(b); } \
	template <class I, if_int<I> = 0> KBS_INLINE bool operator!=(H a, I b) { return float(a) != float(b); } \
	template <class I, if_int<I> = 0> KBS_INLINE bool operator<(H a, I b) { return float(a) < float(b); }   \
	template <class I, if_int<I> = 0> KBS_INLINE bool operator>(H a, I b) { return float(a) > float(b); }
KBS_H16_OPS(half)
KBS_H16_OPS(bfloat16)
#undef KBS_H16_OPS

// ---------------------------------------------------------------------
// Warp collectives. A lane passes a pointer to its data; the last lane to
// arrive runs the completion over every arrived lane's data.

KBS_INLINE void collective(const char* what, uint32_t mask, int flags, void* data, kbs_coll_fn fn, const char* file,
                           int line) {
	kbs_collective(what, mask, flags, data, fn, file, line);
}

// A shuffle: each lane names the lane it reads (src), or -1 to keep its
// own value. Reading a lane that does not take part is undefined on the
// device. A CUDA *_sync shuffle that reads a lane outside its mask gives
// the reader's own value (kernels read such lanes and discard the value,
// as a partial warp's reduction does); a Metal simd_* shuffle (strict)
// that reads an inactive lane is a fault.
template <class T>
struct Shfl {
	T v;
	int32_t src;
	int32_t strict;
	T out;
};

template <class T>
void shfl_done(void** d, uint32_t active) {
	for (int l = 0; l < KBS_WARP; l++) {
		if (!(active >> l & 1)) continue;
		Shfl<T>* p = (Shfl<T>*)d[l];
		int s = p->src;
		if (s < 0 || s >= KBS_WARP || !(active >> s & 1)) {
			if (p->strict && s >= 0 && s < KBS_WARP) {
				char why[160];
				snprintf(why, sizeof why,
				         "lane %d reads lane %d, which is not active (active lanes 0x%08x): the value is undefined on the device",
				         l, s, active);
				kbs_coll_misuse(why);
			}
			p->out = p->v;
		} else {
			p->out = ((Shfl<T>*)d[s])->v;
		}
	}
}

template <class T>
KBS_INLINE T shuffle(const char* what, uint32_t mask, int flags, T v, int src, const char* file, int line) {
	static_assert(std::is_trivially_copyable<T>::value, "shuffled values must be trivially copyable");
	Shfl<T> d;
	d.v = v;
	d.src = src;
	d.strict = (flags & KBS_COLL_ACTIVE) != 0;
	collective(what, mask, flags, &d, &shfl_done<T>, file, line);
	return d.out;
}

// A vote: each lane gives a predicate; every lane gets the mask of
// arrived lanes whose predicate holds, and the arrived mask.
struct Vote {
	int32_t pred;
	uint32_t ballot;
	uint32_t active;
};

inline void vote_done(void** d, uint32_t active) {
	uint32_t b = 0;
	for (int l = 0; l < KBS_WARP; l++)
		if ((active >> l & 1) && ((Vote*)d[l])->pred) b |= 1u << l;
	for (int l = 0; l < KBS_WARP; l++) {
		if (!(active >> l & 1)) continue;
		((Vote*)d[l])->ballot = b;
		((Vote*)d[l])->active = active;
	}
}

KBS_INLINE Vote vote(const char* what, uint32_t mask, int flags, bool pred, const char* file, int line) {
	Vote v;
	v.pred = pred;
	collective(what, mask, flags, &v, &vote_done, file, line);
	return v;
}

// A reduction or scan over the arrived lanes, in lane order.
enum ReduceOp { RSum, RProd, RMin, RMax, RAnd, ROr, RXor };

template <class T>
struct Reduce {
	T v;
	T out;
	int32_t op;
	int32_t scan; // 0 reduce, 1 inclusive scan, 2 exclusive scan
};

template <class T>
KBS_INLINE T reduce_step(int op, T a, T b) {
	switch (op) {
	case RSum: return a + b;
	case RProd: return a * b;
	}
	if constexpr (std::is_same<decltype(b < a), bool>::value) {
		if (op == RMin) return b < a ? b : a;
		if (op == RMax) return b > a ? b : a;
	}
	if constexpr (std::is_integral<T>::value) {
		switch (op) {
		case RAnd: return a & b;
		case ROr: return a | b;
		case RXor: return a ^ b;
		}
	}
	return a;
}

template <class T>
void reduce_done(void** d, uint32_t active) {
	int first = -1;
	for (int l = 0; l < KBS_WARP; l++) {
		if (active >> l & 1) {
			first = l;
			break;
		}
	}
	if (first < 0) return;
	Reduce<T>* p0 = (Reduce<T>*)d[first];
	int op = p0->op, scan = p0->scan;
	T acc = p0->v;
	bool have = false;
	T ident = T();
	if (scan == 2) {
		// The exclusive scan's first lane gets the identity.
		ident = op == RProd ? T(1) : T(0);
	}
	for (int l = 0; l < KBS_WARP; l++) {
		if (!(active >> l & 1)) continue;
		Reduce<T>* p = (Reduce<T>*)d[l];
		if (scan == 2) {
			p->out = have ? acc : ident;
			acc = have ? reduce_step<T>(op, acc, p->v) : p->v;
			have = true;
		} else {
			acc = have ? reduce_step<T>(op, acc, p->v) : p->v;
			have = true;
			if (scan == 1) p->out = acc;
		}
	}
	if (scan == 0)
		for (int l = 0; l < KBS_WARP; l++)
			if (active >> l & 1) ((Reduce<T>*)d[l])->out = acc;
}

template <class T>
KBS_INLINE T reduce(const char* what, uint32_t mask, int flags, int op, int scan, T v, const char* file, int line) {
	Reduce<T> d;
	d.v = v;
	d.op = op;
	d.scan = scan;
	collective(what, mask, flags, &d, &reduce_done<T>, file, line);
	return d.out;
}

// ---------------------------------------------------------------------
// Atomics: GCC builtins (instrumented and bounds-checked with checks on).

template <class T>
KBS_INLINE T atomic_add(T* p, T v) {
	if constexpr (std::is_integral<T>::value) {
		return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
	} else {
		using U = typename std::conditional<sizeof(T) == 8, uint64_t,
		                                    typename std::conditional<sizeof(T) == 4, uint32_t, uint16_t>::type>::type;
		U* q = reinterpret_cast<U*>(p);
		U old = __atomic_load_n(q, __ATOMIC_RELAXED);
		for (;;) {
			T f = bit_cast<T>(old);
			U nu = bit_cast<U>(T(f + v));
			if (__atomic_compare_exchange_n(q, &old, nu, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return f;
		}
	}
}

template <class T, class F>
KBS_INLINE T atomic_update(T* p, F f) {
	using U = typename std::conditional<sizeof(T) == 8, uint64_t,
	                                    typename std::conditional<sizeof(T) == 4, uint32_t, uint16_t>::type>::type;
	U* q = reinterpret_cast<U*>(p);
	U old = __atomic_load_n(q, __ATOMIC_RELAXED);
	for (;;) {
		T cur = bit_cast<T>(old);
		U nu = bit_cast<U>(T(f(cur)));
		if (__atomic_compare_exchange_n(q, &old, nu, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return cur;
	}
}

// ---------------------------------------------------------------------
// Kernel entries and the module's kernel table.

template <class... A, size_t... I>
KBS_INLINE void cuda_call(void (*f)(A...), void* const* p, std::index_sequence<I...>) {
	f(*static_cast<typename std::remove_cv<typename std::remove_reference<A>::type>::type*>(p[I])...);
}

template <class F>
struct cuda_sig;
template <class... A>
struct cuda_sig<void (*)(A...)> {
	static constexpr int n = sizeof...(A);
	static constexpr uint32_t sizes[sizeof...(A) + 1] = {(uint32_t)sizeof(A)..., 0};
	static constexpr uint32_t aligns[sizeof...(A) + 1] = {(uint32_t)alignof(A)..., 0};
	static void call(void (*f)(A...), void* const* p) { cuda_call(f, p, std::index_sequence_for<A...>{}); }
};

template <auto F>
void cuda_entry(const kbs_thread* t) {
	cuda_sig<decltype(F)>::call(F, t->ctx->params);
}

// ---------------------------------------------------------------------
// Shared arrays: the translator declares a function-scope __shared__ or
// threadgroup array as a shared_array, the array followed by a red zone,
// and in checked builds registers the red zone with the runtime, which
// reports an access to it as out of bounds.

#define KBS_SHARED_REDZONE 64

template <class T>
struct shared_array {
	T v;
	unsigned char red[KBS_SHARED_REDZONE];
};

template <class T>
KBS_INLINE void redzone(shared_array<T>& a) {
#ifdef KBS_CHECKED
	kbs_redzone(a.red, sizeof a.red);
#else
	(void)a;
#endif
}

} // namespace kbs

// The dynamic shared memory of the block (extern __shared__): thread-local
// in the module, like every shared variable, so each worker's block has
// its own. kbs_tls_anchor lets the runtime find the module's TLS block.
alignas(256) thread_local unsigned char kbs_dyn_smem[KBS_DYN_SHARED_MAX];
extern "C" __attribute__((visibility("default"))) void* kbs_tls_anchor() { return kbs_dyn_smem; }
// kbs_module_checked tells the runtime whether the module was built with
// the memory checks (instrumented), so launches enable them.
extern "C" __attribute__((visibility("default"))) int kbs_module_checked() {
#ifdef KBS_CHECKED
	return 1;
#else
	return 0;
#endif
}

extern "C" void* kbs_tg_base(int i);

#define KBS_CUDA_KERNEL(f, file, line)                                                                       \
	{ #f, KBS_CUDA, kbs::cuda_sig<decltype(&f)>::n, &kbs::cuda_entry<&f>, kbs::cuda_sig<decltype(&f)>::sizes, \
	  kbs::cuda_sig<decltype(&f)>::aligns, nullptr, file, line, KBS_ABI_VERSION }

#endif
