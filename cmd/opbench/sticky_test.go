package main

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/ops/registry"
)

// errFakeSticky is a sticky device fault, as a GPU's driver reports one.
type errFakeSticky struct{}

func (errFakeSticky) Error() string          { return "fake: kernel fault (FAKE_MISALIGNED_ADDRESS)" }
func (errFakeSticky) Is(target error) bool   { return target == ops.ErrContextLost }
func (errFakeSticky) LostReason() string     { return "FAKE_MISALIGNED_ADDRESS" }
func (s sticky) Compute(t *ops.Tensor) error { return s.do(func() error { return s.compute(t) }) }
func (s sticky) Alloc(n int64) (ops.Buffer, error) {
	var b ops.Buffer
	err := s.do(func() (err error) { b, err = s.Backend.Alloc(n); return err })
	return b, err
}

// sticky is the CPU standing for a GPU whose context a kernel fault
// loses: the node of the faulting case fails with a sticky error, and so
// does every later call on the backend, as on a CUDA context, until it
// is closed and another opened.
type sticky struct {
	*cpu.Backend
	lost   *atomic.Bool
	faults func(t *ops.Tensor) bool
}

func (s sticky) do(f func() error) error {
	if s.lost.Load() {
		return errFakeSticky{}
	}
	return f()
}

func (s sticky) compute(t *ops.Tensor) error {
	if s.faults(t) {
		s.lost.Store(true)
		return fmt.Errorf("fake: launch: %w", errFakeSticky{})
	}
	return s.Backend.Compute(t)
}

// TestValidateReopensAfterLostContext: a case whose kernel loses the
// device context fails naming the fault, validate says once that it
// reopened the backend, and the cases after it pass; where the reopen
// fails, validate stops with that error rather than failing every later
// case.
func TestValidateReopensAfterLostContext(t *testing.T) {
	cases := harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{ops.OpScale}})
	for _, tc := range []struct {
		name      string
		reopenErr bool
	}{{"reopened", false}, {"reopen fails", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var opens atomic.Int64
			var faulted atomic.Bool
			withBackends(t, registry.Entry{Name: "sticky", Open: func(c registry.Config) (ops.Backend, error) {
				if opens.Add(1) > 1 && tc.reopenErr {
					return nil, errors.New("fake: no device")
				}
				b, err := cpu.New(c.Threads)
				// The faulting node: the second SCALE computed.
				return sticky{Backend: b, lost: new(atomic.Bool), faults: func(n *ops.Tensor) bool {
					return n.Op == ops.OpScale && n.NumElements() > 0 && computedScales.Add(1) == 2 && faulted.CompareAndSwap(false, true)
				}}, err
			}})
			computedScales.Store(0)
			code, out, errOut := runArgs("validate", "-backend", "sticky", "-op", "scale", "-v")
			if code != exitFailure {
				t.Fatalf("code %d, want 1:\n%s\n%s", code, out, errOut)
			}
			if !faulted.Load() {
				t.Fatal("no node faulted")
			}
			notice := "opbench validate: sticky: context lost at case SCALE/"
			if n := strings.Count(errOut, notice); tc.reopenErr && n != 0 || !tc.reopenErr && n != 1 {
				t.Errorf("%d notices %q, want %d:\n%s", n, notice, map[bool]int{false: 1, true: 0}[tc.reopenErr], errOut)
			}
			if !strings.Contains(out, "FAKE_MISALIGNED_ADDRESS") {
				t.Errorf("the failed case does not name the fault:\n%s", out)
			}
			if tc.reopenErr {
				if !strings.Contains(errOut, "opbench validate: stopped: sticky: context lost at case") || !strings.Contains(errOut, "reopening failed: backend sticky: fake: no device") {
					t.Errorf("no clear error for the failed reopen:\n%s", errOut)
				}
				if want := " passed, 1 failed"; !strings.Contains(out, want) {
					t.Errorf("output lacks %q: the cases after the lost context ran:\n%s", want, out)
				}
				return
			}
			if !strings.Contains(errOut, "); reopened") || opens.Load() != 2 {
				t.Errorf("%d opens, notice:\n%s", opens.Load(), errOut)
			}
			// The faulting case fails; those after it pass on the new backend.
			if want := fmt.Sprintf("%d passed, 1 failed", len(cases)-1); !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		})
	}
}

// computedScales counts the SCALE nodes the sticky backends computed.
var computedScales atomic.Int64
