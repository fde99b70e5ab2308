package dot

import (
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// Dot products of float weight rows with activations of the same type.
// All three accumulate in float64, as ggml's generic C versions do
// (ggml_float), in four interleaved partial sums to shorten the dependency
// chain. Each product of two f16 or bf16 values is exact in float32, so
// for those only the final rounding to float32 loses precision.

// F32 returns the dot product of n float32 values of x and y.
func F32(n int, x, y []byte) float32 {
	xs, ys := simd.F32s(x, 0, int64(n)), simd.F32s(y, 0, int64(n))
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= n; i += 4 {
		xb, yb := xs[i:i+4:i+4], ys[i:i+4:i+4]
		s0 += float64(xb[0] * yb[0])
		s1 += float64(xb[1] * yb[1])
		s2 += float64(xb[2] * yb[2])
		s3 += float64(xb[3] * yb[3])
	}
	for ; i < n; i++ {
		s0 += float64(xs[i] * ys[i])
	}
	return float32((s0 + s1) + (s2 + s3))
}

// F16 returns the dot product of n binary16 values of x and y.
func F16(n int, x, y []byte) float32 {
	xs, ys := simd.U16s(x, 0, int64(n)), simd.U16s(y, 0, int64(n))
	tab := simd.HalfTable
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= n; i += 4 {
		xb, yb := xs[i:i+4:i+4], ys[i:i+4:i+4]
		s0 += float64(tab[xb[0]] * tab[yb[0]])
		s1 += float64(tab[xb[1]] * tab[yb[1]])
		s2 += float64(tab[xb[2]] * tab[yb[2]])
		s3 += float64(tab[xb[3]] * tab[yb[3]])
	}
	for ; i < n; i++ {
		s0 += float64(tab[xs[i]] * tab[ys[i]])
	}
	return float32((s0 + s1) + (s2 + s3))
}

// widenBF16 widens bfloat16 bits to float32.
func widenBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// BF16 returns the dot product of n bfloat16 values of x and y.
func BF16(n int, x, y []byte) float32 {
	xs, ys := simd.U16s(x, 0, int64(n)), simd.U16s(y, 0, int64(n))
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= n; i += 4 {
		xb, yb := xs[i:i+4:i+4], ys[i:i+4:i+4]
		s0 += float64(widenBF16(xb[0]) * widenBF16(yb[0]))
		s1 += float64(widenBF16(xb[1]) * widenBF16(yb[1]))
		s2 += float64(widenBF16(xb[2]) * widenBF16(yb[2]))
		s3 += float64(widenBF16(xb[3]) * widenBF16(yb[3]))
	}
	for ; i < n; i++ {
		s0 += float64(widenBF16(xs[i]) * widenBF16(ys[i]))
	}
	return float32((s0 + s1) + (s2 + s3))
}
