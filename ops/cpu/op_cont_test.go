package cpu

import (
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func TestCont(t *testing.T) {
	type build = func(e *rowOpEnv) *ops.Tensor
	cont := func(a build) build {
		return func(e *rowOpEnv) *ops.Tensor { return mustNode(e.t)(ops.Cont(a(e))) }
	}
	permuted := func(typ quant.Type, base []int64, axes ...int) build {
		return func(e *rowOpEnv) *ops.Tensor {
			return mustNode(e.t)(ops.Permute(e.leaf(typ, base, e.uniform(ne2n(base), -100, 100)), axes...))
		}
	}
	// everyOther is every other row of a leaf of type typ and shape [ne0, 2*n].
	everyOther := func(typ quant.Type, ne0, n int64) build {
		return func(e *rowOpEnv) *ops.Tensor {
			base := e.leaf(typ, []int64{ne0, 2 * n}, nil)
			return mustNode(e.t)(ops.View(base, []int64{ne0, n}, []int64{0, 2 * base.Nb[1]}, base.Nb[1]))
		}
	}
	// CONT is an exact copy: tolerance 0.
	runRowOpCases(t, 0, []rowOpCase{
		{"f32-transpose", cont(permuted(quant.F32, []int64{7, 5, 3}, 1, 0, 2, 3))},
		{"f32-4d-permute", cont(permuted(quant.F32, []int64{4, 3, 5, 2}, 2, 0, 3, 1))},
		{"f16-transpose", cont(permuted(quant.F16, []int64{9, 4}, 1, 0, 2, 3))},
		{"bf16-permute", cont(permuted(quant.BF16, []int64{3, 4, 5}, 0, 2, 1, 3))},
		{"i32-transpose", cont(permuted(quant.I32, []int64{6, 5}, 1, 0, 2, 3))},
		{"i8-transpose", cont(permuted(quant.I8, []int64{6, 5}, 1, 0, 2, 3))},
		{"f32-strided", cont(func(e *rowOpEnv) *ops.Tensor { return e.strided([4]int64{11, 3, 2, 1}, 2, 1) })},
		{"f32-rows", cont(everyOther(quant.F32, 13, 4))},
		{"q4_0-rows", cont(everyOther(quant.Q4_0, 64, 3))},
		{"q6_K-permuted-rows", cont(permuted(quant.Q6_K, []int64{256, 3, 2}, 0, 2, 1, 3))},
		{"contiguous", cont(func(e *rowOpEnv) *ops.Tensor { return e.f32(5, 4) })},
		{"empty", cont(func(e *rowOpEnv) *ops.Tensor { return e.f32(5, 0) })},
	})
}
