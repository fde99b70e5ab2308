package harness

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func init() { register(swigluOAIDef) }

// swigluOAIDef declares SWIGLU_OAI, gpt-oss's clamped SwiGLU:
// min(g, limit) * sigmoid(alpha*min(g, limit)) * (clamp(u, ±limit) + 1).
var swigluOAIDef = OpDef{
	Op: ops.OpSwiGLUOAI, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
	Dims:   []Dim{{DimK, 2880, "row length"}, {DimN, 32, "rows (token x expert pairs)"}},
	Note:   "same-shaped f32 operands, gpt-oss's alpha 1.702 and limit 7",
	Shapes: []Dims{{DimK: 2880, DimN: 32}},
	point: func(_ quant.Type, d Dims) (Case, error) {
		return swigluOAI{ne: []int64{d[DimK], d[DimN]}, alpha: 1.702, limit: 7}.Case(), nil
	},
	cases: swigluOAICases,
	Tolerances: []Tolerance{
		{Type: AnyType, MaxNMSE: 1e-13, MaxRelErr: 1e-6,
			Reason: "f32 min, clamp, exp, division and products, as SWIGLU; observed NMSE 1e-15, rel 2e-7"},
	},
}

// swigluOAI is a SWIGLU_OAI variant: g and u [ne], drawn from
// Uniform(-12, 12) so that both clamps are exercised.
type swigluOAI struct {
	name         string
	ne           []int64
	alpha, limit float32
}

// Case returns the variant as a case.
func (s swigluOAI) Case() Case {
	return Case{
		Name: s.name, Op: ops.OpSwiGLUOAI, Types: types(quant.F32),
		Build: func(b *Builder) (*ops.Tensor, error) {
			g := b.Leaf("g", quant.F32, Uniform(-12, 12), s.ne...)
			u := b.Leaf("u", quant.F32, Uniform(-12, 12), s.ne...)
			return ops.SwiGLUOAI(g, u, s.alpha, s.limit)
		},
	}
}

// swigluOAICases covers gpt-oss's constants on expert-shaped rows, other
// constants, a 3-D shape, one element, and the shapes and parameters it
// refuses.
func swigluOAICases() []Case {
	return []Case{
		swigluOAI{"gpt-oss,ne=[96,8]", []int64{96, 8}, 1.702, 7}.Case(),
		swigluOAI{"alpha=1,limit=2,ne=[64,4,3]", []int64{64, 4, 3}, 1, 2}.Case(),
		swigluOAI{"ne=[1,1]", []int64{1, 1}, 1.702, 7}.Case(),
		large(swigluOAI{"ne=[2880,128]", []int64{2880, 128}, 1.702, 7}.Case()),
		refuse(swigluOAI{"limit=0", []int64{8, 2}, 1.702, 0}.Case()),
		// NaN in either input gives NaN (min and clamp keep a NaN, as
		// ggml's std::min and std::max do); infinities are clamped to the
		// limit.
		planted(swigluOAI{"gpt-oss,ne=[96,8]", []int64{96, 8}, 1.702, 7}.Case(), at("g", nan, 3, 1), at("u", nan, 95, 7)),
		plantedFinite(swigluOAI{"gpt-oss,ne=[96,8]", []int64{96, 8}, 1.702, 7}.Case(), at("g", pinf, 3, 1), at("u", pinf, 4, 2), at("u", ninf, 5, 2)),
		refuse(Case{Name: "g=[64,2],u=[64,3]", Op: ops.OpSwiGLUOAI, Types: types(quant.F32),
			Build: func(b *Builder) (*ops.Tensor, error) {
				return ops.SwiGLUOAI(b.Leaf("g", quant.F32, uni, 64, 2), b.Leaf("u", quant.F32, uni, 64, 3), 1.702, 7)
			}}),
	}
}
