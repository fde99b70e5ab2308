// Package ssm holds the kernels of SSM_SCAN and SSM_CONV (Mamba-1 and
// Mamba-2): the Softplus of dt, the state update of one token for rows
// with a vector A (ScanA) or a scalar A (ScanS, and over several tokens
// ScanSTok), the register-tiled scaled-state scan (ScanSTile with
// ScaleTile), and the 4-wide convolution, in pure Go (the generic tier)
// and AVX2 assembly (ssm_softplus_amd64.s, ssm_scan_amd64.s,
// ssm_conv_amd64.s, ssm_tile_amd64.s) with their pure-Go twins, and
// AVX-512 F assembly bit for bit the AVX2 kernels (the *_avx512_amd64.s
// files). The backend's tier tables (package ssm) install them.
package ssm

import (
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/vec"
)

// Softplus returns ln(1+e^x), or x itself above 20, as ggml does.
func Softplus(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log1p(math.Exp(float64(x))))
}

// ExpMul sets dst[i] to e^(x[i]·a[i]): the product rounded to float32,
// its exponential taken in float64 and rounded to float32 (Mamba-2's dA,
// e^(softplus(dt)·A), for a row of heads).
func ExpMul(dst, x, a []float32) {
	x, a = x[:len(dst)], a[:len(dst)]
	for i := range dst {
		dst[i] = float32(math.Exp(float64(x[i] * a[i])))
	}
}

// SoftplusRow is ssmKernels.Softplus with Softplus.
func SoftplusRow(dst, x []float32) {
	x = x[:len(dst)]
	for i, v := range x {
		dst[i] = Softplus(v)
	}
}

// rowsCheck panics unless n rows of w elements at stride s lie within
// v, so that no kernel reads or writes outside it.
func rowsCheck(v []float32, s, n, w int) {
	if s < 0 || n > 0 && (n-1)*s+w > len(v) {
		panic("cpu: ssm rows out of range")
	}
}

// tokCheck panics unless n rows of w elements at stride s, for nTok
// tokens at stride ts, lie within v.
func tokCheck(v []float32, s, ts, n, w, nTok int) {
	if s < 0 || ts < 0 || n > 0 && nTok > 0 && (nTok-1)*ts+(n-1)*s+w > len(v) {
		panic("cpu: ssm tokens out of range")
	}
}

// ScanSTok is scanSTok with ScanS for each token.
func ScanSTok(st []float32, stS, nRows, dState int, x []float32, xS, xT int, y []float32, yS, yT int, b []float32, bT int, c []float32, cT int, ed []float32, nTok int) {
	for k := range nTok {
		ScanS(st, st, stS, stS, x[k*xT:], xS, y[k*yT:], yS, b[k*bT:], c[k*cT:], nRows, dState, ed[2*k], ed[2*k+1])
	}
}

// ScanSTokTwin is the twin of ScanSTokAVX2: ScanSTwin for
// each token.
func ScanSTokTwin(st []float32, stS, nRows, dState int, x []float32, xS, xT int, y []float32, yS, yT int, b []float32, bT int, c []float32, cT int, ed []float32, nTok int) {
	for k := range nTok {
		ScanSTwin(st, st, stS, stS, x[k*xT:], xS, y[k*yT:], yS, b[k*bT:], c[k*cT:], nRows, dState, ed[2*k], ed[2*k+1])
	}
}

// TileBuf is the scratch scanSTile takes per token: 4 rows' x·q
// (padded to 8 floats) and their 8-lane partial sums of y; buf needs 7
// floats more, for the kernel aligns it to 32 bytes.
const TileBuf = 40

// Bounds of the scale p of ScaleTile: beyond them the scaled state
// would lose range, so the state is brought back to scale 1.
const (
	scaleMin = 0x1p-40
	scaleMax = 0x1p40
)

