//go:build amd64 && !purego

package dot

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// iqAVX512 lists the AVX-512 codebook kernels: each row kernel with the
// generic function it equals and the AVX2 one it stands in for, and its
// integer sums with their twin (the AVX2 kernels' twins, joined as the
// AVX-512 kernel joins them).
var iqAVX512 = []struct {
	name         string
	wt           quant.Type
	row, generic Func
	avx2         Func
	bytes        int
	sums         func(x, y []byte, out []int32, acc float32) float32
	twin         func(x, y []byte, out []int32)
}{
	{"iq1_m", quant.IQ1_M, IQ1_MAVX512, IQ1_M, IQ1_MAVX2, bytesIQ1_M, iq1mSums512, joinShift(iq1mSumsTwin)},
	{"iq1_s", quant.IQ1_S, IQ1_SAVX512, IQ1_S, IQ1_SAVX2, bytesIQ1_S, iq1sSums512, joinShift(iq1sSumsTwin)},
	{"iq2_s", quant.IQ2_S, IQ2_SAVX512, IQ2_S, IQ2_SAVX2, bytesIQ2_S, iq2sSums512, iq2sSumsTwin},
	{"iq2_xxs", quant.IQ2_XXS, IQ2_XXSAVX512, IQ2_XXS, IQ2_XXSAVX2, bytesIQ2_XXS, iq2xxsSums512, iq2xxsSumsTwin},
	{"iq2_xs", quant.IQ2_XS, IQ2_XSAVX512, IQ2_XS, IQ2_XSAVX2, bytesIQ2_XS, iq2xsSums512, iq2xsSumsTwin},
	{"iq3_xxs", quant.IQ3_XXS, IQ3_XXSAVX512, IQ3_XXS, IQ3_XXSAVX2, bytesIQ3_XXS, iq3xxsSums512, iq3xxsSumsTwin},
	{"iq3_s", quant.IQ3_S, IQ3_SAVX512, IQ3_S, IQ3_SAVX2, bytesIQ3_S, iq3sSums512, iq3sSumsTwin},
}

// joinShift turns a twin that stores a grid sum and a shift sum per block
// into one that stores 8*grid + shift.
func joinShift(twin func(x, y []byte, out []int32)) func(x, y []byte, out []int32) {
	return func(x, y []byte, out []int32) {
		two := make([]int32, 2*len(out))
		twin(x, y, two)
		for b := range out {
			out[b] = 8*two[2*b] + two[2*b+1]
		}
	}
}

// TestIQSumsAVX512 checks the AVX-512 codebook kernels' integer sums
// against their twins, and their row sums against the generic kernels
// and the AVX2 ones bit for bit: random blocks (every grid index, sign
// and scale code occurs), blocks of all-ones and all-zero bits, and
// activations at the int8 extremes, where the int16 lanes come closest to
// saturating. The activations' bsums are the sums of their codes, as the
// q8_K quantizer writes them (the kernels take the bias off with them).
func TestIQSumsAVX512(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(41, 42))
	for _, c := range iqAVX512 {
		for trial := range 1000 {
			nb := 1 + rng.IntN(9)
			x, y := extremeBlocks(rng, trial, nb, c.bytes)
			for b := range nb {
				// Finite scales about 1, so that no sum hides behind a NaN.
				binary.LittleEndian.PutUint32(y[b*simd.BytesQ8_K:], math.Float32bits(1+float32(rng.IntN(64))/64))
				if c.wt != quant.IQ1_M {
					binary.LittleEndian.PutUint16(x[b*c.bytes:], 0x3c00+uint16(rng.IntN(64)))
				} else if trial%5 == 3 {
					x[b*c.bytes+55] = 0x3b // the top nibbles' f16: finite
				}
			}
			simdtest.FixBsums(quant.Q8_K, y)
			got, want := make([]int32, nb), make([]int32, nb)
			c.sums(x, y, got, 0)
			c.twin(x, y, want)
			for b := range got {
				if got[b] != want[b] {
					t.Fatalf("%s trial %d nb=%d block %d: asm %d, twin %d", c.name, trial, nb, b, got[b], want[b])
				}
			}
			n := nb * quant.QKK
			r, g, a := c.row(n, x, y), c.generic(n, x, y), c.avx2(n, x, y)
			if !simdtest.SameFloat(r, g) || !simdtest.SameFloat(r, a) {
				t.Fatalf("%s trial %d nb=%d: avx512 %g (%#x), generic %g (%#x), avx2 %g (%#x)", c.name, trial, nb,
					r, math.Float32bits(r), g, math.Float32bits(g), a, math.Float32bits(a))
			}
		}
	}
}

