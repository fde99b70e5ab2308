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
