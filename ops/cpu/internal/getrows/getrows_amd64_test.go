//go:build amd64 && !purego

package getrows

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// TestDeqAVX2 checks the AVX2 row decoders against quant.DequantizeRow
// bit for bit on random bytes, so scales and values include NaN,
// infinities, denormals and every code.
func TestDeqAVX2(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for typ, f := range map[quant.Type]func([]byte, []float32){
		quant.Q4_0: DeqQ4_0AVX2, quant.Q8_0: DeqQ8_0AVX2, quant.F16: dot.WidenF16AVX2, quant.BF16: dot.WidenBF16AVX2,
	} {
		for _, blocks := range []int64{1, 2, 3, 8, 37} {
			ne := blocks * typ.BlockSize()
			if typ.BlockSize() == 1 {
				ne = blocks*8 + 3 // widening takes any length
			}
			size, err := typ.RowSize(ne)
			if err != nil {
				t.Fatal(err)
			}
			src := make([]byte, size)
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			got, want := make([]float32, ne), make([]float32, ne)
			f(src, got)
			if err := quant.DequantizeRow(typ, src, want); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				g, w := got[i], want[i]
				if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
					t.Fatalf("%v, %d elements: [%d] = %g, want %g", typ, ne, i, g, w)
				}
			}
		}
	}
}
