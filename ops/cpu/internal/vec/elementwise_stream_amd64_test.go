//go:build amd64 && !purego

package vec

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
)

// alignedAt returns n float32s whose first element lies off elements past
// a 64-byte boundary, the len(tail) elements after them set to tail.
func alignedAt(n, off int, tail float32) []float32 {
	buf := make([]float32, n+off+16+16)
	i := 0
	for uintptr(unsafe.Pointer(&buf[i]))%64 != 0 {
		i++
	}
	v := buf[i+off : i+off+n+16]
	for j := n; j < len(v); j++ {
		v[j] = tail
	}
	return v
}

// TestEltStream checks the streaming (non-temporal store) kernels against
// their plain kernels bit for bit: every length around the vector steps,
// out at every float offset from a 64-byte boundary (the aligned ones
// take the streaming loops, the others the plain kernels), in place, and
// leaving the elements past the end alone.
func TestEltStream(t *testing.T) {
	simdtest.NeedAVX2(t)
	type kernel struct {
		name      string
		got, want func(out, x, y []float32)
		avx512    bool
	}
	kernels := []kernel{
		{"add", AddStreamAVX2, AddAVX2, false},
		{"mul", MulStreamAVX2, MulAVX2, false},
		{"swiglu", SwiGLUStreamAVX2, SwiGLUAVX2, false},
		{"swiglu512", SwiGLUStreamAVX512, SwiGLUAVX512, true},
	}
	rng := rand.New(rand.NewPCG(27, 28))
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e-40, 0, float32(math.Copysign(0, -1)), 88, -88, 3e38}
	draw := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * 4)
			if rng.IntN(8) == 0 {
				v[i] = specials[rng.IntN(len(specials))]
			}
		}
		return v
	}
	sentinel := math.Float32frombits(0x7fc0beef)
	same := func(name string, n, off int, got, want []float32) {
		t.Helper()
		for i := range n {
			g, w := got[i], want[i]
			if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
				t.Fatalf("%s n=%d off=%d: [%d] = %g, plain kernel %g", name, n, off, i, g, w)
			}
		}
		for i := n; i < len(got); i++ {
			if math.Float32bits(got[i]) != math.Float32bits(sentinel) {
				t.Fatalf("%s n=%d off=%d: element %d past the end written", name, n, off, i)
			}
		}
	}
	for _, k := range kernels {
		if k.avx512 && !simdtest.HasAVX512() {
			continue
		}
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 257, 1000, 4099} {
			x, y := draw(n), draw(n)
			want := make([]float32, n)
			k.want(want, x, y)
			for _, off := range []int{0, 1, 4, 8, 15} {
				out := alignedAt(n, off, sentinel)
				k.got(out[:n], x, y)
				same(k.name, n, off, out, want)
				in := alignedAt(n, off, sentinel)
				copy(in, x)
				k.got(in[:n], in[:n], y)
				same(k.name+" in place", n, off, in, want)
			}
		}
	}
}
