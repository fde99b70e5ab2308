//go:build amd64 && !purego

package ssm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
)

// BenchmarkSSMScanAVX512 compares the AVX2 and avx512 tiers' scan
// kernels on one thread: scanS over 256 rows (one decode token of a
// Mamba-2 head group, the state in L2) and scanSTok over 64 rows and 16
// tokens (a prompt block, the state in L1), and scanSTile likewise, at
// d_state 16 and 128.
func BenchmarkSSMScanAVX512(b *testing.B) {
	simdtest.NeedAVX512(b)
	rng := rand.New(rand.NewPCG(31, 32))
	vals := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = rng.Float32()*2 - 1
		}
		return v
	}
	for _, ds := range []int{16, 128} {
		const rows, tokRows, nTok = 256, 64, 16
		st, src := vals(rows*ds), vals(rows*ds)
		x, y := vals(nTok*rows), make([]float32, nTok*rows)
		bb, cc := vals(nTok*ds), vals(nTok*ds)
		a, dsp := vals(rows*ds), vals(rows)
		ed := make([]float32, 2*nTok)
		for k := range nTok {
			ed[2*k], ed[2*k+1] = 0.5+0.4*rng.Float32(), rng.Float32()
		}
		ed4, buf := make([]float32, 4*nTok), make([]float32, TileBuf*nTok+8)
		ScaleTile(ed4, ed, nTok)
		for _, tier := range []struct {
			name string
			sk   ssmSet
		}{{"avx2", avx2}, {"avx512", avx512}} {
			sk := tier.sk
			b.Run(fmt.Sprintf("scanS/ds=%d/%s", ds, tier.name), func(b *testing.B) {
				for b.Loop() {
					sk.scanS(st, src, ds, ds, x, 1, y, 1, bb, cc, rows, ds, 0.9, 0.1)
				}
			})
			b.Run(fmt.Sprintf("scanA/ds=%d/%s", ds, tier.name), func(b *testing.B) {
				for b.Loop() {
					sk.scanA(st, src, ds, ds, a, ds, dsp, 1, x, 1, y, 1, bb, cc, rows, ds)
				}
			})
			b.Run(fmt.Sprintf("scanSTok/ds=%d/%s", ds, tier.name), func(b *testing.B) {
				for b.Loop() {
					sk.scanSTok(st, ds, tokRows, ds, x, 1, tokRows, y, 1, tokRows, bb, ds, cc, ds, ed, nTok)
				}
			})
			b.Run(fmt.Sprintf("scanSTile/ds=%d/%s", ds, tier.name), func(b *testing.B) {
				for b.Loop() {
					sk.scanSTile(st, ds, tokRows, ds, x, 1, tokRows, y, 1, tokRows, bb, ds, cc, ds, ed4, nTok, buf)
				}
			})
		}
	}
}

// TestScanAAVX512Exp checks the zmm vector-A scan against its twin and
// the AVX2 kernel bit for bit with a·dsp over the whole range of the
// exponential (underflow and overflow clamps, ±Inf, NaN, denormals and
// signed zeros among the a values), at state sizes of runs of 16 with
// and without a last run of 8.
func TestScanAAVX512Exp(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(41, 42))
	for _, ds := range []int{8, 16, 24, 40, 128} {
		const nRows = 5
		a := make([]float32, nRows*ds)
		for i := range a {
			a[i] = rng.Float32()*240 - 120
			if rng.IntN(8) == 0 {
				a[i] = simdtest.Special[rng.IntN(len(simdtest.Special))]
			}
		}
		src := make([]float32, nRows*ds)
		for i := range src {
			src[i] = rng.Float32()*4 - 2
		}
		b, c := src[:ds], src[len(src)-ds:]
		dsp := []float32{1, 0.5, 1e-3, 0, float32(math.Copysign(0, -1))}
		x := []float32{1, -0.5, 2, 0.25, 3}
		var st, y [3][]float32
		for k, f := range []func(st, src []float32, stS, srcS int, a []float32, aS int, dsp []float32, dspS int, x []float32, xS int, y []float32, yS int, b, c []float32, nRows, dState int){ScanAAVX512, ScanAAVX2, ScanATwin} {
			st[k], y[k] = make([]float32, nRows*ds), make([]float32, nRows)
			f(st[k], src, ds, ds, a, ds, dsp, 1, x, 1, y[k], 1, b, c, nRows, ds)
		}
		for k := 1; k < 3; k++ {
			for i := range st[0] {
				if !simdtest.SameFloat(st[0][i], st[k][i]) {
					t.Fatalf("ds=%d: state[%d] %v (%#x), %s %v (%#x)", ds, i, st[0][i], math.Float32bits(st[0][i]), []string{"", "avx2", "twin"}[k], st[k][i], math.Float32bits(st[k][i]))
				}
			}
			for i := range y[0] {
				if !simdtest.SameFloat(y[0][i], y[k][i]) {
					t.Fatalf("ds=%d: y[%d] %v, %s %v", ds, i, y[0][i], []string{"", "avx2", "twin"}[k], y[k][i])
				}
			}
		}
	}
}

