// kbsimt_metal.h: the Metal Shading Language on the SIMT emulator. The
// build force-includes it before a .metal source; <metal_stdlib> in this
// directory includes it too. Address-space qualifiers, attributes and
// kernel declarations are rewritten by the translator; this header gives
// MSL's types and functions: vectors and matrices, half and bfloat,
// simd_* collectives, simdgroup matrices, atomics and barriers.
//
// What is not here fails to compile with a message naming it: non-
// contiguous swizzles (v.yx), textures and samplers, function constants,
// simdgroup_matrix::thread_elements (its lane layout is not documented).
#ifndef KBSIMT_METAL_H
#define KBSIMT_METAL_H

#include "kbsimt_device.h"

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef kbs::half half;
typedef kbs::bfloat16 bfloat;

// ---------------------------------------------------------------------
// Vectors: vec<T, N> with MSL's sizes and alignments (a 3-vector takes the
// room of a 4-vector), components x y z w (r g b a), and the contiguous
// swizzles xy, zw (4-vectors) and xy (3-vectors).

template <class T, int N>
struct vec;

namespace kbs {
template <class T>
struct is_vec : std::false_type {};
template <class T, int N>
struct is_vec<vec<T, N>> : std::true_type {};

template <class T>
struct scalar_of {
	typedef T type;
};
template <class T, int N>
struct scalar_of<vec<T, N>> {
	typedef T type;
};

// count of components a constructor argument contributes.
template <class A>
struct ncomp {
	static constexpr int n = 1;
};
template <class T, int N>
struct ncomp<vec<T, N>> {
	static constexpr int n = N;
};

template <class T, class A>
KBS_INLINE void put(T* out, int& at, const A& a) {
	if constexpr (is_vec<A>::value) {
		for (int i = 0; i < ncomp<A>::n; i++) out[at++] = T(a[i]);
	} else {
		out[at++] = T(a);
	}
}
} // namespace kbs

#define KBS_VEC_COMMON(N)                                                                                     \
	static constexpr int size = N;                                                                            \
	typedef T value_type;                                                                                     \
	vec() = default;                                                                                          \
	/* A scalar fills every component. */                                                                     \
	template <class S, typename std::enable_if<std::is_arithmetic<S>::value || std::is_same<S, kbs::half>::value || \
	                                               std::is_same<S, kbs::bfloat16>::value,                      \
	                                           int>::type = 0>                                               \
	KBS_INLINE vec(S s) {                                                                                     \
		for (int i = 0; i < N; i++) v_[i] = T(s);                                                             \
	}                                                                                                         \
	/* Components, from scalars and vectors, N in all; or a vector of  \
	   another type, converted. */                                                                            \
	template <class A0, class A1, class... A>                                                                 \
	KBS_INLINE vec(const A0& a0, const A1& a1, const A&... a) {                                               \
		static_assert(kbs::ncomp<A0>::n + kbs::ncomp<A1>::n + (0 + ... + kbs::ncomp<A>::n) == N,              \
		              "vector constructor: wrong number of components");                                       \
		int at = 0;                                                                                           \
		kbs::put(v_, at, a0);                                                                                 \
		kbs::put(v_, at, a1);                                                                                 \
		(kbs::put(v_, at, a), ...);                                                                           \
	}                                                                                                         \
	template <class U>                                                                                        \
	KBS_INLINE explicit vec(const vec<U, N>& o) {                                                             \
		for (int i = 0; i < N; i++) v_[i] = T(o[i]);                                                          \
	}                                                                                                         \
	KBS_INLINE T& operator[](int i) { return v_[i]; }                                                        \
	KBS_INLINE const T& operator[](int i) const { return v_[i]; }

template <class T>
struct alignas(2 * sizeof(T)) vec<T, 2> {
	union {
		T v_[2];
		struct {
			T x, y;
		};
		struct {
			T r, g;
		};
	};
	KBS_VEC_COMMON(2)
};

template <class T>
struct alignas(4 * sizeof(T)) vec<T, 3> {
	union {
		T v_[3];
		struct {
			T x, y, z;
		};
		struct {
			T r, g, b;
		};
		vec<T, 2> xy;
	};
	KBS_VEC_COMMON(3)
};

template <class T>
struct alignas(4 * sizeof(T)) vec<T, 4> {
	union {
		T v_[4];
		struct {
			T x, y, z, w;
		};
		struct {
			T r, g, b, a;
		};
		struct {
			vec<T, 2> xy, zw;
		};
	};
	KBS_VEC_COMMON(4)
};
#undef KBS_VEC_COMMON

#define KBS_VEC_TYPES(T, name)       \
	typedef vec<T, 2> name##2;       \
	typedef vec<T, 3> name##3;       \
	typedef vec<T, 4> name##4;
KBS_VEC_TYPES(float, float)
KBS_VEC_TYPES(half, half)
KBS_VEC_TYPES(bfloat, bfloat)
KBS_VEC_TYPES(int, int)
KBS_VEC_TYPES(uint, uint)
KBS_VEC_TYPES(short, short)
KBS_VEC_TYPES(ushort, ushort)
KBS_VEC_TYPES(signed char, char)
KBS_VEC_TYPES(uchar, uchar)
KBS_VEC_TYPES(long, long)
KBS_VEC_TYPES(ulong, ulong)
KBS_VEC_TYPES(bool, bool)
#undef KBS_VEC_TYPES

namespace kbs {
template <class S>
struct is_scalar_arg
    : std::integral_constant<bool, std::is_arithmetic<S>::value || std::is_same<S, half>::value ||
                                       std::is_same<S, bfloat16>::value> {};
} // namespace kbs

