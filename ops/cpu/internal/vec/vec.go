// Package vec holds the row kernels of the non-matmul hot ops: SOFT_MAX's
// and RMS_NORM's (SMPrep, ExpSum, MulTo, SumSq), FLASH_ATTN_EXT's value
// accumulation (Axpy*, Dot2F16, F16ToF32) and the elementwise ops' (Add,
// Mul, SiLU, GELU, SwiGLU), in pure Go (the generic tier: float64 exp and
// tanh) and in AVX2 assembly (vec_amd64.s, elementwise_amd64.s, with the
// float32 exp of exp_amd64.h) with their pure-Go twins (twin.go, ExpTwin),
// and for the avx512 tier in zmm registers (vec_avx512_amd64.s,
// elementwise_avx512_amd64.s, exp_avx512_amd64.h), bit for bit the same
// twins. The backend's tier tables (package cpu) install them.
package vec

import (
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

func SMPrep(out, x, m []float32, scale, slope float32) float32 {
	x = x[:len(out)]
	for i, v := range x {
		out[i] = v * scale
	}
	if m != nil {
		m = m[:len(out)]
		for i, v := range m {
			out[i] += slope * v
		}
	}
	mx := float32(math.Inf(-1))
	for _, v := range out {
		mx = max(mx, v)
	}
	return mx
}

func ExpSum(z []float32, mx float32) float64 {
	var sum float64
	for i, v := range z {
		e := float32(math.Exp(float64(v - mx)))
		z[i] = e
		sum += float64(e)
	}
	return sum
}

func MulTo(out, x []float32, s float32) {
	x = x[:len(out)]
	for i, v := range x {
		out[i] = v * s
	}
}

// HasNaN reports whether x holds a NaN (any payload, either sign).
func HasNaN(x []float32) bool {
	for _, v := range x {
		if v != v {
			return true
		}
	}
	return false
}

func SumSq(x []float32) float64 {
	var sum float64
	for _, v := range x {
		sum += float64(v) * float64(v)
	}
	return sum
}

func Axpy(acc, x []float32, s float32) {
	x = x[:len(acc)]
	for i, v := range x {
		acc[i] += v * s
	}
}

func AxpyF16(acc []float32, x []uint16, s float32) {
	x = x[:len(acc)]
	for i, h := range x {
		acc[i] += simd.HalfTable[h] * s
	}
}

func Axpy4(acc, x0, x1, x2, x3 []float32, s0, s1, s2, s3 float32) {
	Axpy(acc, x0, s0)
	Axpy(acc, x1, s1)
	Axpy(acc, x2, s2)
	Axpy(acc, x3, s3)
}

func Axpy4F16(acc []float32, x0, x1, x2, x3 []uint16, s0, s1, s2, s3 float32) {
	AxpyF16(acc, x0, s0)
	AxpyF16(acc, x1, s1)
	AxpyF16(acc, x2, s2)
	AxpyF16(acc, x3, s3)
}

func AxpyQ8_0(acc []float32, x []byte, s float32) {
	for b := 0; b < len(acc)/32; b++ {
		blk := x[b*34 : b*34+34]
		d := simd.HalfAt(blk, 0)
		a := acc[b*32 : b*32+32]
		for j := range a {
			a[j] += float32(int8(blk[2+j])) * d * s
		}
	}
}

// Constants of the float32 exp of the SIMD tiers (ExpTwin): Cephes'
// range reduction (ln 2 split as c1 + c2, c1 with few significant bits so
// that n*c1 is exact) and its degree-5 polynomial for (e^r - 1 - r)/r^2 on
// [-ln2/2, ln2/2].
const (
	expLo    = -88.0
	expHi    = 88.0
	expLog2e = 1.44269504088896341
	expC1    = 0.693359375
	expC2    = -2.12194440e-4
	expP0    = 1.9875691500e-4
	expP1    = 1.3981999507e-3
	expP2    = 8.3334519073e-3
	expP3    = 4.1665795894e-2
	expP4    = 1.6666665459e-1
	expP5    = 5.0000001201e-1
)

// ExpTwin is one lane of the SIMD exp (EXP8 in vec_amd64.s): x clamped to
// [-88, 88] (NaN passes), n = round-to-even(x*log2e), r = x - n*ln2 by two
// FMAs, e^r = 1 + r + r²p(r), times 2^n built in the exponent field. At
// x <= -88 (n = -127) the scale is +0, so the result is 0: inputs below
// ln(2^-126) ≈ -87.34 give 0 or a denormal instead of exp's denormal, an
// absolute error under 2^-126. Inputs above 88 are clamped: the softmax
// kernels only take x - max <= 0. TestExpAccuracy measures the relative
// error against math.Exp.
func ExpTwin(x float32) float32 {
	if x != x {
		return x
	}
	x = min(max(x, expLo), expHi)
	n := float32(math.RoundToEven(float64(float32(x * expLog2e))))
	r := simd.FMA32(n, -expC1, x)
	r = simd.FMA32(n, -expC2, r)
	p := simd.FMA32(expP0, r, expP1)
	p = simd.FMA32(p, r, expP2)
	p = simd.FMA32(p, r, expP3)
	p = simd.FMA32(p, r, expP4)
	p = simd.FMA32(p, r, expP5)
	z := float32(r * r)
	y := simd.FMA32(p, z, r)
	y = float32(y + 1)
	return float32(y * math.Float32frombits(uint32(int32(n)+127)<<23))
}

func F16ToF32(dst []float32, src []uint16) {
	src = src[:len(dst)]
	for i, h := range src {
		dst[i] = simd.HalfTable[h]
	}
}

// Add sets out = x + y.
func Add(out, x, y []float32) {
	x, y = x[:len(out)], y[:len(out)]
	for i, v := range x {
		out[i] = v + y[i]
	}
}

// Mul sets out = x * y.
func Mul(out, x, y []float32) {
	x, y = x[:len(out)], y[:len(out)]
	for i, v := range x {
		out[i] = v * y[i]
	}
}

// SwiGLU sets out = Silu(g) * v.
func SwiGLU(out, g, v []float32) {
	g, v = g[:len(out)], v[:len(out)]
	for i, x := range g {
		out[i] = Silu(x) * v[i]
	}
}

// Silu returns x*sigmoid(x) = x/(1+exp(-x)) in float32, as ggml does.
func Silu(x float32) float32 {
	return x / (1 + float32(math.Exp(float64(-x))))
}

// SiLU sets out = Silu(x).
func SiLU(out, x []float32) {
	x = x[:len(out)]
	for i, v := range x {
		out[i] = Silu(v)
	}
}

// GELU's tanh approximation constants.
const (
	geluCoefA    = 0.044715
	sqrt2OverPi  = 0.79788456080286535587989211986876
	geluTanhArgs = float32(sqrt2OverPi)
)

// Gelu returns the tanh approximation of GELU,
// 0.5*x*(1 + tanh(sqrt(2/pi)*x*(1 + 0.044715*x²))), computed in float32
// with a float64 tanh. ggml's CPU kernel reads a table indexed by x rounded
// to f16 instead (and returns 0 below -10 and x above 10), so its results
// carry f16 rounding that ours do not.
func Gelu(x float32) float32 {
	u := geluTanhArgs * x * (1 + geluCoefA*x*x)
	return 0.5 * x * (1 + float32(math.Tanh(float64(u))))
}

// GELU sets out = Gelu(x).
func GELU(out, x []float32) {
	x = x[:len(out)]
	for i, v := range x {
		out[i] = Gelu(v)
	}
}
