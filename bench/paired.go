package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kernbench/kernbench/harness"
)

// An Other is a second implementation of the points, timed against a
// Runner's backends in alternation (RunPaired): ggml's test-backend-ops
// in opbench ggml.
type Other interface {
	// Name is the backend name its records carry, such as "ggml-cpu".
	Name() string
	// Threads is the thread count it runs with.
	Threads() int
	// Clock describes how it times, for its records.
	Clock() string
	// Time measures point i (of the points given to RunPaired) once and
	// returns the seconds one run takes and the runs that figure is the
	// mean of. An error wrapping ErrUnsupported means it does not
	// compute the point.
	Time(ctx context.Context, i int, p PlannedPoint) (seconds float64, runs int, err error)
}

// ErrUnsupported is wrapped by an Other's error for a point it does not
// compute.
var ErrUnsupported = errors.New("not supported")

// RunPaired measures each point on other and on the runner's backends in
// rounds that alternate which goes first (other then the backends, then
// the backends then other, ...), so that a machine's drift reaches both
// sides alike. A backend's point is prepared and validated once, and each
// round times it under the runner's protocol; its record's samples are
// the rounds' medians, one per round, as other's are its rounds' times.
// Records come per point: other's first, then one per backend.
func (ru *Runner) RunPaired(points []PlannedPoint, other Other, rounds int) []Record {
	rounds = max(rounds, 1)
	total := len(points) * (1 + len(ru.Backends))
	ctx := ru.Context
	if ctx == nil {
		ctx = context.Background()
	}
	var out []Record
	for i, p := range points {
		if ctx.Err() != nil {
			return out
		}
		start := time.Now()
		cache := &harness.PointCache{}
		type side struct {
			rec  Record
			prep *harness.Prepared
			be   Backend
		}
		sides := make([]side, len(ru.Backends))
		for j, be := range ru.Backends {
			r, prep := ru.prepare(p, be, cache)
			sides[j] = side{rec: r, prep: prep, be: be}
		}
		oth := NewRecord(p, Backend{Name: other.Name(), Threads: other.Threads()})
		oth.Validation, oth.Clock = ValidExternal, other.Clock()
		othDone := false
		timeOther := func() {
			if othDone {
				return
			}
			sec, runs, err := other.Time(ctx, i, p)
			switch {
			case errors.Is(err, ErrUnsupported):
				oth.Validation, oth.Error, othDone = ValidUnsupported, err.Error(), true
			case err != nil:
				oth.Validation, oth.Error, othDone = ValidError, err.Error(), true
			case !(sec > 0):
				oth.Validation, oth.Error, othDone = ValidError, fmt.Sprintf("reported %g s per run", sec), true
			default:
				oth.Samples = append(oth.Samples, sec)
				oth.RunsPerSample = max(oth.RunsPerSample, runs)
			}
		}
		timeOurs := func() {
			for j := range sides {
				s := &sides[j]
				if s.prep == nil {
					continue
				}
				tm, err := ru.time(s.rec, s.be, s.prep)
				if err != nil {
					s.rec.Validation, s.rec.Error, s.prep = ValidError, err.Error(), nil
					continue
				}
				if s.rec.Clock == "" {
					s.rec.Clock, s.rec.WarmupRuns = tm.Clock, tm.WarmupRuns
				}
				s.rec.RunsPerSample = max(s.rec.RunsPerSample, tm.Runs())
				s.rec.Samples = append(s.rec.Samples, tm.Median)
			}
		}
		for r := 0; r < rounds && ctx.Err() == nil; r++ {
			if r%2 == 0 {
				timeOther()
				timeOurs()
			} else {
				timeOurs()
				timeOther()
			}
		}
		oth.Stats = Summarize(oth.Samples)
		ru.derive(&oth)
		out = append(out, oth)
		for j := range sides {
			s := &sides[j]
			if s.prep != nil {
				if err := s.prep.CheckMemory(); err != nil {
					s.rec.Validation, s.rec.Error = ValidFail, err.Error()
					s.rec.Samples = nil
				}
			}
			s.rec.Stats = Summarize(s.rec.Samples)
			ru.derive(&s.rec)
			out = append(out, s.rec)
		}
		if ru.Progress != nil {
			took := time.Since(start)
			for k := len(out) - 1 - len(sides); k < len(out); k++ {
				ru.Progress(k+1, total, out[k], took)
			}
		}
	}
	return out
}
