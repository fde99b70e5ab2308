package harness

import (
	"fmt"
	"math/rand/v2"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/reference"
)

func init() { register(mulMatIDDef) }

// mulMatIDDef declares MUL_MAT_ID: the matrix products of a MoE layer,
// each token's activation rows times the experts its ids pick.
var mulMatIDDef = OpDef{
	Op: ops.OpMulMatID, TypeRole: "expert weights", FlopBound: true,
	Types: weightTypes(), DefaultType: quant.Q4_0,
	Dims: []Dim{
		{DimM, 1024, "expert rows (output features)"},
		{DimN, 1, "tokens"},
		{DimK, 2048, "row length (input features)"},
		{DimExperts, 8, "experts"},
		{DimUsed, 2, "experts used per token"},
	},
	Note:   "experts [k, m, experts], one b row per used expert, ids distinct per token",
	Shapes: []Dims{{DimM: 1024, DimN: 1, DimK: 2048, DimExperts: 8, DimUsed: 2}, {DimM: 1024, DimN: 16, DimK: 2048, DimExperts: 8, DimUsed: 2}},
	point: func(t quant.Type, d Dims) (Case, error) {
		return mulMatID{m: d[DimM], k: d[DimK], nExp: d[DimExperts], used: d[DimUsed], tokens: d[DimN], b1: d[DimUsed], pool: d[DimExperts]}.Case(t), nil
	},
	cases:  mulMatIDCases,
	sample: sampleMulMatID,
	Tolerances: []Tolerance{
		{Type: quant.F32, MaxNMSE: 1e-11, MaxRelErr: 5e-6,
			Reason: "f32 experts: f32 dot products, as MUL_MAT (the bound grows with k); observed NMSE 1.8e-15, rel 5e-8 at k<=4096"},
		{Type: quant.F16, MaxNMSE: 1e-6, MaxRelErr: 3e-3,
			Reason: "f16 experts: activations rounded to f16, as MUL_MAT; observed NMSE 6.4e-8, rel 2.7e-4"},
		{Type: quant.BF16, MaxNMSE: 3e-5, MaxRelErr: 2e-2,
			Reason: "bf16 experts: activations rounded to bf16, as MUL_MAT; observed NMSE 2.9e-6, rel 2e-3"},
		{Type: AnyType, MaxNMSE: 4e-4, MaxRelErr: 8e-2,
			Reason: "quantized experts: activations quantized for the integer dot product, as MUL_MAT; observed NMSE 3.1e-5 (q8_0), rel 5.8e-3"},
	},
}

// mulMatID is a MUL_MAT_ID variant: experts [k, m, nExp] of the case's
// type, ids [used, tokens] drawn from ids (the zero Dist: distinct per
// token from the first pool experts), b [k, b1, tokens] f32.
type mulMatID struct {
	m, k, nExp, used, tokens, b1, pool int64
	ids                                Dist
}

func (s mulMatID) name() string {
	name := fmt.Sprintf("m=%d,k=%d,experts=%d,used=%d,tokens=%d", s.m, s.k, s.nExp, s.used, s.tokens)
	if s.b1 == 1 && s.used > 1 {
		name += ",b shared"
	}
	if s.pool < s.nExp {
		name += fmt.Sprintf(",only %d experts routed", s.pool)
	}
	return name
}

// Case returns the variant with experts of type t.
func (s mulMatID) Case(t quant.Type) Case {
	if s.ids.isZero() {
		s.ids = DistinctInts(0, s.pool)
	}
	return Case{
		Name: s.name(), Op: ops.OpMulMatID, Types: types(t),
		Build: func(b *Builder) (*ops.Tensor, error) {
			w := b.Leaf("experts", t, uni, s.k, s.m, s.nExp)
			x := b.Leaf("b", quant.F32, uni, s.k, s.b1, s.tokens)
			id := b.Leaf("ids", quant.I32, s.ids, s.used, s.tokens)
			return ops.MulMatID(w, x, id)
		},
	}
}

