package harness

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func init() { register(argsortDef) }

// argsortDef declares ARGSORT: the indices that sort each row, stably.
var argsortDef = OpDef{
	Op: ops.OpArgsort, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
	Dims:   []Dim{{DimK, 256, "row length"}, {DimN, 32, "rows"}},
	Note:   "descending, as MoE routing sorts expert scores",
	Shapes: []Dims{{DimK: 256, DimN: 32}, {DimK: 8, DimN: 512}},
	point: func(_ quant.Type, d Dims) (Case, error) {
		return argsort{ne: []int64{d[DimK], d[DimN]}, in: uni, order: ops.SortDesc}.Case(), nil
	},
	cases: argsortCases,
	Tolerances: []Tolerance{
		{Type: AnyType, Exact: true,
			Reason: "indices of a stable sort are fully defined; observed exact"},
	},
}

// argsort is an ARGSORT variant: a [ne] drawn from in, sorted in order.
// Its case's name is name and the order.
type argsort struct {
	name     string
	ne       []int64
	in       Dist
	order    ops.SortOrder
	permuted bool // a allocated with dims 1 and 2 swapped and permuted
}

// Case returns the variant as a case.
func (s argsort) Case() Case {
	return Case{
		Name: s.name + "," + s.order.String(), Op: ops.OpArgsort, Types: types(quant.F32),
		Build: func(b *Builder) (*ops.Tensor, error) {
			return ops.Argsort(leafOrPermuted(b, "a", quant.F32, s.in, s.permuted, s.ne), s.order)
		},
	}
}

// argsortCases covers both orders, rows full of ties (the sort must be
// stable), one column, a long row, a permuted input and an unknown order.
func argsortCases() []Case {
	var cs []Case
	for _, o := range []ops.SortOrder{ops.SortAsc, ops.SortDesc} {
		cs = append(cs,
			argsort{"ne=[64,5]", []int64{64, 5}, uni, o, false}.Case(),
			argsort{"ne=[100,4],ties", []int64{100, 4}, Ints(0, 4), o, false}.Case(),
			argsort{"ne=[1,6]", []int64{1, 6}, uni, o, false}.Case(),
			argsort{"ne=[300,2]", []int64{300, 2}, Normal(0, 10), o, false}.Case(),
			argsort{"ne=[32,3,4],a permuted", []int64{32, 3, 4}, uni, o, true}.Case(),
			large(argsort{"ne=[256,4096]", []int64{256, 4096}, uni, o, false}.Case()),
		)
	}
	// NaN sorts first ascending, last descending; infinities sort as
	// the extremes.
	for _, o := range []ops.SortOrder{ops.SortAsc, ops.SortDesc} {
		cs = append(cs, withPlants(argsort{"ne=[64,5]", []int64{64, 5}, uni, o, false}.Case(), nil,
			[]Plant{at("a", nan, 5, 1), at("a", nan, 60, 1), at("a", pinf, 3, 2), at("a", ninf, 4, 2), at("a", nan, 63, 4)}))
	}
	cs = append(cs, refuse(argsort{"ne=[8,2]", []int64{8, 2}, uni, ops.SortOrder(7), false}.Case()))
	return cs
}