#define KBS_VEC_BINOP(op)                                                                           \
	template <class T, int N>                                                                       \
	KBS_INLINE vec<T, N> operator op(const vec<T, N>& a, const vec<T, N>& b) {                     \
		vec<T, N> r;                                                                                \
		for (int i = 0; i < N; i++) r[i] = T(a[i] op b[i]);                                         \
		return r;                                                                                   \
	}                                                                                               \
	template <class T, int N, class S, typename std::enable_if<kbs::is_scalar_arg<S>::value, int>::type = 0> \
	KBS_INLINE vec<T, N> operator op(const vec<T, N>& a, S s) {                                    \
		vec<T, N> r;                                                                                \
		for (int i = 0; i < N; i++) r[i] = T(a[i] op T(s));                                         \
		return r;                                                                                   \
	}                                                                                               \
	template <class T, int N, class S, typename std::enable_if<kbs::is_scalar_arg<S>::value, int>::type = 0> \
	KBS_INLINE vec<T, N> operator op(S s, const vec<T, N>& a) {                                    \
		vec<T, N> r;                                                                                \
		for (int i = 0; i < N; i++) r[i] = T(T(s) op a[i]);                                         \
		return r;                                                                                   \
	}                                                                                               \
	template <class T, int N>                                                                       \
	KBS_INLINE vec<T, N>& operator op##=(vec<T, N>& a, const vec<T, N>& b) {                       \
		for (int i = 0; i < N; i++) a[i] = T(a[i] op b[i]);                                         \
		return a;                                                                                   \
	}                                                                                               \
	template <class T, int N, class S, typename std::enable_if<kbs::is_scalar_arg<S>::value, int>::type = 0> \
	KBS_INLINE vec<T, N>& operator op##=(vec<T, N>& a, S s) {                                      \
		for (int i = 0; i < N; i++) a[i] = T(a[i] op T(s));                                         \
		return a;                                                                                   \
	}
KBS_VEC_BINOP(+)
KBS_VEC_BINOP(-)
KBS_VEC_BINOP(*)
KBS_VEC_BINOP(/)
KBS_VEC_BINOP(%)
KBS_VEC_BINOP(&)
KBS_VEC_BINOP(|)
KBS_VEC_BINOP(^)
KBS_VEC_BINOP(<<)
KBS_VEC_BINOP(>>)
#undef KBS_VEC_BINOP

#define KBS_VEC_CMP(op)                                                                             \
	template <class T, int N>                                                                       \
	KBS_INLINE vec<bool, N> operator op(const vec<T, N>& a, const vec<T, N>& b) {                  \
		vec<bool, N> r;                                                                             \
		for (int i = 0; i < N; i++) r[i] = a[i] op b[i];                                            \
		return r;                                                                                   \
	}                                                                                               \
	template <class T, int N, class S, typename std::enable_if<kbs::is_scalar_arg<S>::value, int>::type = 0> \
	KBS_INLINE vec<bool, N> operator op(const vec<T, N>& a, S s) {                                 \
		vec<bool, N> r;                                                                             \
		for (int i = 0; i < N; i++) r[i] = a[i] op T(s);                                            \
		return r;                                                                                   \
	}
KBS_VEC_CMP(==)
KBS_VEC_CMP(!=)
KBS_VEC_CMP(<)
KBS_VEC_CMP(>)
KBS_VEC_CMP(<=)
KBS_VEC_CMP(>=)
KBS_VEC_CMP(&&)
KBS_VEC_CMP(||)
#undef KBS_VEC_CMP

template <class T, int N>
KBS_INLINE vec<T, N> operator-(const vec<T, N>& a) {
	vec<T, N> r;
	for (int i = 0; i < N; i++) r[i] = T(-a[i]);
	return r;
}
template <class T, int N>
KBS_INLINE vec<T, N> operator+(const vec<T, N>& a) {
	return a;
}
template <class T, int N>
KBS_INLINE vec<T, N> operator~(const vec<T, N>& a) {
	vec<T, N> r;
	for (int i = 0; i < N; i++) r[i] = T(~a[i]);
	return r;
}
template <class T, int N>
KBS_INLINE vec<bool, N> operator!(const vec<T, N>& a) {
	vec<bool, N> r;
	for (int i = 0; i < N; i++) r[i] = !a[i];
	return r;
}

// ---------------------------------------------------------------------
// Matrices: matrix<T, C, R> holds C columns of R rows; m[i] is column i.

template <class T, int C, int R>
struct matrix {
	vec<T, R> columns[C];
	matrix() = default;
	// A scalar fills the diagonal.
	template <class S, typename std::enable_if<kbs::is_scalar_arg<S>::value, int>::type = 0>
	KBS_INLINE explicit matrix(S s) {
		for (int c = 0; c < C; c++)
			for (int r = 0; r < R; r++) columns[c][r] = T(c == r ? T(s) : T(0));
	}
	template <class... V>
	KBS_INLINE matrix(const vec<T, R>& c0, const V&... cs) : columns{c0, cs...} {
		static_assert(sizeof...(V) + 1 == C, "matrix constructor: wrong number of columns");
	}
	template <class U>
	KBS_INLINE explicit matrix(const matrix<U, C, R>& o) {
		for (int c = 0; c < C; c++) columns[c] = vec<T, R>(o[c]);
	}
	KBS_INLINE vec<T, R>& operator[](int c) { return columns[c]; }
	KBS_INLINE const vec<T, R>& operator[](int c) const { return columns[c]; }
};

template <class T, int C, int R>
KBS_INLINE vec<T, R> operator*(const matrix<T, C, R>& m, const vec<T, C>& v) {
	vec<T, R> r(T(0));
	for (int c = 0; c < C; c++) r += m[c] * v[c];
	return r;
}
template <class T, int C, int R, class S, typename std::enable_if<kbs::is_scalar_arg<S>::value, int>::type = 0>
KBS_INLINE matrix<T, C, R> operator*(const matrix<T, C, R>& m, S s) {
	matrix<T, C, R> r;
	for (int c = 0; c < C; c++) r[c] = m[c] * s;
	return r;
}
template <class T, int C, int R>
KBS_INLINE matrix<T, C, R> operator+(const matrix<T, C, R>& a, const matrix<T, C, R>& b) {
	matrix<T, C, R> r;
	for (int c = 0; c < C; c++) r[c] = a[c] + b[c];
	return r;
}

#define KBS_MAT_TYPES(T, name)                 \
	typedef matrix<T, 2, 2> name##2x2;         \
	typedef matrix<T, 2, 3> name##2x3;         \
	typedef matrix<T, 2, 4> name##2x4;         \
	typedef matrix<T, 3, 2> name##3x2;         \
	typedef matrix<T, 3, 3> name##3x3;         \
	typedef matrix<T, 3, 4> name##3x4;         \
	typedef matrix<T, 4, 2> name##4x2;         \
	typedef matrix<T, 4, 3> name##4x3;         \
	typedef matrix<T, 4, 4> name##4x4;
