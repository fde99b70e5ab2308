package harness

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu"
)

// errLost is a sticky device fault, as a GPU driver's error reports one.
type errLost struct{}

func (errLost) Error() string        { return "fake launch: misaligned address (FAKE_MISALIGNED)" }
func (errLost) Is(target error) bool { return target == ops.ErrContextLost }
func (errLost) LostReason() string   { return "FAKE_MISALIGNED" }

// losing is the CPU standing for a GPU context: the first Compute for
// which fault says so fails with a sticky error, and every call after it
// fails the same way until the backend is closed.
type losing struct {
	*cpu.Backend
	lost  *atomic.Bool
	fault func(*ops.Tensor) bool
}

func (l losing) Compute(t *ops.Tensor) error {
	if l.lost.Load() || l.fault(t) {
		l.lost.Store(true)
		return errLost{}
	}
	return l.Backend.Compute(t)
}

func (l losing) Alloc(n int64) (ops.Buffer, error) {
	if l.lost.Load() {
		return nil, errLost{}
	}
	return l.Backend.Alloc(n)
}

// TestSession: the case whose node loses the context fails, naming the
// fault, even one that expects its Compute to fail (a rejection is the
// op's, not a fault); the session reopens the backend once per loss and
// the cases after it pass; a reopen that fails ends the session with an
// error naming the case and the cause.
func TestSession(t *testing.T) {
	var rejecting, scaling []Case
	for _, c := range Cases() {
		if c.Op == ops.OpGetRows && c.Expect == ExpectReject {
			rejecting = append(rejecting, c)
		}
		if c.Op == ops.OpScale && c.Expect == ExpectMatch {
			scaling = append(scaling, c)
		}
	}
	if len(rejecting) == 0 || len(scaling) < 3 {
		t.Fatalf("%d GET_ROWS rejections, %d SCALE cases", len(rejecting), len(scaling))
	}
	var opens, failOpen atomic.Int64
	var armed atomic.Bool // the next node computed faults
	open := func() (ops.Backend, error) {
		if opens.Add(1) > 1 && failOpen.Load() > 0 {
			return nil, errors.New("no device")
		}
		b, err := cpu.New(1)
		if err != nil {
			return nil, err
		}
		return losing{Backend: b, lost: new(atomic.Bool), fault: func(*ops.Tensor) bool { return armed.Swap(false) }}, nil
	}
	s, err := OpenSession("fake-0", open)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var notices []string
	s.Notice = func(l string) { notices = append(notices, l) }
	run := func(c Case) Result {
		t.Helper()
		r, err := s.Run(c)
		if err != nil {
			t.Fatalf("%s: %v", c.ID(), err)
		}
		return r
	}
	for i, c := range []Case{scaling[0], rejecting[0]} {
		armed.Store(true)
		r := run(c)
		if r.Passed() || r.ContextLost != "FAKE_MISALIGNED" || !strings.Contains(r.Err, "misaligned address") {
			t.Errorf("%s on a lost context: %s, lost %q (%s); want a failure naming FAKE_MISALIGNED", c.ID(), r.Summary(), r.ContextLost, r.Err)
		}
		if s.Reopened != i+1 || len(notices) != i+1 || notices[i] != "fake-0: context lost at case "+c.ID()+" (FAKE_MISALIGNED); reopened" {
			t.Errorf("after %s: %d reopened, notices %q", c.ID(), s.Reopened, notices)
		}
		if r := run(scaling[1]); !r.Passed() || r.ContextLost != "" {
			t.Errorf("%s after the reopen: %s (%s)", scaling[1].ID(), r.Summary(), r.Err)
		}
	}
	if r := run(rejecting[0]); !r.Passed() {
		t.Errorf("%s without a fault: %s (%s)", rejecting[0].ID(), r.Summary(), r.Err)
	}
	failOpen.Store(1)
	armed.Store(true)
	r, err := s.Run(scaling[2])
	if err == nil || !strings.Contains(err.Error(), "fake-0: context lost at case "+scaling[2].ID()+" (FAKE_MISALIGNED); reopening failed: no device") || r.ContextLost == "" {
		t.Errorf("a failed reopen: %v (lost %q)", err, r.ContextLost)
	}
	if _, err := s.Run(scaling[0]); err == nil {
		t.Error("the session ran a case after a failed reopen")
	}
}
