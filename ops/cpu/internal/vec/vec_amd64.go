//go:build amd64 && !purego

package vec

import (
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// AVX2+FMA row kernels (vec_amd64.s); each Go wrapper hands the assembly
// whole runs of 8 elements and finishes the tail as the twin does, so the
// wrapper equals its twin in twin.go bit for bit.

//go:noescape
func expSumAVX2(z *float32, n int, mx float32) float64

//go:noescape
func smPrepAVX2(out, x, m *float32, n int, scale, slope float32) float32

//go:noescape
func mulToAVX2(out, x *float32, n int, s float32)

//go:noescape
func sumSqAVX2(x *float32, n int) float64

//go:noescape
func hasNaNAVX2(x *float32, n int) bool

//go:noescape
func axpyAVX2(acc, x *float32, n int, s float32)

//go:noescape
func axpyF16AVX2(acc *float32, x *uint16, n int, s float32)

//go:noescape
func axpy4AVX2(acc, x0, x1, x2, x3 *float32, n int, s0, s1, s2, s3 float32)

//go:noescape
func axpy4F16AVX2(acc *float32, x0, x1, x2, x3 *uint16, n int, s0, s1, s2, s3 float32)

//go:noescape
func axpyQ8_0AVX2(acc *float32, x *byte, nb int, s float32)

//go:noescape
func dot2F16AVX2(k0, k1 *uint16, q *float32, n int) (s0, s1 float32)

//go:noescape
func f16ToF32AVX2(dst *float32, src *uint16, n int)

// ExpSumAVX2 is expSum with the float32 exp of ExpTwin (twin:
// ExpSumTwin).
func ExpSumAVX2(z []float32, mx float32) float64 { return expSumRuns(expSumAVX2, z, mx) }

// expSumRuns is expSum with kernel (a tier's assembly) on the whole runs
// of 8 of z and ExpTwin's steps on the rest, the tail the twin sums last.
func expSumRuns(kernel func(z *float32, n int, mx float32) float64, z []float32, mx float32) float64 {
	n8 := len(z) &^ 7
	var sum float64
	if n8 > 0 {
		sum = kernel(&z[0], n8, mx)
	}
	for i := n8; i < len(z); i++ {
		e := ExpTwin(z[i] - mx)
		z[i] = e
		sum += float64(e)
	}
	return sum
}

// SMPrepAVX2 is smPrep (twin: SMPrepTwin).
func SMPrepAVX2(out, x, m []float32, scale, slope float32) float32 {
	return smPrepRuns(smPrepAVX2, out, x, m, scale, slope)
}

// smPrepRuns is smPrep with kernel (a tier's assembly) on the whole runs
// of 8 and the twin's steps on the rest.
func smPrepRuns(kernel func(out, x, m *float32, n int, scale, slope float32) float32, out, x, m []float32, scale, slope float32) float32 {
	x = x[:len(out)]
	var mp *float32
	if m != nil {
		m = m[:len(out)]
	}
	n8 := len(out) &^ 7
	mx := float32(math.Inf(-1))
	if n8 > 0 {
		if m != nil {
			mp = &m[0]
		}
		mx = kernel(&out[0], &x[0], mp, n8, scale, slope)
	}
	for i := n8; i < len(out); i++ {
		v := float32(x[i] * scale)
		if m != nil {
			v = float32(v + float32(slope*m[i]))
		}
		out[i] = v
	}
	return smPrepFinish(out, n8, mx)
}

// MulToAVX2 is mulTo (twin: MulToTwin).
func MulToAVX2(out, x []float32, s float32) {
	x = x[:len(out)]
	n8 := len(out) &^ 7
	if n8 > 0 {
		mulToAVX2(&out[0], &x[0], n8, s)
	}
	for i := n8; i < len(out); i++ {
		out[i] = float32(x[i] * s)
	}
}

// HasNaNAVX2 is HasNaN: runs of 64 by VCMPPS (unordered: a lane is set
// where either operand is a NaN, so one compare checks two vectors), the
// rest in Go. Scanning each activation row for a NaN before it is
// quantized (markNaNBlocks) took 1.2 µs per 4096 floats in Go, 4% of
// MoE prefill.
func HasNaNAVX2(x []float32) bool {
	n64 := len(x) &^ 63
	if n64 > 0 && hasNaNAVX2(&x[0], n64) {
		return true
	}
	return HasNaN(x[n64:])
}

// SumSqAVX2 is sumSq (twin: SumSqTwin).
func SumSqAVX2(x []float32) float64 { return sumSqRuns(sumSqAVX2, x) }

// sumSqRuns is sumSq with kernel (a tier's assembly) on the whole runs of
// 8 and the twin's FMAs on the rest.
func sumSqRuns(kernel func(x *float32, n int) float64, x []float32) float64 {
	n8 := len(x) &^ 7
	var sum float64
	if n8 > 0 {
		sum = kernel(&x[0], n8)
	}
	for _, v := range x[n8:] {
		sum = math.FMA(float64(v), float64(v), sum)
	}
	return sum
}

// AxpyAVX2 is axpy (twin: AxpyTwin).
func AxpyAVX2(acc, x []float32, s float32) {
	x = x[:len(acc)]
	n8 := len(acc) &^ 7
	if n8 > 0 {
		axpyAVX2(&acc[0], &x[0], n8, s)
	}
	for i := n8; i < len(acc); i++ {
		acc[i] = simd.FMA32(x[i], s, acc[i])
	}
}

// AxpyF16AVX2 is axpyF16 (twin: AxpyF16Twin).
func AxpyF16AVX2(acc []float32, x []uint16, s float32) {
	x = x[:len(acc)]
	n8 := len(acc) &^ 7
	if n8 > 0 {
		axpyF16AVX2(&acc[0], &x[0], n8, s)
	}
	for i := n8; i < len(acc); i++ {
		acc[i] = simd.FMA32(simd.HalfTable[x[i]], s, acc[i])
	}
}

// Axpy4AVX2 is axpy4 (twin: Axpy4Twin).
func Axpy4AVX2(acc, x0, x1, x2, x3 []float32, s0, s1, s2, s3 float32) {
	n := len(acc)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	n8 := n &^ 7
	if n8 > 0 {
		axpy4AVX2(&acc[0], &x0[0], &x1[0], &x2[0], &x3[0], n8, s0, s1, s2, s3)
	}
	for i := n8; i < n; i++ {
		a := simd.FMA32(x0[i], s0, acc[i])
		a = simd.FMA32(x1[i], s1, a)
		a = simd.FMA32(x2[i], s2, a)
		acc[i] = simd.FMA32(x3[i], s3, a)
	}
}

// Axpy4F16AVX2 is axpy4F16 (twin: Axpy4F16Twin).
func Axpy4F16AVX2(acc []float32, x0, x1, x2, x3 []uint16, s0, s1, s2, s3 float32) {
	n := len(acc)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	n8 := n &^ 7
	if n8 > 0 {
		axpy4F16AVX2(&acc[0], &x0[0], &x1[0], &x2[0], &x3[0], n8, s0, s1, s2, s3)
	}
	for i := n8; i < n; i++ {
		a := simd.FMA32(simd.HalfTable[x0[i]], s0, acc[i])
		a = simd.FMA32(simd.HalfTable[x1[i]], s1, a)
		a = simd.FMA32(simd.HalfTable[x2[i]], s2, a)
		acc[i] = simd.FMA32(simd.HalfTable[x3[i]], s3, a)
	}
}

// AxpyQ8_0AVX2 is axpyQ8_0 (twin: AxpyQ8_0Twin).
func AxpyQ8_0AVX2(acc []float32, x []byte, s float32) {
	nb := len(acc) / 32
	if nb > 0 {
		_ = x[34*nb-1]
		axpyQ8_0AVX2(&acc[0], &x[0], nb, s)
	}
}

// Dot2F16AVX2 is dot2F16 (twin: Dot2F16Twin); the scalar tail is
// added as dotF16AVX2 adds it.
func Dot2F16AVX2(k0, k1 []uint16, q []float32) (float32, float32) {
	return dot2F16Runs(dot2F16AVX2, k0, k1, q)
}

// dot2F16Runs is dot2F16 with kernel (a tier's assembly) on the whole
// runs of 8 and the scalar tail added as the twin adds it.
func dot2F16Runs(kernel func(k0, k1 *uint16, q *float32, n int) (s0, s1 float32), k0, k1 []uint16, q []float32) (float32, float32) {
	n := len(q)
	k0, k1 = k0[:n], k1[:n]
	n8 := n &^ 7
	var h0, h1, s0, s1 float32
	if n8 > 0 {
		h0, h1 = kernel(&k0[0], &k1[0], &q[0], n8)
	}
	for i := n8; i < n; i++ {
		s0 = simd.FMA32(simd.HalfTable[k0[i]], q[i], s0)
		s1 = simd.FMA32(simd.HalfTable[k1[i]], q[i], s1)
	}
	return h0 + s0, h1 + s1
}

// F16ToF32AVX2 is f16ToF32 (twin: F16ToF32; the conversion is
// exact, NaN payloads aside).
func F16ToF32AVX2(dst []float32, src []uint16) {
	src = src[:len(dst)]
	n8 := len(dst) &^ 7
	if n8 > 0 {
		f16ToF32AVX2(&dst[0], &src[0], n8)
	}
	F16ToF32(dst[n8:], src[n8:])
}