// convRef is the generic SSM_CONV loop (package cpu's ssmConvRows) for
// one channel and token: (0 + x[0]*w[0]) + x[1]*w[1] + ..., each product
// rounded.
func convRef(x, w []float32) float32 {
	var sum float32
	for j, v := range w {
		sum = sum + float32(x[j]*v)
	}
	return sum
}

// convVals returns n floats in [-2, 2) with special values mixed in.
func convVals(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = rng.Float32()*4 - 2
		if rng.IntN(30) == 0 {
			v[i] = simdtest.Special[rng.IntN(len(simdtest.Special))]
		}
	}
	return v
}

// TestConvAVX512 checks the zmm SSM_CONV kernels against the generic
// loop and the AVX2 kernels bit for bit: Conv4AVX512 over token counts
// of whole and half zmm steps at strided rows, Conv4GatherAVX512 over
// even and odd token counts, Conv41AVX512 over even and odd group
// counts, with special values among the inputs.
func TestConvAVX512(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(51, 52))
	for _, nTok8 := range []int{8, 16, 24, 32, 40, 64} {
		sxS := nTok8 + 3 + rng.IntN(3)
		dstT := 8 + rng.IntN(3)
		sx, cw := convVals(rng, 7*sxS+nTok8+3), convVals(rng, 32)
		got, avx := make([]float32, (nTok8-1)*dstT+8), make([]float32, (nTok8-1)*dstT+8)
		Conv4AVX512(got, dstT, sx, sxS, cw, nTok8)
		Conv4AVX2(avx, dstT, sx, sxS, cw, nTok8)
		for tok := range nTok8 {
			for k := range 8 {
				i := tok*dstT + k
				want := convRef(sx[k*sxS+tok:], cw[4*k:4*k+4])
				if !simdtest.SameFloat(got[i], want) || !simdtest.SameFloat(got[i], avx[i]) {
					t.Fatalf("conv4 nTok8=%d token %d channel %d: %v, generic %v, avx2 %v", nTok8, tok, k, got[i], want, avx[i])
				}
			}
		}
	}
	for _, nTok := range []int{1, 2, 3, 5, 7, 8, 13} {
		sxS, cS := nTok+3+rng.IntN(3), 4+rng.IntN(3)
		dstT := 8 + rng.IntN(3)
		sx, c := convVals(rng, 7*sxS+nTok+3), convVals(rng, 7*cS+4)
		got, avx := make([]float32, (nTok-1)*dstT+8), make([]float32, (nTok-1)*dstT+8)
		Conv4GatherAVX512(got, dstT, sx, sxS, c, cS, nTok)
		Conv4GatherAVX2(avx, dstT, sx, sxS, c, cS, nTok)
		for tok := range nTok {
			for k := range 8 {
				i := tok*dstT + k
				want := convRef(sx[k*sxS+tok:], c[k*cS:k*cS+4])
				if !simdtest.SameFloat(got[i], want) || !simdtest.SameFloat(got[i], avx[i]) {
					t.Fatalf("conv4g nTok=%d token %d channel %d: %v, generic %v, avx2 %v", nTok, tok, k, got[i], want, avx[i])
				}
			}
		}
	}
	for _, n := range []int{1, 2, 3, 4, 7, 12} {
		sx, c := convVals(rng, 32*n), convVals(rng, 32*n)
		got, avx := make([]float32, 8*n), make([]float32, 8*n)
		Conv41AVX512(got, sx, c)
		Conv41AVX2(avx, sx, c)
		for ch := range 8 * n {
			want := convRef(sx[4*ch:], c[4*ch:4*ch+4])
			if !simdtest.SameFloat(got[ch], want) || !simdtest.SameFloat(got[ch], avx[ch]) {
				t.Fatalf("conv41 groups=%d channel %d: %v, generic %v, avx2 %v", n, ch, got[ch], want, avx[ch])
			}
		}
	}
}

