package harness

import (
	"fmt"
	"slices"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// bLayout is how a MUL_MAT activation is laid out in memory.
type bLayout int

const (
	bContiguous bLayout = iota
	bPermuted           // allocated [k, b2, n, b3], permuted to [k, n, b2, b3]
	bTransposed         // allocated [n, k, b2, b3], transposed: nb[0] != element size
)

// mmShape is one MUL_MAT case: a [k, m, a2, a3] · b [k, n, b2, b3].
type mmShape struct {
	m, n, k        int64
	a2, a3, b2, b3 int64
	layout         bLayout
	bType          quant.Type
}

func (s mmShape) name() string {
	name := fmt.Sprintf("m=%d,n=%d,k=%d", s.m, s.n, s.k)
	if s.a2*s.a3*s.b2*s.b3 > 1 {
		name += fmt.Sprintf(",a=%dx%d,b=%dx%d", s.a2, s.a3, s.b2, s.b3)
	}
	switch s.layout {
	case bPermuted:
		name += ",b permuted"
	case bTransposed:
		name += ",b transposed"
	}
	return name
}

func mulMatCase(t quant.Type, s mmShape) Case {
	if s.a2 == 0 {
		s.a2, s.a3, s.b2, s.b3 = 1, 1, 1, 1
	}
	return Case{
		Name: s.name(), Op: ops.OpMulMat, Types: opTypes(t, s.bType),
		Build: func(b *Builder) (*ops.Tensor, error) {
			a := b.Leaf("a", t, uni, s.k, s.m, s.a2, s.a3)
			var x *ops.Tensor
			switch s.layout {
			case bPermuted:
				x = b.Permute(b.Leaf("b", s.bType, uni, s.k, s.b2, s.n, s.b3), 0, 2, 1, 3)
			case bTransposed:
				x = b.Transpose(b.Leaf("b", s.bType, uni, s.n, s.k, s.b2, s.b3))
			default:
				x = b.Leaf("b", s.bType, uni, s.k, s.n, s.b2, s.b3)
			}
			return ops.MulMat(a, x)
		},
	}
}

// mulMatCases covers every weight type: matrix-vector and matrix-matrix,
// one weight row, broadcasting in dims 2-3, a permuted activation, and row
// lengths the type refuses; some types also take a transposed or f16
// activation.
func mulMatCases() []Case {
	var cs []Case
	for _, t := range weightTypes() {
		k1, k2 := rowLen(t, 3), rowLen(t, 8)
		if t.BlockSize() == quant.QKK {
			k1, k2 = quant.QKK, 2*quant.QKK
		}
		f32 := quant.F32
		cs = append(cs,
			mulMatCase(t, mmShape{m: 16, n: 1, k: k1, bType: f32}),
			mulMatCase(t, mmShape{m: 24, n: 5, k: k2, bType: f32}),
			mulMatCase(t, mmShape{m: 1, n: 4, k: k1, bType: f32}),
			mulMatCase(t, mmShape{m: 8, n: 3, k: k1, a2: 2, a3: 1, b2: 4, b3: 3, bType: f32}),
			mulMatCase(t, mmShape{m: 12, n: 4, k: k1, a2: 1, a3: 1, b2: 2, b3: 1, layout: bPermuted, bType: f32}),
			// Enough activation rows for the gemm paths' wide tiles (16
			// columns for floats): two column panels and a partial one,
			// rows not a multiple of a tile's 4 or 6, broadcast batches.
			mulMatCase(t, mmShape{m: 37, n: 37, k: k2, a2: 2, a3: 1, b2: 2, b3: 1, bType: f32}),
			large(mulMatCase(t, mmShape{m: 4096, n: 1, k: 4096, bType: f32})),
			large(mulMatCase(t, mmShape{m: 512, n: 64, k: 4096, bType: f32})),
		)
		if slices.Contains([]quant.Type{quant.F32, quant.F16, quant.Q4_0, quant.Q8_0, quant.Q4_K}, t) {
			cs = append(cs, mulMatCase(t, mmShape{m: 8, n: 6, k: k1, a2: 1, a3: 1, b2: 1, b3: 1, layout: bTransposed, bType: f32}))
		}
		if t == quant.F32 || t == quant.F16 || t == quant.BF16 {
			// Two column blocks of the packed float path (128 columns
			// each) and k short of one chunk; activation rows permuted.
			cs = append(cs,
				mulMatCase(t, mmShape{m: 13, n: 130, k: k1, bType: f32}),
				mulMatCase(t, mmShape{m: 12, n: 20, k: k1, a2: 1, a3: 1, b2: 2, b3: 1, layout: bPermuted, bType: f32}))
		}
		if t == quant.F32 || t == quant.Q4_0 {
			cs = append(cs, mulMatCase(t, mmShape{m: 8, n: 0, k: k1, bType: f32}), mulMatCase(t, mmShape{m: 0, n: 3, k: k1, bType: f32}))
		}
		if slices.Contains([]quant.Type{quant.F32, quant.F16, quant.BF16, quant.Q4_0, quant.Q8_0}, t) {
			cs = append(cs, mulMatCase(t, mmShape{m: 16, n: 3, k: k1, bType: quant.F16}))
		}
		if bs := t.BlockSize(); bs > 1 {
			c := mulMatCase(t, mmShape{m: 4, n: 2, k: bs + 1, bType: f32})
			c.Name += " (not a block multiple)"
			cs = append(cs, refuse(c))
		}
	}
	cs = append(cs,
		refuse(Case{Name: "k=64 vs k=65", Op: ops.OpMulMat, Types: types(quant.F32),
			Build: func(b *Builder) (*ops.Tensor, error) {
				return ops.MulMat(b.Leaf("a", quant.F32, uni, 64, 4), b.Leaf("b", quant.F32, uni, 65, 2))
			}}),
		refuse(Case{Name: "a=3x1,b=4x1 (no broadcast)", Op: ops.OpMulMat, Types: types(quant.F16),
			Build: func(b *Builder) (*ops.Tensor, error) {
				return ops.MulMat(b.Leaf("a", quant.F16, uni, 64, 4, 3), b.Leaf("b", quant.F32, uni, 64, 2, 4))
			}}),
		refuse(Case{Name: "b=q8_0", Op: ops.OpMulMat, Types: types(quant.Q4_0, quant.Q8_0),
			Build: func(b *Builder) (*ops.Tensor, error) {
				return ops.MulMat(b.Leaf("a", quant.Q4_0, uni, 64, 4), b.Leaf("b", quant.Q8_0, uni, 64, 2))
			}}),
	)
	return cs
}

// mmIDShape is one MUL_MAT_ID case: experts [k, m, nExp], ids [used,
// tokens] drawn (distinct per token) from the first pool experts, b [k, b1,
// tokens].
type mmIDShape struct {
	m, k, nExp, used, tokens, b1, pool int64
}

func (s mmIDShape) name() string {
	name := fmt.Sprintf("m=%d,k=%d,experts=%d,used=%d,tokens=%d", s.m, s.k, s.nExp, s.used, s.tokens)
	if s.b1 == 1 && s.used > 1 {
		name += ",b shared"
	}
	if s.pool < s.nExp {
		name += fmt.Sprintf(",only %d experts routed", s.pool)
	}
	return name
}

func mulMatIDCase(t quant.Type, s mmIDShape, ids Dist) Case {
	return Case{
		Name: s.name(), Op: ops.OpMulMatID, Types: types(t),
		Build: func(b *Builder) (*ops.Tensor, error) {
			w := b.Leaf("experts", t, uni, s.k, s.m, s.nExp)
			x := b.Leaf("b", quant.F32, uni, s.k, s.b1, s.tokens)
			id := b.Leaf("ids", quant.I32, ids, s.used, s.tokens)
			return ops.MulMatID(w, x, id)
		},
	}
}

// mulMatIDCases covers a representative set of expert types: routing with
// one b row per used expert or one shared, a single token, experts that no
// token uses, ids out of range, and shapes the op refuses.
func mulMatIDCases() []Case {
	var cs []Case
	for _, t := range []quant.Type{quant.F32, quant.F16, quant.BF16, quant.Q4_0, quant.Q4_1, quant.Q8_0, quant.Q4_K, quant.Q6_K} {
		k := rowLen(t, 3)
		if t.BlockSize() == quant.QKK {
			k = quant.QKK
		}
		sh := func(m, nExp, used, tokens, b1, pool int64) mmIDShape {
			return mmIDShape{m: m, k: k, nExp: nExp, used: used, tokens: tokens, b1: b1, pool: pool}
		}
		cs = append(cs,
			mulMatIDCase(t, sh(16, 8, 2, 5, 2, 8), DistinctInts(0, 8)),
			mulMatIDCase(t, sh(16, 8, 2, 5, 1, 8), DistinctInts(0, 8)),
			mulMatIDCase(t, sh(8, 4, 4, 1, 4, 4), DistinctInts(0, 4)),
			mulMatIDCase(t, sh(12, 8, 2, 6, 2, 3), DistinctInts(0, 3)),
			large(mulMatIDCase(t, mmIDShape{m: 512, k: 2048, nExp: 16, used: 4, tokens: 32, b1: 4, pool: 16}, DistinctInts(0, 16))),
		)
	}
	cs = append(cs, mulMatIDCase(quant.Q4_0, mmIDShape{m: 8, k: 64, nExp: 4, used: 2, tokens: 0, b1: 2, pool: 4}, DistinctInts(0, 4)))
	for _, t := range []quant.Type{quant.F32, quant.Q4_0} {
		c := mulMatIDCase(t, mmIDShape{m: 8, k: 64, nExp: 4, used: 2, tokens: 3, b1: 2, pool: 4}, Ints(4, 5))
		c.Name += ",id=4 out of range"
		cs = append(cs, reject(c))
	}
	bad := mulMatIDCase(quant.F32, mmIDShape{m: 8, k: 64, nExp: 4, used: 2, tokens: 3, b1: 3, pool: 4}, DistinctInts(0, 4))
	bad.Name = "b1=3 for used=2"
	cs = append(cs, refuse(bad))
	cs = append(cs, refuse(Case{Name: "ids tokens=3, b tokens=2", Op: ops.OpMulMatID, Types: types(quant.Q8_0),
		Build: func(b *Builder) (*ops.Tensor, error) {
			w := b.Leaf("experts", quant.Q8_0, uni, 64, 8, 4)
			x := b.Leaf("b", quant.F32, uni, 64, 2, 2)
			id := b.Leaf("ids", quant.I32, DistinctInts(0, 4), 2, 3)
			return ops.MulMatID(w, x, id)
		}}))
	return cs
}
