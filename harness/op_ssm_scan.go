package harness

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func init() { register(ssmScanDef) }

// ssmScanDef declares SSM_SCAN: the selective scan of Mamba-1 (a head per
// channel, A per channel and state) and Mamba-2 (heads of head_dim
// channels, a scalar A per head), each sequence from its own state slot.
var ssmScanDef = OpDef{
	Op: ops.OpSSMScan, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
	Dims: []Dim{
		{DimDState, 16, "state size"},
		{DimDInner, 1536, "channels (heads x head_dim)"},
		{DimHeadDim, 1, "head size: 1 for Mamba-1 (A per channel and state), more for Mamba-2 (scalar A per head)"},
		{DimN, 1, "tokens per sequence"},
		{DimSeqs, 1, "sequences"},
	},
	Note:   "one group of B and C; each sequence starts from its own state slot",
	Shapes: []Dims{{DimDState: 16, DimDInner: 4096, DimHeadDim: 1, DimN: 1, DimSeqs: 1}, {DimDState: 16, DimDInner: 4096, DimHeadDim: 1, DimN: 64, DimSeqs: 1}},
	point: func(_ quant.Type, d Dims) (Case, error) {
		hd, ds := d[DimHeadDim], d[DimDState]
		if d[DimDInner]%hd != 0 {
			return Case{}, shapeError("d_inner %d is not a multiple of head_dim %d", d[DimDInner], hd)
		}
		aRow := ds
		if hd > 1 {
			aRow = 1
		}
		return ssmScan{dState: ds, headDim: hd, nHead: d[DimDInner] / hd, nGroup: 1,
			tokens: d[DimN], seqs: d[DimSeqs], slots: d[DimSeqs], aRow: aRow}.Case(), nil
	},
	cases: ssmScanCases,
	Tolerances: []Tolerance{
		{Type: AnyType, MaxNMSE: 5e-13, MaxRelErr: 4e-6,
			Reason: "f32 exp/softplus and a recurrence over up to 64 tokens: rounding compounds per step; observed NMSE 4.4e-14, rel 3.9e-7"},
	},
}

// ssmScan is an SSM_SCAN variant. Mamba-1 has headDim 1, nHead = d_inner
// and a full A [dState, nHead]; Mamba-2 has scalar A per head (aRow 1).
type ssmScan struct {
	dState, headDim, nHead, nGroup, tokens, seqs, slots int64
	aRow                                                int64
	dt                                                  Dist   // the zero Dist means Uniform(-4, 1)
	extra                                               string // added to the name
}

func (s ssmScan) name() string {
	kind := "mamba1"
	if s.aRow == 1 {
		kind = "mamba2"
	}
	return fmt.Sprintf("%s,d_state=%d,head_dim=%d,heads=%d,groups=%d,tokens=%d,seqs=%d,slots=%d%s",
		kind, s.dState, s.headDim, s.nHead, s.nGroup, s.tokens, s.seqs, s.slots, s.extra)
}

// Case returns the variant as a case.
func (s ssmScan) Case() Case {
	if s.dt.isZero() {
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
	m1 := func(dState, dInner, tokens, seqs, slots int64) ssmScan {
		return ssmScan{dState: dState, headDim: 1, nHead: dInner, nGroup: 1, tokens: tokens, seqs: seqs, slots: slots, aRow: dState}
	}
	hot := m1(16, 32, 3, 2, 2)
	hot.dt, hot.extra = Uniform(15, 25), ",dt in [15,25)"
	return []Case{
		m1(16, 32, 4, 2, 3).Case(),
		m1(16, 32, 1, 1, 1).Case(),
		m1(4, 1, 6, 1, 2).Case(),
		hot.Case(),
		ssmScan{dState: 16, headDim: 8, nHead: 4, nGroup: 2, tokens: 5, seqs: 2, slots: 2, aRow: 1}.Case(),
		ssmScan{dState: 32, headDim: 4, nHead: 6, nGroup: 1, tokens: 1, seqs: 3, slots: 4, aRow: 1}.Case(),
		large(m1(16, 1536, 64, 2, 2).Case()),
		// A NaN in A, dt, x, B, C or the state makes the outputs it
		// reaches NaN (and the final states of those it reaches first).
		planted(m1(16, 32, 4, 2, 3).Case(), at("A", nan, 2, 5), at("dt", nan, 7, 1, 0)),
		planted(m1(16, 32, 4, 2, 2).Case(), at("x", nan, 0, 9, 2, 1), at("C", nan, 3, 0, 1, 0)),
		planted(ssmScan{dState: 16, headDim: 8, nHead: 4, nGroup: 2, tokens: 5, seqs: 2, slots: 2, aRow: 1}.Case(), at("A", nan, 0, 1), at("B", nan, 4, 1, 2, 0)),
		planted(ssmScan{dState: 16, headDim: 8, nHead: 4, nGroup: 2, tokens: 5, seqs: 2, slots: 2, aRow: 1}.Case(), at("s", nan, 0, 0, 3, 1), at("dt", nan, 2, 4, 0)),
		large(ssmScan{dState: 128, headDim: 64, nHead: 48, nGroup: 1, tokens: 32, seqs: 1, slots: 1, aRow: 1}.Case()),
		refuse(ssmScan{dState: 16, headDim: 8, nHead: 4, nGroup: 3, tokens: 2, seqs: 1, slots: 1, aRow: 1, extra: " (heads not a multiple of groups)"}.Case()),
		// More sequences than state slots: the variant draws one
		// distinct slot per sequence, so it cannot have them.
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
