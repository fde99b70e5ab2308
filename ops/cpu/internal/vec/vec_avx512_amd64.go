//go:build amd64 && !purego

package vec

import (
	"unsafe"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
)

// AVX-512 row kernels (vec_avx512_amd64.s), each bit for bit the twin of
// its AVX2 kernel. The lane-wise ones take the whole row (masked tails);
// the reductions take whole runs of 8 and leave the tail to the wrapper,
// as the AVX2 ones do. They need AVX-512 F.

//go:noescape
func expSumAVX512(z *float32, n int, mx float32) float64

//go:noescape
func smPrepAVX512(out, x, m *float32, n int, scale, slope float32) float32

//go:noescape
func sumSqAVX512(x *float32, n int) float64

//go:noescape
func mulToAVX512(out, x *float32, n int, s float32)

//go:noescape
func axpyAVX512(acc, x *float32, n int, s float32)

//go:noescape
func axpyF16AVX512(acc *float32, x *uint16, n int, s float32)

//go:noescape
func axpy4AVX512(acc, x0, x1, x2, x3 *float32, n int, s0, s1, s2, s3 float32)

//go:noescape
func axpy4F16AVX512(acc *float32, x0, x1, x2, x3 *uint16, n int, s0, s1, s2, s3 float32)

// ExpSumAVX512 is expSum with the float32 exp of ExpTwin, 16 exps per
// step (twin: ExpSumTwin).
func ExpSumAVX512(z []float32, mx float32) float64 { return expSumRuns(expSumAVX512, z, mx) }

// SMPrepAVX512 is smPrep (twin: SMPrepTwin).
func SMPrepAVX512(out, x, m []float32, scale, slope float32) float32 {
	return smPrepRuns(smPrepAVX512, out, x, m, scale, slope)
}

// SumSqAVX512 is sumSq (twin: SumSqTwin).
func SumSqAVX512(x []float32) float64 { return sumSqRuns(sumSqAVX512, x) }

// streamMax is the longest row the streaming kernels (mulTo, axpy,
// axpy4, f16ToF32) take in zmm registers; longer rows go to the AVX2
// kernels, which gave the same results 2-5% faster on L2-resident rows of
// 14336 (BenchmarkVecAVX512), the zmm ones being faster in L1.
const streamMax = 8192

// MulToAVX512 is mulTo (twin: MulToTwin).
func MulToAVX512(out, x []float32, s float32) {
	if len(out) > streamMax {
		MulToAVX2(out, x, s)
		return
	}
	if n := len(out); n > 0 {
		x = x[:n]
		mulToAVX512(&out[0], &x[0], n, s)
	}
}

// AxpyAVX512 is axpy (twin: AxpyTwin).
func AxpyAVX512(acc, x []float32, s float32) {
	if len(acc) > streamMax {
		AxpyAVX2(acc, x, s)
		return
	}
	if n := len(acc); n > 0 {
		x = x[:n]
		axpyAVX512(&acc[0], &x[0], n, s)
	}
}

// AxpyF16AVX512 is axpyF16 (twin: AxpyF16Twin).
func AxpyF16AVX512(acc []float32, x []uint16, s float32) {
	if n := len(acc); n > 0 {
		x = x[:n]
		axpyF16AVX512(&acc[0], &x[0], n, s)
	}
}

// Axpy4AVX512 is axpy4 (twin: Axpy4Twin).
func Axpy4AVX512(acc, x0, x1, x2, x3 []float32, s0, s1, s2, s3 float32) {
	if len(acc) > streamMax {
		Axpy4AVX2(acc, x0, x1, x2, x3, s0, s1, s2, s3)
		return
	}
	if n := len(acc); n > 0 {
		x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
		axpy4AVX512(&acc[0], &x0[0], &x1[0], &x2[0], &x3[0], n, s0, s1, s2, s3)
	}
}

// Axpy4F16AVX512 is axpy4F16 (twin: Axpy4F16Twin).
func Axpy4F16AVX512(acc []float32, x0, x1, x2, x3 []uint16, s0, s1, s2, s3 float32) {
	if n := len(acc); n > 0 {
		x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
		axpy4F16AVX512(&acc[0], &x0[0], &x1[0], &x2[0], &x3[0], n, s0, s1, s2, s3)
	}
}

// F16ToF32AVX512 is f16ToF32 with dot.WidenF16AVX512 (twin: F16ToF32;
// bit for bit F16ToF32AVX2, NaN payloads included).
func F16ToF32AVX512(dst []float32, src []uint16) {
	if len(dst) > streamMax {
		F16ToF32AVX2(dst, src)
		return
	}
	if n := len(dst); n > 0 {
		src = src[:n]
		dot.WidenF16AVX512(unsafe.Slice((*byte)(unsafe.Pointer(&src[0])), 2*n), dst)
	}
}

//go:noescape
func axpyQ8_0AVX512(acc *float32, x *byte, nb int, s float32)

//go:noescape
func dot2F16AVX512(k0, k1 *uint16, q *float32, n int) (s0, s1 float32)

// AxpyQ8_0AVX512 is axpyQ8_0 (twin: AxpyQ8_0Twin).
func AxpyQ8_0AVX512(acc []float32, x []byte, s float32) {
	nb := len(acc) / 32
	if nb > 0 {
		_ = x[34*nb-1]
		axpyQ8_0AVX512(&acc[0], &x[0], nb, s)
	}
}

// Dot2F16AVX512 is dot2F16 (twin: Dot2F16Twin), summed in
// Dot2F16AVX2's order; the scalar tail is added as there.
func Dot2F16AVX512(k0, k1 []uint16, q []float32) (float32, float32) {
	return dot2F16Runs(dot2F16AVX512, k0, k1, q)
}
