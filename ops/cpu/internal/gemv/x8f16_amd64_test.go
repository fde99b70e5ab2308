//go:build amd64 && !purego

package gemv

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// x8F16Diff runs the f16 x8 kernel on ng groups of nb runs x with the
// binary16 row y, and fails t unless every output equals the twin's and
// the plain layout's four-row kernel's (F16AVX2 on the unpacked rows)
// bit for bit.
func x8F16Diff(t *testing.T, nb, ng int, x, y []byte) {
	t.Helper()
	for _, k := range x8HalfKernels {
		if k.bf16 && !simdtest.HasBF16() {
			continue
		}
		x8HalfDiff(t, k.name, k.asm, k.twin, k.plain, nb, ng, x, y)
	}
}

// x8HalfKernels are the 2-byte float x8 kernels with their twins and the
// plain layout's four-row kernels (bf16: run only where the CPU has
// AVX-512 BF16).
var x8HalfKernels = []struct {
	name      string
	asm, twin X8Func
	plain     Func
	bf16      bool
}{
	{"f16", X8F16AVX2, X8F16Twin, F16AVX2, false},
	{"bf16", X8BF16AVX2, X8BF16Twin, BF16AVX2, false},
	{"bf16 pairs", X8BF16DP, X8BF16PairTwin, BF16DP, true},
}

func x8HalfDiff(t *testing.T, name string, asm, twin X8Func, plainF Func, nb, ng int, x, y []byte) {
	t.Helper()
	got := make([]float32, 8*ng)
	want := make([]float32, 8*ng)
	for i := range got {
		got[i] = float32(math.NaN())
	}
	asm(nb, ng, x, y, nil, got, testPFD(nb))
	twin(nb, ng, x, y, nil, want, testPFD(nb))
	rows := make([]byte, X8BytesF16*nb)
	for g := range ng {
		UnpackX8F16(rows, x[g*nb*X8BytesF16:(g+1)*nb*X8BytesF16], nb)
		for h := range 2 {
			var plain [4]float32
			plainF(nb, rows[4*h*32*nb:], 32*nb, y, nil, &plain)
			for r := range 4 {
				i := 8*g + 4*h + r
				if !simdtest.SameFloat(got[i], want[i]) || !simdtest.SameFloat(got[i], plain[r]) {
					t.Fatalf("%s nb=%d ng=%d output %d: asm %g (%#x), twin %g (%#x), plain %g (%#x)", name, nb, ng, i,
						got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]),
						plain[r], math.Float32bits(plain[r]))
				}
			}
		}
	}
}

// TestX8F16Twins checks the f16 x8 kernel against its twin and the plain
// four-row kernel bit for bit over random sizes and offsets, with
// special values (zeros, denormals, extremes, infinities, NaNs) mixed
// into the activations and arbitrary bits (any binary16, NaN and Inf
// included) as the weights.
func TestX8F16Twins(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(85, 86))
	for trial := range 300 {
		nb, ng := rng.IntN(40), 1+rng.IntN(4) // odd run counts too
		x := simdtest.Row(rng, quant.I8, max(ng*nb*X8BytesF16, 1), rng.IntN(64), 0)
		y := simdtest.Row(rng, quant.F16, max(nb, 1)*16, rng.IntN(64), []float64{0, 0.05}[trial%2])
		x8F16Diff(t, nb, ng, x, y)
	}
}

// FuzzX8F16 is the fuzzing form of TestX8F16Twins.
func FuzzX8F16(f *testing.F) {
	simdtest.NeedAVX2(f)
	f.Add(uint8(3), uint8(2), uint8(1), uint8(7), []byte{3, 128, 255, 0, 17, 200})
	f.Fuzz(func(t *testing.T, blocks, groups, xoff, yoff uint8, data []byte) {
		nb, ng := int(blocks)%48, 1+int(groups)%4
		x := simdtest.FillRow(quant.I8, max(ng*nb*X8BytesF16, 1), int(xoff%64), data)
		y := simdtest.FillRow(quant.F16, max(nb, 1)*16, int(yoff%64), data[len(data)/2:])
		x8F16Diff(t, nb, ng, x, y)
	})
}

// TestX8F16Bounds checks that the wrapper refuses slices too short for
// what the assembly would read.
func TestX8F16Bounds(t *testing.T) {
	simdtest.NeedAVX2(t)
	nb, ng := 2, 2
	for _, c := range []struct {
		name string
		x, y int
	}{{"weights", ng*nb*X8BytesF16 - 1, 32 * nb}, {"activations", ng * nb * X8BytesF16, 32*nb - 1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("a short %s slice did not panic", c.name)
				}
			}()
			X8F16AVX2(nb, ng, make([]byte, c.x), make([]byte, c.y), nil, make([]float32, 8*ng), testPFD(nb))
		}()
	}
}
