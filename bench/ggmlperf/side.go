package ggmlperf

import (
	"context"
	"fmt"

	"github.com/kernbench/kernbench/bench"
)

// Side is ggml's CPU backend as the other side of bench.Runner.RunPaired:
// each call to Time runs test-backend-ops once on one point's case.
type Side struct {
	bin     *Binary
	cases   []*Case // by point; nil where the point has no ggml case
	reasons []string
	threads int
	dir     string
	commit  string
}

// NewSide prepares the ggml case of every point. A point ggml cannot be
// given (see NewCase) is reported unsupported when timed, with the
// reason; notes lists them. threads is the thread count test-backend-ops
// runs its CPU backend with (it takes every CPU: it has no flag for it),
// for the records. dir holds the test files ("" is the system's
// temporary folder).
func NewSide(bin *Binary, points []bench.PlannedPoint, threads int, dir string) (*Side, []string) {
	s := &Side{bin: bin, cases: make([]*Case, len(points)), reasons: make([]string, len(points)), threads: threads, dir: dir}
	var notes []string
	for i, p := range points {
		node, err := p.Node()
		if err == nil {
			var c Case
			c, err = NewCase(node, fmt.Sprintf("kb%d", i), bin.Enums)
			if err == nil {
				s.cases[i] = &c
				continue
			}
		}
		s.reasons[i] = err.Error()
		notes = append(notes, fmt.Sprintf("%v: no ggml case: %v", p.Point, err))
	}
	return s, notes
}

// SideName is the backend name ggml's records carry.
const SideName = "ggml-cpu"

// Name returns SideName, "ggml-cpu".
func (s *Side) Name() string { return SideName }

// Threads returns the thread count given to NewSide.
func (s *Side) Threads() int { return s.threads }

// Clock describes test-backend-ops' timing.
func (s *Side) Clock() string {
	return "test-backend-ops perf (wall clock, mean over its runs)"
}

// Commit returns the build commit test-backend-ops reported, once it has
// run.
func (s *Side) Commit() string { return s.commit }

// Case returns point i's ggml case, or nil.
func (s *Side) Case(i int) *Case { return s.cases[i] }

// Time runs point i's case once through test-backend-ops.
func (s *Side) Time(ctx context.Context, i int, _ bench.PlannedPoint) (float64, int, error) {
	if i < 0 || i >= len(s.cases) {
		return 0, 0, fmt.Errorf("ggmlperf: no point %d", i)
	}
	c := s.cases[i]
	if c == nil {
		return 0, 0, fmt.Errorf("%w: %s", bench.ErrUnsupported, s.reasons[i])
	}
	res, err := s.bin.Perf(ctx, []Case{*c}, s.dir)
	if err != nil {
		return 0, 0, err
	}
	r := res[0]
	if r.Commit != "" {
		s.commit = r.Commit
	}
	if !r.Supported {
		why := "ggml's CPU backend does not run it"
		if r.Error != "" {
			why += ": " + r.Error
		}
		return 0, 0, fmt.Errorf("%w: %s", bench.ErrUnsupported, why)
	}
	return r.TimeUS * 1e-6, r.Runs, nil
}
