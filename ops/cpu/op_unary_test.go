package cpu

import (
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/vec"
	"github.com/kernbench/kernbench/quant"
)

func TestUnary(t *testing.T) {
	inputs := []struct {
		name string
		a    func(e *rowOpEnv) *ops.Tensor
	}{
		{"one", func(e *rowOpEnv) *ops.Tensor { return e.f32(1) }},
		{"rows", func(e *rowOpEnv) *ops.Tensor { return e.f32(37, 3, 2) }},
		{"wide-range", func(e *rowOpEnv) *ops.Tensor {
			return e.leaf(quant.F32, []int64{257, 4}, e.uniform(257*4, -30, 30))
		}},
		{"permuted", func(e *rowOpEnv) *ops.Tensor { return e.permuted([]int64{4, 9, 2, 3}, 3, 0, 1, 2) }},
		{"strided", func(e *rowOpEnv) *ops.Tensor { return e.strided([4]int64{10, 3, 2, 1}, 3, 1) }},
		{"one-column", func(e *rowOpEnv) *ops.Tensor { return e.f32(1, 17) }},
		{"empty", func(e *rowOpEnv) *ops.Tensor { return e.f32(0, 3) }},
	}
	ops1 := []struct {
		name string
		f    func(a *ops.Tensor) (*ops.Tensor, error)
	}{
		{"scale", func(a *ops.Tensor) (*ops.Tensor, error) { return ops.Scale(a, 0.7, -0.3) }},
		{"scale-nobias", func(a *ops.Tensor) (*ops.Tensor, error) { return ops.Scale(a, -2, 0) }},
		{"silu", ops.Silu},
		{"gelu", ops.Gelu},
	}
	for _, op := range ops1 {
		for _, in := range inputs {
			t.Run(op.name+"/"+in.name, func(t *testing.T) {
				e := newRowOpEnv(t)
				e.check(mustNode(t)(op.f(in.a(e))), tolActivation)
			})
		}
	}
}

// TestActivationValues pins a few values against closed forms.
func TestActivationValues(t *testing.T) {
	for _, tc := range []struct {
		f       func(float32) float32
		x, want float32
	}{
		{vec.Silu, 0, 0},
		{vec.Silu, 1, 0.7310586},
		{vec.Silu, -100, 0},
		{vec.Gelu, 0, 0},
		{vec.Gelu, 1, 0.8411920},
		{vec.Gelu, -1, -0.1588080},
		{vec.Gelu, 12, 12},
		{vec.Gelu, -12, 0},
	} {
		if got := tc.f(tc.x); got != tc.want && (got-tc.want > 1e-6 || tc.want-got > 1e-6) {
			t.Errorf("f(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
}
