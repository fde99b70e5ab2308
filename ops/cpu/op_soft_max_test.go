package cpu

import (
	"math"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// tolSoftMax is SOFT_MAX's NMSE tolerance: float32 logits and exponentials
// (a few roundings each) over a float64 sum, NMSE about 1e-14.
const tolSoftMax = 1e-12

// causalMask returns a [n0, n1, n2] mask of typ: values in [-1, 1), with
// element i0 of row i1 set to -Inf past position i1+shift; rows listed in
// blank are -Inf throughout.
func (e *rowOpEnv) causalMask(typ quant.Type, n0, n1, n2 int64, shift int64, blank ...int64) *ops.Tensor {
	v := e.uniform(n0*n1*n2, -1, 1)
	for i2 := range n2 {
		for i1 := range n1 {
			full := false
			for _, b := range blank {
				full = full || b == i1
			}
			for i0 := range n0 {
				if full || i0 > i1+shift {
					v[(i2*n1+i1)*n0+i0] = math.Inf(-1)
				}
			}
		}
	}
	return e.leaf(typ, []int64{n0, n1, n2}, v)
}

func TestSoftMax(t *testing.T) {
	type build = func(e *rowOpEnv) *ops.Tensor
	sm := func(a, mask, sinks build, scale, maxBias float32) build {
		return func(e *rowOpEnv) *ops.Tensor {
			var m, s *ops.Tensor
			if mask != nil {
				m = mask(e)
			}
			if sinks != nil {
				s = sinks(e)
			}
			return mustNode(e.t)(ops.SoftMax(a(e), m, s, ops.SoftMaxParams{Scale: scale, MaxBias: maxBias}))
		}
	}
	f32 := func(ne ...int64) build {
		return func(e *rowOpEnv) *ops.Tensor { return e.f32(ne...) }
	}
	logits := func(lo, hi float64, ne ...int64) build {
		return func(e *rowOpEnv) *ops.Tensor {
			n := ne[0] * ne[1] * ne[2]
			return e.leaf(quant.F32, ne, e.uniform(n, lo, hi))
		}
	}
	causal := func(typ quant.Type, n0, n1, n2, shift int64, blank ...int64) build {
		return func(e *rowOpEnv) *ops.Tensor { return e.causalMask(typ, n0, n1, n2, shift, blank...) }
	}
	sinks := func(n int64, vals ...float64) build {
		return func(e *rowOpEnv) *ops.Tensor {
			if vals == nil {
				vals = e.uniform(n, -2, 2)
			}
			return e.leaf(quant.F32, []int64{n}, vals)
		}
	}
	runRowOpCases(t, tolSoftMax, []rowOpCase{
		{"plain", sm(f32(32, 6, 4), nil, nil, 1, 0)},
		{"scaled-logits", sm(logits(-40, 40, 100, 3, 1), nil, nil, 0.7, 0)},
		{"mask-f32-more-rows", sm(f32(32, 6, 2), f32(32, 8), nil, 0.125, 0)},
		{"mask-f16-broadcast", sm(f32(16, 5, 4, 2), func(e *rowOpEnv) *ops.Tensor {
			return e.leaf(quant.F16, []int64{16, 5, 2, 1}, nil)
		}, nil, 1, 0)},
		{"causal-f16", sm(f32(24, 10, 3), causal(quant.F16, 24, 10, 1, 12), nil, 0.25, 0)},
		{"fully-masked-row", sm(f32(9, 4, 2), causal(quant.F32, 9, 4, 1, 3, 2), nil, 1, 0)},
		{"sinks", sm(f32(20, 3, 4), nil, sinks(4), 1, 0)},
		{"sinks-dominant", sm(f32(20, 3, 4), nil, sinks(4, 30, -30, 0, 5), 1, 0)},
		{"sinks-fully-masked", sm(f32(9, 4, 2), causal(quant.F32, 9, 4, 1, 3, 0, 3), sinks(2), 1, 0)},
		{"sinks-minus-inf-fully-masked", sm(f32(9, 4, 2), causal(quant.F32, 9, 4, 1, 3, 1), sinks(2, math.Inf(-1), 0), 1, 0)},
		{"alibi-8-heads", sm(f32(12, 3, 8), causal(quant.F32, 12, 3, 1, 9), nil, 1, 8)},
		{"alibi-6-heads", sm(f32(12, 3, 6), causal(quant.F16, 12, 4, 1, 9), nil, 0.5, 8)},
		{"alibi-sinks", sm(f32(12, 3, 5), causal(quant.F32, 12, 3, 5, 9), sinks(5), 1, 4)},
		{"permuted", sm(func(e *rowOpEnv) *ops.Tensor { return e.permuted([]int64{4, 40, 3}, 1, 0, 2, 3) }, f32(40, 4), nil, 1, 0)},
		{"strided", sm(func(e *rowOpEnv) *ops.Tensor { return e.strided([4]int64{15, 4, 2, 1}, 2, 3) }, nil, sinks(2), 1, 0)},
		{"one-column", sm(f32(1, 7), nil, nil, 1, 0)},
		{"one-column-sink", sm(f32(1, 7, 2), nil, sinks(2), 1, 0)},
		{"one-row", sm(f32(1000), nil, nil, 1, 0)},
		{"empty", sm(f32(8, 0, 2), nil, sinks(2), 1, 0)},
	})
}

// TestSoftMaxMaskedRowIsZero pins the documented value of a fully masked
// row without a sink.
func TestSoftMaxMaskedRowIsZero(t *testing.T) {
	e := newRowOpEnv(t)
	a := e.f32(4, 2)
	inf := math.Inf(-1)
	mask := e.leaf(quant.F32, []int64{4, 2}, []float64{0, 0, inf, 0, inf, inf, inf, inf})
	got := e.run(mustNode(t)(ops.SoftMax(a, mask, nil, ops.SoftMaxParams{Scale: 1})))
	for i, v := range got[4:] {
		if v != 0 {
			t.Errorf("masked row element %d = %v, want 0", i, v)
		}
	}
	if got[2] != 0 || math.Abs(got[0]+got[1]+got[3]-1) > 1e-6 {
		t.Errorf("first row %v does not sum to 1 over its unmasked elements", got[:4])
	}
}
