package bench

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
	"github.com/kernbench/kernbench/quant"
)

// fakeTimer pretends each run of a node takes perRun, and counts runs.
type fakeTimer struct {
	perRun time.Duration
	runs   int
	calls  int
	failAt int // fail on this call (1-based); 0 never
}

func (f *fakeTimer) Time(_ *ops.Tensor, n int) (time.Duration, error) {
	f.calls++
	if f.failAt == f.calls {
		return 0, errors.New("device lost")
	}
	f.runs += n
	return time.Duration(n) * f.perRun, nil
}

func (f *fakeTimer) Clock() string { return "fake" }

// mmNode returns an unallocated MUL_MAT node of m=n=k=64 (f32), for the
// fake timer's cost model.
func mmNode(t *testing.T) *ops.Tensor {
	t.Helper()
	a, _ := ops.NewTensor("a", quant.F32, 64, 64)
	b, _ := ops.NewTensor("b", quant.F32, 64, 64)
	n, err := ops.MulMat(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		xs   []float64
		want Stats
	}{
		{nil, Stats{}},
		{[]float64{2}, Stats{Median: 2, Min: 2, Max: 2, Mean: 2}},
		// Mean 2.5; squared deviations 2.25+0.25+0.25+2.25 = 5 over n-1 = 3.
		{[]float64{4, 1, 3, 2}, Stats{Median: 2.5, Min: 1, Max: 4, Mean: 2.5, Stddev: math.Sqrt(5.0 / 3)}},
		{[]float64{5, 1, 9}, Stats{Median: 5, Min: 1, Max: 9, Mean: 5, Stddev: 4}},
	}
	for _, tt := range tests {
		got := Summarize(tt.xs)
		if math.Abs(got.Stddev-tt.want.Stddev) > 1e-12 {
			t.Errorf("Summarize(%v).Stddev = %v, want %v", tt.xs, got.Stddev, tt.want.Stddev)
		}
		got.Stddev = tt.want.Stddev
		if got != tt.want {
			t.Errorf("Summarize(%v) = %+v, want %+v", tt.xs, got, tt.want)
		}
	}
}

func TestMeasureProtocol(t *testing.T) {
	node := mmNode(t)
	flops := ops.CostOf(node).Flops // 2*64^3
	tests := []struct {
		name        string
		perRun      time.Duration
		p           Protocol
		wantSamples int
		wantBatch   int
	}{
		// 1 ms per run, 1 s aimed at 10 samples: batches of 100 runs, and
		// 10 samples reach the second.
		{"time target", time.Millisecond, Protocol{}, 10, 100},
		// 400 ms per run: batches of 1; the time target is reached after
		// 3 samples but 5 are the minimum.
		{"slow node keeps min samples", 400 * time.Millisecond, Protocol{}, 5, 1},
		{"min samples floor", 400 * time.Millisecond, Protocol{MinSamples: 1}, 3, 1},
		// A cost target of 100 runs' FLOPs: 10 runs per sample, 10 samples,
		// long before the time target.
		{"cost target", time.Millisecond, Protocol{Time: time.Hour, CostFlops: 100 * flops}, 10, 10},
		{"byte target", time.Millisecond, Protocol{Time: time.Hour, CostBytes: 50 * ops.CostOf(node).Bytes, Samples: 5}, 5, 10},
		// Samples aims at 10 but MaxSamples caps it at 7: batches of an
		// hour / 7 samples / 1 ms, rounded up.
		{"max samples", time.Millisecond, Protocol{Time: time.Hour, MaxSamples: 7, MinSamples: 4}, 7, 514286},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := &fakeTimer{perRun: tt.perRun}
			tm, err := Measure(ft, node, tt.p)
			if err != nil {
				t.Fatal(err)
			}
			if len(tm.Samples) != tt.wantSamples || tm.RunsPerSample != tt.wantBatch {
				t.Errorf("%d samples of %d runs, want %d of %d", len(tm.Samples), tm.RunsPerSample, tt.wantSamples, tt.wantBatch)
			}
			if tm.WarmupRuns < 1 || ft.runs != tm.WarmupRuns+tm.Runs() {
				t.Errorf("warm-up %d runs, timed %d, timer saw %d", tm.WarmupRuns, tm.Runs(), ft.runs)
			}
			want := tt.perRun.Seconds()
			for _, s := range tm.Samples {
				if math.Abs(s-want) > 1e-12 {
					t.Fatalf("sample %v, want %v per run", s, want)
				}
			}
			if math.Abs(tm.Median-want) > 1e-12 || tm.Stddev > 1e-12 || tm.Clock != "fake" {
				t.Errorf("timing %+v", tm)
			}
		})
	}
}

