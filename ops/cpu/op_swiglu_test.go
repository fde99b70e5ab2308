package cpu

import (
	"testing"

	"github.com/kernbench/kernbench/ops"
)

func TestSwiGLU(t *testing.T) {
	one := func(swapped bool, a func(e *rowOpEnv) *ops.Tensor) func(e *rowOpEnv) *ops.Tensor {
		return func(e *rowOpEnv) *ops.Tensor {
			return mustNode(e.t)(ops.SwiGLU(a(e), nil, swapped))
		}
	}
	two := func(swapped bool, a, b func(e *rowOpEnv) *ops.Tensor) func(e *rowOpEnv) *ops.Tensor {
		return func(e *rowOpEnv) *ops.Tensor {
			return mustNode(e.t)(ops.SwiGLU(a(e), b(e), swapped))
		}
	}
	f32 := func(ne ...int64) func(e *rowOpEnv) *ops.Tensor {
		return func(e *rowOpEnv) *ops.Tensor { return e.f32(ne...) }
	}
	// rowsOf is a view of every other row of a [ne0, 2*rows] leaf: packed
	// rows, strided dimension 1.
	rowsOf := func(ne0, rows int64) func(e *rowOpEnv) *ops.Tensor {
		return func(e *rowOpEnv) *ops.Tensor {
			base := e.f32(ne0, 2*rows)
			return mustNode(e.t)(ops.View(base, []int64{ne0, rows}, []int64{0, 2 * base.Nb[1]}, 0))
		}
	}
	runRowOpCases(t, tolActivation, []rowOpCase{
		{"split", one(false, f32(64, 5, 2))},
		{"split-swapped", one(true, f32(64, 5, 2))},
		{"split-one-pair", one(false, f32(2))},
		{"split-odd-half", one(true, f32(34, 3))},
		{"split-strided-rows", one(false, rowsOf(18, 4))},
		{"split-empty", one(false, f32(0, 3))},
		{"two", two(false, f32(31, 4, 2), f32(31, 4, 2))},
		{"two-swapped-ignored", two(true, f32(31, 4), f32(31, 4))},
		{"two-permuted", two(false, f32(6, 4, 3), func(e *rowOpEnv) *ops.Tensor { return e.permuted([]int64{4, 6, 3}, 1, 0, 2, 3) })},
		{"two-strided", two(false, func(e *rowOpEnv) *ops.Tensor { return e.strided([4]int64{9, 3, 1, 1}, 2, 1) }, f32(9, 3))},
	})
}
