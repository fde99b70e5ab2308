package reference

import (
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func TestGetRows(t *testing.T) {
	var q0, q1 [32]int8
	var row0, row1 []float64
	for j := range 32 {
		q0[j], q1[j] = int8(j), int8(-j)
		row0, row1 = append(row0, float64(j)), append(row1, float64(-2*j))
	}
	q := leafBytes(t, quant.Q8_0, dims(32, 2), append(q8Block(f16One, q0), q8Block(f16Two, q1)...))
	tests := []struct {
		name string
		a    *ops.Tensor
		ids  *ops.Tensor
		want []float64
	}{
		{"f32", f32(t, dims(2, 3), 1, 2, 3, 4, 5, 6), i32(t, dims(3), 2, 0, 2), []float64{5, 6, 1, 2, 5, 6}},
		{"i32", i32(t, dims(2, 2), 1<<30+1, -3, 7, 8), i32(t, dims(1), 0), []float64{1<<30 + 1, -3}},
		{"q8_0", q, i32(t, dims(2), 1, 0), append(append([]float64{}, row1...), row0...)},
		// a [1 2 2]: matrix k of a is gathered by ids[:, k].
		{"per matrix", f32(t, dims(1, 2, 2), 1, 2, 3, 4), i32(t, dims(2, 2), 1, 1, 0, 1), []float64{2, 2, 3, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			near(t, compute(t, must(t)(ops.GetRows(tc.a, tc.ids))), tc.want, 0)
		})
	}
	for _, id := range []float64{3, -1} {
		x := must(t)(ops.GetRows(f32(t, dims(2, 3), 1, 2, 3, 4, 5, 6), i32(t, dims(1), id)))
		if got, err := Compute(x); err == nil {
			t.Errorf("row id %v: Compute = %v, want an error", id, got)
		}
	}
}

func TestArgsort(t *testing.T) {
	// Ties (the two 1s, the two 5s) keep their original order either way.
	a := f32(t, dims(4, 2), 3, 1, 2, 1, 5, 0, 5, 9)
	near(t, compute(t, must(t)(ops.Argsort(a, ops.SortAsc))), []float64{1, 3, 2, 0, 1, 0, 2, 3}, 0)
	near(t, compute(t, must(t)(ops.Argsort(a, ops.SortDesc))), []float64{0, 2, 1, 3, 3, 0, 2, 1}, 0)
}
