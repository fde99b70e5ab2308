package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
)

// A Backend is one backend configuration of a sweep: an open backend, the
// name records give it (such as "cpu-avx2") and its thread count.
type Backend struct {
	Name    string
	Threads int
	ops.Backend
}

// A Runner measures planned points on backends.
type Runner struct {
	Backends []Backend
	Protocol Protocol
	// RefBudget bounds the reference's work per point (see
	// harness.PrepareOptions).
	RefBudget int64
	// MaxMemory refuses points whose plan needs more host memory; 0 means
	// no limit.
	MaxMemory int64
	// Roofline, when set, gives each record its % of roofline;
	// CacheBytes is the working set below which the in-cache bandwidth
	// applies (the last-level cache).
	Roofline   *Roofline
	CacheBytes int64
	// Progress, when set, is called after each record.
	Progress func(done, total int, r Record, took time.Duration)
	// Context, when set and done, stops the run after the record in
	// progress; Run then returns the records made so far.
	Context context.Context
	// Weights marks the weight operand of MUL_MAT and MUL_MAT_ID points
	// as a model's weights (harness.PrepareOptions.Weights): the CPU
	// backend then runs its repacked x8 decode kernels for n < 4, as it
	// does for a GGUF file, rather than the plain layout's. Records say
	// so (Record.Weights).
	Weights bool
	// ProfileDir, when set, receives a CPU profile of each point's timed
	// runs (ProfileName names the file); a profile that cannot be
	// written is the record's error.
	ProfileDir string
}

// ProfileName returns the file name of the CPU profile of record r's timed
// runs: op, type, shape, backend and threads, such as
// "MUL_MAT-q4_0-m=4096,n=1,k=4096-cpu-avx2-2t.pprof".
func ProfileName(r Record) string {
	name := fmt.Sprintf("%s-%s-%s-%s-%dt.pprof", r.Op, r.Type, r.Shape, r.Backend, r.Threads)
	return strings.Map(func(c rune) rune {
		if c == '/' || c == '\\' || c == ' ' {
			return '_'
		}
		return c
	}, name)
}

// Run measures every point on every backend (points outermost, so a
// point's inputs are drawn once for all backends that share host memory)
// and returns one record per point and backend, in that order (fewer when
// Context is done first).
func (ru *Runner) Run(points []PlannedPoint) []Record {
	total := len(points) * len(ru.Backends)
	var out []Record
	for _, p := range points {
		cache := &harness.PointCache{}
		for _, be := range ru.Backends {
			if ru.Context != nil && ru.Context.Err() != nil {
				return out
			}
			start := time.Now()
			r := ru.measure(p, be, cache)
			out = append(out, r)
			if ru.Progress != nil {
				ru.Progress(len(out), total, r, time.Since(start))
			}
		}
		if p.Plan.Memory > 256<<20 {
			runtime.GC() // return a big point's memory before drawing the next
		}
	}
	return out
}

// NewRecord returns the record of point p on be, before any measurement.
func NewRecord(p PlannedPoint, be Backend) Record {
	r := Record{
		Op: p.Op.String(), Type: p.Type.String(), Shape: p.Shape(), Label: p.Label,
		Dims: map[string]int64{}, Backend: be.Name, Threads: be.Threads,
		Flops: p.Plan.Cost.Flops, Bytes: p.Plan.Cost.Bytes,
		NMSE: harness.Metric(nan()), MaxErr: harness.Metric(nan()),
	}
	for k, v := range p.Dims {
		r.Dims[k] = v
	}
	if r.Bytes > 0 {
		r.Intensity = float64(r.Flops) / float64(r.Bytes)
	}
	return r
}

func (ru *Runner) measure(p PlannedPoint, be Backend, cache *harness.PointCache) Record {
	r, prep := ru.prepare(p, be, cache)
	if prep == nil {
		return r
	}
	tm, err := ru.time(r, be, prep)
	if err != nil {
		r.Validation, r.Error = ValidError, err.Error()
		return r
	}
	if err := prep.CheckMemory(); err != nil {
		r.Validation, r.Error = ValidFail, err.Error()
		return r
	}
	r.Timing = tm
	ru.derive(&r)
	return r
}