KBS_MAT_TYPES(float, float)
KBS_MAT_TYPES(half, half)
#undef KBS_MAT_TYPES

// ---------------------------------------------------------------------
// The metal namespace: functions.

namespace metal {

// The same template as ::vec (a using-declaration, not an alias), so that
// an unqualified vec<T, N> under `using namespace metal` names one entity.
using ::vec;

#define M_PI_F 3.14159265358979323846f
#define M_PI_2_F 1.57079632679489661923f
#define M_SQRT2_F 1.41421356237309504880f
#define M_SQRT1_2_F 0.70710678118654752440f
#define M_LN2_F 0.69314718055994530942f
#define M_LOG2E_F 1.44269504088896340736f
#define M_E_F 2.71828182845904523536f
#define MAXFLOAT FLT_MAX
#define HALF_MAX 65504.0f
#define HALF_MIN 6.10351562e-05f
#define HALF_EPSILON 0.0009765625f

// Componentwise application of a scalar function to vectors.
#define KBS_UNARY(name, expr)                                                          \
	KBS_INLINE float name(float x) { return expr; }                                    \
	KBS_INLINE half name(half hx) {                                                    \
		float x = float(hx);                                                           \
		return half(expr);                                                             \
	}                                                                                  \
	KBS_INLINE bfloat name(bfloat bx) {                                                \
		float x = float(bx);                                                           \
		return bfloat(expr);                                                           \
	}                                                                                  \
	template <class T, int N>                                                          \
	KBS_INLINE vec<T, N> name(const vec<T, N>& v) {                                    \
		vec<T, N> r;                                                                   \
		for (int i = 0; i < N; i++) r[i] = name(v[i]);                                 \
		return r;                                                                      \
	}

// Fast math. Built with -DKBS_METAL_FAST_MATH, a source is compiled as
// Metal compiles with the single-precision fast math functions
// (-fmetal-math-fp32-functions=fast): exp, exp2, exp10, log, log2, sqrt,
// rsqrt, sin, cos and tanh without a namespace are modeled by their
// accuracy in the Metal Shading Language specification's table of fast
// math (Table 8.2), the correctly rounded value moved by the whole bound,
// up or down by a hash of the argument, so a kernel is validated against
// the worst the table allows, not against libm; functions the table gives
// as implemented by others (tanh as (t - 1)/(t + 1) with t = exp(2x),
// sqrt as x * rsqrt(x), exp10 as exp2(x * log2(10))) are composed so.
// precise:: keeps the correctly rounded functions. Reassociation, which
// the relaxed and fast math modes also allow, is not modeled.
namespace fastmodel {
KBS_INLINE uint32_t mix(uint32_t h) {
	h ^= h >> 16;
	h *= 0x7feb352du;
	h ^= h >> 15;
	h *= 0x846ca68bu;
	h ^= h >> 16;
	return h;
}
// up reports the direction an argument's error goes.
KBS_INLINE bool up(float x, uint32_t salt) { return mix(kbs::bit_cast<uint32_t>(x) ^ salt) & 1; }
// ulps moves y by n of its ulps.
KBS_INLINE float ulps(float y, float x, float n, uint32_t salt) {
	if (!std::isfinite(y) || y == 0.0f) return y;
	float a = ::fabsf(y);
	float u = ::nextafterf(a, INFINITY) - a;
	return up(x, salt) ? y + n * u : y - n * u;
}
// absolute moves y by e.
KBS_INLINE float absolute(float y, float x, float e, uint32_t salt) {
	if (!std::isfinite(y)) return y;
	return up(x, salt) ? y + e : y - e;
}
KBS_INLINE float exp(float x) { return ulps(::expf(x), x, 3.0f + ::floorf(::fabsf(2.0f * x)), 1); }
KBS_INLINE float exp2(float x) { return ulps(::exp2f(x), x, 3.0f + ::floorf(::fabsf(2.0f * x)), 2); }
KBS_INLINE float exp10(float x) { return exp2(x * 3.32192809488736234787f); }
KBS_INLINE float log(float x) {
	float y = ::logf(x);
	return x >= 0.5f && x <= 2.0f ? absolute(y, x, 0x1p-21f, 3) : ulps(y, x, 3.0f, 3);
}
KBS_INLINE float log2(float x) {
	float y = ::log2f(x);
	return x >= 0.5f && x <= 2.0f ? absolute(y, x, 0x1p-22f, 4) : ulps(y, x, 2.0f, 4);
}
KBS_INLINE float log10(float x) { return log2(x) * 0.30102999566398119521f; }
KBS_INLINE float rsqrt(float x) { return ulps(1.0f / ::sqrtf(x), x, 2.0f, 5); }
KBS_INLINE float sqrt(float x) { return x > 0.0f && std::isfinite(x) ? x * rsqrt(x) : ::sqrtf(x); }
KBS_INLINE float sin(float x) { return absolute(::sinf(x), x, 0x1p-13f, 6); }
KBS_INLINE float cos(float x) { return absolute(::cosf(x), x, 0x1p-13f, 7); }
KBS_INLINE float tanh(float x) {
	float t = exp(2.0f * x);
	return ulps((t - 1.0f) / (t + 1.0f), x, 2.5f, 8); // x / y: <= 2.5 ulp
}
} // namespace fastmodel
#ifdef KBS_METAL_FAST_MATH
#define KBS_FAST(name, precise) fastmodel::name(x)
#else
#define KBS_FAST(name, precise) precise
#endif

KBS_UNARY(exp, KBS_FAST(exp, ::expf(x)))
KBS_UNARY(exp2, KBS_FAST(exp2, ::exp2f(x)))
KBS_UNARY(exp10, KBS_FAST(exp10, ::powf(10.0f, x)))
KBS_UNARY(log, KBS_FAST(log, ::logf(x)))
KBS_UNARY(log2, KBS_FAST(log2, ::log2f(x)))
KBS_UNARY(log10, KBS_FAST(log10, ::log10f(x)))
KBS_UNARY(sqrt, KBS_FAST(sqrt, ::sqrtf(x)))
KBS_UNARY(rsqrt, KBS_FAST(rsqrt, 1.0f / ::sqrtf(x)))
KBS_UNARY(sin, KBS_FAST(sin, ::sinf(x)))
KBS_UNARY(cos, KBS_FAST(cos, ::cosf(x)))
KBS_UNARY(tan, ::tanf(x))
KBS_UNARY(tanh, KBS_FAST(tanh, ::tanhf(x)))
#undef KBS_FAST
KBS_UNARY(sinh, ::sinhf(x))
KBS_UNARY(cosh, ::coshf(x))
KBS_UNARY(asin, ::asinf(x))
KBS_UNARY(acos, ::acosf(x))
KBS_UNARY(atan, ::atanf(x))
KBS_UNARY(floor, ::floorf(x))
KBS_UNARY(ceil, ::ceilf(x))
KBS_UNARY(round, ::roundf(x))
KBS_UNARY(rint, ::nearbyintf(x))
KBS_UNARY(trunc, ::truncf(x))
KBS_UNARY(fract, x - ::floorf(x))
KBS_UNARY(fabs, ::fabsf(x))
KBS_UNARY(saturate, x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x))
KBS_UNARY(sign, x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f))
KBS_UNARY(erf, ::erff(x))
#undef KBS_UNARY

