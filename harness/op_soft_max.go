package harness

import (
	"math"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func init() { register(softMaxDef) }

// softMaxDef declares SOFT_MAX: rows of f32 logits, scaled, with an
// optional mask, ALiBi bias and per-head sink logits.
var softMaxDef = OpDef{
	Op: ops.OpSoftMax, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
	Dims: []Dim{
		{DimKV, 4096, "row length (keys)"},
		{DimN, 1, "rows per head (queries)"},
		{DimHeads, 32, "heads"},
	},
	Note:   "a [kv, n, heads] f32, causal f16 mask [kv, n], scale 1/sqrt(128)",
	Shapes: []Dims{{DimKV: 4096, DimN: 1, DimHeads: 32}, {DimKV: 512, DimN: 512, DimHeads: 32}},
	point: func(_ quant.Type, d Dims) (Case, error) {
		kv, n := d[DimKV], d[DimN]
		return softMax{
			ne:     [4]int64{kv, n, d[DimHeads], 1},
			maskNe: [4]int64{kv, n, 1, 1}, maskType: quant.F16, mask: Causal(),
			p: ops.SoftMaxParams{Scale: float32(1 / math.Sqrt(128))},
		}.Case(), nil
	},
	cases: softMaxCases,
	Tolerances: []Tolerance{
		{Type: AnyType, MaxNMSE: 1e-13, MaxRelErr: 2e-6,
			Reason: "f32 exp and row sums: f32 rounding only; observed NMSE 8.6e-15, rel 1.3e-7"},
	},
}

// softMax is a SOFT_MAX variant.
type softMax struct {
	name     string
	ne       [4]int64
	maskNe   [4]int64 // zero: no mask
	maskType quant.Type
	mask     Dist
	sinks    bool
	permuted bool // input allocated [ne0, ne2, ne1, ne3] and permuted
	in       Dist // the zero Dist means Uniform(-4, 4)
	p        ops.SoftMaxParams
	zeroRows []int64 // rows that must come out as zeros
}

// Case returns the variant as a case.
func (s softMax) Case() Case {
	ts := types(quant.F32)
	if s.maskNe[0] != 0 {
		ts = opTypes(quant.F32, s.maskType)
	}
	if s.in.isZero() {
		s.in = Uniform(-4, 4)
	}
	c := Case{
		Name: s.name, Op: ops.OpSoftMax, Types: ts,
		Build: func(b *Builder) (*ops.Tensor, error) {
			ne := s.ne
			var a *ops.Tensor
			if s.permuted {
				a = b.Permute(b.Leaf("a", quant.F32, s.in, ne[0], ne[2], ne[1], ne[3]), 0, 2, 1, 3)
			} else {
				a = b.Leaf("a", quant.F32, s.in, ne[:]...)
			}
			var mask, sinks *ops.Tensor
			if s.maskNe[0] != 0 {
				mask = b.Leaf("mask", s.maskType, s.mask, s.maskNe[:]...)
			}
			if s.sinks {
				sinks = b.Leaf("sinks", quant.F32, Normal(0, 2), ne[2])
			}
			return ops.SoftMax(a, mask, sinks, s.p)
		},
	}
	if len(s.zeroRows) > 0 {
		c.Check = zeroAt(s.ne, 1, s.zeroRows...)
	}
	return c
}

// softMaxCases covers scale, masks of both types (random, causal, padded,
// broadcast over heads and dims 2-3), ALiBi, sinks, fully masked rows, one
// column, one row, a permuted input, large logits and refused operands.
func softMaxCases() []Case {
	one := ops.SoftMaxParams{Scale: 1}
	eighth := ops.SoftMaxParams{Scale: 0.125}
	ne := [4]int64{64, 7, 4, 1}
	return []Case{
		softMax{name: "ne=[64,7,4,1]", ne: ne, p: one}.Case(),
		softMax{name: "ne=[64,7,4,1],scale=0.125,mask", ne: ne, maskNe: [4]int64{64, 7, 1, 1}, maskType: quant.F16, mask: Mask(0.2, -2, 0), p: eighth}.Case(),
		softMax{name: "ne=[64,7,4,1],causal", ne: ne, maskNe: [4]int64{64, 7, 1, 1}, maskType: quant.F32, mask: Causal(), p: eighth}.Case(),
		softMax{name: "ne=[64,7,4,1],mask padded to 8 rows", ne: ne, maskNe: [4]int64{64, 8, 1, 1}, maskType: quant.F16, mask: Causal(), p: one}.Case(),
		softMax{name: "ne=[32,5,8,1],alibi max_bias=8", ne: [4]int64{32, 5, 8, 1}, maskNe: [4]int64{32, 5, 1, 1}, maskType: quant.F32, mask: Mask(0.1, -4, 0), p: ops.SoftMaxParams{Scale: 0.5, MaxBias: 8}}.Case(),
		softMax{name: "ne=[64,7,4,1],causal,sinks", ne: ne, maskNe: [4]int64{64, 7, 1, 1}, maskType: quant.F16, mask: Causal(), sinks: true, p: eighth}.Case(),
		softMax{name: "ne=[64,7,4,1],rows 0,3 masked", ne: ne, maskNe: [4]int64{64, 7, 1, 1}, maskType: quant.F16, mask: Causal().WithMaskedRows(0, 3), p: one, zeroRows: []int64{0, 3}}.Case(),
		softMax{name: "ne=[64,7,4,1],rows 2,6 masked,sinks", ne: ne, maskNe: [4]int64{64, 7, 1, 1}, maskType: quant.F32, mask: Mask(0.3, -1, 0).WithMaskedRows(2, 6), sinks: true, p: one, zeroRows: []int64{2, 6}}.Case(),
		softMax{name: "ne=[32,5,4,3],mask [32,5,2,1]", ne: [4]int64{32, 5, 4, 3}, maskNe: [4]int64{32, 5, 2, 1}, maskType: quant.F16, mask: Mask(0.2, -1, 1), p: one}.Case(),
		softMax{name: "ne=[1,6,2,1]", ne: [4]int64{1, 6, 2, 1}, p: one}.Case(),
		softMax{name: "ne=[256,1,1,1]", ne: [4]int64{256, 1, 1, 1}, p: one}.Case(),
		softMax{name: "ne=[64,0,4,1] (no rows)", ne: [4]int64{64, 0, 4, 1}, p: one}.Case(),
		softMax{name: "ne=[64,7,4,1],a permuted", ne: ne, permuted: true, maskNe: [4]int64{64, 7, 1, 1}, maskType: quant.F16, mask: Causal(), p: eighth}.Case(),
		softMax{name: "ne=[100,3,2,1],logits in [-80,80)", ne: [4]int64{100, 3, 2, 1}, in: Uniform(-80, 80), p: one}.Case(),
		// Non-finite inputs: a NaN logit, mask value or sink makes its
		// rows NaN; a +Inf logit makes its row NaN (Inf - Inf); a -Inf
		// logit's probability is 0.
		planted(softMax{name: "ne=[64,7,4,1],causal", ne: ne, maskNe: [4]int64{64, 7, 1, 1}, maskType: quant.F16, mask: Causal(), p: eighth}.Case(), at("a", nan, 5, 2, 1)),
		planted(softMax{name: "ne=[64,7,4,1]", ne: ne, p: one}.Case(), at("a", pinf, 0, 3, 0), at("a", ninf, 9, 4, 2)),
		plantedFinite(softMax{name: "ne=[64,7,4,1]", ne: ne, p: one}.Case(), at("a", ninf, 9, 4, 2)),
		planted(softMax{name: "ne=[64,7,4,1],mask", ne: ne, maskNe: [4]int64{64, 7, 1, 1}, maskType: quant.F32, mask: Causal(), p: one}.Case(), at("mask", nan, 3, 1)),
		planted(softMax{name: "ne=[64,7,4,1],causal,sinks", ne: ne, maskNe: [4]int64{64, 7, 1, 1}, maskType: quant.F16, mask: Causal(), sinks: true, p: eighth}.Case(), at("sinks", nan, 2)),
		planted(softMax{name: "ne=[64,7,4,1],causal,sinks", ne: ne, maskNe: [4]int64{64, 7, 1, 1}, maskType: quant.F16, mask: Causal(), sinks: true, p: eighth}.Case(), at("sinks", pinf, 1)),
		plantedFinite(softMax{name: "ne=[64,7,4,1],rows 2,6 masked,sinks", ne: ne, maskNe: [4]int64{64, 7, 1, 1}, maskType: quant.F32, mask: Mask(0.3, -1, 0).WithMaskedRows(2, 6), sinks: true, p: one}.Case(), at("sinks", ninf, 3)),
		large(softMax{name: "ne=[4096,512,1,1]", ne: [4]int64{4096, 512, 1, 1}, maskNe: [4]int64{4096, 512, 1, 1}, maskType: quant.F16, mask: Causal(), p: eighth}.Case()),
		large(softMax{name: "ne=[512,512,32,1],sinks", ne: [4]int64{512, 512, 32, 1}, maskNe: [4]int64{512, 512, 1, 1}, maskType: quant.F16, mask: Causal(), sinks: true, p: eighth}.Case()),
		refuse(named(softMax{ne: [4]int64{64, 7, 1, 1}, maskNe: [4]int64{63, 7, 1, 1}, maskType: quant.F16, mask: Causal(), in: uni, p: one}.Case(), "mask [63,7] for ne0=64")),
		// Sinks of another count than the heads: no variant has them.
		refuse(Case{Name: "3 sinks for 4 heads", Op: ops.OpSoftMax, Types: types(quant.F32),
			Build: func(b *Builder) (*ops.Tensor, error) {
				return ops.SoftMax(b.Leaf("a", quant.F32, uni, 64, 7, 4), nil, b.Leaf("sinks", quant.F32, uni, 3), ops.SoftMaxParams{Scale: 1})
			}}),
	}
}