// rowsAVX512 are the AVX-512 row kernels of the q8_K formats with the
// generic functions they equal: the codebook formats' and the ternary
// formats'.
func rowsAVX512() []rowKernel {
	rows := []rowKernel{{"tq1_0", quant.TQ1_0, TQ1_0AVX512, TQ1_0}, {"tq2_0", quant.TQ2_0, TQ2_0AVX512, TQ2_0}}
	for _, c := range iqAVX512 {
		rows = append(rows, rowKernel{c.name, c.wt, c.row, c.generic})
	}
	return rows
}

// A rowKernel is a row kernel with the generic function it equals.
type rowKernel struct {
	name         string
	wt           quant.Type
	row, generic Func
}

// TestIQRowsAVX512 checks the AVX-512 row kernels of the q8_K formats
// against the generic ones bit for bit on rows as the harness makes
// them: random lengths, misaligned starts, NaN, infinities and zeros
// among the activations.
func TestIQRowsAVX512(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(43, 44))
	for _, c := range rowsAVX512() {
		t.Run(c.name, func(t *testing.T) {
			for trial := range 300 {
				n := rng.IntN(12) * quant.QKK
				special := []float64{0, 0.01, 0.3}[trial%3]
				x := simdtest.Row(rng, c.wt, n, rng.IntN(64), special)
				y := simdtest.Row(rng, quant.Q8_K, n, rng.IntN(64), special)
				if got, want := c.row(n, x, y), c.generic(n, x, y); !simdtest.SameFloat(got, want) {
					t.Fatalf("n=%d: avx512 %g (%#x), generic %g (%#x)", n, got, math.Float32bits(got), want, math.Float32bits(want))
				}
			}
		})
	}
}

// TestTQAVX512Extremes checks the ternary formats' AVX-512 kernels
// against the generic ones and the AVX2 kernels where their int16 lanes
// come closest to saturating: code bytes all 0xff, all 0 or random
// (tq1_0's bytes above 242 included), activations all -128, all 127 or
// mixed extremes, scales about 1.
func TestTQAVX512Extremes(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(45, 46))
	for _, c := range []struct {
		name                string
		size, dOff          int
		avx512, avx2, plain Func
	}{
		{"tq1_0", bytesTQ1_0, bytesTQ1_0 - 2, TQ1_0AVX512, TQ1_0AVX2, TQ1_0},
		{"tq2_0", bytesTQ2_0, bytesTQ2_0 - 2, TQ2_0AVX512, TQ2_0AVX2, TQ2_0},
	} {
		for trial := range 90 {
			nb := 1 + rng.IntN(5)
			x, y := superBlockExtremes(rng, trial, nb, c.size, c.dOff)
			n := nb * quant.QKK
			got, want, a := c.avx512(n, x, y), c.plain(n, x, y), c.avx2(n, x, y)
			if !simdtest.SameFloat(got, want) || !simdtest.SameFloat(got, a) {
				t.Fatalf("%s trial %d nb=%d: avx512 %g, generic %g, avx2 %g", c.name, trial, nb, got, want, a)
			}
		}
	}
}

// BenchmarkIQDotAVX512 is BenchmarkIQDot for the AVX-512 row kernels of
// the q8_K formats.
func BenchmarkIQDotAVX512(b *testing.B) {
	if !simdtest.HasAVX512() {
		b.Skip("CPU lacks the avx512 tier")
	}
	for _, c := range rowsAVX512() {
		benchIQDot(b, c.name, c.wt, c.row)
	}
}
