package reference

import (
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func TestMulMat(t *testing.T) {
	// a's rows are [1 2] and [3 4], b's rows [5 6] and [7 8];
	// dst[i, j] = a row i · b row j.
	a := f32(t, dims(2, 2), 1, 2, 3, 4)
	b := f32(t, dims(2, 2), 5, 6, 7, 8)
	bT := must(t)(ops.Transpose(f32(t, dims(2, 2), 5, 7, 6, 8))) // b again, as a strided view
	b16 := leaf(t, quant.F16, dims(2, 2), 5, 6, 7, 8)

	var q0, q1 [32]int8
	for j := range 32 {
		q0[j] = 1            // times d = 0.5: every element 0.5
		q1[j] = int8(j - 16) // times d = 1: sum of j-16 over 32 is -16
	}
	aq := leafBytes(t, quant.Q8_0, dims(32, 2), append(q8Block(f16Half, q0), q8Block(f16One, q1)...))
	ones := make([]float64, 32)
	for i := range ones {
		ones[i] = 1
	}

	tests := []struct {
		name string
		a, b *ops.Tensor
		want []float64
	}{
		{"2x2", a, b, []float64{17, 39, 23, 53}},
		{"strided b", a, bT, []float64{17, 39, 23, 53}},
		{"f16 b", a, b16, []float64{17, 39, 23, 53}},
		{"q8_0 a", aq, f32(t, dims(32), ones...), []float64{16, -16}},
		// a2 = 2, b2 = 4: b matrices 0 and 1 use a's [1 0], 2 and 3 its [0 1].
		{"broadcast dim 2", f32(t, dims(2, 1, 2), 1, 0, 0, 1),
			f32(t, dims(2, 1, 4), 5, 6, 7, 8, 9, 10, 11, 12), []float64{5, 7, 10, 12}},
		// a3 = 1, b3 = 3: every b matrix uses a's [1 1].
		{"broadcast dim 3", f32(t, dims(2, 1, 1, 1), 1, 1),
			f32(t, dims(2, 1, 1, 3), 5, 6, 7, 8, 9, 10), []float64{11, 15, 19}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			near(t, compute(t, must(t)(ops.MulMat(tc.a, tc.b))), tc.want, 1e-15)
		})
	}
}

func TestMulMatID(t *testing.T) {
	// Expert 0 is the identity, expert 1 twice the identity, expert 2
	// swaps the two elements.
	experts := f32(t, dims(2, 2, 3),
		1, 0, 0, 1,
		2, 0, 0, 2,
		0, 1, 1, 0)
	// ids[e, tok]: token 0 uses experts 2 and 1, token 1 experts 0 and 2.
	ids := i32(t, dims(2, 2), 2, 1, 0, 2)
	tests := []struct {
		name string
		b    *ops.Tensor
		want []float64
	}{
		// b1 = 1: both experts of a token read its one row, [1 2] and [3 4].
		{"shared input", f32(t, dims(2, 1, 2), 1, 2, 3, 4),
			[]float64{2, 1, 2, 4, 3, 4, 4, 3}},
		// b1 = n_used: expert slot e reads row e of its token.
		{"input per slot", f32(t, dims(2, 2, 2), 1, 0, 0, 1, 1, 1, 2, 3),
			[]float64{0, 1, 0, 2, 1, 1, 3, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			near(t, compute(t, must(t)(ops.MulMatID(experts, tc.b, ids))), tc.want, 0)
		})
	}

	for _, bad := range []float64{3, -1} {
		ids := i32(t, dims(2, 1), 0, bad)
		x := must(t)(ops.MulMatID(experts, f32(t, dims(2, 1, 1), 1, 2), ids))
		if got, err := Compute(x); err == nil {
			t.Errorf("expert id %v: Compute = %v, want an error", bad, got)
		}
	}
}
