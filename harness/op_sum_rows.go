package harness

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func init() { register(sumRowsDef) }

// sumRowsDef declares SUM_ROWS: the sum of each row.
var sumRowsDef = OpDef{
	Op: ops.OpSumRows, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
	Dims:   []Dim{{DimK, 4096, "row length"}, {DimN, 32, "rows"}},
	Shapes: []Dims{{DimK: 4096, DimN: 32}},
	point: func(_ quant.Type, d Dims) (Case, error) {
		return sumRows{ne: []int64{d[DimK], d[DimN]}}.Case(quant.F32), nil
	},
	cases: sumRowsCases,
	Tolerances: []Tolerance{
		{Type: AnyType, MaxNMSE: 1e-14, MaxRelErr: 5e-7,
			Reason: "f32 sums of up to 4096 terms; observed NMSE 9.7e-16, rel 3.6e-8"},
	},
}

// sumRows is a SUM_ROWS variant: a [ne] drawn from Uniform(-1, 1).
type sumRows struct {
	name     string
	ne       []int64
	permuted bool // a allocated with dims 1 and 2 swapped and permuted
}

// Case returns the variant with an input of type t.
func (s sumRows) Case(t quant.Type) Case {
	return Case{
		Name: s.name, Op: ops.OpSumRows, Types: types(t),
		Build: func(b *Builder) (*ops.Tensor, error) {
			return ops.SumRows(leafOrPermuted(b, "a", t, uni, s.permuted, s.ne))
		},
	}
}

// sumRowsCases covers 4-D inputs, one column, a permuted input, odd rows
// and an input type it refuses.
func sumRowsCases() []Case {
	f32 := quant.F32
	return []Case{
		sumRows{"ne=[256,5,3,2]", []int64{256, 5, 3, 2}, false}.Case(f32),
		sumRows{"ne=[1,4]", []int64{1, 4}, false}.Case(f32),
		sumRows{"ne=[64,5,3],a permuted", []int64{64, 5, 3}, true}.Case(f32),
		sumRows{"ne=[33,1]", []int64{33, 1}, false}.Case(f32),
		large(sumRows{"ne=[4096,512]", []int64{4096, 512}, false}.Case(f32)),
		refuse(sumRows{"ne=[64,2],a f16", []int64{64, 2}, false}.Case(quant.F16)),
		// A NaN makes its row's sum NaN, an Inf Inf, both Infs NaN.
		planted(sumRows{"ne=[256,5,3,2]", []int64{256, 5, 3, 2}, false}.Case(f32), at("a", nan, 100, 1, 2, 1), at("a", pinf, 0, 3), at("a", pinf, 7, 4, 1), at("a", ninf, 200, 4, 1)),
		planted(sumRows{"ne=[64,5,3],a permuted", []int64{64, 5, 3}, true}.Case(f32), at("a", ninf, 63, 2, 4)),
	}
}
