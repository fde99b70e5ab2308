package reference

import (
	"math"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func TestBinary(t *testing.T) {
	a := func() *ops.Tensor { return f32(t, dims(4, 2), 1, 2, 3, 4, 5, 6, 7, 8) }
	tests := []struct {
		name string
		op   func(a, b *ops.Tensor) (*ops.Tensor, error)
		b    *ops.Tensor
		want []float64
	}{
		{"add same shape", ops.Add, f32(t, dims(4, 2), 1, 1, 1, 1, 2, 2, 2, 2), []float64{2, 3, 4, 5, 7, 8, 9, 10}},
		// b [2 1] repeats along both dimensions: [10 20 10 20] on each row.
		{"add broadcast", ops.Add, f32(t, dims(2, 1), 10, 20), []float64{11, 22, 13, 24, 15, 26, 17, 28}},
		// b [1 2] holds one value per row.
		{"mul per row", ops.Mul, f32(t, dims(1, 2), 2, -1), []float64{2, 4, 6, 8, -5, -6, -7, -8}},
		{"mul f16", ops.Mul, leaf(t, quant.F16, dims(4), 0.5, 0.25, 2, 0), []float64{.5, .5, 6, 0, 2.5, 1.5, 14, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			near(t, compute(t, must(t)(tc.op(a(), tc.b))), tc.want, 0)
		})
	}
}

func TestUnary(t *testing.T) {
	e := math.E
	x := func() *ops.Tensor { return f32(t, dims(3), 0, 1, -2) }
	tests := []struct {
		name string
		node func(a *ops.Tensor) (*ops.Tensor, error)
		want []float64
	}{
		{"scale", func(a *ops.Tensor) (*ops.Tensor, error) { return ops.Scale(a, 2, 1) }, []float64{1, 3, -3}},
		// silu(1) = 1/(1 + 1/e) = e/(e+1); silu(-2) = -2/(1 + e^2).
		{"silu", ops.Silu, []float64{0, e / (e + 1), -2 / (1 + e*e)}},
		// tanh-approximated GELU, evaluated independently in float64:
		// gelu(1) = 0.5*(1 + tanh(sqrt(2/pi)*1.044715)).
		{"gelu", ops.Gelu, []float64{0, 0.8411919906082768, -0.04540230591222494}},
		{"sum_rows", ops.SumRows, []float64{-1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			near(t, compute(t, must(t)(tc.node(x()))), tc.want, 1e-15)
		})
	}
}

func TestSwiGLU(t *testing.T) {
	e := math.E
	s1 := e / (e + 1) // silu(1)
	// Rows [g0 g1 | u0 u1] = [0 1 | 3 4] and [1 0 | 5 6].
	split := func() *ops.Tensor { return f32(t, dims(4, 2), 0, 1, 3, 4, 1, 0, 5, 6) }
	tests := []struct {
		name    string
		a, b    *ops.Tensor
		swapped bool
		want    []float64
	}{
		{"split", split(), nil, false, []float64{0, 4 * s1, 5 * s1, 0}},
		// Swapped: g is the second half, u the first. silu(3) and silu(4) etc.
		{"split swapped", split(), nil, true, []float64{
			3 / (1 + math.Exp(-3)) * 0, 4 / (1 + math.Exp(-4)) * 1,
			5 / (1 + math.Exp(-5)) * 1, 6 / (1 + math.Exp(-6)) * 0}},
		{"two sources", f32(t, dims(2), 0, 1), f32(t, dims(2), 7, 3), false, []float64{0, 3 * s1}},
		// Swapped does not apply to two sources.
		{"two sources swapped", f32(t, dims(2), 0, 1), f32(t, dims(2), 7, 3), true, []float64{0, 3 * s1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			near(t, compute(t, must(t)(ops.SwiGLU(tc.a, tc.b, tc.swapped))), tc.want, 1e-15)
		})
	}
}

func TestRMSNorm(t *testing.T) {
	// Row [3 4]: mean of squares 12.5, so y = [3 4]/sqrt(12.5) = [0.6 0.8]*sqrt(2).
	// Row [1 1] with eps 1: mean 1, y = [1 1]/sqrt(2).
	a := f32(t, dims(2, 2), 3, 4, 1, 1)
	near(t, compute(t, must(t)(ops.RMSNorm(a, 0))), []float64{0.6 * math.Sqrt2, 0.8 * math.Sqrt2, 1, 1}, 1e-15)
	near(t, compute(t, must(t)(ops.RMSNorm(a, 1))), []float64{3 / math.Sqrt(13.5), 4 / math.Sqrt(13.5), 1 / math.Sqrt2, 1 / math.Sqrt2}, 1e-15)
}