KBS_INLINE float abs(float x) { return ::fabsf(x); }
KBS_INLINE half abs(half x) { return half::from_bits((uint16_t)(x.bits & 0x7fffu)); }
KBS_INLINE int abs(int x) { return x < 0 ? -x : x; }
KBS_INLINE short abs(short x) { return x < 0 ? (short)-x : x; }
KBS_INLINE signed char abs(signed char x) { return x < 0 ? (signed char)-x : x; }
template <class T, int N>
KBS_INLINE vec<T, N> abs(const vec<T, N>& v) {
	vec<T, N> r;
	for (int i = 0; i < N; i++) r[i] = abs(v[i]);
	return r;
}

template <class T>
KBS_INLINE T min(T a, T b) {
	return b < a ? b : a;
}
template <class T>
KBS_INLINE T max(T a, T b) {
	return b > a ? b : a;
}
template <class T, int N>
KBS_INLINE vec<T, N> min(const vec<T, N>& a, const vec<T, N>& b) {
	vec<T, N> r;
	for (int i = 0; i < N; i++) r[i] = b[i] < a[i] ? b[i] : a[i];
	return r;
}
template <class T, int N>
KBS_INLINE vec<T, N> max(const vec<T, N>& a, const vec<T, N>& b) {
	vec<T, N> r;
	for (int i = 0; i < N; i++) r[i] = b[i] > a[i] ? b[i] : a[i];
	return r;
}
template <class T, int N, class S, typename std::enable_if<kbs::is_scalar_arg<S>::value, int>::type = 0>
KBS_INLINE vec<T, N> min(const vec<T, N>& a, S b) {
	return min(a, vec<T, N>(b));
}
template <class T, int N, class S, typename std::enable_if<kbs::is_scalar_arg<S>::value, int>::type = 0>
KBS_INLINE vec<T, N> max(const vec<T, N>& a, S b) {
	return max(a, vec<T, N>(b));
}
KBS_INLINE float fmin(float a, float b) { return ::fminf(a, b); }
KBS_INLINE float fmax(float a, float b) { return ::fmaxf(a, b); }
template <class T>
KBS_INLINE T clamp(T x, T lo, T hi) {
	return min(max(x, lo), hi);
}
template <class T, int N, class S, typename std::enable_if<kbs::is_scalar_arg<S>::value, int>::type = 0>
KBS_INLINE vec<T, N> clamp(const vec<T, N>& x, S lo, S hi) {
	return min(max(x, vec<T, N>(lo)), vec<T, N>(hi));
}

KBS_INLINE float fma(float a, float b, float c) { return ::fmaf(a, b, c); }
KBS_INLINE half fma(half a, half b, half c) { return half(::fmaf(float(a), float(b), float(c))); }
template <class T, int N>
KBS_INLINE vec<T, N> fma(const vec<T, N>& a, const vec<T, N>& b, const vec<T, N>& c) {
	vec<T, N> r;
	for (int i = 0; i < N; i++) r[i] = fma(a[i], b[i], c[i]);
	return r;
}
#ifdef KBS_METAL_FAST_MATH
KBS_INLINE float pow(float a, float b) { return fastmodel::exp2(b * fastmodel::log2(a)); } // Table 8.2
#else
KBS_INLINE float pow(float a, float b) { return ::powf(a, b); }
#endif
KBS_INLINE half pow(half a, half b) { return half(::powf(float(a), float(b))); }
KBS_INLINE float powr(float a, float b) { return ::powf(a, b); }
KBS_INLINE float fmod(float a, float b) { return ::fmodf(a, b); }
KBS_INLINE float atan2(float a, float b) { return ::atan2f(a, b); }
KBS_INLINE float mix(float a, float b, float t) { return a + (b - a) * t; }
template <class T, int N>
KBS_INLINE vec<T, N> mix(const vec<T, N>& a, const vec<T, N>& b, T t) {
	return a + (b - a) * t;
}
KBS_INLINE float step(float edge, float x) { return x < edge ? 0.0f : 1.0f; }

// dot in the vector's type, summed in component order.
template <class T, int N>
KBS_INLINE T dot(const vec<T, N>& a, const vec<T, N>& b) {
	T s = T(a[0] * b[0]);
	for (int i = 1; i < N; i++) s = T(s + a[i] * b[i]);
	return s;
}
template <int N>
KBS_INLINE float dot(const vec<float, N>& a, const vec<float, N>& b) {
	float s = a[0] * b[0];
	for (int i = 1; i < N; i++) s += a[i] * b[i];
	return s;
}
template <class T, int N>
KBS_INLINE T length(const vec<T, N>& a) {
	return T(::sqrtf(float(dot(a, a))));
}

template <class T>
KBS_INLINE bool isnan(T x) {
	return std::isnan(float(x));
}
template <class T>
KBS_INLINE bool isinf(T x) {
	return std::isinf(float(x));
}
template <class T>
KBS_INLINE bool isfinite(T x) {
	return std::isfinite(float(x));
}
template <class T>
KBS_INLINE bool signbit(T x) {
	return std::signbit(float(x));
}
template <class T, int N>
KBS_INLINE vec<bool, N> isnan(const vec<T, N>& v) {
	vec<bool, N> r;
	for (int i = 0; i < N; i++) r[i] = isnan(v[i]);
	return r;
}
template <class T, int N>
KBS_INLINE vec<bool, N> isinf(const vec<T, N>& v) {
	vec<bool, N> r;
	for (int i = 0; i < N; i++) r[i] = isinf(v[i]);
	return r;
}

