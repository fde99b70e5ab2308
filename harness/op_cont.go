package harness

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func init() { register(contDef) }

// contDef declares CONT: a view made contiguous, in the same type.
var contDef = OpDef{
	Op: ops.OpCont, TypeRole: "input", Types: []quant.Type{quant.F32, quant.F16}, DefaultType: quant.F32,
	Dims:   []Dim{{DimK, 4096, "row length of the result"}, {DimN, 32, "rows of the result"}},
	Note:   "a transposed [n, k] tensor made contiguous (strided reads, packed writes)",
	Shapes: []Dims{{DimK: 4096, DimN: 32}},
	point: func(t quant.Type, d Dims) (Case, error) {
		return cont{base: []int64{d[DimN], d[DimK]}, transposed: true}.Case(t), nil
	},
	cases: contCases,
	Tolerances: []Tolerance{
		{Type: AnyType, Exact: true,
			Reason: "a copy to the same type; observed exact"},
	},
}

// cont is a CONT variant: a leaf of shape base, transposed or permuted by
// axes (neither: already contiguous), made contiguous.
type cont struct {
	name       string
	base       []int64
	transposed bool
	axes       []int
}

// Case returns the variant with an input of type t.
func (s cont) Case(t quant.Type) Case {
	return Case{
		Name: s.name, Op: ops.OpCont, Types: types(t),
		Build: func(b *Builder) (*ops.Tensor, error) {
			in := uni
			if t == quant.I32 {
				in = Ints(-100, 100)
			}
			a := b.Leaf("a", t, in, s.base...)
			switch {
			case s.transposed:
				a = b.Transpose(a)
			case s.axes != nil:
				a = b.Permute(a, s.axes...)
			}
			return ops.Cont(a)
		},
	}
}

// contCases covers transposes and permutes of float, quantized (rows
// kept) and integer tensors, an already contiguous input, and quantized
// rows that are not packed.
func contCases() []Case {
	perm := func(t quant.Type, name string, base []int64, axes ...int) Case {
		return cont{name: name, base: base, axes: axes}.Case(t)
	}
	return []Case{
		perm(quant.F32, "[24,16] transposed", []int64{24, 16}, 1, 0, 2, 3),
		perm(quant.F32, "[32,4,3,2] permuted 0,2,1,3", []int64{32, 4, 3, 2}, 0, 2, 1, 3),
		perm(quant.F32, "[5,6,7,2] permuted 2,0,3,1", []int64{5, 6, 7, 2}, 2, 0, 3, 1),
		perm(quant.F32, "[100,3] contiguous", []int64{100, 3}),
		perm(quant.F16, "[33,8] transposed", []int64{33, 8}, 1, 0, 2, 3),
		perm(quant.BF16, "[16,3,5] permuted 0,2,1,3", []int64{16, 3, 5}, 0, 2, 1, 3),
		perm(quant.Q8_0, "[64,3,4] permuted 0,2,1,3", []int64{64, 3, 4}, 0, 2, 1, 3),
		perm(quant.Q4_K, "[256,2,3] permuted 0,2,1,3", []int64{256, 2, 3}, 0, 2, 1, 3),
		perm(quant.I32, "[7,5] transposed", []int64{7, 5}, 1, 0, 2, 3),
		large(perm(quant.F32, "[4096,512] transposed", []int64{4096, 512}, 1, 0, 2, 3)),
		// Non-finite values are copied as they are.
		planted(perm(quant.F32, "[24,16] transposed", []int64{24, 16}, 1, 0, 2, 3), at("a", nan, 3, 2), at("a", pinf, 23, 15), at("a", ninf, 0, 7)),
		planted(perm(quant.F16, "[33,8] transposed", []int64{33, 8}, 1, 0, 2, 3), at("a", nan, 32, 1), at("a", ninf, 1, 0)),
		planted(perm(quant.BF16, "[16,3,5] permuted 0,2,1,3", []int64{16, 3, 5}, 0, 2, 1, 3), at("a", pinf, 2, 2, 4), at("a", nan, 15, 0, 0)),
		// Quantized rows read through a view that skips blocks: no
		// variant has one.
		refuse(Case{Name: "q4_0 rows not packed", Op: ops.OpCont, Types: types(quant.Q4_0),
			Build: func(b *Builder) (*ops.Tensor, error) {
				a := b.Leaf("a", quant.Q4_0, uni, 128, 2)
				if a == nil {
					return nil, b.Err()
				}
				return ops.Cont(b.View(a, []int64{64, 2}, []int64{2 * a.Nb[0], a.Nb[1]}, 0))
			}}),
	}
}
