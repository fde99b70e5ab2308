package cpu

import (
	"testing"

	"github.com/kernbench/kernbench/ops"
)

func TestSumRows(t *testing.T) {
	sum := func(a func(e *rowOpEnv) *ops.Tensor) func(e *rowOpEnv) *ops.Tensor {
		return func(e *rowOpEnv) *ops.Tensor { return mustNode(e.t)(ops.SumRows(a(e))) }
	}
	f32 := func(ne ...int64) func(e *rowOpEnv) *ops.Tensor {
		return func(e *rowOpEnv) *ops.Tensor { return e.f32(ne...) }
	}
	runRowOpCases(t, tolSumRows, []rowOpCase{
		{"wide", sum(f32(10000, 7))},
		{"one", sum(f32(1))},
		{"4d", sum(f32(9, 4, 3, 2))},
		{"one-column", sum(f32(1, 5))},
		{"empty-rows-sum-to-zero", sum(f32(0, 3, 2))},
		{"no-rows", sum(f32(5, 0))},
		{"permuted", sum(func(e *rowOpEnv) *ops.Tensor { return e.permuted([]int64{6, 50, 2, 2}, 1, 0, 3, 2) })},
		{"strided", sum(func(e *rowOpEnv) *ops.Tensor { return e.strided([4]int64{30, 4, 1, 1}, 3, 2) })},
	})
}
