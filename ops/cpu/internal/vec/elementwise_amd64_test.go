//go:build amd64 && !purego

package vec

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
)

// TestEltTwins checks the AVX2 elementwise kernels against their twins
// bit for bit (ADD and MUL against the generic rows), over lengths around
// the 8- and 32-element runs, with NaN, infinities, denormals, signed
// zeros and values past exp's clamp; and the twins of SILU, SWIGLU and
// GELU against float64 formulas within a few float32 ulps.
func TestEltTwins(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(7, 8))
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e-40, -1e-40, 0, float32(math.Copysign(0, -1)), 100, -100, 3e38, -3e38}
	draw := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * 4)
			if rng.IntN(10) == 0 {
				v[i] = specials[rng.IntN(len(specials))]
			}
		}
		return v
	}
	same := func(name string, n int, got, want []float32) {
		t.Helper()
		for i := range got {
			g, w := got[i], want[i]
			if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
				t.Fatalf("%s n=%d: [%d] = %g, twin %g", name, n, i, g, w)
			}
		}
	}
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 40, 100, 257} {
		x, y := draw(n), draw(n)
		got, want := make([]float32, n), make([]float32, n)
		AddAVX2(got, x, y)
		Add(want, x, y)
		same("add", n, got, want)
		MulAVX2(got, x, y)
		Mul(want, x, y)
		same("mul", n, got, want)
		SiLUAVX2(got, x)
		SiLUTwin(want, x)
		same("Silu", n, got, want)
		SwiGLUAVX2(got, x, y)
		SwiGLUTwin(want, x, y)
		same("swiglu", n, got, want)
		GELUAVX2(got, x)
		GELUTwin(want, x)
		same("Gelu", n, got, want)
		for _, p := range [][2]float32{{1.702, 7}, {1, 0.5}, {-0.3, 100}} {
			SwiGLUOAIAVX2(got, x, y, p[0], p[1])
			SwiGLUOAITwin(want, x, y, p[0], p[1])
			same("swiglu_oai", n, got, want)
		}
		// In place.
		inPlace := append([]float32(nil), x...)
		SiLUAVX2(inPlace, inPlace)
		SiLUTwin(want, x)
		same("Silu in place", n, inPlace, want)
	}

	// Accuracy of the twins on finite inputs in the range that matters.
	// Both are x/(1 + exp(z)); an error of an ulp in the float32 z moves
	// exp(z) by |z| ulps, and GELU's z takes four roundings, hence the
	// allowance growing with |z|.
	near := func(name string, x float32, got float32, want, z float64) {
		t.Helper()
		if z > 87 {
			// exp's input is clamped at 88: a result of about x*e^-88
			// instead of something smaller still.
			if math.Abs(float64(got)) > math.Abs(float64(x))*1e-37 {
				t.Errorf("%s(%g) = %g, want about 0", name, x, got)
			}
			return
		}
		if math.Abs(float64(got)-want) > (4+3*math.Abs(z))*float64(ulp32(float32(want)))+1e-38 {
			t.Errorf("%s(%g) = %g, want %g", name, x, got, want)
		}
	}
	one := make([]float32, 1)
	for range 20000 {
		x := float32(rng.NormFloat64() * 6)
		xf := float64(x)
		SiLUTwin(one, []float32{x})
		near("Silu", x, one[0], xf/(1+math.Exp(-xf)), xf)
		// SWIGLU_OAI with gpt-oss's alpha and limit, y = 0.5: x*sigmoid(alpha*x)*1.5
		// for x below the limit.
		SwiGLUOAITwin(one, []float32{x}, []float32{0.5}, 1.702, 7)
		if x < 7 {
			z := -1.702 * xf
			oai := xf / (1 + math.Exp(z)) * 1.5
			if math.Abs(float64(one[0])-oai) > (6+3*math.Abs(z))*float64(ulp32(float32(oai)))+1e-38 {
				t.Errorf("SwiGLUOAI(%g) = %g, want %g", x, one[0], oai)
			}
		}
		GELUTwin(one, []float32{x})
		// The sigmoid form of the tanh formula: no cancellation for
		// large negative x.
		z := -2 * math.Sqrt(2/math.Pi) * xf * (1 + 0.044715*xf*xf)
		near("Gelu", x, one[0], xf/(1+math.Exp(z)), z)
	}
}

// BenchmarkEltSwiGLU compares the elementwise kernels of each tier on an
// L1-resident row.
func BenchmarkEltSwiGLU(b *testing.B) {
	g, v, out := make([]float32, 4096), make([]float32, 4096), make([]float32, 4096)
	for i := range g {
		g[i], v[i] = float32(i%17)/4-2, float32(i%5)
	}
	for _, k := range []struct {
		name   string
		swiglu func(out, g, v []float32)
	}{{"generic", SwiGLU}, {"avx2", SwiGLUAVX2}} {
		if k.name == "avx2" && !simdtest.HasAVX2() {
			continue
		}
		b.Run(k.name, func(b *testing.B) {
			b.SetBytes(3 * 4 * 4096)
			for b.Loop() {
				k.swiglu(out, g, v)
			}
		})
	}
}
