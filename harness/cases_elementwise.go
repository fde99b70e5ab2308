package harness

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// leafOrPermuted allocates a leaf of shape ne, or when permuted one with
// dims 1 and 2 swapped, permuted back to ne (non-contiguous).
func leafOrPermuted(b *Builder, name string, t quant.Type, d Dist, permuted bool, ne []int64) *ops.Tensor {
	if !permuted {
		return b.Leaf(name, t, d, ne...)
	}
	full := []int64{1, 1, 1, 1}
	copy(full, ne)
	full[1], full[2] = full[2], full[1]
	return b.Permute(b.Leaf(name, t, d, full...), 0, 2, 1, 3)
}

func binaryCase(op ops.Op, aNe, bNe []int64, bt quant.Type, aPermuted bool) Case {
	name := fmt.Sprintf("a=%s,b=%s", shapeName(aNe...), shapeName(bNe...))
	if aPermuted {
		name += ",a permuted"
	}
	return Case{
		Name: name, Op: op, Types: opTypes(quant.F32, bt),
		Build: func(b *Builder) (*ops.Tensor, error) {
			a := leafOrPermuted(b, "a", quant.F32, uni, aPermuted, aNe)
			x := b.Leaf("b", bt, Uniform(-2, 2), bNe...)
			if op == ops.OpAdd {
				return ops.Add(a, x)
			}
			return ops.Mul(a, x)
		},
	}
}

// binaryCases covers ADD and MUL: same shapes, b repeated along every
// dimension (including a shorter row), f16 b, a permuted a, one column,
// and a b that does not divide a.
func binaryCases() []Case {
	var cs []Case
	f32, f16 := quant.F32, quant.F16
	for _, op := range []ops.Op{ops.OpAdd, ops.OpMul} {
		cs = append(cs,
			binaryCase(op, []int64{64, 5, 4, 2}, []int64{64, 5, 4, 2}, f32, false),
			binaryCase(op, []int64{64, 5, 4, 2}, []int64{64, 1, 1, 1}, f32, false),
			binaryCase(op, []int64{64, 5, 4, 2}, []int64{64, 5, 1, 2}, f32, false),
			binaryCase(op, []int64{64, 5, 4, 2}, []int64{64, 1, 4, 1}, f32, false),
			binaryCase(op, []int64{64, 5, 4}, []int64{32, 5, 1}, f32, false),
			binaryCase(op, []int64{48, 6, 2}, []int64{48, 6, 2}, f16, false),
			binaryCase(op, []int64{64, 5, 4}, []int64{64, 5, 4}, f32, true),
			binaryCase(op, []int64{1, 7, 3}, []int64{1, 7, 1}, f32, false),
			binaryCase(op, []int64{64, 0, 3}, []int64{64, 1, 1}, f32, false),
			large(binaryCase(op, []int64{4096, 512}, []int64{4096, 1}, f32, false)),
			refuse(binaryCase(op, []int64{64, 5}, []int64{48, 5}, f32, false)),
		)
	}
	return cs
}

// unaryCases covers SCALE, SILU and GELU: plain, saturating inputs, a
// permuted input, a single element, and an input type they refuse.
func unaryCases() []Case {
	type unary struct {
		op    ops.Op
		build func(a *ops.Tensor) (*ops.Tensor, error)
	}
	fns := []unary{
		{ops.OpScale, func(a *ops.Tensor) (*ops.Tensor, error) { return ops.Scale(a, 0.5, 0.25) }},
		{ops.OpSilu, ops.Silu},
		{ops.OpGelu, ops.Gelu},
	}
	var cs []Case
	for _, u := range fns {
		mk := func(name string, t quant.Type, in Dist, permuted bool, ne ...int64) Case {
			return Case{
				Name: name, Op: u.op, Types: types(t),
				Build: func(b *Builder) (*ops.Tensor, error) {
					a := leafOrPermuted(b, "a", t, in, permuted, ne)
					if a == nil {
						return nil, b.Err()
					}
					return u.build(a)
				},
			}
		}
		f32 := quant.F32
		cs = append(cs,
			mk("ne=[128,6,2]", f32, Uniform(-5, 5), false, 128, 6, 2),
			mk("ne=[33,3],values in [-50,50)", f32, Uniform(-50, 50), false, 33, 3),
			mk("ne=[64,5,3],a permuted", f32, Uniform(-5, 5), true, 64, 5, 3),
			mk("ne=[1,1]", f32, Uniform(-5, 5), false, 1, 1),
			large(mk("ne=[4096,512]", f32, Uniform(-5, 5), false, 4096, 512)),
			refuse(mk("ne=[64,2],a f16", quant.F16, uni, false, 64, 2)),
		)
	}
	return cs
}