template <class T>
KBS_INLINE T select(T a, T b, bool c) {
	return c ? b : a;
}
template <class T, int N>
KBS_INLINE vec<T, N> select(const vec<T, N>& a, const vec<T, N>& b, const vec<bool, N>& c) {
	vec<T, N> r;
	for (int i = 0; i < N; i++) r[i] = c[i] ? b[i] : a[i];
	return r;
}
template <int N>
KBS_INLINE bool all(const vec<bool, N>& v) {
	for (int i = 0; i < N; i++)
		if (!v[i]) return false;
	return true;
}
template <int N>
KBS_INLINE bool any(const vec<bool, N>& v) {
	for (int i = 0; i < N; i++)
		if (v[i]) return true;
	return false;
}
KBS_INLINE bool all(bool b) { return b; }
KBS_INLINE bool any(bool b) { return b; }

template <class T>
KBS_INLINE T popcount(T x) {
	return T(__builtin_popcountll((unsigned long long)x));
}
KBS_INLINE uint clz(uint x) { return x ? __builtin_clz(x) : 32; }
KBS_INLINE uint ctz(uint x) { return x ? __builtin_ctz(x) : 32; }
KBS_INLINE uint extract_bits(uint x, uint off, uint bits) { return bits >= 32 ? x >> off : (x >> off) & ((1u << bits) - 1); }

// as_type reinterprets the bits of a value of the same size.
template <class To, class From>
KBS_INLINE To as_type(const From& f) {
	return kbs::bit_cast<To>(f);
}

namespace precise {
#ifdef KBS_METAL_FAST_MATH
// The correctly rounded functions, beside the fast ones modeled without a
// namespace.
KBS_INLINE float cos(float x) { return ::cosf(x); }
KBS_INLINE float exp(float x) { return ::expf(x); }
KBS_INLINE float exp2(float x) { return ::exp2f(x); }
KBS_INLINE float log(float x) { return ::logf(x); }
KBS_INLINE float rsqrt(float x) { return 1.0f / ::sqrtf(x); }
KBS_INLINE float sin(float x) { return ::sinf(x); }
KBS_INLINE float sqrt(float x) { return ::sqrtf(x); }
KBS_INLINE float tanh(float x) { return ::tanhf(x); }
KBS_INLINE float pow(float x, float y) { return ::powf(x, y); }
#else
using metal::cos;
using metal::exp;
using metal::exp2;
using metal::log;
using metal::rsqrt;
using metal::sin;
using metal::sqrt;
using metal::tanh;
using metal::pow;
#endif
KBS_INLINE float divide(float a, float b) { return a / b; }
} // namespace precise
namespace fast {
using metal::cos;
using metal::exp;
using metal::exp2;
using metal::log;
using metal::rsqrt;
using metal::sin;
using metal::sqrt;
using metal::tanh;
using metal::pow;
KBS_INLINE float divide(float a, float b) { return a / b; }
} // namespace fast

// ---------------------------------------------------------------------
// Barriers.

enum class mem_flags : int {
	mem_none = 0,
	mem_device = 1,
	mem_threadgroup = 2,
	mem_texture = 4,
	mem_threadgroup_imageblock = 8,
	mem_object_data = 16
};
KBS_INLINE mem_flags operator|(mem_flags a, mem_flags b) { return mem_flags(int(a) | int(b)); }

KBS_INLINE void threadgroup_barrier(mem_flags, KBS_SITE) {
	kbs_barrier("threadgroup_barrier", nullptr, nullptr, kbs_file, kbs_line);
}
KBS_INLINE void simdgroup_barrier(mem_flags, KBS_SITE) {
	kbs::collective("simdgroup_barrier", 0, KBS_COLL_ACTIVE | KBS_COLL_FENCE, nullptr, nullptr, kbs_file, kbs_line);
}

// ---------------------------------------------------------------------
// SIMD-group functions: over the active lanes of the caller's simdgroup.

#define KBS_SIMD_REDUCE(name, op, scan)                                                                           \
	template <class T>                                                                                            \
	KBS_INLINE T name(T v, KBS_SITE) {                                                                            \
		return kbs::reduce<T>(#name, 0, KBS_COLL_ACTIVE, op, scan, v, kbs_file, kbs_line);                        \
	}
KBS_SIMD_REDUCE(simd_sum, kbs::RSum, 0)
KBS_SIMD_REDUCE(simd_product, kbs::RProd, 0)
KBS_SIMD_REDUCE(simd_prefix_inclusive_sum, kbs::RSum, 1)
KBS_SIMD_REDUCE(simd_prefix_exclusive_sum, kbs::RSum, 2)
KBS_SIMD_REDUCE(simd_prefix_inclusive_product, kbs::RProd, 1)
KBS_SIMD_REDUCE(simd_prefix_exclusive_product, kbs::RProd, 2)
#undef KBS_SIMD_REDUCE

} // namespace metal

// simd_max and simd_min, componentwise for vectors.
namespace kbs {
template <class T>
KBS_INLINE T componentwise(const char* what, int op, T v, const char* file, int line) {
	if constexpr (is_vec<T>::value) {
		T r;
		for (int i = 0; i < T::size; i++) r[i] = componentwise(what, op, v[i], file, line);
		return r;
	} else {
		return reduce<T>(what, 0, KBS_COLL_ACTIVE, op, 0, v, file, line);
	}
}
} // namespace kbs

