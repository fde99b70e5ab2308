package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
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
		{"mamba2-strided-B-C", mamba2, func(e *rowOpEnv, srcs []*ops.Tensor) {
			srcs[ops.ScanB] = e.strided([4]int64{32, 2, 4, 2}, 2, 1)
			srcs[ops.ScanC] = e.permuted([]int64{32, 4, 2, 2}, 0, 2, 1, 3)
		}},
		{"mamba2-long", with(mamba2, func(s *scanShape) { s.nTok, s.headDim = 70, 40 }), nil},
		{"mamba1-many-heads", with(mamba1, func(s *scanShape) { s.nHead, s.nTok = 150, 40 }), nil},
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

// benchScan returns an allocated SSM_SCAN node of one sequence with
// d_inner = nHead*headDim channels, one group, nTok tokens, and inputs
// drawn as the harness draws them (A negative, dt around ssm.Softplus's
// bend).
func benchScan(t testing.TB, b *Backend, dState, headDim, nHead, nTok int64) *ops.Tensor {
	t.Helper()
	rng := rand.New(rand.NewPCG(9, 10))
	leaf := func(name string, typ quant.Type, lo, hi float32, ne ...int64) *ops.Tensor {
		x, err := ops.NewTensor(name, typ, ne...)
		if err != nil {
			t.Fatal(err)
		}
		mxAlloc(t, b, x, 0)
		if typ == quant.I32 {
			return x // zeros: slot 0
		}
		v := make([]float32, x.NumElements())
		for i := range v {
			v[i] = lo + (hi-lo)*rng.Float32()
		}
		mxFill(t, x, v)
		return x
	}
	aRow := dState
	if headDim > 1 {
		aRow = 1
	}
	node, err := ops.SSMScan(
		leaf("s", quant.F32, -1, 1, dState, headDim, nHead, 1),
		leaf("x", quant.F32, -1, 1, headDim, nHead, nTok, 1),
		leaf("dt", quant.F32, -4, 1, nHead, nTok, 1),
		leaf("A", quant.F32, -4, -0.5, aRow, nHead),
		leaf("B", quant.F32, -1, 1, dState, 1, nTok, 1),
		leaf("C", quant.F32, -1, 1, dState, 1, nTok, 1),
		leaf("ids", quant.I32, 0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	mxAlloc(t, b, node, 0)
	return node
}

// BenchmarkSSMScan measures SSM_SCAN at Mamba-1 (d_state 16, one channel
// per head, A per state) and Mamba-2 (d_state 128, 48 heads of 64, scalar
// A) shapes on each tier, threads following GOMAXPROCS (-cpu 1,2).
func BenchmarkSSMScan(b *testing.B) {
	for _, ks := range benchTiers() {
		for _, sh := range []struct {
			name                   string
			dState, headDim, nHead int64
		}{{"mamba1", 16, 1, 4096}, {"mamba2", 128, 64, 48}} {
			for _, n := range []int64{1, 64, 512} {
				b.Run(fmt.Sprintf("%s/%s/n=%d", ks.name, sh.name, n), func(b *testing.B) {
					be, err := NewWithOptions(Options{Tier: ks.name})
					if err != nil {
						b.Fatal(err)
					}
					defer be.Close()
					node := benchScan(b, be, sh.dState, sh.headDim, sh.nHead, n)
					for b.Loop() {
						if err := be.Compute(node); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkSSMScanTile compares, on each tier with scanSTile, the
// Mamba-2 shape (48 heads of 64 rows, d_state 128) scanned by scanSTile
// ("tile") and by the row-block kernels it replaced ("rows", scanSTile
// switched off for the run), interleaved within one run so that the two
// see the same machine load; -cpu 1,2 for the thread counts.
func BenchmarkSSMScanTile(b *testing.B) {
	for _, ks := range benchTiers() {
		if ks.ssm.scanSTile == nil {
			continue
		}
		for _, n := range []int64{64, 512} {
			for _, v := range []string{"rows", "tile"} {
				b.Run(fmt.Sprintf("%s/n=%d/%s", ks.name, n, v), func(b *testing.B) {
					if v == "rows" {
						saved := ks.ssm.scanSTile
						ks.ssm.scanSTile = nil
						defer func() { ks.ssm.scanSTile = saved }()
					}
					be, err := NewWithOptions(Options{Tier: ks.name})
					if err != nil {
						b.Fatal(err)
					}
					defer be.Close()
					node := benchScan(b, be, 128, 64, 48, n)
					for b.Loop() {
						if err := be.Compute(node); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// TestSSMScanNoAllocs checks that computing an SSM_SCAN node (both forms)
// or an SSM_CONV node again allocates nothing on any tier, with two
// threads.
func TestSSMScanNoAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("AllocsPerRun is slow under -short")
	}
	forEachTier(t, func(t *testing.T, ks *kernelSet) {
		b, err := NewWithOptions(Options{Threads: 2, Tier: ks.name})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		for _, sh := range [][3]int64{{16, 1, 256}, {32, 8, 16}} {
			node := benchScan(t, b, sh[0], sh[1], sh[2], 40)
			if err := b.Compute(node); err != nil {
				t.Fatal(err)
			}
			allocs := testing.AllocsPerRun(40, func() {
				if err := b.Compute(node); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("shape %v: %v allocations per Compute", sh, allocs)
			}
		}
		rng := rand.New(rand.NewPCG(17, 18))
		for _, n := range []int64{1, 20} {
			node := mustNode(t)(ops.SSMConv(mxLeaf(t, b, rng, "sx", quant.F32, 3+n, 64, 2), mxLeaf(t, b, rng, "c", quant.F32, 4, 64)))
			mxAlloc(t, b, node, 0)
			if err := b.Compute(node); err != nil {
				t.Fatal(err)
			}
			allocs := testing.AllocsPerRun(40, func() {
				if err := b.Compute(node); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("ssm_conv n=%d: %v allocations per Compute", n, allocs)
			}
		}
	})
}

// BenchmarkSSMConv measures SSM_CONV at Mamba-1.4b's shape (d_conv 4,
// d_inner 4096, one sequence) on each tier, threads following GOMAXPROCS.
func BenchmarkSSMConv(b *testing.B) {
	for _, ks := range benchTiers() {
		for _, n := range []int64{1, 512} {
			b.Run(fmt.Sprintf("%s/n=%d", ks.name, n), func(b *testing.B) {
				be, err := NewWithOptions(Options{Tier: ks.name})
				if err != nil {
					b.Fatal(err)
				}
				defer be.Close()
				rng := rand.New(rand.NewPCG(15, 16))
				node, err := ops.SSMConv(mxLeaf(b, be, rng, "sx", quant.F32, 3+n, 4096, 1), mxLeaf(b, be, rng, "c", quant.F32, 4, 4096))
				if err != nil {
					b.Fatal(err)
				}
				mxAlloc(b, be, node, 0)
				for b.Loop() {
					if err := be.Compute(node); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
