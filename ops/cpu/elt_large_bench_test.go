package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// BenchmarkEltLarge measures the elementwise ops at prefill sizes whose
// three streams outgrow the caches: ADD of [4096, 512] (24 MiB, about the
// L3) and MUL and SWIGLU of [14336, 512] (88 MiB), ggml-side's points.
func BenchmarkEltLarge(b *testing.B) {
	for _, c := range []struct {
		op   ops.Op
		k, n int64
	}{{ops.OpAdd, 4096, 512}, {ops.OpMul, 14336, 512}, {ops.OpSwiGLU, 14336, 512}} {
		b.Run(fmt.Sprintf("%v/k=%d,n=%d", c.op, c.k, c.n), func(b *testing.B) {
			be, err := NewWithOptions(Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			rng := rand.New(rand.NewPCG(1, 5))
			x := benchLeaf(b, be, rng, quant.F32, c.k, c.n)
			y := benchLeaf(b, be, rng, quant.F32, c.k, c.n)
			var node *ops.Tensor
			switch c.op {
			case ops.OpAdd:
				node, err = ops.Add(x, y)
			case ops.OpMul:
				node, err = ops.Mul(x, y)
			default:
				node, err = ops.SwiGLU(x, y, false)
			}
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(3 * 4 * c.k * c.n)
			benchCompute(b, be, node, float64(c.k*c.n))
		})
	}
}