namespace metal {
template <class T>
KBS_INLINE T simd_max(T v, KBS_SITE) {
	return kbs::componentwise("simd_max", kbs::RMax, v, kbs_file, kbs_line);
}
template <class T>
KBS_INLINE T simd_min(T v, KBS_SITE) {
	return kbs::componentwise("simd_min", kbs::RMin, v, kbs_file, kbs_line);
}
template <class T>
KBS_INLINE T simd_and(T v, KBS_SITE) {
	return kbs::reduce<T>("simd_and", 0, KBS_COLL_ACTIVE, kbs::RAnd, 0, v, kbs_file, kbs_line);
}
template <class T>
KBS_INLINE T simd_or(T v, KBS_SITE) {
	return kbs::reduce<T>("simd_or", 0, KBS_COLL_ACTIVE, kbs::ROr, 0, v, kbs_file, kbs_line);
}
template <class T>
KBS_INLINE T simd_xor(T v, KBS_SITE) {
	return kbs::reduce<T>("simd_xor", 0, KBS_COLL_ACTIVE, kbs::RXor, 0, v, kbs_file, kbs_line);
}

template <class T>
KBS_INLINE T simd_shuffle(T v, ushort lane, KBS_SITE) {
	return kbs::shuffle("simd_shuffle", 0, KBS_COLL_ACTIVE, v, (int)lane, kbs_file, kbs_line);
}
template <class T>
KBS_INLINE T simd_broadcast(T v, ushort lane, KBS_SITE) {
	return kbs::shuffle("simd_broadcast", 0, KBS_COLL_ACTIVE, v, (int)lane, kbs_file, kbs_line);
}
template <class T>
KBS_INLINE T simd_shuffle_down(T v, ushort delta, KBS_SITE) {
	int lane = (int)kbs::self()->lane;
	int src = lane + (int)delta < KBS_WARP ? lane + (int)delta : -1;
	return kbs::shuffle("simd_shuffle_down", 0, KBS_COLL_ACTIVE, v, src, kbs_file, kbs_line);
}
template <class T>
KBS_INLINE T simd_shuffle_up(T v, ushort delta, KBS_SITE) {
	int lane = (int)kbs::self()->lane;
	int src = lane >= (int)delta ? lane - (int)delta : -1;
	return kbs::shuffle("simd_shuffle_up", 0, KBS_COLL_ACTIVE, v, src, kbs_file, kbs_line);
}
template <class T>
KBS_INLINE T simd_shuffle_xor(T v, ushort mask, KBS_SITE) {
	int lane = (int)kbs::self()->lane;
	int src = lane ^ (int)mask;
	if (src >= KBS_WARP) src = -1;
	return kbs::shuffle("simd_shuffle_xor", 0, KBS_COLL_ACTIVE, v, src, kbs_file, kbs_line);
}
template <class T>
KBS_INLINE T simd_shuffle_rotate_down(T v, ushort delta, KBS_SITE) {
	int lane = (int)kbs::self()->lane;
	return kbs::shuffle("simd_shuffle_rotate_down", 0, KBS_COLL_ACTIVE, v, (lane + (int)delta) % KBS_WARP, kbs_file, kbs_line);
}
template <class T>
KBS_INLINE T simd_shuffle_rotate_up(T v, ushort delta, KBS_SITE) {
	int lane = (int)kbs::self()->lane;
	return kbs::shuffle("simd_shuffle_rotate_up", 0, KBS_COLL_ACTIVE, v, (lane - (int)delta + KBS_WARP) % KBS_WARP, kbs_file, kbs_line);
}

// A simd_vote holds one bit per lane.
struct simd_vote {
	typedef ulong vote_t;
	vote_t v;
	KBS_INLINE explicit operator vote_t() const { return v; }
	KBS_INLINE bool all() const { return v == active; }
	KBS_INLINE bool any() const { return v != 0; }
	vote_t active;
};
KBS_INLINE simd_vote simd_ballot(bool pred, KBS_SITE) {
	kbs::Vote v = kbs::vote("simd_ballot", 0, KBS_COLL_ACTIVE, pred, kbs_file, kbs_line);
	return simd_vote{v.ballot, v.active};
}
KBS_INLINE bool simd_any(bool pred, KBS_SITE) {
	return kbs::vote("simd_any", 0, KBS_COLL_ACTIVE, pred, kbs_file, kbs_line).ballot != 0;
}
KBS_INLINE bool simd_all(bool pred, KBS_SITE) {
	kbs::Vote v = kbs::vote("simd_all", 0, KBS_COLL_ACTIVE, pred, kbs_file, kbs_line);
	return v.ballot == v.active;
}
template <class T>
KBS_INLINE T simd_broadcast_first(T v, KBS_SITE) {
	kbs::Vote a = kbs::vote("simd_broadcast_first", 0, KBS_COLL_ACTIVE, true, kbs_file, kbs_line);
	return kbs::shuffle("simd_broadcast_first", 0, KBS_COLL_ACTIVE, v, __builtin_ctz(a.active), kbs_file, kbs_line);
}
KBS_INLINE bool simd_is_first(KBS_SITE) {
	kbs::Vote a = kbs::vote("simd_is_first", 0, KBS_COLL_ACTIVE, true, kbs_file, kbs_line);
	return (uint32_t)__builtin_ctz(a.active) == kbs::self()->lane;
}
KBS_INLINE bool simd_is_helper_thread() { return false; }

// Quad-group functions: groups of four lanes.
template <class T>
KBS_INLINE T quad_shuffle(T v, ushort q, KBS_SITE) {
	int lane = (int)kbs::self()->lane;
	return kbs::shuffle("quad_shuffle", 0, KBS_COLL_ACTIVE, v, (lane & ~3) + (q & 3), kbs_file, kbs_line);
}
template <class T>
KBS_INLINE T quad_shuffle_xor(T v, ushort m, KBS_SITE) {
	int lane = (int)kbs::self()->lane;
	return kbs::shuffle("quad_shuffle_xor", 0, KBS_COLL_ACTIVE, v, (lane & ~3) + ((lane ^ m) & 3), kbs_file, kbs_line);
}
template <class T>
KBS_INLINE T quad_sum(T v, KBS_SITE) {
	T s = v + quad_shuffle_xor(v, 1, kbs_file, kbs_line);
	return s + quad_shuffle_xor(s, 2, kbs_file, kbs_line);
}

// ---------------------------------------------------------------------
// Atomics.

enum memory_order { memory_order_relaxed = 0, memory_order_seq_cst = 5 };

template <class T>
struct _atomic {
	T v;
};
typedef _atomic<int> atomic_int;
typedef _atomic<uint> atomic_uint;
typedef _atomic<float> atomic_float;
typedef _atomic<bool> atomic_bool;
template <class T>
using atomic = _atomic<T>;

template <class T, class U>
KBS_INLINE void atomic_store_explicit(volatile _atomic<T>* a, U v, memory_order) {
	__atomic_store_n(const_cast<T*>(&a->v), T(v), __ATOMIC_RELAXED);
}
template <class T>
KBS_INLINE T atomic_load_explicit(const volatile _atomic<T>* a, memory_order) {
	return __atomic_load_n(const_cast<T*>(&a->v), __ATOMIC_RELAXED);
}
template <class T, class U>
KBS_INLINE T atomic_exchange_explicit(volatile _atomic<T>* a, U v, memory_order) {
	return kbs::atomic_update(const_cast<T*>(&a->v), [v](T) { return T(v); });
}
template <class T, class U>
KBS_INLINE bool atomic_compare_exchange_weak_explicit(volatile _atomic<T>* a, T* expected, U desired, memory_order,
                                                      memory_order) {
	if constexpr (std::is_integral<T>::value) {
		return __atomic_compare_exchange_n(const_cast<T*>(&a->v), expected, T(desired), false, __ATOMIC_RELAXED,
		                                   __ATOMIC_RELAXED);
	} else {
		using B = typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type;
		B e = kbs::bit_cast<B>(*expected);
		bool ok = __atomic_compare_exchange_n(reinterpret_cast<B*>(const_cast<T*>(&a->v)), &e,
		                                      kbs::bit_cast<B>(T(desired)), false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		*expected = kbs::bit_cast<T>(e);
		return ok;
	}
}
template <class T, class U>
KBS_INLINE T atomic_fetch_add_explicit(volatile _atomic<T>* a, U v, memory_order) {
	return kbs::atomic_add(const_cast<T*>(&a->v), T(v));
}
template <class T, class U>
KBS_INLINE T atomic_fetch_sub_explicit(volatile _atomic<T>* a, U v, memory_order) {
	return kbs::atomic_add(const_cast<T*>(&a->v), T(-T(v)));
}
template <class T, class U>
KBS_INLINE T atomic_fetch_max_explicit(volatile _atomic<T>* a, U v, memory_order) {
	return kbs::atomic_update(const_cast<T*>(&a->v), [v](T c) { return T(v) > c ? T(v) : c; });
}
template <class T, class U>
KBS_INLINE T atomic_fetch_min_explicit(volatile _atomic<T>* a, U v, memory_order) {
	return kbs::atomic_update(const_cast<T*>(&a->v), [v](T c) { return T(v) < c ? T(v) : c; });
}
template <class T, class U>
KBS_INLINE T atomic_fetch_and_explicit(volatile _atomic<T>* a, U v, memory_order) {
	return __atomic_fetch_and(const_cast<T*>(&a->v), T(v), __ATOMIC_RELAXED);
}
template <class T, class U>
KBS_INLINE T atomic_fetch_or_explicit(volatile _atomic<T>* a, U v, memory_order) {
	return __atomic_fetch_or(const_cast<T*>(&a->v), T(v), __ATOMIC_RELAXED);
}
template <class T, class U>
KBS_INLINE T atomic_fetch_xor_explicit(volatile _atomic<T>* a, U v, memory_order) {
	return __atomic_fetch_xor(const_cast<T*>(&a->v), T(v), __ATOMIC_RELAXED);
}

// ---------------------------------------------------------------------
// SIMD-group matrices: 8x8, distributed over the simdgroup's 32 lanes,
// two elements each (lane l holds elements 2l and 2l+1 in row-major
// order). Loads and stores touch only the lane's own elements; products
// are collectives that gather every lane's elements.

template <class T, int R, int C>
struct simdgroup_matrix {
	static_assert(R == 8 && C == 8, "the emulator has 8x8 simdgroup matrices only");
	T e[2];
	template <class U = void>
	void thread_elements() const {
		static_assert(sizeof(U) == 0,
		              "simdgroup_matrix::thread_elements is not emulated: its lane layout is not documented");
	}
};
typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;
typedef simdgroup_matrix<bfloat, 8, 8> simdgroup_bfloat8x8;

template <class T, int R, int C>
KBS_INLINE simdgroup_matrix<T, R, C> make_filled_simdgroup_matrix(T v) {
	simdgroup_matrix<T, R, C> m;
	m.e[0] = m.e[1] = v;
	return m;
}

// matrix_origin is (column, row) of the matrix's first element in memory.
template <class T, class U>
KBS_INLINE void simdgroup_load(simdgroup_matrix<T, 8, 8>& d, const U* src, ulong elements_per_row = 8,
                               vec<ulong, 2> matrix_origin = vec<ulong, 2>(0), bool transpose_matrix = false) {
	uint32_t lane = kbs::self()->lane;
	for (int k = 0; k < 2; k++) {
		int idx = 2 * (int)lane + k, r = idx / 8, c = idx % 8;
		int mr = transpose_matrix ? c : r, mc = transpose_matrix ? r : c;
		d.e[k] = T(src[(matrix_origin.y + mr) * elements_per_row + matrix_origin.x + mc]);
	}
}
template <class T, class U>
KBS_INLINE void simdgroup_store(const simdgroup_matrix<T, 8, 8>& a, U* dst, ulong elements_per_row = 8,
                                vec<ulong, 2> matrix_origin = vec<ulong, 2>(0), bool transpose_matrix = false) {
	uint32_t lane = kbs::self()->lane;
	for (int k = 0; k < 2; k++) {
		int idx = 2 * (int)lane + k, r = idx / 8, c = idx % 8;
		int mr = transpose_matrix ? c : r, mc = transpose_matrix ? r : c;
		dst[(matrix_origin.y + mr) * elements_per_row + matrix_origin.x + mc] = U(a.e[k]);
	}
}

} // namespace metal

namespace kbs {
template <class D, class A, class B, class C>
struct MMA {
	metal::simdgroup_matrix<D, 8, 8>* d;
	const metal::simdgroup_matrix<A, 8, 8>* a;
	const metal::simdgroup_matrix<B, 8, 8>* b;
	const metal::simdgroup_matrix<C, 8, 8>* c;
};
template <class D, class A, class B, class C>
void mma_done(void** data, uint32_t active) {
	if (active != 0xffffffffu)
		kbs_trap("simdgroup_multiply_accumulate: every lane of the simdgroup must take part", __FILE__, __LINE__);
	kbs_prof_mma(std::is_same<A, float>::value && std::is_same<B, float>::value ? KBS_MMA_SG8_F32 : KBS_MMA_SG8_F16);
	float a[64], b[64], c[64];
	for (int l = 0; l < 32; l++) {
		MMA<D, A, B, C>* m = (MMA<D, A, B, C>*)data[l];
		for (int k = 0; k < 2; k++) {
			a[2 * l + k] = float(m->a->e[k]);
			b[2 * l + k] = float(m->b->e[k]);
			c[2 * l + k] = m->c ? float(m->c->e[k]) : 0.0f;
		}
	}
	for (int l = 0; l < 32; l++) {
		MMA<D, A, B, C>* m = (MMA<D, A, B, C>*)data[l];
		for (int k = 0; k < 2; k++) {
			int idx = 2 * l + k, r = idx / 8, col = idx % 8;
			float acc = c[idx];
			for (int i = 0; i < 8; i++) acc = fmaf(a[r * 8 + i], b[i * 8 + col], acc);
			m->d->e[k] = D(acc);
		}
	}
}
} // namespace kbs

namespace metal {
// simdgroup_multiply_accumulate: d = a*b + c, accumulated in float.
template <class D, class A, class B, class C>
KBS_INLINE void simdgroup_multiply_accumulate(simdgroup_matrix<D, 8, 8>& d, const simdgroup_matrix<A, 8, 8>& a,
                                              const simdgroup_matrix<B, 8, 8>& b, const simdgroup_matrix<C, 8, 8>& c,
                                              KBS_SITE) {
	simdgroup_matrix<D, 8, 8> out;
	kbs::MMA<D, A, B, C> m{&out, &a, &b, &c};
	kbs::collective("simdgroup_multiply_accumulate", 0, KBS_COLL_ACTIVE, &m, &kbs::mma_done<D, A, B, C>, kbs_file,
	                kbs_line);
	d = out;
}
template <class D, class A, class B>
KBS_INLINE void simdgroup_multiply(simdgroup_matrix<D, 8, 8>& d, const simdgroup_matrix<A, 8, 8>& a,
                                   const simdgroup_matrix<B, 8, 8>& b, KBS_SITE) {
	simdgroup_matrix<D, 8, 8> out;
	kbs::MMA<D, A, B, D> m{&out, &a, &b, nullptr};
	kbs::collective("simdgroup_multiply", 0, KBS_COLL_ACTIVE, &m, &kbs::mma_done<D, A, B, D>, kbs_file, kbs_line);
	d = out;
}
} // namespace metal

// ---------------------------------------------------------------------
// Kernel entries: each parameter from its binding.

namespace kbs {
inline kbs_dim3 metal_builtin_value(const kbs_thread* t, int which) {
	switch (which) {
	case KBS_BI_THREAD_POSITION_IN_GRID:
		return kbs_dim3{t->bid.x * t->bdim.x + t->tid.x, t->bid.y * t->bdim.y + t->tid.y, t->bid.z * t->bdim.z + t->tid.z};
	case KBS_BI_THREAD_POSITION_IN_THREADGROUP: return t->tid;
	case KBS_BI_THREADGROUP_POSITION_IN_GRID: return t->bid;
	case KBS_BI_THREADS_PER_THREADGROUP: return t->bdim;
	case KBS_BI_THREADGROUPS_PER_GRID: return t->gdim;
	case KBS_BI_THREADS_PER_GRID:
		return kbs_dim3{t->gdim.x * t->bdim.x, t->gdim.y * t->bdim.y, t->gdim.z * t->bdim.z};
	case KBS_BI_THREAD_INDEX_IN_THREADGROUP: return kbs_dim3{t->linear, 0, 0};
	case KBS_BI_THREAD_INDEX_IN_SIMDGROUP: return kbs_dim3{t->lane, 0, 0};
	case KBS_BI_SIMDGROUP_INDEX_IN_THREADGROUP: return kbs_dim3{t->warp, 0, 0};
	case KBS_BI_THREADS_PER_SIMDGROUP: return kbs_dim3{KBS_WARP, 0, 0};
	case KBS_BI_SIMDGROUPS_PER_THREADGROUP: return kbs_dim3{t->nwarps, 0, 0};
	case KBS_BI_THREAD_INDEX_IN_QUADGROUP: return kbs_dim3{t->lane % 4, 0, 0};
	case KBS_BI_QUADGROUP_INDEX_IN_THREADGROUP: return kbs_dim3{t->linear / 4, 0, 0};
	case KBS_BI_THREAD_EXECUTION_WIDTH: return kbs_dim3{KBS_WARP, 0, 0};
	}
	return kbs_dim3{0, 0, 0};
}

template <class A>
KBS_INLINE A metal_arg(const kbs_thread* t, const kbs_bind& b) {
	if constexpr (std::is_pointer<A>::value) {
		if (b.kind == KBS_BIND_THREADGROUP) return (A)kbs_tg_base(b.index);
		return (A)t->ctx->buffers[b.index];
	} else if constexpr (std::is_reference<A>::value) {
		typedef typename std::remove_reference<A>::type R;
		return *(R*)t->ctx->buffers[b.index];
	} else {
		kbs_dim3 v = metal_builtin_value(t, b.index);
		if constexpr (is_vec<A>::value) {
			if constexpr (A::size == 2)
				return A(v.x, v.y);
			else
				return A(v.x, v.y, v.z);
		} else {
			return A(v.x);
		}
	}
}

template <class... A, size_t... I>
KBS_INLINE void metal_call(void (*f)(A...), const kbs_thread* t, const kbs_bind* b, std::index_sequence<I...>) {
	f(metal_arg<A>(t, b[I])...);
}

template <class F>
struct metal_sig;
template <class... A>
struct metal_sig<void (*)(A...)> {
	static constexpr int n = sizeof...(A);
	static void call(void (*f)(A...), const kbs_thread* t, const kbs_bind* b) {
		metal_call(f, t, b, std::index_sequence_for<A...>{});
	}
};

template <auto F, const kbs_bind* B>
void metal_entry(const kbs_thread* t) {
	metal_sig<decltype(F)>::call(F, t, B);
}
} // namespace kbs

#endif
