package harness

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func init() { register(ropeDef) }

// ropeDef declares ROPE: rotary position embeddings in normal and NeoX
// modes, with partial rotation, YaRN scaling and frequency factors.
var ropeDef = OpDef{
	Op: ops.OpRope, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
	Dims: []Dim{
		{DimD, 128, "head size (all of it rotated)"},
		{DimHeads, 32, "heads"},
		{DimN, 1, "tokens"},
	},
	Note:   "normal mode, base 10000, positions 0..n-1",
	Shapes: []Dims{{DimD: 128, DimHeads: 32, DimN: 1}, {DimD: 128, DimHeads: 32, DimN: 512}},
	point: func(_ quant.Type, d Dims) (Case, error) {
		return rope{d: d[DimD], heads: d[DimHeads], tokens: d[DimN],
			p: ops.DefaultRopeParams(int(d[DimD]), ops.RopeNormal), pos: Positions(0)}.Case(), nil
	},
	cases: ropeCases,
	Tolerances: []Tolerance{
		{Type: AnyType, Tag: "large-pos", MaxNMSE: 1e-5, MaxRelErr: 2e-2,
			Reason: "positions near 1e5: observed NMSE 1.7e-15 (angles in float64), but an angle of 1e5 rad in f32, as ggml computes it, is off by ~6e-3 rad, NMSE ~2e-6 at d=128; an off-by-one position gives ~6e-2"},
		{Type: AnyType, MaxNMSE: 1e-13, MaxRelErr: 2e-6,
			Reason: "f32 sin/cos of angles up to ~16000 rad; observed NMSE 2.1e-15, rel 1.2e-7"},
	},
}

// rope is a ROPE variant: a [d, heads, tokens] f32, positions drawn from
// pos.
type rope struct {
	d, heads, tokens int64
	p                ops.RopeParams
	pos              Dist
	freqFactors      bool
	permuted         bool   // a allocated [d, tokens, heads] and permuted
	extra            string // added to the name
	tag              string // the case's tolerance tag
}

func (s rope) name() string {
	mode := "normal"
	if s.p.Mode == ops.RopeNeoX {
		mode = "neox"
	}
	n := fmt.Sprintf("%s,d=%d,n_dims=%d,heads=%d,tokens=%d", mode, s.d, s.p.NDims, s.heads, s.tokens)
	if s.p.FreqScale != 1 || s.p.ExtFactor != 0 {
		n += fmt.Sprintf(",yarn freq_scale=%g ext=%g n_ctx_orig=%d", s.p.FreqScale, s.p.ExtFactor, s.p.NCtxOrig)
	}
	if s.freqFactors {
		n += ",freq_factors"
	}
	if s.permuted {
		n += ",a permuted"
	}
	return n + s.extra
}

// Case returns the variant as a case.
func (s rope) Case() Case {
	return Case{
		Name: s.name(), Op: ops.OpRope, Types: types(quant.F32), Tag: s.tag,
		Build: func(b *Builder) (*ops.Tensor, error) {
			var a *ops.Tensor
			if s.permuted {
				a = b.Permute(b.Leaf("a", quant.F32, uni, s.d, s.tokens, s.heads), 0, 2, 1, 3)
			} else {
				a = b.Leaf("a", quant.F32, uni, s.d, s.heads, s.tokens)
			}
			pos := b.Leaf("pos", quant.I32, s.pos, s.tokens)
			var ff *ops.Tensor
			if s.freqFactors {
				ff = b.Leaf("freq_factors", quant.F32, Uniform(1, 8), int64(s.p.NDims/2))
			}
			return ops.Rope(a, pos, ff, s.p)
		},
	}
}

// ropeCases covers both modes, partial rotation, YaRN scaling, frequency
// factors, positions near 1e5, head sizes that are not powers of two (and
// an odd one with a partial rotation), a permuted input, one token of one
// head, and refused parameters.
func ropeCases() []Case {
	var cs []Case
	for _, mode := range []int{ops.RopeNormal, ops.RopeNeoX} {
		p := func(nDims int) ops.RopeParams { return ops.DefaultRopeParams(nDims, mode) }
		yarn := p(64)
		yarn.FreqScale, yarn.ExtFactor, yarn.NCtxOrig = 0.25, 1, 4096
		cs = append(cs,
			rope{d: 64, heads: 4, tokens: 5, p: p(64), pos: Ints(0, 2048)}.Case(),
			rope{d: 64, heads: 4, tokens: 5, p: p(32), pos: Positions(7), extra: ",partial"}.Case(),
			rope{d: 64, heads: 2, tokens: 6, p: yarn, pos: Ints(0, 16384)}.Case(),
			rope{d: 64, heads: 2, tokens: 4, p: p(64), pos: Ints(0, 4096), freqFactors: true}.Case(),
			rope{d: 128, heads: 2, tokens: 4, p: p(128), pos: Positions(100000), tag: "large-pos", extra: ",pos from 100000"}.Case(),
			rope{d: 72, heads: 3, tokens: 3, p: p(72), pos: Ints(0, 512)}.Case(),
			rope{d: 65, heads: 2, tokens: 3, p: p(64), pos: Ints(0, 512), extra: ",odd d"}.Case(),
			rope{d: 64, heads: 4, tokens: 5, p: p(64), pos: Ints(0, 512), permuted: true}.Case(),
			rope{d: 32, heads: 1, tokens: 1, p: p(32), pos: Positions(3)}.Case(),
			large(rope{d: 128, heads: 32, tokens: 512, p: p(128), pos: Positions(0)}.Case()),
			// A NaN makes the pair it is rotated with NaN.
			planted(rope{d: 64, heads: 4, tokens: 5, p: p(64), pos: Ints(1, 2048)}.Case(), at("a", nan, 5, 1, 2), at("a", nan, 63, 3, 4)),
			planted(rope{d: 64, heads: 4, tokens: 5, p: p(32), pos: Positions(7), extra: ",partial"}.Case(), at("a", nan, 40, 0, 1)),
		)
	}
	cs = append(cs, rope{d: 64, heads: 2, tokens: 0, p: ops.DefaultRopeParams(64, ops.RopeNeoX), pos: Positions(0), extra: " (no tokens)"}.Case())
	bad := func(name string, p ops.RopeParams) Case {
		return refuse(named(rope{d: 64, heads: 2, tokens: 3, p: p, pos: Positions(0)}.Case(), name))
	}
	cs = append(cs,
		bad("n_dims=63", ops.DefaultRopeParams(63, ops.RopeNormal)),
		bad("mode=1", ops.DefaultRopeParams(64, 1)),
		// Positions of another count than the tokens: no variant has
		// them.
		refuse(Case{Name: "4 positions for 3 tokens", Op: ops.OpRope, Types: types(quant.F32),
			Build: func(b *Builder) (*ops.Tensor, error) {
				return ops.Rope(b.Leaf("a", quant.F32, uni, 64, 2, 3), b.Leaf("pos", quant.I32, Positions(0), 4), nil, ops.DefaultRopeParams(64, ops.RopeNeoX))
			}}),
		bad("n_dims=66 > d=64", ops.DefaultRopeParams(66, ops.RopeNeoX)),
	)
	return cs
}
