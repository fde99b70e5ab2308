package harness

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func init() { register(rmsNormDef) }

// rmsNormDef declares RMS_NORM: each row divided by its root mean square.
var rmsNormDef = OpDef{
	Op: ops.OpRMSNorm, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
	Dims:   []Dim{{DimK, 4096, "row length (model width)"}, {DimN, 1, "rows (tokens)"}},
	Note:   "eps 1e-5",
	Shapes: []Dims{{DimK: 4096, DimN: 1}, {DimK: 4096, DimN: 512}},
	point: func(_ quant.Type, d Dims) (Case, error) {
		return rmsNorm{ne: []int64{d[DimK], d[DimN]}, in: uni, eps: 1e-5}.Case(), nil
	},
	cases: rmsNormCases,
	Tolerances: []Tolerance{
		{Type: AnyType, MaxNMSE: 1e-13, MaxRelErr: 1e-6,
			Reason: "f32 sum of squares and one sqrt per row; observed NMSE 1.6e-15, rel 1.1e-7"},
	},
}

// rmsNorm is an RMS_NORM variant: a of shape ne, drawn from in.
type rmsNorm struct {
	name     string
	ne       []int64
	in       Dist
	eps      float32
	permuted bool // a allocated with dims 1 and 2 swapped and permuted
}

// Case returns the variant as a case.
func (s rmsNorm) Case() Case {
	return Case{
		Name: s.name, Op: ops.OpRMSNorm, Types: types(quant.F32),
		Build: func(b *Builder) (*ops.Tensor, error) {
			return ops.RMSNorm(leafOrPermuted(b, "a", quant.F32, s.in, s.permuted, s.ne), s.eps)
		},
	}
}

// rmsNormCases covers 4-D inputs, odd rows, one column, a permuted input,
// large magnitudes and a refused eps.
func rmsNormCases() []Case {
	return []Case{
		rmsNorm{"ne=[512,4,2,1],eps=1e-6", []int64{512, 4, 2, 1}, uni, 1e-6, false}.Case(),
		rmsNorm{"ne=[33,5],eps=1e-5", []int64{33, 5}, uni, 1e-5, false}.Case(),
		rmsNorm{"ne=[1,7],eps=1e-6", []int64{1, 7}, uni, 1e-6, false}.Case(),
		rmsNorm{"ne=[64,5,3],a permuted", []int64{64, 5, 3}, uni, 1e-6, true}.Case(),
		rmsNorm{"ne=[256,3],values in [-1000,1000)", []int64{256, 3}, Uniform(-1000, 1000), 1e-5, false}.Case(),
		large(rmsNorm{"ne=[4096,512]", []int64{4096, 512}, uni, 1e-6, false}.Case()),
		refuse(rmsNorm{"eps=-1", []int64{64, 2}, uni, -1, false}.Case()),
		// A NaN makes its row NaN; an Inf makes the row's scale 0, so its
		// row is zeros but for a NaN (Inf * 0) where the Inf was.
		planted(rmsNorm{"ne=[512,4,2,1],eps=1e-6", []int64{512, 4, 2, 1}, uni, 1e-6, false}.Case(), at("a", nan, 511, 3, 1), at("a", pinf, 7, 0, 0)),
		planted(rmsNorm{"ne=[64,5,3],a permuted", []int64{64, 5, 3}, uni, 1e-6, true}.Case(), at("a", nan, 0, 1, 2)),
	}
}
