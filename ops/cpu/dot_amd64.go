//go:build amd64 && !purego

package cpu

import (
	"unsafe"
)

// The AVX2+FMA tier. Each assembly function below (dot_amd64.s,
// dotk_amd64.s, quant_amd64.s, gemm_amd64.s) has a pure-Go twin or
// equivalent named in its comment; the wrappers check the slice lengths so
// the assembly never reads out of bounds.

// dotF32AVX2 returns the dot product of n float32 values, in the order
// of dotF32Twin.
//
//go:noescape
func dotF32AVX2(x, y *float32, n int) float32

// dotF16AVX2 returns the dot product of n binary16 values, in the order
// of dotF16Twin.
//
//go:noescape
func dotF16AVX2(x, y *uint16, n int) float32

// dotBF16AVX2 returns the dot product of n bfloat16 values, in the order
// of dotBF16Twin.
//
//go:noescape
func dotBF16AVX2(x, y *uint16, n int) float32

// dotQ8_0Q8_0AVX2 dots nb q8_0 blocks with nb q8_0 blocks (twin:
// dotQ8_0Q8_0Twin).
//
//go:noescape
func dotQ8_0Q8_0AVX2(x, y *byte, nb int) float32

// dotQ4_0Q8_0AVX2 dots nb q4_0 blocks with q8_0 blocks (twin:
// dotQ4_0Q8_0Twin).
//
//go:noescape
func dotQ4_0Q8_0AVX2(x, y *byte, nb int) float32

// dotQ5_0Q8_0AVX2 dots nb q5_0 blocks with q8_0 blocks (twin:
// dotQ5_0Q8_0Twin).
//
//go:noescape
func dotQ5_0Q8_0AVX2(x, y *byte, nb int) float32

// dotQ4_1Q8_1AVX2 dots nb q4_1 blocks with q8_1 blocks (twin:
// dotQ4_1Q8_1Twin).
//
//go:noescape
func dotQ4_1Q8_1AVX2(x, y *byte, nb int) float32

// dotQ5_1Q8_1AVX2 dots nb q5_1 blocks with q8_1 blocks (twin:
// dotQ5_1Q8_1Twin).
//
//go:noescape
func dotQ5_1Q8_1AVX2(x, y *byte, nb int) float32

// fma32AVX2 returns x*y+z rounded once (VFMADD231SS); the tests check
// the twins' simd.FMA32 against it.
//
//go:noescape
func fma32AVX2(x, y, z float32) float32

// vecDotF32AVX2 is dotF32AVX2 as a vecDotFunc.
func vecDotF32AVX2(n int, x, y []byte) float32 {
	if n <= 0 {
		return 0
	}
	_, _ = x[4*n-1], y[4*n-1]
	return dotF32AVX2((*float32)(unsafe.Pointer(&x[0])), (*float32)(unsafe.Pointer(&y[0])), n)
}

// vecDotF16AVX2 is dotF16AVX2 as a vecDotFunc.
func vecDotF16AVX2(n int, x, y []byte) float32 {
	if n <= 0 {
		return 0
	}
	_, _ = x[2*n-1], y[2*n-1]
	return dotF16AVX2((*uint16)(unsafe.Pointer(&x[0])), (*uint16)(unsafe.Pointer(&y[0])), n)
}

// vecDotBF16AVX2 is dotBF16AVX2 as a vecDotFunc.
func vecDotBF16AVX2(n int, x, y []byte) float32 {
	if n <= 0 {
		return 0
	}
	_, _ = x[2*n-1], y[2*n-1]
	return dotBF16AVX2((*uint16)(unsafe.Pointer(&x[0])), (*uint16)(unsafe.Pointer(&y[0])), n)
}

// blockDot wraps an assembly dot product over whole blocks (xs and ys
// bytes per block of bs elements) as a vecDotFunc.
func blockDot(f func(x, y *byte, nb int) float32, xs, ys, bs int) vecDotFunc {
	return func(n int, x, y []byte) float32 {
		nb := n / bs
		if nb <= 0 {
			return 0
		}
		_, _ = x[nb*xs-1], y[nb*ys-1]
		return f(&x[0], &y[0], nb)
	}
}
