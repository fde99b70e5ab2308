package harness

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kernbench/kernbench/ops"
	_ "github.com/kernbench/kernbench/ops/backends" // every backend registers itself
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/ops/registry"
)

var (
	calibrate = flag.Bool("calibrate", false, "print the worst NMSE and relative error per tolerance entry")
	withLarge = flag.Bool("large", false, "also run LargeCases")
)

// testThreads is the worker count of the backends the matrix runs on.
const testThreads = 2

// TestBackends runs the whole default matrix (with -large, the large cases
// too) on every registered backend that can open here, each variant (CPU
// tier) a backend of its own: every case must pass, none may be skipped.
// A backend added to the registry is validated here with no change to
// this test (TestNewBackendIsValidated shows it); those that cannot open
// here are logged with the reason.
func TestBackends(t *testing.T) {
	targets, skipped := matrixTargets(registry.Default)
	for _, s := range skipped {
		t.Logf("skipped: %s", s)
	}
	if len(targets) == 0 {
		t.Fatal("no registered backend can open here")
	}
	cases := matrixCases()
	for _, tg := range targets {
		t.Run(tg.Name(), func(t *testing.T) {
			validateTarget(tg, cases, testThreads).report(t)
		})
	}
}

// matrixCases returns the cases TestBackends runs: the default matrix,
// and with -large the large cases.
func matrixCases() []Case {
	cases := Cases()
	if *withLarge {
		cases = append(cases, LargeCases()...)
	}
	return cases
}

// matrixTargets returns the targets of r the matrix runs on: every one
// that can open here. skipped says, for each of the others, why not.
func matrixTargets(r *registry.Registry) (run []registry.Target, skipped []string) {
	for _, tg := range r.Targets() {
		if err := tg.Err(); err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", tg, err))
			continue
		}
		run = append(run, tg)
	}
	return run, skipped
}

// A targetRun is the outcome of the matrix on one target.
type targetRun struct {
	target  registry.Target
	err     error // the backend did not open
	cases   []Case
	results []Result // one per case, in order
	elapsed time.Duration
}

// validateTarget opens tg with threads workers and runs cases on it, in a
// Session: a case that loses the device context fails, and the cases
// after it run on a new backend.
func validateTarget(tg registry.Target, cases []Case, threads int) targetRun {
	run := targetRun{target: tg, cases: cases}
	s, err := OpenSession(tg.Name(), func() (ops.Backend, error) { return tg.Open(threads) })
	if err != nil {
		run.err = err
		return run
	}
	defer s.Close()
	start := time.Now()
	for _, c := range cases {
		r, err := s.Run(c)
		run.results = append(run.results, r)
		if err != nil {
			run.err = err
			break
		}
	}
	run.elapsed = time.Since(start)
	return run
}

// failures describes the cases that did not pass. A case the backend
// does not support fails only on a backend that declares itself complete
// (the CPU) and does not list one of the case's types as pending; a
// partial one's are counted by unsupported.
func (r targetRun) failures() []string {
	if r.err != nil {
		return []string{r.err.Error()}
	}
	var out []string
	for i, res := range r.results {
		e := r.target.Entry
		if res.Passed() || res.Unsupported() && (!e.Complete || e.IsPending(r.cases[i].Types)) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s (err: %s)", r.cases[i].ID(), res.Summary(), res.Err))
	}
	return out
}

// unsupported counts, per op, the cases the backend does not support, as
// "MUL_MAT_ID: 41, SSM_SCAN: 12".
func (r targetRun) unsupported() string {
	n := map[string]int{}
	for i, res := range r.results {
		if res.Unsupported() {
			n[r.cases[i].Op.String()]++
		}
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = fmt.Sprintf("%s: %d", k, n[k])
	}
	return strings.Join(keys, ", ")
}

// report fails t for each failure and logs the time taken; with
// -calibrate it logs the worst NMSE and relative error per tolerance
// entry.
func (r targetRun) report(t *testing.T) {
	for _, f := range r.failures() {
		t.Error(f)
	}
	t.Logf("%d cases on %s in %v", len(r.cases), r.target, r.elapsed)
	if u := r.unsupported(); u != "" {
		t.Logf("%s does not support: %s", r.target, u)
	}
	if *calibrate {
		for _, l := range r.calibration() {
			t.Log(l)
		}
	}
}