// mulMatIDCases covers a representative set of expert types (MXFP4 for
// gpt-oss's experts, IQ4_XS and the IQ1, IQ2 and IQ3 codebook formats for
// the IQ-quantized MoE files): routing with
// one b row per used expert or one shared, a single token, experts that no
// token uses, ids out of range, and shapes the op refuses.
func mulMatIDCases() []Case {
	var cs []Case
	for _, t := range []quant.Type{quant.F32, quant.F16, quant.BF16, quant.Q4_0, quant.Q4_1, quant.Q8_0, quant.Q4_K, quant.Q6_K, quant.MXFP4, quant.IQ4_XS,
		quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S, quant.IQ1_S, quant.IQ1_M} {
		k := rowLen(t, 3)
		if t.BlockSize() == quant.QKK {
			k = quant.QKK
		}
		sh := func(m, nExp, used, tokens, b1, pool int64) mulMatID {
			return mulMatID{m: m, k: k, nExp: nExp, used: used, tokens: tokens, b1: b1, pool: pool}
		}
		cs = append(cs,
			sh(16, 8, 2, 5, 2, 8).Case(t),
			sh(16, 8, 2, 5, 1, 8).Case(t),
			sh(8, 4, 4, 1, 4, 4).Case(t),
			sh(12, 8, 2, 6, 2, 3).Case(t),
			large(mulMatID{m: 512, k: 2048, nExp: 16, used: 4, tokens: 32, b1: 4, pool: 16}.Case(t)),
		)
	}
	// Non-finite inputs: a NaN in an expert's weights makes the rows of
	// the tokens routed to it NaN; a NaN activation its token's rows.
	for _, t := range []quant.Type{quant.F32, quant.F16, quant.Q4_0, quant.Q8_0, quant.Q4_K} {
		k := rowLen(t, 2)
		if t.BlockSize() == quant.QKK {
			k = quant.QKK
		}
		sh := mulMatID{m: 8, k: k, nExp: 4, used: 2, tokens: 5, b1: 2, pool: 4}
		cs = append(cs, planted(sh.Case(t), at("b", nan, 3, 1, 2)))
		if t.IsFloat() {
			cs = append(cs, planted(sh.Case(t), at("experts", nan, 1, 5, 0), at("experts", nan, 1, 5, 1), at("experts", nan, 1, 5, 2), at("experts", nan, 1, 5, 3)))
		}
	}
	cs = append(cs, mulMatID{m: 8, k: 64, nExp: 4, used: 2, tokens: 0, b1: 2, pool: 4}.Case(quant.Q4_0))
	for _, t := range []quant.Type{quant.F32, quant.Q4_0} {
		c := mulMatID{m: 8, k: 64, nExp: 4, used: 2, tokens: 3, b1: 2, pool: 4, ids: Ints(4, 5)}.Case(t)
		cs = append(cs, reject(suffixed(c, ",id=4 out of range")))
	}
	cs = append(cs,
		refuse(named(mulMatID{m: 8, k: 64, nExp: 4, used: 2, tokens: 3, b1: 3, pool: 4}.Case(quant.F32), "b1=3 for used=2")),
		// ids and b of different token counts: no variant has them.
		refuse(Case{Name: "ids tokens=3, b tokens=2", Op: ops.OpMulMatID, Types: types(quant.Q8_0),
			Build: func(b *Builder) (*ops.Tensor, error) {
				w := b.Leaf("experts", quant.Q8_0, uni, 64, 8, 4)
				x := b.Leaf("b", quant.F32, uni, 64, 2, 2)
				id := b.Leaf("ids", quant.I32, DistinctInts(0, 4), 2, 3)
				return ops.MulMatID(w, x, id)
			}}),
	)
	return cs
}

// sampleTokens is the number of tokens per sampled block of a
// MUL_MAT_ID: every slot of those tokens is computed.
const sampleTokens = 2

// sampleMulMatID samples blocks of sampleRows expert rows by sampleTokens
// tokens (every slot), with the matching ids and activation rows.
func sampleMulMatID(node *ops.Tensor, rng *rand.Rand) (idx []int64, want []float64, err error) {
	w, b, ids := node.Src[ops.MMIDExperts], node.Src[ops.MMIDInput], node.Src[ops.MMIDIDs]
	m, used, nt := node.Ne[0], node.Ne[1], node.Ne[2]
	for _, r0 := range sampleStarts(rng, m, sampleRows) {
		rows := min(sampleRows, m-r0)
		wv, err := ops.View(w, []int64{w.Ne[0], rows, w.Ne[2]}, w.Nb[:3], r0*w.Nb[1])
		if err != nil {
			return nil, nil, err
		}
		for _, t0 := range sampleStarts(rng, nt, sampleTokens) {
			toks := min(sampleTokens, nt-t0)
			bv, err := ops.View(b, []int64{b.Ne[0], b.Ne[1], toks}, b.Nb[:3], t0*b.Nb[2])
			if err != nil {
				return nil, nil, err
			}
			iv, err := ops.View(ids, []int64{ids.Ne[0], toks}, ids.Nb[:2], t0*ids.Nb[1])
			if err != nil {
				return nil, nil, err
			}
			sub, err := ops.MulMatID(wv, bv, iv)
			if err != nil {
				return nil, nil, err
			}
			vals, err := reference.Compute(sub)
			if err != nil {
				return nil, nil, err
			}
			// vals is [rows, used, toks]; the node's output [m, used, nt].
			for t := range toks {
				for e := range used {
					for r := range rows {
						idx = append(idx, r0+r+m*(e+used*(t0+t)))
						want = append(want, vals[r+rows*(e+used*t)])
					}
				}
			}
		}
	}
	return idx, want, nil
}
