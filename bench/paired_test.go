package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
)

// logged is a backend that notes each timed batch in a shared log.
type logged struct {
	ops.Backend
	log *[]string
}

func (l logged) Compute(t *ops.Tensor) error {
	if n := len(*l.log); n == 0 || (*l.log)[n-1] != "ours" {
		*l.log = append(*l.log, "ours")
	}
	return l.Backend.Compute(t)
}

// fakeOther times points by a table and notes each call in the log.
type fakeOther struct {
	log     *[]string
	seconds []float64 // by point; 0: unsupported, -1: fails
}

func (f fakeOther) Name() string  { return "other" }
func (f fakeOther) Threads() int  { return 3 }
func (f fakeOther) Clock() string { return "fake clock" }
func (f fakeOther) Time(_ context.Context, i int, _ PlannedPoint) (float64, int, error) {
	*f.log = append(*f.log, fmt.Sprintf("other%d", i))
	switch s := f.seconds[i]; {
	case s == 0:
		return 0, 0, fmt.Errorf("%w: no such kernel", ErrUnsupported)
	case s < 0:
		return 0, 0, errors.New("crashed")
	default:
		return s, 7, nil
	}
}

func TestRunPaired(t *testing.T) {
	b := cputest.New(t, 1)
	defer b.Close()
	pts, _, err := Entry{Ops: []string{"rms_norm"}, Dims: map[string][]int64{"k": {256}, "n": {1, 2, 3}}}.Expand()
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	ru := &Runner{
		Backends: []Backend{{Name: "cpu", Threads: 1, Backend: logged{b, &log}}},
		Protocol: Protocol{Time: 2 * time.Millisecond, Warmup: time.Millisecond, MinSamples: 3},
	}
	const rounds = 4
	other := fakeOther{log: &log, seconds: []float64{2e-6, 0, -1}}
	rs := ru.RunPaired(pts, other, rounds)
	if len(rs) != 6 {
		t.Fatalf("%d records, want 6 (other and cpu per point)", len(rs))
	}

	// Point 0: other and ours alternate which goes first (the log keeps
	// one "ours" for consecutive computations): validation, then rounds
	// other-ours, ours-other, other-ours, ours-other.
	var p0 []string
	seen := 0
	for _, e := range log {
		p0 = append(p0, e)
		if e == "other0" {
			if seen++; seen == rounds {
				break
			}
		}
	}
	want := "ours other0 ours other0 other0 ours other0"
	if got := strings.Join(p0, " "); got != want {
		t.Errorf("point 0 order %q, want %q", got, want)
	}

	o, ours := rs[0], rs[1]
	if o.Backend != "other" || o.Threads != 3 || o.Validation != ValidExternal || o.Clock != "fake clock" {
		t.Errorf("other's record %+v", o)
	}
	if len(o.Samples) != rounds || o.Median != 2e-6 || o.RunsPerSample != 7 {
		t.Errorf("other: %d samples, median %g, %d runs; want %d, 2e-6, 7", len(o.Samples), o.Median, o.RunsPerSample, rounds)
	}
	if ours.Backend != "cpu" || ours.Validation != ValidOK || len(ours.Samples) != rounds || !ours.Timed() {
		t.Errorf("our record: %s %s, %d samples; want validated with %d", ours.Backend, ours.Validation, len(ours.Samples), rounds)
	}
	// An unsupported point on the other side is recorded as such and
	// asked once; ours is still measured.
	if rs[2].Validation != ValidUnsupported || !strings.Contains(rs[2].Error, "no such kernel") || rs[2].Timed() {
		t.Errorf("unsupported other: %+v", rs[2])
	}
	if len(rs[3].Samples) != rounds {
		t.Errorf("ours beside an unsupported other: %d samples", len(rs[3].Samples))
	}
	if rs[4].Validation != ValidError || !strings.Contains(rs[4].Error, "crashed") {
		t.Errorf("failing other: %+v", rs[4])
	}
	n := 0
	for _, e := range log {
		if e == "other1" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("an unsupported point was asked %d times", n)
	}
}
