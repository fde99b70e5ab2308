package harness

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
	"github.com/kernbench/kernbench/ops/registry"
	"github.com/kernbench/kernbench/quant"
)

// smallDims are sizes small enough for the reference to validate every
// op in milliseconds, and valid for every type (k a multiple of 256).
var smallDims = Dims{
	DimM: 12, DimN: 3, DimK: 256, DimKV: 40, DimD: 64, DimHeads: 4, DimKVHeads: 2,
	DimExperts: 4, DimUsed: 2, DimDConv: 4, DimDInner: 32, DimDState: 16, DimHeadDim: 1, DimSeqs: 2,
}

func small(o OpDef) Dims {
	d := Dims{}
	for _, x := range o.Dims {
		d[x.Name] = smallDims[x.Name]
	}
	return d
}

// TestOpDefs: every compute op has one complete definition, whose
// validation cases are all of its op and hold cases that compute and cases
// the op must refuse.
func TestOpDefs(t *testing.T) {
	var got []ops.Op
	for _, o := range OpDefs() {
		got = append(got, o.Op)
		if len(o.Dims) == 0 || len(o.Types) == 0 || !o.TakesType(o.DefaultType) || len(o.Shapes) == 0 || o.TypeRole == "" || len(o.Tolerances) == 0 {
			t.Errorf("%v: incomplete definition %+v", o.Op, o)
		}
		for _, d := range o.Dims {
			if _, ok := smallDims[d.Name]; !ok || d.Default < 1 || d.Doc == "" {
				t.Errorf("%v: dimension %+v has no small size, default or doc", o.Op, d)
			}
		}
		for _, tol := range o.Tolerances {
			if tol.Op != o.Op {
				t.Errorf("%v: tolerance of %v", o.Op, tol.Op)
			}
		}
		for _, c := range o.cases() {
			if c.Op != o.Op {
				t.Errorf("%v: case %s of another op", o.Op, c.ID())
			}
		}
		if c, err := o.point(o.DefaultType, o.DefaultDims()); err != nil || c.Op != o.Op || c.Build == nil {
			t.Errorf("%v: the default point gives case %s, %v", o.Op, c.ID(), err)
		}
	}
	if !slices.Equal(got, ops.ComputeOps()) {
		t.Errorf("definitions of %v, want every compute op %v", got, ops.ComputeOps())
	}
	if _, err := LookupOpDef(ops.OpView); err == nil {
		t.Error("VIEW has a definition")
	}
}

// TestBenchShapesPlan: every default benchmark shape plans (builds with no
// allocation) for every type of its op.
func TestBenchShapesPlan(t *testing.T) {
	for _, o := range OpDefs() {
		for _, typ := range o.Types {
			for _, d := range o.Shapes {
				p, err := NewPoint(o.Op, typ, d)
				if err != nil {
					t.Fatal(err)
				}
				pl, err := p.Plan()
				if err != nil {
					t.Errorf("%v: %v", p, err)
					continue
				}
				if pl.Cost.Bytes <= 0 || pl.Memory < pl.Cost.Bytes || pl.RefWork <= 0 {
					t.Errorf("%v: plan %+v", p, pl)
				}
				if o.FlopBound && pl.Cost.Flops <= 0 {
					t.Errorf("%v: a FLOP-bound op with no FLOPs", p)
				}
			}
		}
	}
}

