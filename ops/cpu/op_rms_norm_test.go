package cpu

import (
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// Tolerances (NMSE against the float64 reference) of the row reductions.
const (
	// tolRMSNorm: the sum of squares is float64; the float32 scale and
	// product round twice, NMSE about 1e-15.
	tolRMSNorm = 1e-12
	// tolSumRows: a float64 sum rounded once to float32.
	tolSumRows = 1e-12
)

func TestRMSNorm(t *testing.T) {
	norm := func(eps float32, a func(e *rowOpEnv) *ops.Tensor) func(e *rowOpEnv) *ops.Tensor {
		return func(e *rowOpEnv) *ops.Tensor { return mustNode(e.t)(ops.RMSNorm(a(e), eps)) }
	}
	f32 := func(ne ...int64) func(e *rowOpEnv) *ops.Tensor {
		return func(e *rowOpEnv) *ops.Tensor { return e.f32(ne...) }
	}
	runRowOpCases(t, tolRMSNorm, []rowOpCase{
		{"wide", norm(1e-6, f32(4096, 2))},
		{"one", norm(1e-5, f32(1))},
		{"4d", norm(1e-5, f32(17, 3, 2, 2))},
		{"no-eps", norm(0, f32(31, 5))},
		{"large-values", norm(1e-6, func(e *rowOpEnv) *ops.Tensor {
			return e.leaf(quant.F32, []int64{300, 3}, e.uniform(900, -3e4, 3e4))
		})},
		{"zero-row", norm(1e-5, func(e *rowOpEnv) *ops.Tensor {
			return e.leaf(quant.F32, []int64{8, 2}, make([]float64, 16))
		})},
		{"permuted", norm(1e-6, func(e *rowOpEnv) *ops.Tensor { return e.permuted([]int64{5, 64, 3}, 1, 0, 2, 3) })},
		{"strided", norm(1e-6, func(e *rowOpEnv) *ops.Tensor { return e.strided([4]int64{40, 3, 2, 1}, 2, 5) })},
		{"one-column", norm(1e-6, f32(1, 12))},
		{"empty", norm(1e-6, f32(16, 0))},
	})
}
