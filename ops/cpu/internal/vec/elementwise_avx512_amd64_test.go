//go:build amd64 && !purego

package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
)

// avx512Lengths are the row lengths of the AVX-512 differential tests:
// around the 16- and 64-element steps and the masked tail.
var avx512Lengths = []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 100, 127, 128, 129, 257, 1000}

// TestEltAVX512 checks the AVX-512 elementwise kernels against the AVX2
// kernels' twins bit for bit (ADD and MUL against the generic rows) with
// NaN, infinities, denormals, signed zeros and values past exp's clamp,
// at several offsets, in place, and leaving the elements past the end
// alone.
func TestEltAVX512(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(17, 18))
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e-40, -1e-40, 0, float32(math.Copysign(0, -1)), 100, -100, 88, -88, 87.5, -87.5, 3e38, -3e38}
	draw := func(n, off int) []float32 {
		v := make([]float32, n+off)[off:]
		for i := range v {
			v[i] = float32(rng.NormFloat64() * 4)
			if rng.IntN(8) == 0 {
				v[i] = specials[rng.IntN(len(specials))]
			}
		}
		return v
	}
	sentinel := math.Float32frombits(0x7fc0dead)
	same := func(name string, n int, got, want []float32) {
		t.Helper()
		for i := range want {
			g, w := got[i], want[i]
			if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
				t.Fatalf("%s n=%d: [%d] = %g, twin %g", name, n, i, g, w)
			}
		}
		for i := len(want); i < len(got); i++ {
			if math.Float32bits(got[i]) != math.Float32bits(sentinel) {
				t.Fatalf("%s n=%d: element %d past the end written", name, n, i)
			}
		}
	}
	type unary struct {
		name      string
		got, want func(out, x []float32)
	}
	type binary struct {
		name      string
		got, want func(out, x, y []float32)
	}
	unaries := []unary{{"silu", SiLUAVX512, SiLUTwin}, {"gelu", GELUAVX512, GELUTwin}}
	binaries := []binary{{"add", AddAVX512, Add}, {"mul", MulAVX512, Mul}, {"swiglu", SwiGLUAVX512, SwiGLUTwin}}
	for _, p := range [][2]float32{{1.702, 7}, {1, 0.5}, {-0.3, 100}, {0, float32(math.Inf(1))}} {
		binaries = append(binaries, binary{fmt.Sprintf("swiglu_oai(%g,%g)", p[0], p[1]),
			func(out, x, y []float32) { SwiGLUOAIAVX512(out, x, y, p[0], p[1]) },
			func(out, x, y []float32) { SwiGLUOAITwin(out, x, y, p[0], p[1]) }})
	}
	for _, n := range avx512Lengths {
		for off := range 3 {
			x, y := draw(n, off), draw(n, 2-off)
			out := make([]float32, n+16)
			want := make([]float32, n)
			for _, k := range unaries {
				for i := range out {
					out[i] = sentinel
				}
				k.got(out[:n], x)
				k.want(want, x)
				same(k.name, n, out, want)
				inPlace := append([]float32(nil), x...)
				k.got(inPlace, inPlace)
				same(k.name+" in place", n, inPlace, want)
			}
			for _, k := range binaries {
				for i := range out {
					out[i] = sentinel
				}
				k.got(out[:n], x, y)
				k.want(want, x, y)
				same(k.name, n, out, want)
				inPlace := append([]float32(nil), x...)
				k.got(inPlace, inPlace, y)
				same(k.name+" in place", n, inPlace, want)
			}
		}
	}
}

// BenchmarkEltAVX512 compares the avx2 and avx512 elementwise kernels at
// the row lengths of a 4096- and a 14336-wide model (L1/L2-resident).
func BenchmarkEltAVX512(b *testing.B) {
	if !simdtest.HasAVX512() {
		b.Skip("no AVX-512")
	}
	oai := func(f func(out, g, v []float32, alpha, limit float32)) func(out, g, v []float32) {
		return func(out, g, v []float32) { f(out, g, v, 1.702, 7) }
	}
	for _, n := range []int{4096, 14336} {
		x, y, out := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = float32(i%17)/4-2, float32(i%5)
		}
		for _, k := range []struct {
			name         string
			avx2, avx512 func(out, x, y []float32)
		}{
			{"add", AddAVX2, AddAVX512},
			{"mul", MulAVX2, MulAVX512},
			{"silu", func(out, x, _ []float32) { SiLUAVX2(out, x) }, func(out, x, _ []float32) { SiLUAVX512(out, x) }},
			{"gelu", func(out, x, _ []float32) { GELUAVX2(out, x) }, func(out, x, _ []float32) { GELUAVX512(out, x) }},
			{"swiglu", SwiGLUAVX2, SwiGLUAVX512},
			{"swigluOAI", oai(SwiGLUOAIAVX2), oai(SwiGLUOAIAVX512)},
		} {
			for tier, f := range map[string]func(out, x, y []float32){"avx2": k.avx2, "avx512": k.avx512} {
				b.Run(fmt.Sprintf("%s/n=%d/%s", k.name, n, tier), func(b *testing.B) {
					for b.Loop() {
						f(out, x, y)
					}
				})
			}
		}
	}
}
