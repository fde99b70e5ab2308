package cpu

import (
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// Go twins of the AVX2 row kernels in vec_amd64.s (see twin.go): each
// performs the same float operations in the same order, lane by lane,
// over the whole slice, including the tail the wrappers finish in Go.

// expSumTwin is the twin of expSumVecAVX2: exps by expTwin, summed in two
// four-lane float64 accumulators over runs of 8, reduced as
// ((a0+a2)+(a1+a3)) where a = lanes 0-3 + lanes 4-7, and then the tail
// added in order.
func expSumTwin(z []float32, mx float32) float64 {
	var acc [8]float64
	n8 := len(z) &^ 7
	for i := 0; i < n8; i += 8 {
		for l := range 8 {
			e := expTwin(z[i+l] - mx)
			z[i+l] = e
			acc[l] += float64(e)
		}
	}
	sum := hsum8f64(&acc)
	for i := n8; i < len(z); i++ {
		e := expTwin(z[i] - mx)
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

// smPrepTwin is the twin of smPrepVecAVX2.
func smPrepTwin(out, x, m []float32, scale, slope float32) float32 {
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

// sumSqTwin is the twin of sumSqVecAVX2.
func sumSqTwin(x []float32) float64 {
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

// mulToTwin is the twin of mulToVecAVX2.
func mulToTwin(out, x []float32, s float32) {
	x = x[:len(out)]
	for i, v := range x {
		out[i] = float32(v * s)
	}
}

// axpyTwin is the twin of axpyVecAVX2.
func axpyTwin(acc, x []float32, s float32) {
	x = x[:len(acc)]
	for i, v := range x {
		acc[i] = simd.FMA32(v, s, acc[i])
	}
}

// axpyF16Twin is the twin of axpyF16VecAVX2.
func axpyF16Twin(acc []float32, x []uint16, s float32) {
	x = x[:len(acc)]
	for i, h := range x {
		acc[i] = simd.FMA32(simd.HalfTable[h], s, acc[i])
	}
}

// axpy4Twin is the twin of axpy4VecAVX2: four axpyTwin passes.
func axpy4Twin(acc, x0, x1, x2, x3 []float32, s0, s1, s2, s3 float32) {
	axpyTwin(acc, x0, s0)
	axpyTwin(acc, x1, s1)
	axpyTwin(acc, x2, s2)
	axpyTwin(acc, x3, s3)
}

// axpy4F16Twin is the twin of axpy4F16VecAVX2: four axpyF16Twin passes.
func axpy4F16Twin(acc []float32, x0, x1, x2, x3 []uint16, s0, s1, s2, s3 float32) {
	axpyF16Twin(acc, x0, s0)
	axpyF16Twin(acc, x1, s1)
	axpyF16Twin(acc, x2, s2)
	axpyF16Twin(acc, x3, s3)
}

// axpyQ8_0Twin is the twin of axpyQ8_0VecAVX2.
func axpyQ8_0Twin(acc []float32, x []byte, s float32) {
	for b := 0; b < len(acc)/32; b++ {
		blk := x[b*34 : b*34+34]
		d := simd.HalfAt(blk, 0)
		a := acc[b*32 : b*32+32]
		for j := range a {
			a[j] = simd.FMA32(float32(float32(int8(blk[2+j]))*d), s, a[j])
		}
	}
}

// dot2F16Twin is the twin of dot2F16VecAVX2: dot.FloatTwin (the order of
// dotF16AVX2) for each key.
func dot2F16Twin(k0, k1 []uint16, q []float32) (float32, float32) {
	n := len(q)
	k0, k1 = k0[:n], k1[:n]
	qf := func(i int) float32 { return q[i] }
	return dot.FloatTwin(n, func(i int) float32 { return simd.HalfTable[k0[i]] }, qf),
		dot.FloatTwin(n, func(i int) float32 { return simd.HalfTable[k1[i]] }, qf)
}
