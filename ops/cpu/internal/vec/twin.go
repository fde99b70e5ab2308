package vec

import (
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// Go twins of the AVX2 row kernels in vec_amd64.s (see twin.go): each
// performs the same float operations in the same order, lane by lane,
// over the whole slice, including the tail the wrappers finish in Go.

// ExpSumTwin is the twin of ExpSumAVX2: exps by ExpTwin, summed in two
// four-lane float64 accumulators over runs of 8, reduced as
// ((a0+a2)+(a1+a3)) where a = lanes 0-3 + lanes 4-7, and then the tail
// added in order.
func ExpSumTwin(z []float32, mx float32) float64 {
	var acc [8]float64
	n8 := len(z) &^ 7
	for i := 0; i < n8; i += 8 {
		for l := range 8 {
			e := ExpTwin(z[i+l] - mx)
			z[i+l] = e
			acc[l] += float64(e)
		}
	}
	sum := hsum8f64(&acc)
	for i := n8; i < len(z); i++ {
		e := ExpTwin(z[i] - mx)
		z[i] = e
		sum += float64(e)
	}
	return sum
}

// hsum8f64 reduces two four-lane float64 accumulators (lanes 0-3 and 4-7
// of acc) as the assembly does.
func hsum8f64(acc *[8]float64) float64 {
	var s [4]float64
	for l := range 4 {
		s[l] = acc[l] + acc[l+4]
	}
	return (s[0] + s[2]) + (s[1] + s[3])
}

// vmaxps is one lane of VMAXPS with a as the first source and b the
// second: b unless a > b (so b when either is NaN).
func vmaxps(a, b float32) float32 {
	if a > b {
		return a
	}
	return b
}

// SMPrepTwin is the twin of SMPrepAVX2.
func SMPrepTwin(out, x, m []float32, scale, slope float32) float32 {
	x = x[:len(out)]
	if m != nil {
		m = m[:len(out)]
	}
	var acc [8]float32
	for l := range acc {
		acc[l] = float32(math.Inf(-1))
	}
	n8 := len(out) &^ 7
	for i := range out {
		v := float32(x[i] * scale)
		if m != nil {
			v = float32(v + float32(slope*m[i]))
		}
		out[i] = v
		if i < n8 {
			acc[i%8] = vmaxps(acc[i%8], v)
		}
	}
	var h [4]float32
	for l := range 4 {
		h[l] = vmaxps(acc[l], acc[l+4])
	}
	h0, h1 := vmaxps(h[0], h[2]), vmaxps(h[1], h[3])
	mx := vmaxps(h0, h1)
	return smPrepFinish(out, n8, mx)
}

// smPrepFinish folds out[n8:] into the vector maximum mx of out[:n8]
// and, when the result is -Inf, returns a NaN of out instead if there is
// one (VMAXPS keeps a NaN only until a later value replaces it, and a
// -Inf maximum would clear the row).
func smPrepFinish(out []float32, n8 int, mx float32) float32 {
	for _, v := range out[n8:] {
		mx = max(mx, v)
	}
	if math.IsInf(float64(mx), -1) {
		for _, v := range out {
			if v != v {
				return v
			}
		}
	}
	return mx
}

// SumSqTwin is the twin of SumSqAVX2.
func SumSqTwin(x []float32) float64 {
	var acc [8]float64
	n8 := len(x) &^ 7
	for i := 0; i < n8; i += 8 {
		for l := range 8 {
			v := float64(x[i+l])
			acc[l] = math.FMA(v, v, acc[l])
		}
	}
	sum := hsum8f64(&acc)
	for _, v := range x[n8:] {
		sum = math.FMA(float64(v), float64(v), sum)
	}
	return sum
}

// MulToTwin is the twin of MulToAVX2.
func MulToTwin(out, x []float32, s float32) {
	x = x[:len(out)]
	for i, v := range x {
		out[i] = float32(v * s)
	}
}

// AxpyTwin is the twin of AxpyAVX2.
func AxpyTwin(acc, x []float32, s float32) {
	x = x[:len(acc)]
	for i, v := range x {
		acc[i] = simd.FMA32(v, s, acc[i])
	}
}

// AxpyF16Twin is the twin of AxpyF16AVX2.
func AxpyF16Twin(acc []float32, x []uint16, s float32) {
	x = x[:len(acc)]
	for i, h := range x {
		acc[i] = simd.FMA32(simd.HalfTable[h], s, acc[i])
	}
}

// Axpy4Twin is the twin of Axpy4AVX2: four AxpyTwin passes.
func Axpy4Twin(acc, x0, x1, x2, x3 []float32, s0, s1, s2, s3 float32) {
	AxpyTwin(acc, x0, s0)
	AxpyTwin(acc, x1, s1)
	AxpyTwin(acc, x2, s2)
	AxpyTwin(acc, x3, s3)
}

// Axpy4F16Twin is the twin of Axpy4F16AVX2: four AxpyF16Twin passes.
func Axpy4F16Twin(acc []float32, x0, x1, x2, x3 []uint16, s0, s1, s2, s3 float32) {
	AxpyF16Twin(acc, x0, s0)
	AxpyF16Twin(acc, x1, s1)
	AxpyF16Twin(acc, x2, s2)
	AxpyF16Twin(acc, x3, s3)
}

// AxpyQ8_0Twin is the twin of AxpyQ8_0AVX2.
func AxpyQ8_0Twin(acc []float32, x []byte, s float32) {
	for b := 0; b < len(acc)/32; b++ {
		blk := x[b*34 : b*34+34]
		d := simd.HalfAt(blk, 0)
		a := acc[b*32 : b*32+32]
		for j := range a {
			a[j] = simd.FMA32(float32(float32(int8(blk[2+j]))*d), s, a[j])
		}
	}
}

// Dot2F16Twin is the twin of Dot2F16AVX2: dot.FloatTwin (the order of
// dotF16AVX2) for each key.
func Dot2F16Twin(k0, k1 []uint16, q []float32) (float32, float32) {
	n := len(q)
	k0, k1 = k0[:n], k1[:n]
	qf := func(i int) float32 { return q[i] }
	return dot.FloatTwin(n, func(i int) float32 { return simd.HalfTable[k0[i]] }, qf),
		dot.FloatTwin(n, func(i int) float32 { return simd.HalfTable[k1[i]] }, qf)
}

// GELU through the sigmoid: 0.5*x*(1 + tanh(u)) = x / (1 + exp(-2u)),
// u = sqrt(2/pi)*x*(1 + 0.044715*x²), with these float32 constants.
const (
	geluSigA = float32(geluCoefA)
	geluSigK = float32(-2 * sqrt2OverPi)
)

// SiLUTwin is the AVX2 SILU kernel's twin: x / (1 + exp(0 - x)) with
// ExpTwin's float32 exp.
func SiLUTwin(out, x []float32) {
	x = x[:len(out)]
	for i, v := range x {
		out[i] = v / (1 + ExpTwin(0-v))
	}
}

// SwiGLUTwin is the AVX2 SWIGLU kernel's twin: SiLUTwin(g) * v.
func SwiGLUTwin(out, g, v []float32) {
	g, v = g[:len(out)], v[:len(out)]
	for i, x := range g {
		s := x / (1 + ExpTwin(0-x))
		out[i] = s * v[i]
	}
}

// GELUTwin is the AVX2 GELU kernel's twin: x / (1 + exp(x*(x*x*A + 1)*K))
// with the multiply-add fused. Unlike Gelu, it gives -Inf for -Inf (the
// clamped exp keeps the denominator finite).
func GELUTwin(out, x []float32) {
	x = x[:len(out)]
	for i, v := range x {
		w := simd.FMA32(v*v, geluSigA, 1)
		z := float32(w*v) * geluSigK
		out[i] = v / (1 + ExpTwin(z))
	}
}

// SwiGLUOAITwin is the AVX2 SWIGLU_OAI kernel's twin: x = min(g, limit),
// y = max(min(v, limit), -limit) with NaN passing through (as VMINPS and
// VMAXPS with the value second), then x / (1 + ExpTwin(-alpha*x)) *
// (y + 1).
func SwiGLUOAITwin(out, g, v []float32, alpha, limit float32) {
	g, v = g[:len(out)], v[:len(out)]
	for i, x := range g {
		if limit < x {
			x = limit
		}
		y := v[i]
		if limit < y {
			y = limit
		}
		if -limit > y {
			y = -limit
		}
		out[i] = x / (1 + ExpTwin((0-alpha)*x)) * (y + 1)
	}
}
