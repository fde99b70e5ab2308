//go:build amd64 && !purego

package sgemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
)

// TestSgemmMicroTwin checks the AVX2 micro-kernel of the packed float
// path against Twin bit for bit: lengths around the unrolled
// loop's edges, row and tile strides wider than the tile, values with
// NaN, infinities, denormals and signed zeros, and existing partial sums
// in c.
func TestSgemmMicroTwin(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(6, 16))
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
	for _, kc := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 31, 64, 255, 256, 257} {
		for _, special := range []bool{false, true} {
			lda := kc + rng.IntN(5)
			ldc := NR + 8*rng.IntN(3)
			a := draw(MR*lda+1, special)
			b := draw(NR*kc+1, special)
			c0 := draw(MR*ldc, special)
			got, want := append([]float32(nil), c0...), append([]float32(nil), c0...)
			MicroAVX2(kc, a, lda, b, got, ldc)
			if kc > 0 {
				Twin(kc, a, lda, b, want, ldc)
			}
			for i := range got {
				g, w := got[i], want[i]
				if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
					t.Fatalf("kc=%d special=%v: c[%d] = %g (%#x), twin %g (%#x)", kc, special, i, g, math.Float32bits(g), w, math.Float32bits(w))
				}
			}
		}
	}
}

// BenchmarkSgemmMicro measures the micro-kernel on L1-resident operands
// (one 256-long chunk): the packed float path's ceiling.
func BenchmarkSgemmMicro(b *testing.B) {
	if !simdtest.HasAVX2() {
		b.Skip("CPU lacks AVX2+FMA+F16C")
	}
	const kc = 256 // package cpu's sgemmKC
	a := make([]float32, MR*kc)
	bp := make([]float32, NR*kc)
	c := make([]float32, MR*NR)
	for i := range a {
		a[i] = 1.0 / float32(i+1)
	}
	for i := range bp {
		bp[i] = float32(i%7) - 3
	}
	b.SetBytes(0)
	for b.Loop() {
		MicroAVX2(kc, a, kc, bp, c, NR)
	}
	b.ReportMetric(2*MR*NR*kc*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
