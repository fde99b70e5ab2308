//go:build amd64 && !purego

package dot

import (
	"unsafe"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// The AVX2+FMA dot products. Each assembly function below
// (dot_float_amd64.s, dot_q_amd64.s, dotk_amd64.s) has a pure-Go twin or
// equivalent named in its comment; the wrappers check the slice lengths so
// the assembly never reads out of bounds.

// dotF32AVX2 returns the dot product of n float32 values, in the order
// of F32Twin.
//
//go:noescape
func dotF32AVX2(x, y *float32, n int) float32

// dotF16AVX2 returns the dot product of n binary16 values, in the order
// of F16Twin.
//
//go:noescape
func dotF16AVX2(x, y *uint16, n int) float32

// dotBF16AVX2 returns the dot product of n bfloat16 values, in the order
// of BF16Twin.
//
//go:noescape
func dotBF16AVX2(x, y *uint16, n int) float32

// dotQ8_0Q8_0AVX2 dots nb q8_0 blocks with nb q8_0 blocks (twin:
// Q8_0Twin).
//
//go:noescape
func dotQ8_0Q8_0AVX2(x, y *byte, nb int) float32

// dotQ4_0Q8_0AVX2 dots nb q4_0 blocks with q8_0 blocks (twin:
// Q4_0Twin).
//
//go:noescape
func dotQ4_0Q8_0AVX2(x, y *byte, nb int) float32

// dotQ5_0Q8_0AVX2 dots nb q5_0 blocks with q8_0 blocks (twin:
// Q5_0Twin).
//
//go:noescape
func dotQ5_0Q8_0AVX2(x, y *byte, nb int) float32

// dotQ4_1Q8_1AVX2 dots nb q4_1 blocks with q8_1 blocks (twin:
// Q4_1Twin).
//
//go:noescape
func dotQ4_1Q8_1AVX2(x, y *byte, nb int) float32

// dotQ5_1Q8_1AVX2 dots nb q5_1 blocks with q8_1 blocks (twin:
// Q5_1Twin).
//
//go:noescape
func dotQ5_1Q8_1AVX2(x, y *byte, nb int) float32

// fma32AVX2 returns x*y+z rounded once (VFMADD231SS); the tests check
// the twins' simd.FMA32 against it.
//
//go:noescape
func fma32AVX2(x, y, z float32) float32

// F32AVX2 is dotF32AVX2 as a Func.
func F32AVX2(n int, x, y []byte) float32 {
	if n <= 0 {
		return 0
	}
	_, _ = x[4*n-1], y[4*n-1]
	return dotF32AVX2((*float32)(unsafe.Pointer(&x[0])), (*float32)(unsafe.Pointer(&y[0])), n)
}

// F16AVX2 is dotF16AVX2 as a Func.
func F16AVX2(n int, x, y []byte) float32 {
	if n <= 0 {
		return 0
	}
	_, _ = x[2*n-1], y[2*n-1]
	return dotF16AVX2((*uint16)(unsafe.Pointer(&x[0])), (*uint16)(unsafe.Pointer(&y[0])), n)
}

// BF16AVX2 is dotBF16AVX2 as a Func.
func BF16AVX2(n int, x, y []byte) float32 {
	if n <= 0 {
		return 0
	}
	_, _ = x[2*n-1], y[2*n-1]
	return dotBF16AVX2((*uint16)(unsafe.Pointer(&x[0])), (*uint16)(unsafe.Pointer(&y[0])), n)
}

// FMA32AVX2 is x*y+z by VFMADD231SS, for the tests of simd.FMA32.
func FMA32AVX2(x, y, z float32) float32 { return fma32AVX2(x, y, z) }

// Q8_0AVX2 is dotQ8_0Q8_0AVX2 as a Func (twin: Q8_0Twin).
func Q8_0AVX2(n int, x, y []byte) float32 {
	return blocks(dotQ8_0Q8_0AVX2, simd.BytesQ8_0, simd.BytesQ8_0, quant.QK, n, x, y)
}

// Q4_0AVX2 is dotQ4_0Q8_0AVX2 as a Func (twin: Q4_0Twin).
func Q4_0AVX2(n int, x, y []byte) float32 {
	return blocks(dotQ4_0Q8_0AVX2, simd.BytesQ4_0, simd.BytesQ8_0, quant.QK, n, x, y)
}

// Q5_0AVX2 is dotQ5_0Q8_0AVX2 as a Func (twin: Q5_0Twin).
func Q5_0AVX2(n int, x, y []byte) float32 {
	return blocks(dotQ5_0Q8_0AVX2, simd.BytesQ5_0, simd.BytesQ8_0, quant.QK, n, x, y)
}

// Q4_1AVX2 is dotQ4_1Q8_1AVX2 as a Func (twin: Q4_1Twin).
func Q4_1AVX2(n int, x, y []byte) float32 {
	return blocks(dotQ4_1Q8_1AVX2, simd.BytesQ4_1, simd.BytesQ8_1, quant.QK, n, x, y)
}

// Q5_1AVX2 is dotQ5_1Q8_1AVX2 as a Func (twin: Q5_1Twin).
func Q5_1AVX2(n int, x, y []byte) float32 {
	return blocks(dotQ5_1Q8_1AVX2, simd.BytesQ5_1, simd.BytesQ8_1, quant.QK, n, x, y)
}

// Q2_KAVX2 is dotQ2_KQ8_KAVX2 as a Func (twin: Q2_K).
func Q2_KAVX2(n int, x, y []byte) float32 {
	return blocks(dotQ2_KQ8_KAVX2, simd.BytesQ2_K, simd.BytesQ8_K, quant.QKK, n, x, y)
}

// Q3_KAVX2 is dotQ3_KQ8_KAVX2 as a Func (twin: Q3_K).
func Q3_KAVX2(n int, x, y []byte) float32 {
	return blocks(dotQ3_KQ8_KAVX2, simd.BytesQ3_K, simd.BytesQ8_K, quant.QKK, n, x, y)
}

// Q4_KAVX2 is dotQ4_KQ8_KAVX2 as a Func (twin: Q4_K).
func Q4_KAVX2(n int, x, y []byte) float32 {
	return blocks(dotQ4_KQ8_KAVX2, simd.BytesQ4_K, simd.BytesQ8_K, quant.QKK, n, x, y)
}

// Q5_KAVX2 is dotQ5_KQ8_KAVX2 as a Func (twin: Q5_K).
func Q5_KAVX2(n int, x, y []byte) float32 {
	return blocks(dotQ5_KQ8_KAVX2, simd.BytesQ5_K, simd.BytesQ8_K, quant.QKK, n, x, y)
}

// Q6_KAVX2 is dotQ6_KQ8_KAVX2 as a Func (twin: Q6_K).
func Q6_KAVX2(n int, x, y []byte) float32 {
	return blocks(dotQ6_KQ8_KAVX2, simd.BytesQ6_K, simd.BytesQ8_K, quant.QKK, n, x, y)
}

// blocks runs an assembly dot product over the whole blocks of n
// elements (xs and ys bytes per block of bs elements).
func blocks(f func(x, y *byte, nb int) float32, xs, ys, bs int, n int, x, y []byte) float32 {
	nb := n / bs
	if nb <= 0 {
		return 0
	}
	_, _ = x[nb*xs-1], y[nb*ys-1]
	return f(&x[0], &y[0], nb)
}