func TestMeasureErrors(t *testing.T) {
	node := mmNode(t)
	if _, err := Measure(&fakeTimer{perRun: time.Millisecond, failAt: 1}, node, Protocol{}); err == nil {
		t.Error("warm-up failure not reported")
	}
	if _, err := Measure(&fakeTimer{perRun: time.Millisecond, failAt: 5}, node, Protocol{Warmup: time.Nanosecond}); err == nil {
		t.Error("sample failure not reported")
	}
	for _, p := range []Protocol{{Time: -1}, {CostFlops: -1}, {MinSamples: 9, MaxSamples: 4}, {Warmup: -time.Second}} {
		if _, err := Measure(&fakeTimer{perRun: time.Millisecond}, node, p); err == nil {
			t.Errorf("protocol %+v accepted", p)
		}
	}
}

// TestMeasureCPU times a real node on the CPU with the wall clock.
func TestMeasureCPU(t *testing.T) {
	be := cputest.New(t, 1)
	defer be.Close()
	p, err := harness.NewPoint(ops.OpAdd, quant.F32, harness.Dims{harness.DimK: 256, harness.DimN: 4})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := p.Case()
	prep, res := harness.Prepare(be, c, harness.PrepareOptions{})
	if prep == nil || !prep.Validated() {
		t.Fatalf("prepare: %s %s", res.Summary(), res.Err)
	}
	tm, err := Measure(TimerFor(be), prep.Node, Protocol{Time: 20 * time.Millisecond, Warmup: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.Samples) < DefaultMinSamples || tm.Min <= 0 || tm.Min > tm.Median || tm.Median > tm.Max || tm.Clock != "wall clock" {
		t.Errorf("timing %+v", tm)
	}
	if err := prep.CheckMemory(); err != nil {
		t.Error(err)
	}
}

// ownTimer is a backend that brings its own timer.
type ownTimer struct {
	*cpu.Backend
	t Timer
}

func (o ownTimer) Timer() Timer { return o.t }

func TestTimerFor(t *testing.T) {
	be := cputest.New(t, 1)
	defer be.Close()
	if _, ok := TimerFor(be).(WallTimer); !ok {
		t.Error("CPU backend not timed by the wall clock")
	}
	ft := &fakeTimer{}
	if got := TimerFor(ownTimer{be, ft}); got != Timer(ft) {
		t.Errorf("TimerFor ignored the backend's timer: %v", got)
	}
}

// queued is a backend whose work counts as queued until Synchronize.
type queued struct {
	*cpu.Backend
	pending, syncs int
}

func (q *queued) Compute(t *ops.Tensor) error {
	q.pending++
	return q.Backend.Compute(t)
}

func (q *queued) Synchronize() error {
	q.pending = 0
	q.syncs++
	return nil
}

// TestWallTimerSynchronizes: the wall clock is read only once the work
// queued on a Synchronizer is done, once per batch of runs.
func TestWallTimerSynchronizes(t *testing.T) {
	q := &queued{Backend: cputest.New(t, 1)}
	x, err := ops.NewTensor("x", quant.F32, 8)
	if err != nil {
		t.Fatal(err)
	}
	node, err := ops.Add(x, x)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []*ops.Tensor{x, node} {
		if err := ops.AllocTensor(q, n, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := TimerFor(q).Time(node, 5); err != nil {
		t.Fatal(err)
	}
	if q.pending != 0 || q.syncs != 1 {
		t.Errorf("%d computations left queued, %d syncs; want 0 and 1", q.pending, q.syncs)
	}
}

func TestRate(t *testing.T) {
	if got := Rate(3e9, 1.5); got != 2 {
		t.Errorf("Rate = %v, want 2", got)
	}
	if got := Rate(1, 0); got != 0 {
		t.Errorf("Rate over 0 s = %v", got)
	}
}

// repeatBackend times by a device clock of its own.
type repeatBackend struct{ ops.Backend }

func (repeatBackend) TimeRepeated(_ *ops.Tensor, n int) (time.Duration, error) {
	return time.Duration(n) * time.Microsecond, nil
}

func (repeatBackend) RepeatClock() string { return "device clock" }

// TestTimerForRepeatTimer checks that a backend's own device clock is
// preferred to the wall clock.
func TestTimerForRepeatTimer(t *testing.T) {
	tm := TimerFor(repeatBackend{})
	if d, err := tm.Time(nil, 5); err != nil || d != 5*time.Microsecond || tm.Clock() != "device clock" {
		t.Errorf("timer %T: %v, %v, %q", tm, d, err, tm.Clock())
	}
}
