package harness

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func init() { register(ssmConvDef) }

// ssmConvDef declares SSM_CONV: Mamba's depthwise causal convolution over
// a sequence's tokens and the state carried before them.
var ssmConvDef = OpDef{
	Op: ops.OpSSMConv, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
	Dims: []Dim{
		{DimDConv, 4, "convolution width"},
		{DimDInner, 1536, "channels"},
		{DimN, 1, "tokens per sequence"},
		{DimSeqs, 1, "sequences"},
	},
	Note:   "sx [d_conv-1+n, d_inner, seqs], c [d_conv, d_inner]",
	Shapes: []Dims{{DimDConv: 4, DimDInner: 4096, DimN: 1, DimSeqs: 1}, {DimDConv: 4, DimDInner: 4096, DimN: 512, DimSeqs: 1}},
	point: func(_ quant.Type, d Dims) (Case, error) {
		return ssmConv{dConv: d[DimDConv], dInner: d[DimDInner], tokens: d[DimN], seqs: d[DimSeqs]}.Case(), nil
	},
	cases: ssmConvCases,
	Tolerances: []Tolerance{
		{Type: AnyType, MaxNMSE: 1e-13, MaxRelErr: 1e-6,
			Reason: "f32 sums of d_conv products; observed NMSE 2.5e-15, rel 1e-7"},
	},
}

// ssmConv is an SSM_CONV variant: sx [dConv-1+tokens, dInner, seqs] and
// c [dConv, dInner].
type ssmConv struct {
	dConv, dInner, tokens, seqs int64
}

// Case returns the variant as a case.
func (s ssmConv) Case() Case {
	return Case{
		Name: fmt.Sprintf("d_conv=%d,d_inner=%d,n_t=%d,n_s=%d", s.dConv, s.dInner, s.tokens, s.seqs),
		Op:   ops.OpSSMConv, Types: types(quant.F32),
		Build: func(b *Builder) (*ops.Tensor, error) {
			sx := b.Leaf("sx", quant.F32, uni, s.dConv-1+s.tokens, s.dInner, s.seqs)
			c := b.Leaf("c", quant.F32, uni, s.dConv, s.dInner)
			return ops.SSMConv(sx, c)
		},
	}
}

// ssmConvCases covers prompt and decode steps, one channel, a kernel of
// width one, and mismatched channels.
func ssmConvCases() []Case {
	return []Case{
		ssmConv{4, 64, 5, 2}.Case(),
		ssmConv{4, 64, 1, 3}.Case(),
		ssmConv{4, 1, 7, 1}.Case(),
		ssmConv{1, 16, 4, 2}.Case(),
		ssmConv{4, 8, 0, 1}.Case(),
		large(ssmConv{4, 1536, 512, 1}.Case()),
		// A NaN in the input makes the outputs whose window holds it
		// NaN; in the weights, its channel's outputs.
		planted(ssmConv{4, 64, 5, 2}.Case(), at("sx", nan, 4, 7, 1), at("c", nan, 2, 30)),
		// Weights for another channel count: no variant has them.
		refuse(Case{Name: "sx 64 channels, c 32", Op: ops.OpSSMConv, Types: types(quant.F32),
			Build: func(b *Builder) (*ops.Tensor, error) {
				return ops.SSMConv(b.Leaf("sx", quant.F32, uni, 8, 64, 1), b.Leaf("c", quant.F32, uni, 4, 32))
			}}),
	}
}