// calibration returns a line per tolerance entry (op, type and tag) with
// the worst NMSE and relative error of the cases that met it.
func (r targetRun) calibration() []string {
	type worst struct {
		nmse, rel float64
		n         int
		tol       Tolerance
		where     string
	}
	worsts := map[string]*worst{}
	for i, res := range r.results {
		c := r.cases[i]
		if res.Status != StatusOK {
			continue
		}
		key := fmt.Sprintf("%v/%v/%s", c.Op, primaryType(c), c.Tag)
		w := worsts[key]
		if w == nil {
			w = &worst{tol: res.Tol}
			worsts[key] = w
		}
		w.n++
		if float64(res.NMSE) > w.nmse {
			w.nmse, w.where = float64(res.NMSE), c.ID()
		}
		if res.RefMax > 0 {
			w.rel = max(w.rel, float64(res.MaxErr/res.RefMax))
		}
	}
	keys := make([]string, 0, len(worsts))
	for k := range worsts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		w := worsts[k]
		out = append(out, fmt.Sprintf("%-32s n=%3d worst nmse %.3g (tol %.3g) rel %.3g (tol %.3g) at %s", k, w.n, w.nmse, w.tol.MaxNMSE, w.rel, w.tol.MaxRelErr, w.where))
	}
	return out
}

// newcomer is a backend that only a test registers: the CPU under another
// name, counting its computations, and when corrupt is set writing a
// wrong first element for every node of that op.
type newcomer struct {
	ops.Backend
	name     string
	computes *atomic.Int64
	corrupt  ops.Op
}

func (n newcomer) Name() string { return n.name }

func (n newcomer) Compute(t *ops.Tensor) error {
	if err := n.Backend.Compute(t); err != nil {
		return err
	}
	n.computes.Add(1)
	if n.corrupt == ops.OpNone || t.Op != n.corrupt || t.NumElements() == 0 {
		return nil
	}
	buf, off := t.Storage()
	var b [4]byte
	if _, err := buf.ReadAt(b[:], off); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(b[:], math.Float32bits(math.Float32frombits(binary.LittleEndian.Uint32(b[:]))+1))
	_, err := buf.WriteAt(b[:], off)
	return err
}

