package bench

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/kernbench/kernbench/ops"
)

// A Timer measures how long its backend takes to compute a node several
// times back to back. The CPU is timed by the wall clock (WallTimer); a GPU
// backend supplies a timer of its own (see TimerSource) that reads device
// events around the launches, so that host overhead is not counted.
type Timer interface {
	// Time computes node n times and returns the elapsed time of the n
	// computations together.
	Time(node *ops.Tensor, n int) (time.Duration, error)
	// Clock names the clock, such as "wall clock", for the records.
	Clock() string
}

// A TimerSource is a backend that brings its own Timer.
type TimerSource interface {
	Timer() Timer
}

// TimerFor returns be's own timer when it is a TimerSource, its device
// clock when it is an ops.RepeatTimer, else a wall clock timer over be.
func TimerFor(be ops.Backend) Timer {
	if s, ok := be.(TimerSource); ok {
		if t := s.Timer(); t != nil {
			return t
		}
	}
	if r, ok := be.(ops.RepeatTimer); ok {
		return repeatTimer{r}
	}
	return WallTimer{Backend: be}
}

// repeatTimer is a Timer over a backend's own device clock.
type repeatTimer struct{ r ops.RepeatTimer }

func (t repeatTimer) Time(node *ops.Tensor, n int) (time.Duration, error) {
	return t.r.TimeRepeated(node, n)
}

func (t repeatTimer) Clock() string { return t.r.RepeatClock() }

// WallTimer times computations on Backend by the wall clock around the
// calls to Compute: right for a backend whose Compute returns when the
// work is done, as the CPU's does. On an ops.Synchronizer, whose Compute
// may return with the work queued, it synchronizes before reading the
// clock, so the time includes the work (and the host's overhead).
type WallTimer struct {
	Backend ops.Backend
}

// Time computes node n times and returns the wall-clock time taken.
func (w WallTimer) Time(node *ops.Tensor, n int) (time.Duration, error) {
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := w.Backend.Compute(node); err != nil {
			return time.Since(start), err
		}
	}
	if s, ok := w.Backend.(ops.Synchronizer); ok {
		if err := s.Synchronize(); err != nil {
			return time.Since(start), err
		}
	}
	return time.Since(start), nil
}

// Clock returns "wall clock".
func (WallTimer) Clock() string { return "wall clock" }

// InputReuse says how inputs are treated across the repetitions of a
// measurement, for the records: the same tensors every time, as ggml's
// test-backend-ops perf mode does, so weights that fit in a cache stay
// there and the numbers are those of a warm cache.
const InputReuse = "same input tensors in every repetition (cache-warm, as ggml's perf mode)"

// A Protocol says how long to measure a node and how to cut the time into
// samples. The zero value means the defaults, listed per field.
//
// The protocol: warm up (compute the node for Warmup, at least once), then
// size a batch of runs so that one sample lasts about Time/Samples (or does
// about Cost/Samples of work), then time batches until the measured time
// reaches Time or the measured work reaches the cost target, whichever
// comes first, and never fewer than MinSamples batches. Each sample is the
// batch's time divided by its runs.
type Protocol struct {
	// Time is the measured time to aim for; default 1s.
	Time time.Duration
	// CostFlops and CostBytes, when > 0, are work targets as in ggml's
	// perf mode: measuring stops once the runs timed have done this many
	// FLOPs (or moved this many bytes) by the op's cost model, even
	// before Time.
	CostFlops, CostBytes int64
	// Warmup is how long to run the node before timing; default 100ms,
	// and always at least one run.
	Warmup time.Duration
	// Samples is the number of samples the batch size aims at; default 10.
	Samples int
	// MinSamples is the fewest samples taken, however long they take;
	// default 5, and never below 3. Compare needs 4 or more on each side
	// to call a difference significant.
	MinSamples int
	// MaxSamples caps the samples; default 1000.
	MaxSamples int
}

// Protocol defaults.
const (
	DefaultTime       = time.Second
	DefaultWarmup     = 100 * time.Millisecond
	DefaultSamples    = 10
	DefaultMinSamples = 5
	DefaultMaxSamples = 1000
	// MinSamplesFloor is the fewest samples any measurement takes.
	MinSamplesFloor = 3
)

// WithDefaults returns p with zero fields set to their defaults.
func (p Protocol) WithDefaults() Protocol {
	if p.Time <= 0 && p.CostFlops <= 0 && p.CostBytes <= 0 {
		p.Time = DefaultTime
	}
	if p.Warmup <= 0 {
		p.Warmup = DefaultWarmup
	}
	if p.Samples <= 0 {
		p.Samples = DefaultSamples
	}
	if p.MinSamples <= 0 {
		p.MinSamples = DefaultMinSamples
	}
	p.MinSamples = max(p.MinSamples, MinSamplesFloor)
	if p.MaxSamples <= 0 {
		p.MaxSamples = DefaultMaxSamples
	}
	p.MaxSamples = max(p.MaxSamples, p.MinSamples)
	p.Samples = min(max(p.Samples, p.MinSamples), p.MaxSamples)
	return p
}