// ScaleTile turns n tokens' (dA, dsp) pairs at ed[2k:] into the
// (g, q, p, flag) quadruples of scanSTile at ed4[4k:]. With a scalar A
// the scan can run on a scaled state s' = s/p, p the product of the dA
// since the start: s = dA·s + dsp·x·b becomes s' = s' + (dsp/p)·x·b, one
// FMA per element instead of two products and a sum, and y = p·(s'·c).
// p is kept in float64 from 1 at the call's start; where it would leave
// [2^-40, 2^40] (or is NaN) the token rescales instead: g = p·dA, flag
// set, s' = g·s' + dsp·x·b and p back to 1. q = dsp/p and p are rounded
// to float32 once, so the scaling adds two roundings per term, not one
// per token.
func ScaleTile(ed4, ed []float32, n int) {
	p := 1.0
	for k := range n {
		np := p * float64(ed[2*k])
		g, flag := float32(1), uint32(0)
		if np >= scaleMin && np <= scaleMax {
			p = np
		} else {
			g, flag, p = float32(np), 1, 1
		}
		ed4[4*k], ed4[4*k+1], ed4[4*k+2], ed4[4*k+3] = g, float32(float64(ed[2*k+1])/p), float32(p), math.Float32frombits(flag)
	}
}

// ScanSTileTwin is the twin of ScanSTileAVX2, scanSTok on a
// scaled state (token k's g, q, p and flag at ed[4k:], see
// ScaleTile): per row and token, w = x·q rounded; where flag is set
// the state is first multiplied by g; each state becomes fma(b, w, s);
// y is p times the hsum8 of 8 lanes that start at 0 and add, for each
// run of 16 states in order, fma(s[16j+8+l], c[16j+8+l],
// round(s[16j+l]·c[16j+l])) to lane l. At the end the state is multiplied
// by the last token's p. dState must be a multiple of 16. (The assembly
// holds a 4x16 tile of the state in registers over all the tokens and so
// visits the runs tile by tile; each lane still adds them in order.)
func ScanSTileTwin(st []float32, stS, nRows, dState int, x []float32, xS, xT int, y []float32, yS, yT int, b []float32, bT int, c []float32, cT int, ed []float32, nTok int) {
	if nTok <= 0 {
		return
	}
	pEnd := ed[4*(nTok-1)+2]
	for r := range nRows {
		row := st[r*stS:][:dState]
		for k := range nTok {
			g, q, p := ed[4*k], ed[4*k+1], ed[4*k+2]
			if math.Float32bits(ed[4*k+3]) != 0 {
				for i, v := range row {
					row[i] = float32(v * g)
				}
			}
			w := float32(x[k*xT+r*xS] * q)
			bk, ck := b[k*bT:][:dState], c[k*cT:][:dState]
			var acc [8]float32
			for j := 0; j+16 <= dState; j += 16 {
				for l := range 8 {
					v0 := simd.FMA32(bk[j+l], w, row[j+l])
					v1 := simd.FMA32(bk[j+8+l], w, row[j+8+l])
					row[j+l], row[j+8+l] = v0, v1
					acc[l] += simd.FMA32(v1, ck[j+8+l], float32(v0*ck[j+l]))
				}
			}
			y[k*yT+r*yS] = float32(simd.Hsum8(&acc) * p)
		}
		for i, v := range row {
			row[i] = float32(v * pEnd)
		}
	}
}

// ScanA is ssmKernels.scanA in plain Go: dA by float64 exp,
// the sum in order.
func ScanA(st, src []float32, stS, srcS int, a []float32, aS int, dsp []float32, dspS int, x []float32, xS int, y []float32, yS int, b, c []float32, nRows, dState int) {
	b, c = b[:dState], c[:dState]
	for r := range nRows {
		d := dsp[r*dspS]
		xdt := x[r*xS] * d
		row, prev, ar := st[r*stS:][:dState], src[r*srcS:][:dState], a[r*aS:][:dState]
		var sum float32
		for i := range row {
			dA := float32(math.Exp(float64(d * ar[i])))
			v := prev[i]*dA + b[i]*xdt
			sum += v * c[i]
			row[i] = v
		}
		y[r*yS] = sum
	}
}

