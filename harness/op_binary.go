package harness

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func init() {
	register(binaryDef(ops.OpAdd, Tolerance{Type: AnyType, MaxNMSE: 1e-14, MaxRelErr: 2e-7,
		Reason: "one f32 rounding per element (NMSE at most 3.6e-15); observed NMSE 7.9e-16, rel 4.1e-8"}))
	register(binaryDef(ops.OpMul, Tolerance{Type: AnyType, MaxNMSE: 1e-14, MaxRelErr: 2e-7,
		Reason: "one f32 rounding per element (NMSE at most 3.6e-15); observed NMSE 6.5e-16, rel 3.4e-8"}))
}

// binaryDef declares ADD or MUL: f32 a with b (f32 or f16) repeated to
// a's shape, element by element.
func binaryDef(op ops.Op, tol Tolerance) OpDef {
	return OpDef{
		Op: op, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
		Dims:   []Dim{{DimK, 4096, "row length"}, {DimN, 32, "rows"}},
		Note:   "same-shaped f32 operands",
		Shapes: []Dims{{DimK: 4096, DimN: 32}},
		point: func(_ quant.Type, d Dims) (Case, error) {
			ne := []int64{d[DimK], d[DimN]}
			return binaryOp{op: op, aNe: ne, bNe: ne, bType: quant.F32, aIn: Uniform(-4, 4), bIn: Uniform(-4, 4)}.Case(), nil
		},
		cases:      func() []Case { return binaryCases(op) },
		Tolerances: []Tolerance{tol},
	}
}

// binaryOp is an ADD or MUL variant: a [aNe] f32 (from aIn, the zero Dist
// meaning Uniform(-1, 1)) and b [bNe] of bType (from bIn, the zero Dist
// meaning Uniform(-2, 2)).
type binaryOp struct {
	op        ops.Op
	aNe, bNe  []int64
	bType     quant.Type
	aPermuted bool // a allocated with dims 1 and 2 swapped and permuted
	aIn, bIn  Dist
}

// Case returns the variant as a case.
func (s binaryOp) Case() Case {
	name := fmt.Sprintf("a=%s,b=%s", shapeName(s.aNe...), shapeName(s.bNe...))
	if s.aPermuted {
		name += ",a permuted"
	}
	if s.aIn.isZero() {
		s.aIn = uni
	}
	if s.bIn.isZero() {
		s.bIn = Uniform(-2, 2)
	}
	return Case{
		Name: name, Op: s.op, Types: opTypes(quant.F32, s.bType),
		Build: func(b *Builder) (*ops.Tensor, error) {
			a := leafOrPermuted(b, "a", quant.F32, s.aIn, s.aPermuted, s.aNe)
			x := b.Leaf("b", s.bType, s.bIn, s.bNe...)
			if s.op == ops.OpAdd {
				return ops.Add(a, x)
			}
			return ops.Mul(a, x)
		},
	}
}

// binaryCases covers ADD or MUL: same shapes, b repeated along every
// dimension (including a shorter row), f16 b, a permuted a, one column,
// and a b that does not divide a.
func binaryCases(op ops.Op) []Case {
	f32, f16 := quant.F32, quant.F16
	c := func(aNe, bNe []int64, bt quant.Type, aPermuted bool) Case {
		return binaryOp{op: op, aNe: aNe, bNe: bNe, bType: bt, aPermuted: aPermuted}.Case()
	}
	return []Case{
		c([]int64{64, 5, 4, 2}, []int64{64, 5, 4, 2}, f32, false),
		c([]int64{64, 5, 4, 2}, []int64{64, 1, 1, 1}, f32, false),
		c([]int64{64, 5, 4, 2}, []int64{64, 5, 1, 2}, f32, false),
		c([]int64{64, 5, 4, 2}, []int64{64, 1, 4, 1}, f32, false),
		c([]int64{64, 5, 4}, []int64{32, 5, 1}, f32, false),
		c([]int64{48, 6, 2}, []int64{48, 6, 2}, f16, false),
		c([]int64{64, 5, 4}, []int64{64, 5, 4}, f32, true),
		c([]int64{1, 7, 3}, []int64{1, 7, 1}, f32, false),
		c([]int64{64, 0, 3}, []int64{64, 1, 1}, f32, false),
		large(c([]int64{4096, 512}, []int64{4096, 1}, f32, false)),
		refuse(c([]int64{64, 5}, []int64{48, 5}, f32, false)),
		// Non-finite inputs: NaN gives NaN, Inf Inf (and NaN where an
		// Inf meets its opposite or, for MUL, a zero).
		planted(c([]int64{64, 5, 4, 2}, []int64{64, 1, 4, 1}, f32, false), at("a", nan, 5, 2, 1, 1), at("b", nan, 9, 0, 3)),
		planted(c([]int64{64, 5, 4}, []int64{64, 5, 4}, f32, true), at("a", pinf, 0, 3, 1), at("b", ninf, 0, 1, 3), at("a", ninf, 63, 3, 4)),
		planted(c([]int64{48, 6, 2}, []int64{48, 6, 2}, f16, false), at("b", nan, 47, 5, 1), at("b", pinf, 0, 0, 0)),
	}
}