// Check reports a protocol that cannot be run.
func (p Protocol) Check() error {
	switch {
	case p.Time < 0:
		return fmt.Errorf("bench: negative time target %v", p.Time)
	case p.CostFlops < 0 || p.CostBytes < 0:
		return errors.New("bench: negative cost target")
	case p.Warmup < 0:
		return fmt.Errorf("bench: negative warm-up %v", p.Warmup)
	case p.Samples < 0 || p.MinSamples < 0 || p.MaxSamples < 0:
		return errors.New("bench: negative sample count")
	case p.MaxSamples > 0 && p.MinSamples > p.MaxSamples:
		return fmt.Errorf("bench: min samples %d above max samples %d", p.MinSamples, p.MaxSamples)
	}
	return nil
}

// A Timing is the outcome of measuring one node.
type Timing struct {
	// Clock is the timer's clock.
	Clock string `json:"clock"`
	// WarmupRuns is the number of untimed runs before the samples.
	WarmupRuns int `json:"warmup_runs"`
	// RunsPerSample is the batch size: runs timed together per sample.
	RunsPerSample int `json:"runs_per_sample"`
	// Samples are the seconds per run of each batch, in the order taken.
	Samples []float64 `json:"samples_s"`
	Stats
}

// Runs returns the number of timed runs.
func (t Timing) Runs() int { return t.RunsPerSample * len(t.Samples) }

// Stats summarize samples (seconds per run).
type Stats struct {
	Median float64 `json:"median_s"`
	Min    float64 `json:"min_s"`
	Max    float64 `json:"max_s"`
	Mean   float64 `json:"mean_s"`
	// Stddev is the sample standard deviation (n-1 in the denominator);
	// 0 for a single sample.
	Stddev float64 `json:"stddev_s"`
}

// Summarize returns the statistics of xs; all zero for no samples.
func Summarize(xs []float64) Stats {
	if len(xs) == 0 {
		return Stats{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	st := Stats{Min: s[0], Max: s[n-1]}
	if n%2 == 1 {
		st.Median = s[n/2]
	} else {
		st.Median = (s[n/2-1] + s[n/2]) / 2
	}
	var sum float64
	for _, x := range s {
		sum += x
	}
	st.Mean = sum / float64(n)
	if n > 1 {
		var ss float64
		for _, x := range s {
			d := x - st.Mean
			ss += d * d
		}
		st.Stddev = math.Sqrt(ss / float64(n-1))
	}
	return st
}

// Rate returns work/seconds scaled by 1e-9 (GFLOP/s from FLOPs, GB/s from
// bytes), or 0 when seconds is not positive.
func Rate(work int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(work) / seconds / 1e9
}

// Measure times node with t under protocol p (see Protocol). The node must
// be allocated, its inputs written, and computable: a Compute error stops
// the measurement and is returned.
func Measure(t Timer, node *ops.Tensor, p Protocol) (Timing, error) {
	if err := p.Check(); err != nil {
		return Timing{}, err
	}
	p = p.WithDefaults()
	tm := Timing{Clock: t.Clock()}
	cost := ops.CostOf(node)

	// Warm up: at least one run, then until Warmup has passed, doubling
	// the batch so that the clock is read rarely for tiny nodes.
	var warm time.Duration
	for n := 1; ; n = min(2*n, 1<<20) {
		d, err := t.Time(node, n)
		if err != nil {
			return tm, fmt.Errorf("bench: warm-up: %w", err)
		}
		tm.WarmupRuns += n
		warm += d
		if warm >= p.Warmup {
			break
		}
	}
	perRun := float64(warm) / float64(tm.WarmupRuns) // ns

	// Size the batch from the per-sample share of the time or cost target.
	batch := math.Inf(1)
	if p.Time > 0 {
		batch = float64(p.Time) / float64(p.Samples) / max(perRun, 1)
	}
	if cost.Flops > 0 && p.CostFlops > 0 {
		batch = min(batch, float64(p.CostFlops)/float64(p.Samples)/float64(cost.Flops))
	}
	if cost.Bytes > 0 && p.CostBytes > 0 {
		batch = min(batch, float64(p.CostBytes)/float64(p.Samples)/float64(cost.Bytes))
	}
	if math.IsInf(batch, 1) { // a cost target only, and a node that has no such cost
		batch = float64(DefaultTime) / float64(p.Samples) / max(perRun, 1)
	}
	tm.RunsPerSample = int(min(max(math.Ceil(batch), 1), 1<<30))

	var elapsed time.Duration
	for len(tm.Samples) < p.MaxSamples {
		d, err := t.Time(node, tm.RunsPerSample)
		if err != nil {
			return tm, fmt.Errorf("bench: sample %d: %w", len(tm.Samples)+1, err)
		}
		elapsed += d
		tm.Samples = append(tm.Samples, d.Seconds()/float64(tm.RunsPerSample))
		if len(tm.Samples) < p.MinSamples {
			continue
		}
		runs := float64(tm.Runs())
		if p.Time > 0 && elapsed >= p.Time ||
			p.CostFlops > 0 && cost.Flops > 0 && runs*float64(cost.Flops) >= float64(p.CostFlops) ||
			p.CostBytes > 0 && cost.Bytes > 0 && runs*float64(cost.Bytes) >= float64(p.CostBytes) {
			break
		}
		if p.Time <= 0 && (cost.Flops <= 0 || p.CostFlops <= 0) && (cost.Bytes <= 0 || p.CostBytes <= 0) && elapsed >= DefaultTime {
			break // a cost target the node cannot meet: fall back to the default time
		}
	}
	tm.Stats = Summarize(tm.Samples)
	return tm, nil
}