// TestNewBackendIsValidated proves the claim of TestBackends: a backend
// that is only registered is found and validated by the same functions,
// variants and all, with no test written for it; one that computes an op
// wrong is reported failing on exactly that op's cases; those that cannot
// open are passed over with the reason. It uses a registry of its own, so
// that the broken backend does not fail TestBackends.
func TestNewBackendIsValidated(t *testing.T) {
	open := func(name string, computes *atomic.Int64, corrupt ops.Op) func(registry.Config) (ops.Backend, error) {
		return func(c registry.Config) (ops.Backend, error) {
			if c.Variant != "" && c.Variant != "generic" {
				return nil, fmt.Errorf("variant %s cannot open", c.Variant)
			}
			b, err := cpu.NewWithOptions(cpu.Options{Threads: c.Threads, Tier: "generic"})
			if err != nil {
				return nil, err
			}
			return newcomer{Backend: b, name: name, computes: computes, corrupt: corrupt}, nil
		}
	}
	var good, bad atomic.Int64
	r := new(registry.Registry)
	for _, e := range []registry.Entry{
		{
			Name: "newcomer", Description: "the CPU by another name, with a tier this machine lacks",
			Open: open("newcomer", &good, ops.OpNone),
			Variants: func() []registry.Variant {
				return []registry.Variant{{Name: "generic"}, {Name: "warp", Err: errors.New("lacks the warp unit")}}
			},
		},
		{Name: "wrongscale", Description: "the CPU, but SCALE is off by one in its first element", Open: open("wrongscale", &bad, ops.OpScale)},
		{Name: "absent", Description: "a backend whose device is missing", Available: func() error { return errors.New("no device found") },
			Open: func(registry.Config) (ops.Backend, error) { return nil, errors.New("opened although unavailable") }},
	} {
		if err := r.Register(e); err != nil {
			t.Fatal(err)
		}
	}

	targets, skipped := matrixTargets(r)
	var names []string
	for _, tg := range targets {
		names = append(names, tg.Name())
	}
	if fmt.Sprint(names) != "[newcomer-generic wrongscale]" {
		t.Errorf("the matrix runs on %v, want [newcomer-generic wrongscale]", names)
	}
	if fmt.Sprint(skipped) != "[absent: no device found newcomer-warp: lacks the warp unit]" {
		t.Errorf("skipped %q", skipped)
	}

	cases := Select(Cases(), Filter{Ops: []ops.Op{ops.OpScale, ops.OpAdd}})
	for _, tg := range targets {
		run := validateTarget(tg, cases, 1)
		if run.err != nil || len(run.results) != len(cases) {
			t.Fatalf("%s: %v, %d results for %d cases", tg, run.err, len(run.results), len(cases))
		}
		fails := run.failures()
		switch tg.Entry.Name {
		case "newcomer":
			if len(fails) > 0 || good.Load() == 0 {
				t.Errorf("%s: %d computations, failures %q; want every case to pass", tg, good.Load(), fails)
			}
		case "wrongscale":
			wrong := 0
			for i, res := range run.results {
				c := cases[i]
				must := c.Op == ops.OpScale && c.Expect == ExpectMatch && res.Elements > 0
				if must == res.Passed() {
					t.Errorf("%s %s: %s; want it to fail exactly when it computes SCALE", tg, c.ID(), res.Summary())
				}
				if must {
					wrong++
				}
			}
			if wrong == 0 || len(fails) != wrong || bad.Load() == 0 {
				t.Errorf("%s: %d failures %q for %d wrong SCALE outputs", tg, len(fails), fails, wrong)
			}
		}
	}

	// The backend that cannot open is reported, not opened.
	absent, err := r.Lookup("absent")
	if err != nil {
		t.Fatal(err)
	}
	if run := validateTarget(registry.Target{Entry: absent}, cases, 1); run.err == nil || len(run.failures()) != 1 {
		t.Errorf("absent: %v, %q", run.err, run.failures())
	}
}

// partial is the CPU without ADD, as a GPU backend is while its kernels
// are being written.
type partial struct{ ops.Backend }

func (p partial) Supports(t *ops.Tensor) error {
	if t.Op == ops.OpAdd {
		return errors.New("no ADD kernel yet")
	}
	return p.Backend.Supports(t)
}

// TestPartialBackend: a backend that does not declare itself complete
// passes the matrix with the cases it does not support counted, not
// failed; one that does declare it fails on them.
func TestPartialBackend(t *testing.T) {
	cases := Select(Cases(), Filter{Ops: []ops.Op{ops.OpScale, ops.OpAdd}})
	adds := 0 // ADD cases that reach the backend (refused ones do not)
	for _, c := range cases {
		if c.Op == ops.OpAdd && c.Expect != ExpectRefuse {
			adds++
		}
	}
	for _, complete := range []bool{false, true} {
		r := new(registry.Registry)
		if err := r.Register(registry.Entry{Name: "partial", Description: "the CPU without ADD", Complete: complete,
			Open: func(c registry.Config) (ops.Backend, error) {
				b, err := cpu.NewWithOptions(cpu.Options{Threads: 1, Tier: "generic"})
				return partial{b}, err
			}}); err != nil {
			t.Fatal(err)
		}
		tg, err := r.Resolve("partial", "")
		if err != nil {
			t.Fatal(err)
		}
		run := validateTarget(tg, cases, 1)
		fails := run.failures()
		if complete && len(fails) == 0 {
			t.Errorf("complete backend without ADD: no failures")
		}
		if !complete && len(fails) > 0 {
			t.Errorf("partial backend: failures %q", fails)
		}
		if want := fmt.Sprintf("ADD: %d", adds); adds == 0 || run.unsupported() != want {
			t.Errorf("unsupported %q, want %q", run.unsupported(), want)
		}
	}
}
