package harness

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func ssmConvCase(dConv, dInner, nt, ns int64) Case {
	return Case{
		Name: fmt.Sprintf("d_conv=%d,d_inner=%d,n_t=%d,n_s=%d", dConv, dInner, nt, ns),
		Op:   ops.OpSSMConv, Types: types(quant.F32),
		Build: func(b *Builder) (*ops.Tensor, error) {
			sx := b.Leaf("sx", quant.F32, uni, dConv-1+nt, dInner, ns)
			c := b.Leaf("c", quant.F32, uni, dConv, dInner)
			return ops.SSMConv(sx, c)
		},
	}
}

// ssmConvCases covers prompt and decode steps, one channel, a kernel of
// width one, and mismatched channels.
func ssmConvCases() []Case {
	return []Case{
		ssmConvCase(4, 64, 5, 2),
		ssmConvCase(4, 64, 1, 3),
		ssmConvCase(4, 1, 7, 1),
		ssmConvCase(1, 16, 4, 2),
		ssmConvCase(4, 8, 0, 1),
		large(ssmConvCase(4, 1536, 512, 1)),
		refuse(Case{Name: "sx 64 channels, c 32", Op: ops.OpSSMConv, Types: types(quant.F32),
			Build: func(b *Builder) (*ops.Tensor, error) {
				return ops.SSMConv(b.Leaf("sx", quant.F32, uni, 8, 64, 1), b.Leaf("c", quant.F32, uni, 4, 32))
			}}),
	}
}

// scanShape is one SSM_SCAN case. Mamba-1 has headDim 1, nHead = d_inner
// and a full A [dState, nHead]; Mamba-2 has scalar A per head (aRow 1).
type scanShape struct {
	dState, headDim, nHead, nGroup, tokens, seqs, slots int64
	aRow                                                int64
	dt                                                  Dist // the zero Dist means Uniform(-4, 1)
	extra                                               string
}

func (s scanShape) name() string {
	kind := "mamba1"
	if s.aRow == 1 {
		kind = "mamba2"
	}
	return fmt.Sprintf("%s,d_state=%d,head_dim=%d,heads=%d,groups=%d,tokens=%d,seqs=%d,slots=%d%s",
		kind, s.dState, s.headDim, s.nHead, s.nGroup, s.tokens, s.seqs, s.slots, s.extra)
}

func ssmScanCase(s scanShape) Case {
	if s.dt.Kind == DistUniform && s.dt.Lo == 0 && s.dt.Hi == 0 {
		s.dt = Uniform(-4, 1)
	}
	return Case{
		Name: s.name(), Op: ops.OpSSMScan, Types: types(quant.F32),
		Build: func(b *Builder) (*ops.Tensor, error) {
			st := b.Leaf("s", quant.F32, Normal(0, 1), s.dState, s.headDim, s.nHead, s.slots)
			x := b.Leaf("x", quant.F32, uni, s.headDim, s.nHead, s.tokens, s.seqs)
			dt := b.Leaf("dt", quant.F32, s.dt, s.nHead, s.tokens, s.seqs)
			a := b.Leaf("A", quant.F32, Uniform(-4, -0.5), s.aRow, s.nHead)
			bb := b.Leaf("B", quant.F32, Normal(0, 1), s.dState, s.nGroup, s.tokens, s.seqs)
			c := b.Leaf("C", quant.F32, Normal(0, 1), s.dState, s.nGroup, s.tokens, s.seqs)
			ids := b.Leaf("ids", quant.I32, DistinctInts(0, s.slots), s.seqs)
			return ops.SSMScan(st, x, dt, a, bb, c, ids)
		},
	}
}

// ssmScanCases covers Mamba-1 and Mamba-2 heads, prompt and decode steps,
// sequences starting from other state slots, dt past softplus's threshold,
// and refused shapes.
func ssmScanCases() []Case {
	m1 := func(dState, dInner, tokens, seqs, slots int64) scanShape {
		return scanShape{dState: dState, headDim: 1, nHead: dInner, nGroup: 1, tokens: tokens, seqs: seqs, slots: slots, aRow: dState}
	}
	hot := m1(16, 32, 3, 2, 2)
	hot.dt, hot.extra = Uniform(15, 25), ",dt in [15,25)"
	return []Case{
		ssmScanCase(m1(16, 32, 4, 2, 3)),
		ssmScanCase(m1(16, 32, 1, 1, 1)),
		ssmScanCase(m1(4, 1, 6, 1, 2)),
		ssmScanCase(hot),
		ssmScanCase(scanShape{dState: 16, headDim: 8, nHead: 4, nGroup: 2, tokens: 5, seqs: 2, slots: 2, aRow: 1}),
		ssmScanCase(scanShape{dState: 32, headDim: 4, nHead: 6, nGroup: 1, tokens: 1, seqs: 3, slots: 4, aRow: 1}),
		large(ssmScanCase(m1(16, 1536, 64, 2, 2))),
		large(ssmScanCase(scanShape{dState: 128, headDim: 64, nHead: 48, nGroup: 1, tokens: 32, seqs: 1, slots: 1, aRow: 1})),
		refuse(ssmScanCase(scanShape{dState: 16, headDim: 8, nHead: 4, nGroup: 3, tokens: 2, seqs: 1, slots: 1, aRow: 1, extra: " (heads not a multiple of groups)"})),
		refuse(Case{Name: "2 sequences, 1 state slot", Op: ops.OpSSMScan, Types: types(quant.F32),
			Build: func(b *Builder) (*ops.Tensor, error) {
				st := b.Leaf("s", quant.F32, uni, 16, 1, 8, 1)
				x := b.Leaf("x", quant.F32, uni, 1, 8, 2, 2)
				dt := b.Leaf("dt", quant.F32, uni, 8, 2, 2)
				a := b.Leaf("A", quant.F32, uni, 16, 8)
				bb := b.Leaf("B", quant.F32, uni, 16, 1, 2, 2)
				c := b.Leaf("C", quant.F32, uni, 16, 1, 2, 2)
				ids := b.Leaf("ids", quant.I32, Ints(0, 1), 2)
				return ops.SSMScan(st, x, dt, a, bb, c, ids)
			}}),
	}
}
