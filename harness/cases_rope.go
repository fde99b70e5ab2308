package harness

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// ropeShape is one ROPE case: a [d, heads, tokens].
type ropeShape struct {
	d, heads, tokens int64
	p                ops.RopeParams
	pos              Dist
	freqFactors      bool
	permuted         bool // a allocated [d, tokens, heads] and permuted
	extra            string
	tag              string
}

func (s ropeShape) name() string {
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

func ropeCase(s ropeShape) Case {
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
			ropeCase(ropeShape{d: 64, heads: 4, tokens: 5, p: p(64), pos: Ints(0, 2048)}),
			ropeCase(ropeShape{d: 64, heads: 4, tokens: 5, p: p(32), pos: Positions(7), extra: ",partial"}),
			ropeCase(ropeShape{d: 64, heads: 2, tokens: 6, p: yarn, pos: Ints(0, 16384)}),
			ropeCase(ropeShape{d: 64, heads: 2, tokens: 4, p: p(64), pos: Ints(0, 4096), freqFactors: true}),
			ropeCase(ropeShape{d: 128, heads: 2, tokens: 4, p: p(128), pos: Positions(100000), tag: "large-pos", extra: ",pos from 100000"}),
			ropeCase(ropeShape{d: 72, heads: 3, tokens: 3, p: p(72), pos: Ints(0, 512)}),
			ropeCase(ropeShape{d: 65, heads: 2, tokens: 3, p: p(64), pos: Ints(0, 512), extra: ",odd d"}),
			ropeCase(ropeShape{d: 64, heads: 4, tokens: 5, p: p(64), pos: Ints(0, 512), permuted: true}),
			ropeCase(ropeShape{d: 32, heads: 1, tokens: 1, p: p(32), pos: Positions(3)}),
			large(ropeCase(ropeShape{d: 128, heads: 32, tokens: 512, p: p(128), pos: Positions(0)})),
		)
	}
	cs = append(cs, ropeCase(ropeShape{d: 64, heads: 2, tokens: 0, p: ops.DefaultRopeParams(64, ops.RopeNeoX), pos: Positions(0), extra: " (no tokens)"}))
	bad := func(name string, d, tokens, nPos int64, p ops.RopeParams) Case {
		return refuse(Case{Name: name, Op: ops.OpRope, Types: types(quant.F32),
			Build: func(b *Builder) (*ops.Tensor, error) {
				return ops.Rope(b.Leaf("a", quant.F32, uni, d, 2, tokens), b.Leaf("pos", quant.I32, Positions(0), nPos), nil, p)
			}})
	}
	odd := ops.DefaultRopeParams(63, ops.RopeNormal)
	mode1 := ops.DefaultRopeParams(64, 1)
	cs = append(cs,
		bad("n_dims=63", 64, 3, 3, odd),
		bad("mode=1", 64, 3, 3, mode1),
		bad("4 positions for 3 tokens", 64, 3, 4, ops.DefaultRopeParams(64, ops.RopeNeoX)),
		bad("n_dims=66 > d=64", 64, 3, 3, ops.DefaultRopeParams(66, ops.RopeNeoX)),
	)
	return cs
}

func rmsNormCase(name string, ne []int64, in Dist, eps float32, permuted bool) Case {
	return Case{
		Name: name, Op: ops.OpRMSNorm, Types: types(quant.F32),
		Build: func(b *Builder) (*ops.Tensor, error) {
			var a *ops.Tensor
			if permuted {
				a = b.Permute(b.Leaf("a", quant.F32, in, ne[0], ne[2], ne[1]), 0, 2, 1, 3)
			} else {
				a = b.Leaf("a", quant.F32, in, ne...)
			}
			return ops.RMSNorm(a, eps)
		},
	}
}

// rmsNormCases covers 4-D inputs, odd rows, one column, a permuted input,
// large magnitudes and a refused eps.
func rmsNormCases() []Case {
	return []Case{
		rmsNormCase("ne=[512,4,2,1],eps=1e-6", []int64{512, 4, 2, 1}, uni, 1e-6, false),
		rmsNormCase("ne=[33,5],eps=1e-5", []int64{33, 5}, uni, 1e-5, false),
		rmsNormCase("ne=[1,7],eps=1e-6", []int64{1, 7}, uni, 1e-6, false),
		rmsNormCase("ne=[64,5,3],a permuted", []int64{64, 5, 3}, uni, 1e-6, true),
		rmsNormCase("ne=[256,3],values in [-1000,1000)", []int64{256, 3}, Uniform(-1000, 1000), 1e-5, false),
		large(rmsNormCase("ne=[4096,512]", []int64{4096, 512}, uni, 1e-6, false)),
		refuse(rmsNormCase("eps=-1", []int64{64, 2}, uni, -1, false)),
	}
}
