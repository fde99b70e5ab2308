package harness

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func init() {
	register(unaryDef(ops.OpScale, func(a *ops.Tensor) (*ops.Tensor, error) { return ops.Scale(a, 0.5, 0.25) },
		Tolerance{Type: AnyType, MaxNMSE: 1e-14, MaxRelErr: 2e-7,
			Reason: "one f32 multiply-add per element; observed NMSE 2.4e-16, rel 4.4e-8"}))
	register(unaryDef(ops.OpSilu, ops.Silu,
		Tolerance{Type: AnyType, MaxNMSE: 1e-13, MaxRelErr: 1e-6,
			Reason: "f32 exp and division (a 2-ulp exp elsewhere gives ~1e-14); observed NMSE 1.8e-15, rel 1.1e-7"}))
	register(unaryDef(ops.OpGelu, ops.Gelu,
		Tolerance{Type: AnyType, MaxNMSE: 1e-13, MaxRelErr: 1e-6,
			Reason: "f32 tanh approximation computed directly (ggml's f16 lookup table would need ~1e-6); observed NMSE 1.4e-15, rel 8.7e-8"}))
}

// unaryDef declares an f32 element-wise op of one operand (SCALE by 0.5
// plus 0.25, SILU, GELU), built by f.
func unaryDef(op ops.Op, f func(a *ops.Tensor) (*ops.Tensor, error), tol Tolerance) OpDef {
	return OpDef{
		Op: op, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
		Dims:   []Dim{{DimK, 4096, "row length"}, {DimN, 32, "rows"}},
		Note:   "same-shaped f32 operands",
		Shapes: []Dims{{DimK: 4096, DimN: 32}},
		point: func(_ quant.Type, d Dims) (Case, error) {
			return unary{op: op, f: f, ne: []int64{d[DimK], d[DimN]}, in: Uniform(-4, 4)}.Case(quant.F32), nil
		},
		cases:      func() []Case { return unaryCases(op, f) },
		Tolerances: []Tolerance{tol},
	}
}

// unary is a variant of an element-wise op of one operand: a [ne] drawn
// from in.
type unary struct {
	op       ops.Op
	f        func(a *ops.Tensor) (*ops.Tensor, error)
	name     string
	ne       []int64
	in       Dist
	permuted bool // a allocated with dims 1 and 2 swapped and permuted
}

// Case returns the variant with an input of type t.
func (s unary) Case(t quant.Type) Case {
	return Case{
		Name: s.name, Op: s.op, Types: types(t),
		Build: func(b *Builder) (*ops.Tensor, error) {
			a := leafOrPermuted(b, "a", t, s.in, s.permuted, s.ne)
			if a == nil {
				return nil, b.Err()
			}
			return s.f(a)
		},
	}
}

// unaryCases covers SCALE, SILU or GELU: plain, saturating inputs, a
// permuted input, a single element, and an input type they refuse.
func unaryCases(op ops.Op, f func(a *ops.Tensor) (*ops.Tensor, error)) []Case {
	mk := func(name string, t quant.Type, in Dist, permuted bool, ne ...int64) Case {
		return unary{op: op, f: f, name: name, ne: ne, in: in, permuted: permuted}.Case(t)
	}
	f32 := quant.F32
	return []Case{
		mk("ne=[128,6,2]", f32, Uniform(-5, 5), false, 128, 6, 2),
		mk("ne=[33,3],values in [-50,50)", f32, Uniform(-50, 50), false, 33, 3),
		mk("ne=[64,5,3],a permuted", f32, Uniform(-5, 5), true, 64, 5, 3),
		mk("ne=[1,1]", f32, Uniform(-5, 5), false, 1, 1),
		large(mk("ne=[4096,512]", f32, Uniform(-5, 5), false, 4096, 512)),
		refuse(mk("ne=[64,2],a f16", quant.F16, uni, false, 64, 2)),
		// Non-finite inputs stay where they are: NaN gives NaN.
		planted(mk("ne=[128,6,2]", f32, Uniform(-5, 5), false, 128, 6, 2), at("a", nan, 3, 2, 1), at("a", nan, 127, 5, 1)),
		planted(mk("ne=[64,5,3],a permuted", f32, Uniform(-5, 5), true, 64, 5, 3), at("a", nan, 17, 1, 4)),
		planted(mk("ne=[33,3]", f32, Uniform(-5, 5), false, 33, 3), at("a", pinf, 0, 1)),
	}
}