// BenchmarkConvAVX512 compares the AVX2 and zmm SSM_CONV kernels on one
// thread: conv4 on 8 channels by 512 tokens, conv4g on 8 channels by 7
// tokens, conv41 on 4096 channels
// (Mamba-1.4b's d_inner, one decode token).
func BenchmarkConvAVX512(b *testing.B) {
	simdtest.NeedAVX512(b)
	rng := rand.New(rand.NewPCG(53, 54))
	convVals := func(_ *rand.Rand, n int) []float32 { // no special values: timing only
		v := make([]float32, n)
		for i := range v {
			v[i] = rng.Float32()*4 - 2
		}
		return v
	}
	const nTok8, ch = 512, 4096
	sx, cw := convVals(rng, 7*(nTok8+3)+nTok8+3), convVals(rng, 32)
	dst := make([]float32, nTok8*8)
	sx1, c1, dst1 := convVals(rng, 4*ch), convVals(rng, 4*ch), make([]float32, ch)
	for _, k := range []struct {
		name   string
		conv4  func([]float32, int, []float32, int, []float32, int)
		conv41 func(dst, sx, c []float32)
		conv4g func([]float32, int, []float32, int, []float32, int, int)
	}{{"avx2", Conv4AVX2, Conv41AVX2, Conv4GatherAVX2}, {"avx512", Conv4AVX512, Conv41AVX512, Conv4GatherAVX512}} {
		b.Run("conv4/"+k.name, func(b *testing.B) {
			for b.Loop() {
				k.conv4(dst, 8, sx, nTok8+3, cw, nTok8)
			}
		})
		b.Run("conv4g/"+k.name, func(b *testing.B) {
			for b.Loop() {
				k.conv4g(dst, 8, sx, nTok8+3, cw, 4, 7)
			}
		})
		b.Run("conv41/"+k.name, func(b *testing.B) {
			for b.Loop() {
				k.conv41(dst1, sx1, c1)
			}
		})
	}
}

// TestSoftplusAVX512 checks the zmm Softplus against its twin and the
// AVX2 kernel bit for bit over a wide range of values (both sides of
// the cut at 20, the rescale at √2, underflow of e^-|x|), special
// values, and lengths around the runs of 8.
func TestSoftplusAVX512(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(61, 62))
	for _, n := range []int{0, 1, 7, 8, 9, 12, 15, 16, 17, 4099} {
		x := make([]float32, n)
		for i := range x {
			switch rng.IntN(4) {
			case 0:
				x[i] = rng.Float32()*60 - 30
			case 1:
				x[i] = float32(math.Ldexp(rng.Float64()*2-1, rng.IntN(300)-150))
			case 2:
				x[i] = 20 + (rng.Float32()-0.5)*1e-4
			default:
				x[i] = simdtest.Special[rng.IntN(len(simdtest.Special))]
			}
		}
		got, avx := make([]float32, n), make([]float32, n)
		SoftplusAVX512(got, x)
		SoftplusAVX2(avx, x)
		for i, v := range x {
			if want := SoftplusTwin(v); !simdtest.SameFloat(got[i], want) || !simdtest.SameFloat(got[i], avx[i]) {
				t.Fatalf("n=%d softplus(%v) [%d]: %v (%#x), twin %v, avx2 %v", n, v, i, got[i], math.Float32bits(got[i]), want, avx[i])
			}
		}
		// In place.
		SoftplusAVX512(x, x)
		for i := range x {
			if !simdtest.SameFloat(x[i], got[i]) {
				t.Fatalf("n=%d in place [%d]: %v, want %v", n, i, x[i], got[i])
			}
		}
	}
}

// BenchmarkSoftplusAVX512 compares the AVX2 and zmm Softplus over 4096
// values (one token's dt at Mamba-1.4b's d_inner).
func BenchmarkSoftplusAVX512(b *testing.B) {
	simdtest.NeedAVX512(b)
	rng := rand.New(rand.NewPCG(63, 64))
	x := make([]float32, 4096)
	for i := range x {
		x[i] = rng.Float32()*30 - 15
	}
	dst := make([]float32, len(x))
	for _, k := range []struct {
		name string
		f    func(dst, x []float32)
	}{{"avx2", SoftplusAVX2}, {"avx512", SoftplusAVX512}} {
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				k.f(dst, x)
			}
		})
	}
}
