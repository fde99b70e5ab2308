package cpu

import (
	"math"
	"slices"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func TestArgsort(t *testing.T) {
	type build = func(e *rowOpEnv) *ops.Tensor
	vals := func(ne []int64, gen func(e *rowOpEnv, n int64) []float64) build {
		return func(e *rowOpEnv) *ops.Tensor { return e.leaf(quant.F32, ne, gen(e, ne2n(ne))) }
	}
	random := func(e *rowOpEnv, n int64) []float64 { return e.uniform(n, -5, 5) }
	// fewValues draws from {-1, 0, 1, 2}, so rows are full of ties.
	fewValues := func(e *rowOpEnv, n int64) []float64 {
		v := e.uniform(n, -1, 3)
		for i := range v {
			v[i] = math.Floor(v[i])
		}
		return v
	}
	special := func(e *rowOpEnv, n int64) []float64 {
		v := e.uniform(n, -5, 5)
		for i := range v {
			switch i % 5 {
			case 1:
				v[i] = math.NaN()
			case 2:
				v[i] = math.Inf(1)
			case 3:
				v[i] = math.Inf(-1)
			}
		}
		return v
	}
	inputs := []struct {
		name string
		a    build
	}{
		{"random", vals([]int64{100, 5}, random)},
		{"ties", vals([]int64{64, 4, 2}, fewValues)},
		{"nan-inf", vals([]int64{23, 3}, special)},
		{"experts", vals([]int64{8, 16}, random)},
		{"wide", vals([]int64{3000, 2}, random)},
		{"one", vals([]int64{1}, random)},
		{"one-column", vals([]int64{1, 7}, random)},
		{"permuted", func(e *rowOpEnv) *ops.Tensor { return e.permuted([]int64{6, 20, 3}, 1, 0, 2, 3) }},
		{"strided", func(e *rowOpEnv) *ops.Tensor { return e.strided([4]int64{12, 3, 2, 1}, 2, 3) }},
		{"empty", vals([]int64{0, 3}, random)},
	}
	for _, order := range []ops.SortOrder{ops.SortAsc, ops.SortDesc} {
		for _, in := range inputs {
			t.Run(order.String()+"/"+in.name, func(t *testing.T) {
				e := newRowOpEnv(t)
				// Indices are exact: tolerance 0.
				e.check(mustNode(t)(ops.Argsort(in.a(e), order)), 0)
			})
		}
	}
}

// TestArgsortStable pins the order of ties in both directions.
func TestArgsortStable(t *testing.T) {
	e := newRowOpEnv(t)
	a := e.leaf(quant.F32, []int64{6}, []float64{2, 1, 2, 0, 1, 2})
	for _, tc := range []struct {
		order ops.SortOrder
		want  []float64
	}{
		{ops.SortAsc, []float64{3, 1, 4, 0, 2, 5}},
		{ops.SortDesc, []float64{0, 2, 5, 1, 4, 3}},
	} {
		got := e.run(mustNode(t)(ops.Argsort(a, tc.order)))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v: got %v, want %v", tc.order, got, tc.want)
		}
	}
}
