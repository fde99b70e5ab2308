package gemv

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// q4_0PrepBytes is Q4_0Prep's definition, byte by byte.
func q4_0PrepBytes(y []byte, nb int, side []float32) {
	for ib := range nb {
		by, s := y[ib*simd.BytesQ8_0:], side[ib*SideSlots:][:SideSlots]
		for l := range 4 {
			var c int32
			for e := range 4 {
				c += int32(int8(by[2+4*l+e])) + int32(int8(by[18+4*l+e]))
			}
			s[l] = math.Float32frombits(uint32(8 * c))
			s[l+4] = s[l]
		}
		s[8] = simd.HalfAt(by, 0)
	}
}

// TestQ4_0Prep checks Q4_0Prep's word-wise sums against the byte-wise
// definition, bit for bit: random codes, and the extremes (every code
// -128, every code 127, alternating) where a carry between fields would
// show.
func TestQ4_0Prep(t *testing.T) {
	rng := rand.New(rand.NewPCG(91, 92))
	fills := []func(i int) byte{
		func(int) byte { return byte(rng.Uint32()) },
		func(int) byte { return 0x80 },
		func(int) byte { return 0x7f },
		func(i int) byte { return []byte{0x80, 0x7f}[i%2] },
		func(i int) byte { return []byte{0xff, 0x00, 0x80}[i%3] },
	}
	for trial := range 200 {
		nb := 1 + rng.IntN(30)
		y := make([]byte, nb*simd.BytesQ8_0)
		fill := fills[trial%len(fills)]
		for i := range y {
			y[i] = fill(i)
		}
		got, want := make([]float32, nb*SideSlots), make([]float32, nb*SideSlots)
		Q4_0Prep(y, nb, got)
		q4_0PrepBytes(y, nb, want)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("trial %d (nb %d): slot %d = %#x, want %#x", trial, nb, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
		}
	}
}

// BenchmarkQ4_0Prep measures the side data of one 768-element row (24
// blocks), word-wise (Q4_0Prep) and byte by byte (the definition).
func BenchmarkQ4_0Prep(b *testing.B) {
	const nb = 24
	y := make([]byte, nb*simd.BytesQ8_0)
	for i := range y {
		y[i] = byte(i * 37)
	}
	side := make([]float32, nb*SideSlots)
	for _, f := range []struct {
		name string
		f    func([]byte, int, []float32)
	}{{"words", Q4_0Prep}, {"bytes", q4_0PrepBytes}} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				f.f(y, nb, side)
			}
		})
	}
}
