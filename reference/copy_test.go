package reference

import (
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func TestCpyAndCont(t *testing.T) {
	a := grid(t, 3, 2)                          // a(i0, i1) = i0 + 10*i1
	aT := must(t)(ops.Transpose(grid(t, 3, 2))) // [2 3]: (j0, j1) = j1 + 10*j0
	dst := func(typ quant.Type, ne ...int64) *ops.Tensor {
		x := must(t)(ops.NewTensor("dst", typ, ne...))
		buf, err := ops.NewHostBuffer(x.Extent())
		if err != nil {
			t.Fatal(err)
		}
		x.Buffer = buf
		return x
	}
	tests := []struct {
		name string
		node *ops.Tensor
		want []float64
	}{
		// Elements go in logical order whatever the shapes.
		{"cpy f32 to f16", must(t)(ops.Cpy(a, dst(quant.F16, 6))), []float64{0, 1, 2, 10, 11, 12}},
		{"cpy transposed", must(t)(ops.Cpy(aT, dst(quant.F32, 3, 2))), []float64{0, 10, 1, 11, 2, 12}},
		// The exact values, whatever the destination's rounding.
		{"cpy to q8_0", must(t)(ops.Cpy(f32(t, dims(32), make([]float64, 32)...), dst(quant.Q8_0, 32))), make([]float64, 32)},
		{"cont", must(t)(ops.Cont(aT)), []float64{0, 10, 1, 11, 2, 12}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			near(t, compute(t, tc.node), tc.want, 0)
		})
	}
}
