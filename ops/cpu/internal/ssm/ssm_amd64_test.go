//go:build amd64 && !purego

package ssm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
)

// ssmSet is a tier's SSM_SCAN kernels under the names of package cpu's
// ssmKernels, as the tests below were written against a tier's kernel
// set.
type ssmSet struct {
	softplus  func(dst, x []float32)
	scanA     func(st, src []float32, stS, srcS int, a []float32, aS int, dsp []float32, dspS int, x []float32, xS int, y []float32, yS int, b, c []float32, nRows, dState int)
	scanS     func(st, src []float32, stS, srcS int, x []float32, xS int, y []float32, yS int, b, c []float32, nRows, dState int, dA, dsp float32)
	scanSTok  func(st []float32, stS, nRows, dState int, x []float32, xS, xT int, y []float32, yS, yT int, b []float32, bT int, c []float32, cT int, ed []float32, nTok int)
	scanSTile func(st []float32, stS, nRows, dState int, x []float32, xS, xT int, y []float32, yS, yT int, b []float32, bT int, c []float32, cT int, ed []float32, nTok int, buf []float32)
	expMul    func(dst, x, a []float32)
}

// avx2 are the AVX2 kernels.
var avx2 = ssmSet{SoftplusAVX2, ScanAAVX2, ScanSAVX2, ScanSTokAVX2, ScanSTileAVX2, ExpMulAVX2}

// avx512 are the avx512 tier's kernels: the zmm ones where written, the
// AVX2 ones elsewhere.
var avx512 = ssmSet{SoftplusAVX512, ScanAAVX512, ScanSAVX512, ScanSTokAVX512, ScanSTileAVX512, ExpMulAVX2}

// ssmTiers are the kernel sets the tests run, with the check that skips
// a set on a CPU without its features.
var ssmTiers = []struct {
	name string
	need func(testing.TB)
	sk   ssmSet
}{{"avx2", simdtest.NeedAVX2, avx2}, {"avx512", simdtest.NeedAVX512, avx512}}

// TestSSMKernelsTwin compares each tier's SSM_SCAN kernels with their
// twins bit for bit: Softplus over lengths around the runs of four with
// edge values, both scans over state sizes around the runs of eight and
// sixteen, odd and even row counts (the scalar-A kernels go in pairs),
// strided rows, in place or from a separate previous state, with NaN and
// infinities among the inputs, and the scalar-A scan over several tokens
// at token strides.
func TestSSMKernelsTwin(t *testing.T) {
	for _, tier := range ssmTiers {
		t.Run(tier.name, func(t *testing.T) {
			tier.need(t)
			ssmKernelsTwin(t, tier.sk)
		})
	}
}