// ScanS is ssmKernels.scanS in plain Go, the sum in order.
func ScanS(st, src []float32, stS, srcS int, x []float32, xS int, y []float32, yS int, b, c []float32, nRows, dState int, dA, dsp float32) {
	b, c = b[:dState], c[:dState]
	for r := range nRows {
		xdt := x[r*xS] * dsp
		row, prev := st[r*stS:][:dState], src[r*srcS:][:dState]
		var sum float32
		for i := range row {
			v := prev[i]*dA + b[i]*xdt
			sum += v * c[i]
			row[i] = v
		}
		y[r*yS] = sum
	}
}

// ScanATwin is the twin of ScanAAVX2: per row, dA by vec.ExpTwin,
// the update with each product rounded, and the sum of ssmRowTwin (eight
// FMA lanes over runs of 8 reduced by hsum8, then a scalar FMA chain).
func ScanATwin(st, src []float32, stS, srcS int, a []float32, aS int, dsp []float32, dspS int, x []float32, xS int, y []float32, yS int, b, c []float32, nRows, dState int) {
	for r := range nRows {
		d := dsp[r*dspS]
		xdt := float32(x[r*xS] * d)
		row, prev, ar := st[r*stS:][:dState], src[r*srcS:][:dState], a[r*aS:][:dState]
		n8 := dState &^ 7
		var acc [8]float32
		for i := range dState {
			dA := vec.ExpTwin(float32(ar[i] * d))
			v := float32(float32(prev[i]*dA) + float32(b[i]*xdt))
			row[i] = v
			if i < n8 {
				acc[i%8] = simd.FMA32(v, c[i], acc[i%8])
			}
		}
		sum := simd.Hsum8(&acc)
		for i := n8; i < dState; i++ {
			sum = simd.FMA32(row[i], c[i], sum)
		}
		y[r*yS] = sum
	}
}

// ScanSTwin is the twin of ScanSAVX2: per row, the update with
// each product rounded, and the sum in two 8-lane FMA accumulators (runs
// of 8 alternating between them, starting with the first), added lane by
// lane and reduced by hsum8, then a scalar FMA chain over the tail.
func ScanSTwin(st, src []float32, stS, srcS int, x []float32, xS int, y []float32, yS int, b, c []float32, nRows, dState int, dA, dsp float32) {
	for r := range nRows {
		xdt := float32(x[r*xS] * dsp)
		row, prev := st[r*stS:][:dState], src[r*srcS:][:dState]
		n8 := dState &^ 7
		var acc [2][8]float32
		for i := range dState {
			v := float32(float32(prev[i]*dA) + float32(b[i]*xdt))
			row[i] = v
			if i < n8 {
				a := &acc[(i/8)%2]
				a[i%8] = simd.FMA32(v, c[i], a[i%8])
			}
		}
		var s [8]float32
		for l := range s {
			s[l] = acc[0][l] + acc[1][l]
		}
		sum := simd.Hsum8(&s)
		for i := n8; i < dState; i++ {
			sum = simd.FMA32(row[i], c[i], sum)
		}
		y[r*yS] = sum
	}
}

// Constants of SoftplusTwin; their bits are repeated in
// ssm_softplus_amd64.s.
const (
	ssmMagic  = 0x1.8p52              // 1.5·2^52: adding it rounds to an integer
	ssmLog2e  = 0x1.71547652b82fep+0  // 1/ln 2
	ssmLn2Hi  = 0x1.62e42fefa39efp-1  // ln 2 rounded
	ssmLn2Lo  = 0x1.abc9e3b39803fp-56 // ln 2 - ssmLn2Hi, rounded
	ssmSqrt2  = 0x1.6a09e667f3bcdp+0  // √2 rounded
	ssmExpMin = 700                   // exp(-|x|) is clamped here: 2^k stays normal
	// ExpMulTwin clamps its argument to [ssmExpLo, ssmExpHi]: e^x rounds
	// to float32 0 below -104 and to +Inf above 88.8, and 2^k stays
	// normal in float64 within the range.
	ssmExpLo = -110
	ssmExpHi = 89
)

