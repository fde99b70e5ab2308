package cpu

import (
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// vecKernels are a tier's row kernels for the non-matmul hot ops:
// SOFT_MAX, RMS_NORM and the value accumulation and online-softmax
// rescale of FLASH_ATTN_EXT. The generic entries are the pure-Go loops the
// ops have always used (float64 exp); a SIMD tier replaces them with its
// assembly, which tests compare bit for bit with a Go twin (vec_twin.go).
type vecKernels struct {
	// smPrep sets out = x*scale, adds slope*m when m is not nil (two
	// float32 roundings, no FMA), and returns the maximum of out. A NaN
	// in out must not be hidden behind a -Inf maximum: when it returns
	// -Inf, out holds no NaN.
	smPrep func(out, x, m []float32, scale, slope float32) float32
	// expSum sets z[i] = exp(z[i]-mx) and returns the float64 sum of the
	// float32 results.
	expSum func(z []float32, mx float32) float64
	// mulTo sets out = x*s.
	mulTo func(out, x []float32, s float32)
	// sumSq returns the float64 sum of the squares of x.
	sumSq func(x []float32) float64
	// axpy sets acc += x*s; axpyF16 does so for binary16 x.
	axpy    func(acc, x []float32, s float32)
	axpyF16 func(acc []float32, x []uint16, s float32)
	// axpy4 and axpy4F16 add four scaled rows, as axpy (axpyF16) with
	// x0/s0, then x1/s1, x2/s2 and x3/s3, in one pass over acc: each
	// element sees the same operations in the same order as four calls.
	axpy4    func(acc, x0, x1, x2, x3 []float32, s0, s1, s2, s3 float32)
	axpy4F16 func(acc []float32, x0, x1, x2, x3 []uint16, s0, s1, s2, s3 float32)
	// axpyQ8_0 sets acc += x*s for the q8_0 row x (len(acc)/32 blocks),
	// each element d*q (exact in float32) as quant.DequantizeRow gives it.
	axpyQ8_0 func(acc []float32, x []byte, s float32)
	// dot2F16, when not nil, returns the dot products of the binary16
	// rows k0 and k1 with the float32 row q (len(q) elements), each equal
	// bit for bit to the tier's F16 dot kernel of k with q's binary16 form
	// when q holds widened binary16 values (FLASH_ATTN_EXT's scores, two
	// keys per call sharing the query loads).
	dot2F16 func(k0, k1 []uint16, q []float32) (float32, float32)
	// f16ToF32 widens binary16 values (SOFT_MAX's f16 mask rows).
	f16ToF32 func(dst []float32, src []uint16)
}

func smPrepGeneric(out, x, m []float32, scale, slope float32) float32 {
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

func expSumGeneric(z []float32, mx float32) float64 {
	var sum float64
	for i, v := range z {
		e := float32(math.Exp(float64(v - mx)))
		z[i] = e
		sum += float64(e)
	}
	return sum
}

func mulToGeneric(out, x []float32, s float32) {
	x = x[:len(out)]
	for i, v := range x {
		out[i] = v * s
	}
}

func sumSqGeneric(x []float32) float64 {
	var sum float64
	for _, v := range x {
		sum += float64(v) * float64(v)
	}
	return sum
}

func axpyGeneric(acc, x []float32, s float32) {
	x = x[:len(acc)]
	for i, v := range x {
		acc[i] += v * s
	}
}

func axpyF16Generic(acc []float32, x []uint16, s float32) {
	x = x[:len(acc)]
	for i, h := range x {
		acc[i] += simd.HalfTable[h] * s
	}
}

func axpy4Generic(acc, x0, x1, x2, x3 []float32, s0, s1, s2, s3 float32) {
	axpyGeneric(acc, x0, s0)
	axpyGeneric(acc, x1, s1)
	axpyGeneric(acc, x2, s2)
	axpyGeneric(acc, x3, s3)
}

func axpy4F16Generic(acc []float32, x0, x1, x2, x3 []uint16, s0, s1, s2, s3 float32) {
	axpyF16Generic(acc, x0, s0)
	axpyF16Generic(acc, x1, s1)
	axpyF16Generic(acc, x2, s2)
	axpyF16Generic(acc, x3, s3)
}

func axpyQ8_0Generic(acc []float32, x []byte, s float32) {
	for b := 0; b < len(acc)/32; b++ {
		blk := x[b*34 : b*34+34]
		d := simd.HalfAt(blk, 0)
		a := acc[b*32 : b*32+32]
		for j := range a {
			a[j] += float32(int8(blk[2+j])) * d * s
		}
	}
}

// Constants of the float32 exp of the SIMD tiers (expTwin): Cephes'
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

// expTwin is one lane of the SIMD exp (EXP8 in vec_amd64.s): x clamped to
// [-88, 88] (NaN passes), n = round-to-even(x*log2e), r = x - n*ln2 by two
// FMAs, e^r = 1 + r + r²p(r), times 2^n built in the exponent field. At
// x <= -88 (n = -127) the scale is +0, so the result is 0: inputs below
// ln(2^-126) ≈ -87.34 give 0 or a denormal instead of exp's denormal, an
// absolute error under 2^-126. Inputs above 88 are clamped: the softmax
// kernels only take x - max <= 0. TestExpAccuracy measures the relative
// error against math.Exp.
func expTwin(x float32) float32 {
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

func f16ToF32Generic(dst []float32, src []uint16) {
	src = src[:len(dst)]
	for i, h := range src {
		dst[i] = simd.HalfTable[h]
	}
}