func ssmKernelsTwin(t *testing.T, sk ssmSet) {
	rng := rand.New(rand.NewPCG(11, 12))
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 20, 21, -90, 1e-40}
	for n := range 19 {
		x := make([]float32, n)
		for i := range x {
			x[i] = rng.Float32()*12 - 9
			if rng.IntN(5) == 0 {
				x[i] = special[rng.IntN(len(special))]
			}
		}
		got, want := make([]float32, n), make([]float32, n)
		sk.softplus(got, x)
		for i, v := range x {
			want[i] = SoftplusTwin(v)
		}
		for i := range got {
			if !simdtest.SameFloat(got[i], want[i]) {
				t.Fatalf("softplus n=%d [%d] of %v: %v, twin %v", n, i, x[i], got[i], want[i])
			}
		}
	}
	for n := range 19 {
		x, a := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], a[i] = rng.Float32()*30, -rng.Float32()*8
			switch rng.IntN(6) {
			case 0:
				x[i] = special[rng.IntN(len(special))]
			case 1:
				a[i] = special[rng.IntN(len(special))]
			case 2:
				a[i] = -a[i]
			}
		}
		got := make([]float32, n)
		sk.expMul(got, x, a)
		for i := range got {
			if want := ExpMulTwin(x[i], a[i]); !simdtest.SameFloat(got[i], want) {
				t.Fatalf("expMul n=%d [%d] of %v·%v: %v, twin %v", n, i, x[i], a[i], got[i], want)
			}
		}
		sk.expMul(x, x, a)
		for i := range x {
			if !simdtest.SameFloat(x[i], got[i]) {
				t.Fatalf("expMul n=%d in place [%d]: %v, want %v", n, i, x[i], got[i])
			}
		}
	}
	vals := func(n int, lo, hi float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = lo + (hi-lo)*rng.Float32()
			if rng.IntN(40) == 0 {
				v[i] = special[rng.IntN(len(special))]
			}
		}
		return v
	}
	for _, ds := range []int{1, 5, 8, 16, 24, 128, 130} {
		for _, nRows := range []int{1, 2, 3, 4, 7} {
			for _, inPlace := range []bool{false, true} {
				stS := ds + rng.IntN(3)
				srcS := stS
				if !inPlace {
					srcS = ds + rng.IntN(3)
				}
				aS, dspS, xS, yS := ds+rng.IntN(2), 1+rng.IntN(2), 1+rng.IntN(3), 1+rng.IntN(2)
				src := vals((nRows-1)*srcS+ds, -2, 2)
				a := vals((nRows-1)*aS+ds, -4, -0.1)
				dsp := vals((nRows-1)*dspS+1, 0.01, 3)
				x := vals((nRows-1)*xS+1, -1, 1)
				b, c := vals(ds, -1, 1), vals(ds, -1, 1)
				dA, d := rng.Float32(), rng.Float32()*2
				for _, scalar := range []bool{false, true} {
					st := [2][]float32{make([]float32, (nRows-1)*stS+ds), make([]float32, (nRows-1)*stS+ds)}
					y := [2][]float32{make([]float32, (nRows-1)*yS+1), make([]float32, (nRows-1)*yS+1)}
					for k := range 2 {
						prev := src
						if inPlace {
							copy(st[k], src)
							prev = st[k]
						}
						switch {
						case scalar && k == 0:
							sk.scanS(st[k], prev, stS, srcS, x, xS, y[k], yS, b, c, nRows, ds, dA, d)
						case scalar:
							ScanSTwin(st[k], prev, stS, srcS, x, xS, y[k], yS, b, c, nRows, ds, dA, d)
						case k == 0:
							sk.scanA(st[k], prev, stS, srcS, a, aS, dsp, dspS, x, xS, y[k], yS, b, c, nRows, ds)
						default:
							ScanATwin(st[k], prev, stS, srcS, a, aS, dsp, dspS, x, xS, y[k], yS, b, c, nRows, ds)
						}
					}
					for i := range st[0] {
						if !simdtest.SameFloat(st[0][i], st[1][i]) {
							t.Fatalf("scalar=%v ds=%d rows=%d in-place=%v: state[%d] %v, twin %v", scalar, ds, nRows, inPlace, i, st[0][i], st[1][i])
						}
					}
					for i := range y[0] {
						if !simdtest.SameFloat(y[0][i], y[1][i]) {
							t.Fatalf("scalar=%v ds=%d rows=%d in-place=%v: y[%d] %v, twin %v", scalar, ds, nRows, inPlace, i, y[0][i], y[1][i])
						}
					}
				}
			}
		}
	}
	// scanSTok: several tokens in place, against its twin.
	for _, ds := range []int{5, 8, 24, 128} {
		for _, nRows := range []int{1, 2, 5} {
			for _, nTok := range []int{1, 3} {
				stS, xS, xT, yS := ds+rng.IntN(3), 1+rng.IntN(2), nRows*2+rng.IntN(3), 1+rng.IntN(2)
				yT, bT, cT := nRows*yS+rng.IntN(3), ds+rng.IntN(3), ds+rng.IntN(3)
				init := vals((nRows-1)*stS+ds, -2, 2)
				x := vals((nTok-1)*xT+(nRows-1)*xS+1, -1, 1)
				b, c := vals((nTok-1)*bT+ds, -1, 1), vals((nTok-1)*cT+ds, -1, 1)
				ed := vals(2*nTok, 0.05, 1)
				st := [2][]float32{append([]float32(nil), init...), append([]float32(nil), init...)}
				y := [2][]float32{make([]float32, (nTok-1)*yT+(nRows-1)*yS+1), make([]float32, (nTok-1)*yT+(nRows-1)*yS+1)}
				sk.scanSTok(st[0], stS, nRows, ds, x, xS, xT, y[0], yS, yT, b, bT, c, cT, ed, nTok)
				ScanSTokTwin(st[1], stS, nRows, ds, x, xS, xT, y[1], yS, yT, b, bT, c, cT, ed, nTok)
				for k, v := range [][2][]float32{st, y} {
					for i := range v[0] {
						if !simdtest.SameFloat(v[0][i], v[1][i]) {
							t.Fatalf("scanSTok ds=%d rows=%d tokens=%d: %s[%d] %v, twin %v", ds, nRows, nTok, []string{"state", "y"}[k], i, v[0][i], v[1][i])
						}
					}
				}
			}
		}
	}
}