// ssmExpPoly holds 1/n! for n = 2..11: e^r ≈ 1 + r + r²/2! + ... + r¹¹/11!
// on |r| <= ln2/2, error below 1e-14. ssmLogPoly holds 1/n for n = 3, 5,
// ..., 17: ln f = 2 atanh s = 2(s + s³/3 + ... + s¹⁷/17), s = (f-1)/(f+1),
// |s| <= 0.172 for f in [√2/2, √2], error below 1e-14.
var (
	ssmExpPoly = [10]float64{1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800}
	ssmLogPoly = [8]float64{1.0 / 3, 1.0 / 5, 1.0 / 7, 1.0 / 9, 1.0 / 11, 1.0 / 13, 1.0 / 15, 1.0 / 17}
)

// SoftplusTwin is Softplus in float64 steps the AVX2 kernel takes
// four lanes at a time (twin of SoftplusAVX2): max(x, 0) +
// log1p(e^-|x|), or x above 20 as ggml. e^-|x| is 2^k·e^r with k =
// round(-|x|/ln 2) by the 1.5·2^52 trick and a Taylor polynomial for e^r;
// log1p(u) is ln(1+u)·u/((1+u)-1) (exact correction of the rounding of
// 1+u; u itself when 1+u rounds to 1), ln(1+u) = e·ln 2 + 2 atanh s after
// halving 1+u above √2. Every step is one float64 operation (FMA where
// the assembly fuses), so the twin is exact; the result is within 1e-13
// relative of log1p(exp(x)) before its float32 rounding.
func SoftplusTwin(x float32) float32 {
	v := float64(x)
	ax := math.Min(math.Abs(v), ssmExpMin)
	u := ssmExpTwin(-ax)
	m := 1 + u
	f, e := m, 0.0
	if m > ssmSqrt2 {
		f, e = m*0.5, 1
	}
	s := (f - 1) / (f + 1)
	z := s * s
	q := ssmLogPoly[7]
	for i := 6; i >= 0; i-- {
		q = math.FMA(q, z, ssmLogPoly[i])
	}
	lg := math.FMA(s*z, q, s)
	lg = math.FMA(e, ssmLn2Hi, 2*lg)
	lg = math.FMA(e, ssmLn2Lo, lg)
	l1p := u
	if dm := m - 1; dm != 0 {
		l1p = lg * (u / dm)
	}
	res := math.Max(v, 0) + l1p
	if v > 20 {
		res = v
	}
	return float32(res)
}

// ExpMulTwin is ExpMul's element in the float64 steps the AVX2 kernel
// takes four lanes at a time (twin of ExpMulAVX2): v = x·a rounded to
// float32, clamped to [-110, 89] (a NaN stays NaN), then e^v = 2^k·e^r as
// in SoftplusTwin (k = round(v/ln 2) by the 1.5·2^52 trick, r = v - k·ln
// 2 in two parts, the Taylor polynomial of degree 11), rounded once to
// float32. Before that rounding it is within 1e-14 relative of e^v, so it
// differs from ExpMul only where e^v lies that close to a float32
// rounding boundary, by one unit in the last place.
func ExpMulTwin(x, a float32) float32 {
	v := math.Min(math.Max(float64(x*a), ssmExpLo), ssmExpHi)
	return float32(ssmExpTwin(v))
}

// ssmExpTwin returns e^v for v within [-ssmExpMin, ssmExpHi] as the AVX2
// kernels compute it (SP_EXP2KR): k = round(v/ln 2) by the 1.5·2^52
// trick, r = v - k·ln 2 in two parts, e^r by the Taylor polynomial of
// degree 11, times 2^k; every step one float64 operation.
func ssmExpTwin(v float64) float64 {
	t := math.FMA(v, ssmLog2e, ssmMagic)
	k := t - ssmMagic
	r := math.FMA(-k, ssmLn2Hi, v)
	r = math.FMA(-k, ssmLn2Lo, r)
	p := ssmExpPoly[9]
	for i := 8; i >= 0; i-- {
		p = math.FMA(p, r, ssmExpPoly[i])
	}
	p = math.FMA(p, r, 1)
	p = math.FMA(p, r, 1)
	scale := math.Float64frombits((math.Float64bits(t) - math.Float64bits(ssmMagic) + 1023) << 52)
	return p * scale
}
