package cpu

import (
	"math"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// Tolerances (NMSE against the float64 reference) of the state-space ops.
const (
	// tolSSMConv: a float32 sum of d_conv products.
	tolSSMConv = 1e-12
	// tolSSMScan: float32 state updates and d_state-long float32 dot
	// products, the error growing over the tokens; NMSE about 1e-13.
	tolSSMScan = 1e-10
)

func TestSSMConv(t *testing.T) {
	type build = func(e *rowOpEnv) *ops.Tensor
	conv := func(sx, c build) build {
		return func(e *rowOpEnv) *ops.Tensor { return mustNode(e.t)(ops.SSMConv(sx(e), c(e))) }
	}
	f32 := func(ne ...int64) build {
		return func(e *rowOpEnv) *ops.Tensor { return e.f32(ne...) }
	}
	runRowOpCases(t, tolSSMConv, []rowOpCase{
		{"prompt", conv(f32(3+5, 16, 2), f32(4, 16))},
		{"generate", conv(f32(3+1, 32, 3), f32(4, 32))},
		{"d-conv-1", conv(f32(6, 8, 2), f32(1, 8))},
		{"one-channel", conv(f32(3+7, 1, 1), f32(4, 1))},
		{"permuted-sx", conv(func(e *rowOpEnv) *ops.Tensor { return e.permuted([]int64{12, 3 + 6, 2}, 1, 0, 2, 3) }, f32(4, 12))},
		{"strided-c", conv(f32(3+4, 6, 2), func(e *rowOpEnv) *ops.Tensor { return e.strided([4]int64{4, 6, 1, 1}, 2, 1) })},
		{"no-tokens", conv(f32(3, 8, 2), f32(4, 8))},
		{"no-sequences", conv(f32(3+2, 8, 0), f32(4, 8))},
	})
}

// scanShape describes an SSM_SCAN case.
type scanShape struct {
	dState, headDim, nHead, nGroup, nTok, nSeqs, nRS int64
	mamba2                                           bool
	ids                                              []float64
}

// scan builds an SSM_SCAN node of shape sh. The hooks may replace an
// operand (by position) before the node is built.
func (e *rowOpEnv) scan(sh scanShape, hook func(srcs []*ops.Tensor)) *ops.Tensor {
	e.t.Helper()
	s := e.f32(sh.dState, sh.headDim, sh.nHead, sh.nRS)
	x := e.f32(sh.headDim, sh.nHead, sh.nTok, sh.nSeqs)
	dt := e.leaf(quant.F32, []int64{sh.nHead, sh.nTok, sh.nSeqs}, e.uniform(sh.nHead*sh.nTok*sh.nSeqs, -4, 3))
	aLen := sh.dState
	if sh.mamba2 {
		aLen = 1
	}
	av := e.uniform(aLen*sh.nHead, -1, 1.5)
	for i := range av {
		av[i] = -math.Exp(av[i])
	}
	A := e.leaf(quant.F32, []int64{aLen, sh.nHead}, av)
	B := e.f32(sh.dState, sh.nGroup, sh.nTok, sh.nSeqs)
	C := e.f32(sh.dState, sh.nGroup, sh.nTok, sh.nSeqs)
	ids := e.leaf(quant.I32, []int64{sh.nSeqs}, sh.ids)
	srcs := []*ops.Tensor{s, x, dt, A, B, C, ids}
	if hook != nil {
		hook(srcs)
	}
	return mustNode(e.t)(ops.SSMScan(srcs[0], srcs[1], srcs[2], srcs[3], srcs[4], srcs[5], srcs[6]))
}

func TestSSMScan(t *testing.T) {
	mamba1 := scanShape{dState: 16, headDim: 1, nHead: 24, nGroup: 1, nTok: 5, nSeqs: 2, nRS: 3, ids: []float64{2, 0}}
	mamba2 := scanShape{dState: 32, headDim: 8, nHead: 6, nGroup: 2, nTok: 4, nSeqs: 2, nRS: 2, mamba2: true, ids: []float64{1, 1}}
	with := func(sh scanShape, edit func(*scanShape)) scanShape {
		sh.ids = append([]float64(nil), sh.ids...)
		edit(&sh)
		return sh
	}
	for _, tc := range []struct {
		name string
		sh   scanShape
		hook func(e *rowOpEnv, srcs []*ops.Tensor)
	}{
		{"mamba1", mamba1, nil},
		{"mamba2-groups", mamba2, nil},
		{"mamba2-groups-per-head", with(mamba2, func(s *scanShape) { s.nGroup = 6 }), nil},
		{"mamba1-head-dim", with(mamba1, func(s *scanShape) { s.headDim, s.nHead = 4, 6 }), nil},
		{"one-token", with(mamba1, func(s *scanShape) { s.nTok = 1 }), nil},
		{"no-tokens-keeps-states", with(mamba2, func(s *scanShape) { s.nTok = 0 }), nil},
		{"one-state", with(mamba1, func(s *scanShape) { s.dState, s.nHead = 1, 3 }), nil},
		{"dt-above-20", mamba1, func(e *rowOpEnv, srcs []*ops.Tensor) {
			v := e.uniform(24*5*2, 15, 25)
			srcs[ops.ScanDt] = e.leaf(quant.F32, []int64{24, 5, 2}, v)
			srcs[ops.ScanA] = e.leaf(quant.F32, []int64{16, 24}, e.uniform(16*24, -0.2, -0.01))
		}},
		{"permuted-x", mamba2, func(e *rowOpEnv, srcs []*ops.Tensor) {
			// x [8, 6, 4, 2] as a view of a [6, 8, 2, 4] leaf.
			srcs[ops.ScanX] = e.permuted([]int64{6, 8, 2, 4}, 1, 0, 3, 2)
		}},
		{"strided-B-C", mamba1, func(e *rowOpEnv, srcs []*ops.Tensor) {
			srcs[ops.ScanB] = e.strided([4]int64{16, 1, 5, 2}, 2, 3)
			srcs[ops.ScanC] = e.permuted([]int64{16, 5, 1, 2}, 0, 2, 1, 3)
		}},
		{"strided-state", mamba2, func(e *rowOpEnv, srcs []*ops.Tensor) {
			srcs[ops.ScanState] = e.strided([4]int64{32, 8, 6, 2}, 1, 4)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newRowOpEnv(t)
			var hook func(srcs []*ops.Tensor)
			if tc.hook != nil {
				hook = func(srcs []*ops.Tensor) { tc.hook(e, srcs) }
			}
			e.check(e.scan(tc.sh, hook), tolSSMScan)
		})
	}
}

// TestSSMScanBadID checks that a state slot id out of range is an error.
func TestSSMScanBadID(t *testing.T) {
	e := newRowOpEnv(t)
	node := e.scan(scanShape{dState: 4, headDim: 1, nHead: 2, nGroup: 1, nTok: 1, nSeqs: 2, nRS: 2, ids: []float64{0, 2}}, nil)
	if err := ops.AllocTensor(e.alloc, node, 0); err != nil {
		t.Fatal(err)
	}
	err := e.alloc.Compute(node)
	if err == nil || !strings.Contains(err.Error(), "ids[1] = 2") {
		t.Fatalf("Compute with id 2 of 2 slots: err = %v", err)
	}
}
