package harness

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func init() { register(swigluDef) }

// swigluDef declares SWIGLU: silu(a) * b, from two sources or from the
// two halves of each row of one.
var swigluDef = OpDef{
	Op: ops.OpSwiGLU, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
	Dims:   []Dim{{DimK, 4096, "row length"}, {DimN, 32, "rows"}},
	Note:   "same-shaped f32 operands",
	Shapes: []Dims{{DimK: 4096, DimN: 32}},
	point: func(_ quant.Type, d Dims) (Case, error) {
		return swiglu{ne: []int64{d[DimK], d[DimN]}}.Case(), nil
	},
	cases: swigluCases,
	Tolerances: []Tolerance{
		{Type: AnyType, MaxNMSE: 1e-13, MaxRelErr: 1e-6,
			Reason: "f32 exp, division and product; observed NMSE 2.2e-15, rel 1.1e-7"},
	},
}

// swiglu is a SWIGLU variant: a [ne] and, unless split, b [ne], both
// drawn from Uniform(-4, 4).
type swiglu struct {
	name           string
	ne             []int64
	split, swapped bool
}

// Case returns the variant as a case.
func (s swiglu) Case() Case {
	return Case{
		Name: s.name, Op: ops.OpSwiGLU, Types: types(quant.F32),
		Build: func(b *Builder) (*ops.Tensor, error) {
			a := b.Leaf("a", quant.F32, Uniform(-4, 4), s.ne...)
			if s.split {
				return ops.SwiGLU(a, nil, s.swapped)
			}
			return ops.SwiGLU(a, b.Leaf("b", quant.F32, Uniform(-4, 4), s.ne...), false)
		},
	}
}

// swigluCases covers split rows (both orders), two sources, the smallest
// split, and odd rows or mismatched shapes it refuses.
func swigluCases() []Case {
	return []Case{
		swiglu{"split,ne=[128,6]", []int64{128, 6}, true, false}.Case(),
		swiglu{"split swapped,ne=[128,6]", []int64{128, 6}, true, true}.Case(),
		swiglu{"two sources,ne=[64,6,2]", []int64{64, 6, 2}, false, false}.Case(),
		swiglu{"split,ne=[2,3]", []int64{2, 3}, true, false}.Case(),
		large(swiglu{"split,ne=[28672,64]", []int64{28672, 64}, true, false}.Case()),
		refuse(swiglu{"split,ne=[127,2]", []int64{127, 2}, true, false}.Case()),
		// NaN in either half gives NaN; silu(+Inf) is +Inf.
		planted(swiglu{"split,ne=[128,6]", []int64{128, 6}, true, false}.Case(), at("a", nan, 3, 1), at("a", nan, 70, 2), at("a", pinf, 5, 4)),
		planted(swiglu{"two sources,ne=[64,6,2]", []int64{64, 6, 2}, false, false}.Case(), at("a", nan, 3, 1, 1), at("b", nan, 63, 5, 0)),
		// Two sources of different shapes: no variant has them.
		refuse(Case{Name: "a=[64,2],b=[64,3]", Op: ops.OpSwiGLU, Types: types(quant.F32),
			Build: func(b *Builder) (*ops.Tensor, error) {
				return ops.SwiGLU(b.Leaf("a", quant.F32, uni, 64, 2), b.Leaf("b", quant.F32, uni, 64, 3), false)
			}}),
	}
}