func TestPointNames(t *testing.T) {
	p, err := NewPoint(ops.OpMulMat, quant.Q4_0, Dims{DimN: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.BenchName(); got != "m4096_n1_k4096" {
		t.Errorf("BenchName = %q", got)
	}
	if got := p.String(); got != "MUL_MAT/q4_0/m=4096,n=1,k=4096" {
		t.Errorf("String = %q", got)
	}
	c, err := p.Case()
	if err != nil || c.ID() != "MUL_MAT/q4_0/m=4096,n=1,k=4096" {
		t.Errorf("case %q, %v", c.ID(), err)
	}
	fa, _ := NewPoint(ops.OpFlashAttnExt, quant.F16, Dims{DimKV: 512})
	if got := fa.Shape(); got != "d=128,heads=32,kv_heads=8,n=1,kv=512" {
		t.Errorf("flash attention shape %q", got)
	}
	if _, err := NewPoint(ops.OpRMSNorm, quant.F32, Dims{DimM: 3}); err == nil || !strings.Contains(err.Error(), `no size "m"`) {
		t.Errorf("unknown size: %v", err)
	}
	if _, err := NewPoint(ops.OpView, quant.F32, nil); err == nil {
		t.Error("point of VIEW")
	}
}

func TestPlanRefuses(t *testing.T) {
	tests := []struct {
		op   ops.Op
		typ  quant.Type
		dims Dims
		want error  // wrapped error, or nil
		msg  string // substring of the message
	}{
		{ops.OpMulMat, quant.Q4_0, Dims{DimK: 100}, quant.ErrRowLength, "100"},
		{ops.OpMulMat, quant.Q4_K, Dims{DimK: 4000}, quant.ErrRowLength, ""},
		{ops.OpMulMat, quant.Q4_0, Dims{DimN: 0}, nil, "n=0 must be at least 1"},
		{ops.OpMulMat, quant.Q4_0, Dims{DimM: -5}, nil, "at least 1"},
		{ops.OpMulMat, quant.I32, nil, nil, "does not take type i32 as its weights"},
		{ops.OpRMSNorm, quant.Q4_0, nil, nil, "does not take type q4_0"},
		{ops.OpMulMat, quant.F32, Dims{DimM: 1 << 30, DimK: 1 << 30}, nil, "too many"},
		{ops.OpFlashAttnExt, quant.F16, Dims{DimHeads: 6, DimKVHeads: 4}, ops.ErrShape, "not a multiple"},
		{ops.OpMulMatID, quant.Q8_0, Dims{DimUsed: 9, DimExperts: 8}, nil, "distinct"},
		{ops.OpSSMScan, quant.F32, Dims{DimDInner: 100, DimHeadDim: 8}, ops.ErrShape, "head_dim"},
	}
	for _, tt := range tests {
		p, err := NewPoint(tt.op, tt.typ, tt.dims)
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Plan()
		if err == nil || tt.want != nil && !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%v: Plan error %v, want %v containing %q", p, err, tt.want, tt.msg)
		}
	}
}

// TestPrepareEveryOp: a small point of every op and type validates on the
// CPU against the reference, so every benchmarked point is validatable.
func TestPrepareEveryOp(t *testing.T) {
	be := cputest.New(t, 2)
	defer be.Close()
	for _, o := range OpDefs() {
		typs := []quant.Type{o.DefaultType}
		if testing.Short() == false && len(o.Types) > 1 {
			typs = o.Types
		}
		for _, typ := range typs {
			p, err := NewPoint(o.Op, typ, small(o))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Plan(); err != nil {
				t.Errorf("%v: %v", p, err)
				continue
			}
			c, _ := p.Case()
			prep, res := Prepare(be, c, PrepareOptions{})
			if res.Status == StatusSkipped && res.Reason == "unsupported" {
				continue // the CPU need not take every type
			}
			if prep == nil || !prep.Validated() {
				t.Errorf("%v: %s (%s)", p, res.Summary(), res.Err)
				continue
			}
			if prep.Cost != ops.CostOf(prep.Node) || prep.Node.Buffer == nil && prep.Node.ViewOf == nil {
				t.Errorf("%v: prepared %+v", p, prep)
			}
		}
	}
}

func TestPrepareUnvalidated(t *testing.T) {
	be := cputest.New(t, 1)
	defer be.Close()
	p, _ := NewPoint(ops.OpMulMat, quant.Q8_0, Dims{DimM: 64, DimN: 2, DimK: 256})
	c, _ := p.Case()
	// Over the budget, MUL_MAT is validated on a sample of its outputs;
	// a negative budget validates nothing, and an op without a sampled
	// form goes unvalidated.
	prep, res := Prepare(be, c, PrepareOptions{RefBudget: 10})
	if prep == nil || !prep.Validated() || !Sampled(res) || res.Elements == 0 || res.Elements >= 64*2 {
		t.Errorf("budget 10: %v %s (%d elements)", prep, res.Summary(), res.Elements)
	}
	sp, _ := NewPoint(ops.OpSoftMax, quant.F32, Dims{DimKV: 64, DimN: 4, DimHeads: 2})
	sc, _ := sp.Case()
	for _, tc := range []struct {
		c      Case
		budget int64
	}{{c, -1}, {sc, 10}} {
		prep, res := Prepare(be, tc.c, PrepareOptions{RefBudget: tc.budget})
		if prep == nil || prep.Validated() || !Unvalidated(res) || !strings.HasPrefix(res.Summary(), "SKIP: unvalidated") {
			t.Errorf("%s budget %d: %v %s", tc.c.ID(), tc.budget, prep, res.Summary())
		}
	}
	prep, res = Prepare(be, c, PrepareOptions{RefBudget: 1e8})
	if prep == nil || !prep.Validated() || Unvalidated(res) || Sampled(res) {
		t.Errorf("budget 1e8: %s", res.Summary())
	}
}

// TestPrepareCache: a point prepared on two backends with one cache draws
// its inputs once and computes the reference once.
func TestPrepareCache(t *testing.T) {
	b1, b2 := cputest.New(t, 1), cputest.New(t, 2)
	defer b1.Close()
	defer b2.Close()
	p, _ := NewPoint(ops.OpSoftMax, quant.F32, Dims{DimKV: 64, DimN: 4, DimHeads: 2})
	c, _ := p.Case()
	cache := &PointCache{}
	p1, r1 := Prepare(b1, c, PrepareOptions{Cache: cache})
	want := cache.c.want
	p2, r2 := Prepare(b2, c, PrepareOptions{Cache: cache})
	if p1 == nil || p2 == nil || !p1.Validated() || !p2.Validated() {
		t.Fatalf("%s / %s", r1.Summary(), r2.Summary())
	}
	if want == nil || &cache.c.want[0] != &want[0] {
		t.Error("reference computed twice")
	}
	for i, l := range p1.b.leaves {
		if &l.data[0] != &p2.b.leaves[i].data[0] {
			t.Errorf("leaf %s drawn twice", l.t.Name)
		}
	}
	if p1.Node == p2.Node || p1.Node.Buffer == p2.Node.Buffer {
		t.Error("the two backends share a node")
	}

	// Another case empties the cache.
	q, _ := NewPoint(ops.OpSoftMax, quant.F32, Dims{DimKV: 32, DimN: 4, DimHeads: 2})
	qc, _ := q.Case()
	if pq, r := Prepare(b1, qc, PrepareOptions{Cache: cache}); pq == nil || !pq.Validated() || len(cache.c.want) != 32*4*2 {
		t.Errorf("second case: %s, cached reference of %d values", r.Summary(), len(cache.c.want))
	}
}

func TestPrepareFails(t *testing.T) {
	be := cputest.New(t, 1)
	defer be.Close()
	lazy := wrapped{Backend: be, compute: func(*ops.Tensor) error { return nil }}
	p, _ := NewPoint(ops.OpScale, quant.F32, Dims{DimK: 64, DimN: 2})
	c, _ := p.Case()
	if prep, res := Prepare(lazy, c, PrepareOptions{}); prep != nil || res.Status != StatusFail {
		t.Errorf("a backend that computes nothing: %v, %s", prep, res.Summary())
	}
	// Unvalidated points still fail when Compute does.
	failing := wrapped{Backend: be, compute: func(*ops.Tensor) error { return errors.New("no") }}
	if prep, res := Prepare(failing, c, PrepareOptions{RefBudget: -1}); prep != nil || res.Status != StatusFail {
		t.Errorf("a failing backend, unvalidated: %v, %s", prep, res.Summary())
	}
	// A write past the output after timing is caught by CheckMemory.
	prep, res := Prepare(be, c, PrepareOptions{})
	if prep == nil {
		t.Fatal(res.Summary())
	}
	buf, off := prep.Node.Storage()
	if _, err := buf.WriteAt([]byte{0}, off+prep.Node.Extent()+3); err != nil {
		t.Fatal(err)
	}
	if err := prep.CheckMemory(); err == nil || !strings.Contains(err.Error(), "guard bytes") {
		t.Errorf("CheckMemory after a stray write: %v", err)
	}
}

// BenchmarkOp benchmarks every op's definition (its Shapes) for every
// type and registered backend (each CPU tier is one), named
// op/type/sizes/backend so that
// -bench 'Op/MUL_MAT/q4_0' selects naturally. Threads follow GOMAXPROCS,
// so -cpu 1,2 sweeps them. Each point is validated against the reference
// first when that is cheap (benchRefBudget), else computed once and
// checked for memory safety. Bytes per op (MB/s) and GFLOP/s come from the
// op's cost model; inputs stay the same in every iteration (cache-warm).
func BenchmarkOp(b *testing.B) {
	for _, o := range OpDefs() {
		b.Run(o.Op.String(), func(b *testing.B) { benchmarkOp(b, o) })
	}
}

const benchRefBudget = 1e8

// benchmarkOp runs op's benchmark shapes for every type and CPU tier.
func benchmarkOp(b *testing.B, o OpDef) {
	for _, typ := range o.Types {
		b.Run(typ.String(), func(b *testing.B) {
			for _, d := range o.Shapes {
				p := Point{Op: o.Op, Type: typ, Dims: d}
				b.Run(p.BenchName(), func(b *testing.B) { benchmarkPoint(b, p) })
			}
		})
	}
}

// benchmarkPoint runs one point on every registered backend that can
// open here (each CPU tier is one), drawing its inputs once; those that
// cannot open are listed as skipped with the reason.
func benchmarkPoint(b *testing.B, p Point) {
	c, err := p.Case()
	if err != nil {
		b.Fatal(err)
	}
	cache := &PointCache{}
	for _, tg := range registry.Targets() {
		b.Run(tg.Name(), func(b *testing.B) {
			if err := tg.Err(); err != nil {
				b.Skip(err)
			}
			be, err := tg.Open(runtime.GOMAXPROCS(0))
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			if ops.IsEmulated(be) {
				b.Skipf("%s is emulated: its times are not performance", tg.Name())
			}
			sync, _ := be.(ops.Synchronizer)
			prep, res := Prepare(be, c, PrepareOptions{RefBudget: benchRefBudget, Cache: cache})
			if prep == nil {
				if res.Status == StatusSkipped {
					b.Skipf("%s: %s", res.Reason, res.Err)
				}
				b.Fatalf("%s: %s (%s)", p, res.Summary(), res.Err)
			}
			b.SetBytes(prep.Cost.Bytes)
			for b.Loop() {
				if err := be.Compute(prep.Node); err != nil {
					b.Fatal(err)
				}
				if sync != nil {
					if err := sync.Synchronize(); err != nil {
						b.Fatal(err)
					}
				}
			}
			if prep.Cost.Flops > 0 {
				b.ReportMetric(float64(prep.Cost.Flops)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			}
			if err := prep.CheckMemory(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestPrepareWeights: PrepareOptions.Weights marks the weight operand's
// buffer of MUL_MAT and MUL_MAT_ID as holding weights, and nothing
// without it; the CPU backend then takes its repacked path (the result
// still validated).
func TestPrepareWeights(t *testing.T) {
	be := cputest.New(t, 2)
	defer be.Close()
	for _, tc := range []struct {
		op  ops.Op
		typ quant.Type
		d   Dims
	}{
		{ops.OpMulMat, quant.Q4_0, Dims{DimM: 64, DimN: 1, DimK: 256}},
		{ops.OpMulMatID, quant.Q4_K, Dims{DimM: 64, DimN: 1, DimK: 256, DimExperts: 4, DimUsed: 2}},
	} {
		p, err := NewPoint(tc.op, tc.typ, tc.d)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := p.Case()
		for _, weights := range []bool{false, true} {
			prep, res := Prepare(be, c, PrepareOptions{Weights: weights})
			if prep == nil || !prep.Validated() {
				t.Fatalf("%s weights=%v: %s", c.ID(), weights, res.Summary())
			}
			hb, ok := owner(prep.Node.Src[0]).Buffer.(*ops.HostBuffer)
			if !ok || hb.Weights() != weights {
				t.Errorf("%s weights=%v: weight buffer marked %v", c.ID(), weights, ok && hb.Weights())
			}
		}
	}
}