// TestSSMScanTileTwin compares each tier's scanSTile with its twin bit for
// bit: state sizes of one and several runs of 16, row counts around the
// groups of 4, one to several tokens at token strides, strided rows, and
// dA values that make ScaleTile rescale (tiny, zero, huge, NaN), with
// NaN and infinities among the other inputs.
func TestSSMScanTileTwin(t *testing.T) {
	for _, tier := range ssmTiers {
		t.Run(tier.name, func(t *testing.T) {
			tier.need(t)
			ssmScanTileTwin(t, tier.sk)
		})
	}
}

func ssmScanTileTwin(t *testing.T, sk ssmSet) {
	rng := rand.New(rand.NewPCG(21, 22))
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 1e-40}
	vals := func(n int, lo, hi float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = lo + (hi-lo)*rng.Float32()
			if rng.IntN(60) == 0 {
				v[i] = special[rng.IntN(len(special))]
			}
		}
		return v
	}
	dAs := []float32{1e-20, 0, 3e12, float32(math.NaN()), 1}
	for _, ds := range []int{16, 48, 128} {
		for _, nRows := range []int{1, 3, 4, 6, 9} {
			for _, nTok := range []int{1, 2, 7} {
				stS, xS, xT, yS := ds+rng.IntN(3), 1+rng.IntN(2), nRows*2+rng.IntN(3), 1+rng.IntN(2)
				yT, bT, cT := nRows*yS+rng.IntN(3), ds+rng.IntN(3), ds+rng.IntN(3)
				init := vals((nRows-1)*stS+ds, -2, 2)
				x := vals((nTok-1)*xT+(nRows-1)*xS+1, -1, 1)
				b, c := vals((nTok-1)*bT+ds, -1, 1), vals((nTok-1)*cT+ds, -1, 1)
				ed := make([]float32, 2*nTok)
				for k := range nTok {
					ed[2*k], ed[2*k+1] = 0.05+0.95*rng.Float32(), 3*rng.Float32()
					if rng.IntN(4) == 0 {
						ed[2*k] = dAs[rng.IntN(len(dAs))]
					}
				}
				ed4 := make([]float32, 4*nTok)
				ScaleTile(ed4, ed, nTok)
				st := [2][]float32{append([]float32(nil), init...), append([]float32(nil), init...)}
				y := [2][]float32{make([]float32, (nTok-1)*yT+(nRows-1)*yS+1), make([]float32, (nTok-1)*yT+(nRows-1)*yS+1)}
				sk.scanSTile(st[0], stS, nRows, ds, x, xS, xT, y[0], yS, yT, b, bT, c, cT, ed4, nTok, make([]float32, TileBuf*nTok+8))
				ScanSTileTwin(st[1], stS, nRows, ds, x, xS, xT, y[1], yS, yT, b, bT, c, cT, ed4, nTok)
				for k, v := range [][2][]float32{st, y} {
					for i := range v[0] {
						if !simdtest.SameFloat(v[0][i], v[1][i]) {
							t.Fatalf("ds=%d rows=%d tokens=%d: %s[%d] %v, twin %v", ds, nRows, nTok, []string{"state", "y"}[k], i, v[0][i], v[1][i])
						}
					}
				}
			}
		}
	}
}
