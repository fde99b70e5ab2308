//go:build amd64 && !purego

package sgemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
)

// TestSgemmMicro2Twin checks the AVX-512 two-panel micro-kernel against
// Twin2 bit for bit: lengths around the unrolled loop's edges, row,
// panel and tile strides wider than the tile (panel 1 right after panel
// 0 or further on), values with NaN, infinities, denormals and signed
// zeros, and existing partial sums in c.
func TestSgemmMicro2Twin(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(6, 32))
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e-40, -1e-40, 0, float32(math.Copysign(0, -1)), 3e38}
	draw := func(n int, special bool) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
			if special && rng.IntN(40) == 0 {
				v[i] = specials[rng.IntN(len(specials))]
			}
		}
		return v
	}
	for _, kc := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 31, 64, 255, 256, 257} {
		for _, special := range []bool{false, true} {
			for _, gap := range []int{0, 16, 16 * rng.IntN(9)} {
				lda := kc + rng.IntN(5)
				ldc := 2*NR + 8*rng.IntN(3)
				bstride := NR*kc + gap
				a := draw(MR*lda+1, special)
				b := draw(bstride+NR*kc+1, special)
				c0 := draw(MR*ldc, special)
				got, want := append([]float32(nil), c0...), append([]float32(nil), c0...)
				pf, step := pfArg(rng, b, kc)
				Micro2AVX512(kc, a, lda, b, bstride, got, ldc, pf, step)
				if kc > 0 {
					Twin2(kc, a, lda, b, bstride, want, ldc)
				}
				for i := range got {
					g, w := got[i], want[i]
					if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
						t.Fatalf("kc=%d special=%v gap=%d: c[%d] = %g (%#x), twin %g (%#x)", kc, special, gap, i, g, math.Float32bits(g), w, math.Float32bits(w))
					}
				}
			}
		}
	}
}

// TestSgemmMicro2AVX2 checks that the two-panel kernel equals two calls of
// the AVX2 micro-kernel bit for bit, as package cpu's driver relies on
// when it mixes them.
func TestSgemmMicro2AVX2(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(7, 32))
	for _, kc := range []int{1, 3, 4, 17, 256} {
		lda, ldc, bstride := kc+3, 2*NR+16, NR*kc+48
		a := make([]float32, MR*lda)
		b := make([]float32, bstride+NR*kc)
		c := make([]float32, MR*ldc)
		for _, v := range [][]float32{a, b, c} {
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
		}
		got, want := append([]float32(nil), c...), append([]float32(nil), c...)
		pf, step := pfArg(rng, b, kc)
		Micro2AVX512(kc, a, lda, b, bstride, got, ldc, pf, step)
		MicroAVX2(kc, a, lda, b, want, ldc)
		MicroAVX2(kc, a, lda, b[bstride:], want[NR:], ldc)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("kc=%d: c[%d] = %g, AVX2 %g", kc, i, got[i], want[i])
			}
		}
	}
}

// TestSgemmMicro2Bounds checks that the wrapper refuses operands too short
// for the tile.
func TestSgemmMicro2Bounds(t *testing.T) {
	simdtest.NeedAVX512(t)
	const kc, lda, ldc = 8, 8, 2 * NR
	ok := func() ([]float32, []float32, []float32) {
		return make([]float32, MR*lda), make([]float32, 2*NR*kc), make([]float32, MR*ldc)
	}
	for name, f := range map[string]func(){
		"a":       func() { a, b, c := ok(); Micro2AVX512(kc, a[:len(a)-1], lda, b, NR*kc, c, ldc, nil, 0) },
		"b":       func() { a, b, c := ok(); Micro2AVX512(kc, a, lda, b[:len(b)-1], NR*kc, c, ldc, nil, 0) },
		"c":       func() { a, b, c := ok(); Micro2AVX512(kc, a, lda, b, NR*kc, c[:len(c)-1], ldc, nil, 0) },
		"bstride": func() { a, b, c := ok(); Micro2AVX512(kc, a, lda, b, -1, c, ldc, nil, 0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("short %s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// BenchmarkSgemmMicro2 measures the two-panel micro-kernel on L1-resident
// operands (one 256-long chunk), as BenchmarkSgemmMicro does the AVX2 one.
func BenchmarkSgemmMicro2(b *testing.B) {
	if !simdtest.HasAVX512() {
		b.Skip("CPU lacks AVX-512 F/BW/VL")
	}
	const kc = 256 // package cpu's sgemmKC
	a := make([]float32, MR*kc)
	bp := make([]float32, 2*NR*kc)
	c := make([]float32, MR*2*NR)
	for i := range a {
		a[i] = 1.0 / float32(i+1)
	}
	for i := range bp {
		bp[i] = float32(i%7) - 3
	}
	for b.Loop() {
		Micro2AVX512(kc, a, kc, bp, NR*kc, c, 2*NR, nil, 0)
	}
	b.ReportMetric(2*MR*2*NR*kc*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// pfArg draws Micro2AVX512's prefetch operand and step: nil, too short
// for its lines (the kernel then prefetches b), exactly PfLines(kc) lines
// of a buffer of its own 64 bytes apart, a view of b, or a column of
// lines a row stride apart down a buffer of rows. None may change the
// result.
func pfArg(rng *rand.Rand, b []float32, kc int) ([]byte, int) {
	n := PfLines(kc)
	switch rng.IntN(6) {
	case 0:
		return nil, 64
	case 1:
		return make([]byte, max(64*(n-1), 0)), 64
	case 2:
		return make([]byte, 64*n), 64
	case 3:
		return make([]byte, 1000*max(n-1, 0)+1), 1000
	case 4:
		return make([]byte, 1<<16), 0 // no step: b
	default:
		return F32Bytes(b[len(b)/2:]), 64
	}
}