func swigluCase(name string, ne []int64, split, swapped bool) Case {
	return Case{
		Name: name, Op: ops.OpSwiGLU, Types: types(quant.F32),
		Build: func(b *Builder) (*ops.Tensor, error) {
			a := b.Leaf("a", quant.F32, Uniform(-4, 4), ne...)
			if split {
				return ops.SwiGLU(a, nil, swapped)
			}
			return ops.SwiGLU(a, b.Leaf("b", quant.F32, Uniform(-4, 4), ne...), false)
		},
	}
}

// swigluCases covers split rows (both orders), two sources, the smallest
// split, and odd rows or mismatched shapes it refuses.
func swigluCases() []Case {
	return []Case{
		swigluCase("split,ne=[128,6]", []int64{128, 6}, true, false),
		swigluCase("split swapped,ne=[128,6]", []int64{128, 6}, true, true),
		swigluCase("two sources,ne=[64,6,2]", []int64{64, 6, 2}, false, false),
		swigluCase("split,ne=[2,3]", []int64{2, 3}, true, false),
		large(swigluCase("split,ne=[28672,64]", []int64{28672, 64}, true, false)),
		refuse(swigluCase("split,ne=[127,2]", []int64{127, 2}, true, false)),
		refuse(Case{Name: "a=[64,2],b=[64,3]", Op: ops.OpSwiGLU, Types: types(quant.F32),
			Build: func(b *Builder) (*ops.Tensor, error) {
				return ops.SwiGLU(b.Leaf("a", quant.F32, uni, 64, 2), b.Leaf("b", quant.F32, uni, 64, 3), false)
			}}),
	}
}

func argsortCase(name string, in Dist, order ops.SortOrder, permuted bool, ne ...int64) Case {
	return Case{
		Name: name + "," + order.String(), Op: ops.OpArgsort, Types: types(quant.F32),
		Build: func(b *Builder) (*ops.Tensor, error) {
			return ops.Argsort(leafOrPermuted(b, "a", quant.F32, in, permuted, ne), order)
		},
	}
}

// argsortCases covers both orders, rows full of ties (the sort must be
// stable), one column, a long row, a permuted input and an unknown order.
func argsortCases() []Case {
	var cs []Case
	for _, o := range []ops.SortOrder{ops.SortAsc, ops.SortDesc} {
		cs = append(cs,
			argsortCase("ne=[64,5]", uni, o, false, 64, 5),
			argsortCase("ne=[100,4],ties", Ints(0, 4), o, false, 100, 4),
			argsortCase("ne=[1,6]", uni, o, false, 1, 6),
			argsortCase("ne=[300,2]", Normal(0, 10), o, false, 300, 2),
			argsortCase("ne=[32,3,4],a permuted", uni, o, true, 32, 3, 4),
			large(argsortCase("ne=[256,4096]", uni, o, false, 256, 4096)),
		)
	}
	cs = append(cs, refuse(argsortCase("ne=[8,2]", uni, ops.SortOrder(7), false, 8, 2)))
	return cs
}

func sumRowsCase(name string, t quant.Type, permuted bool, ne ...int64) Case {
	return Case{
		Name: name, Op: ops.OpSumRows, Types: types(t),
		Build: func(b *Builder) (*ops.Tensor, error) {
			return ops.SumRows(leafOrPermuted(b, "a", t, uni, permuted, ne))
		},
	}
}

// sumRowsCases covers 4-D inputs, one column, a permuted input, odd rows
// and an input type it refuses.
func sumRowsCases() []Case {
	f32 := quant.F32
	return []Case{
		sumRowsCase("ne=[256,5,3,2]", f32, false, 256, 5, 3, 2),
		sumRowsCase("ne=[1,4]", f32, false, 1, 4),
		sumRowsCase("ne=[64,5,3],a permuted", f32, true, 64, 5, 3),
		sumRowsCase("ne=[33,1]", f32, false, 33, 1),
		large(sumRowsCase("ne=[4096,512]", f32, false, 4096, 512)),
		refuse(sumRowsCase("ne=[64,2],a f16", quant.F16, false, 64, 2)),
	}
}
