//go:build amd64 && !purego

package sgemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
)

// bf16Specials are bfloat16 values the differential test mixes in: zeros,
// denormals (which VDPBF16PS reads as zero), the smallest normals (whose
// products underflow), the largest finite values (whose products
// overflow), infinities and NaNs.
var bf16Specials = []uint16{0x0000, 0x8000, 0x0001, 0x807f, 0x0040, 0x0080, 0x8080, 0x00ff, 0x7f7f, 0xff7f, 0x7f00, 0x7f80, 0xff80, 0x7fc0, 0x7f81}

// drawBF16 returns n bfloat16 values: normals of magnitude about 1, or,
// with special, one in 30 from bf16Specials and one in 30 scaled to
// about 2^-63 (pairs of such products are denormal in float32).
func drawBF16(rng *rand.Rand, n int, special bool) []uint16 {
	v := make([]uint16, n)
	for i := range v {
		f := float32(rng.NormFloat64())
		if special {
			switch rng.IntN(30) {
			case 0:
				v[i] = bf16Specials[rng.IntN(len(bf16Specials))]
				continue
			case 1:
				f *= 0x1p-63
			}
		}
		v[i] = uint16(math.Float32bits(f) >> 16)
	}
	return v
}

// TestSgemmBF16Twin checks the bfloat16 pair micro-kernel against
// TwinBF16 bit for bit: lengths around the unrolled loop's edges, row,
// panel and tile strides wider than the tile, denormal, overflowing,
// infinite and NaN values and products, and partial sums already in c
// (denormals among them: the final addition to c is a plain one).
func TestSgemmBF16Twin(t *testing.T) {
	simdtest.NeedBF16(t)
	rng := rand.New(rand.NewPCG(16, 32))
	for _, kc := range []int{0, 2, 4, 6, 8, 10, 14, 16, 18, 30, 64, 254, 256, 258} {
		for _, special := range []bool{false, true} {
			for _, gap := range []int{0, 32, 32 * rng.IntN(9)} {
				lda := kc + 2*rng.IntN(3)
				ldc := 2*NR + 8*rng.IntN(3)
				bstride := NR*kc + gap
				a := drawBF16(rng, MR*lda+1, special)
				b := drawBF16(rng, bstride+NR*kc+1, special)
				c0 := make([]float32, MR*ldc)
				for i := range c0 {
					c0[i] = float32(rng.NormFloat64())
					if special && rng.IntN(20) == 0 {
						c0[i] = simdtest.Special[rng.IntN(len(simdtest.Special))]
					}
				}
				got, want := append([]float32(nil), c0...), append([]float32(nil), c0...)
				var pf []byte
				step := 0
				if rng.IntN(2) == 0 {
					pf, step = make([]byte, 64*PfLinesBF16(kc)+1), 64
				}
				MicroBF16AVX512(kc, a, lda, b, bstride, got, ldc, pf, step)
				TwinBF16(kc, a, lda, b, bstride, want, ldc)
				for i := range got {
					if !simdtest.SameFloat(got[i], want[i]) {
						t.Fatalf("kc=%d special=%v gap=%d: c[%d] = %g (%#x), twin %g (%#x)", kc, special, gap, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
				}
			}
		}
	}
}

// TestDotBF16PairOrder pins the order in which VDPBF16PS adds a pair's
// products, on values where it shows, in the twin and in the kernel:
// with 2^24 already in the sum, the odd elements' product 3 first
// (2^24+3 ties to 2^24+4) and then the even elements' -1 (2^24+3 ties to
// 2^24+4) give 2^24+4; the other order would give 2^24+2. Each addition
// is rounded on its own, and a denormal result is flushed to zero.
func TestDotBF16PairOrder(t *testing.T) {
	const one, three, minusOne = 0x3f80, 0x4040, 0xbf80
	if got := DotBF16Pair(0x1p24, minusOne, three, one, one); got != 0x1p24+4 {
		t.Errorf("twin: 2^24 + 3 + -1 = %.0f, want %.0f", got, 0x1p24+4)
	}
	tiny := uint16(math.Float32bits(0x1p-70) >> 16)
	if got := DotBF16Pair(0, tiny, 0, tiny, 0); got != 0 || math.Signbit(float64(got)) {
		t.Errorf("twin: 2^-70 * 2^-70 = %g, want +0 (flushed)", got)
	}
	simdtest.NeedBF16(t)
	// Two pairs of k against columns of ones: weight pair (2^24, 0)
	// makes the sum 2^24, then (-1, 3) shows the order.
	const big = 0x4b80 // 2^24
	a := make([]uint16, MR*4)
	b := make([]uint16, 2*NR*4)
	for r := range MR {
		copy(a[4*r:], []uint16{big, 0, minusOne, three})
	}
	for i := range b {
		b[i] = one
	}
	c := make([]float32, MR*2*NR)
	want := make([]float32, MR*2*NR)
	MicroBF16AVX512(4, a, 4, b, 2*NR, c, 2*NR, nil, 0)
	TwinBF16(4, a, 4, b, 2*NR, want, 2*NR)
	for i := range c {
		if c[i] != 0x1p24+4 || want[i] != 0x1p24+4 {
			t.Fatalf("c[%d] = %.0f, twin %.0f, want %.0f", i, c[i], want[i], 0x1p24+4)
		}
	}
}

// TestSgemmBF16Bounds checks that short operands panic rather than reach
// past their ends, and that an odd kc is refused.
func TestSgemmBF16Bounds(t *testing.T) {
	simdtest.NeedBF16(t)
	const kc = 16
	ok := func() ([]uint16, []uint16, []float32) {
		return make([]uint16, MR*kc), make([]uint16, 2*NR*kc), make([]float32, MR*2*NR)
	}
	cases := map[string]func(){
		"short a": func() { a, b, c := ok(); MicroBF16AVX512(kc, a[:len(a)-1], kc, b, NR*kc, c, 2*NR, nil, 0) },
		"short b": func() { a, b, c := ok(); MicroBF16AVX512(kc, a, kc, b[:len(b)-1], NR*kc, c, 2*NR, nil, 0) },
		"short c": func() { a, b, c := ok(); MicroBF16AVX512(kc, a, kc, b, NR*kc, c[:len(c)-1], 2*NR, nil, 0) },
		"odd kc":  func() { a, b, c := ok(); MicroBF16AVX512(kc-1, a, kc, b, NR*kc, c, 2*NR, nil, 0) },
	}
	for name, f := range cases {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// BenchmarkSgemmBF16 measures the bfloat16 pair micro-kernel on
// L1-resident operands (one 256-long chunk), as BenchmarkSgemmMicro2 does
// the float32 one; GFLOP/s counts a pair's two products as four FLOPs.
func BenchmarkSgemmBF16(b *testing.B) {
	if !simdtest.HasBF16() {
		b.Skip("CPU lacks AVX-512 BF16")
	}
	const kc = 256
	a := drawBF16(rand.New(rand.NewPCG(1, 2)), MR*kc, false)
	bp := drawBF16(rand.New(rand.NewPCG(3, 4)), 2*NR*kc, false)
	c := make([]float32, MR*2*NR)
	for b.Loop() {
		MicroBF16AVX512(kc, a, kc, bp, NR*kc, c, 2*NR, nil, 0)
	}
	b.ReportMetric(2*MR*2*NR*kc*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
