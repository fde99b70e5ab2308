package getrows

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// TestDeqTQ2_0 checks DeqTQ2_0 against quant.DequantizeRow bit for bit
// on random bytes (every code, and scales that are NaN, infinite,
// denormal or zero) and on rows of one to 37 blocks, and that it writes
// nothing past its blocks.
func TestDeqTQ2_0(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, blocks := range []int{1, 2, 3, 8, 37} {
		for trial := range 20 {
			src := make([]byte, blocks*tq2Block)
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			ne := blocks * quant.QKK
			got, want := make([]float32, ne+8), make([]float32, ne)
			for i := range got {
				got[i] = 7
			}
			DeqTQ2_0(src, got[:ne])
			if err := quant.DequantizeRow(quant.TQ2_0, src, want); err != nil {
				t.Fatal(err)
			}
			for i, w := range want {
				if math.Float32bits(got[i]) != math.Float32bits(w) && !(math.IsNaN(float64(w)) && math.IsNaN(float64(got[i]))) {
					t.Fatalf("%d blocks, trial %d: element %d = %v, want %v", blocks, trial, i, got[i], w)
				}
			}
			for i, v := range got[ne:] {
				if v != 7 {
					t.Fatalf("%d blocks: element %d past the row written: %v", blocks, ne+i, v)
				}
			}
		}
	}
}

// BenchmarkDeqTQ2_0 decodes a 4096-element row, DeqTQ2_0 against
// quant.DequantizeRow.
func BenchmarkDeqTQ2_0(b *testing.B) {
	const ne = 4096
	src := make([]byte, ne/quant.QKK*tq2Block)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	dst := make([]float32, ne)
	b.Run("table", func(b *testing.B) {
		b.SetBytes(4 * ne)
		for b.Loop() {
			DeqTQ2_0(src, dst)
		}
	})
	b.Run("quant", func(b *testing.B) {
		b.SetBytes(4 * ne)
		for b.Loop() {
			_ = quant.DequantizeRow(quant.TQ2_0, src, dst)
		}
	})
}