// prepare builds, computes and validates point p on be. It returns the
// record so far and the prepared node to time, or a nil node when the
// record is final: an error, a failure, an unsupported point, or an
// emulated backend (validated, never timed).
func (ru *Runner) prepare(p PlannedPoint, be Backend, cache *harness.PointCache) (Record, *harness.Prepared) {
	r := NewRecord(p, be)
	r.Weights = ru.Weights && harness.HasWeights(p.Op)
	if ru.MaxMemory > 0 && p.Plan.Memory > ru.MaxMemory {
		r.Validation = ValidError
		r.Error = fmt.Sprintf("needs about %s of memory to prepare, above the limit of %s", humanBytes(p.Plan.Memory), humanBytes(ru.MaxMemory))
		return r, nil
	}
	c, err := p.Case()
	if err != nil {
		r.Validation, r.Error = ValidError, err.Error()
		return r, nil
	}
	prep, res := harness.Prepare(be.Backend, c, harness.PrepareOptions{RefBudget: ru.RefBudget, Cache: cache, Weights: ru.Weights})
	r.NMSE, r.MaxErr = res.NMSE, res.MaxErr
	switch {
	case prep == nil && res.Status == harness.StatusSkipped:
		r.Validation, r.Error = ValidUnsupported, res.Err
		return r, nil
	case prep == nil:
		r.Validation = ValidFail
		r.Error = res.Summary()
		if res.Err != "" {
			r.Error += ": " + res.Err
		}
		return r, nil
	case prep.Validated() && harness.Sampled(prep.Result):
		r.Validation = ValidSampled
	case prep.Validated():
		r.Validation = ValidOK
	default:
		r.Validation = ValidSkipped
	}
	if ops.IsEmulated(be.Backend) {
		// An emulator's times are not the device's performance: the
		// point is validated, never timed.
		r.Emulated = true
		return r, nil
	}
	return r, prep
}

// time measures a prepared node under the runner's protocol, profiled
// when asked. The caller checks the node's memory afterwards
// (prep.CheckMemory): an overrun is a failure, not an error.
func (ru *Runner) time(r Record, be Backend, prep *harness.Prepared) (Timing, error) {
	stopProfile, err := ru.startProfile(r)
	if err != nil {
		return Timing{}, err
	}
	tm, err := Measure(TimerFor(be.Backend), prep.Node, ru.Protocol)
	if perr := stopProfile(); perr != nil && err == nil {
		err = perr
	}
	if err != nil {
		return Timing{}, err
	}
	return tm, nil
}

// derive fills the throughputs and roofline share from the timing.
func (ru *Runner) derive(r *Record) {
	Derive(r, ru.Roofline, ru.CacheBytes)
}

// Derive fills r's GFLOP/s, GB/s and roofline fields from its median time
// and cost, against roof (if any).
func Derive(r *Record, roof *Roofline, cacheBytes int64) {
	if r.Emulated {
		r.GFLOPS, r.GBPS = 0, 0 // an emulator's time is no throughput, should one be recorded
		return
	}
	r.GFLOPS = Rate(r.Flops, r.Median)
	r.GBPS = Rate(r.Bytes, r.Median)
	if roof == nil || r.Flops == 0 {
		return
	}
	if g, which, ok := roof.Attainable(r.Threads, ComputeKind(r.Op, r.Type), r.Intensity, r.Bytes, cacheBytes); ok && g > 0 {
		r.RoofGFLOPS, r.Roof, r.RooflinePct = g, which, 100*r.GFLOPS/g
	}
}

// humanBytes formats a byte count with a binary unit.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func nan() float64 { return math.NaN() }

// startProfile starts the CPU profile of r's timed runs when the runner
// has a ProfileDir, and returns the function that stops and closes it.
func (ru *Runner) startProfile(r Record) (stop func() error, err error) {
	if ru.ProfileDir == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(filepath.Join(ru.ProfileDir, ProfileName(r)))
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		return nil
	}, nil
}
