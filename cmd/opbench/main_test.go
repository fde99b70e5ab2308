package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
	"github.com/kernbench/kernbench/ops/registry"
)

func runArgs(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{nil, exitUsage, "", "Commands:"},
		{[]string{"-h"}, exitOK, "validate", ""},
		{[]string{"help"}, exitOK, "Examples:", ""},
		{[]string{"frobnicate"}, exitUsage, "", `unknown command "frobnicate"`},
		{[]string{"validate", "-h"}, exitOK, "opbench validate -op mul_mat,soft_max", ""},
		{[]string{"validate", "-help"}, exitOK, "deprecated spelling of -t", ""},
	}
	for _, tt := range tests {
		code, out, errOut := runArgs(tt.args...)
		if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
			t.Errorf("opbench %q: code %d, stdout %q, stderr %q; want %d, %q, %q", tt.args, code, out, errOut, tt.code, tt.stdout, tt.stderr)
		}
	}
}

// TestBadFlags: every bad flag value exits 2 with one line naming it.
func TestBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-op", "mul_mat,frob"}, `unknown op "frob"`},
		{[]string{"-op", "view"}, "VIEW computes nothing"},
		{[]string{"-type", "q4_0,q9_9"}, `unknown type "q9_9"`},
		{[]string{"-backend", "cuda"}, "-backend: backend cuda is unavailable: "},
		{[]string{"-backend", "cpu,metal"}, "-backend: backend metal is unavailable: not darwin"},
		{[]string{"-backend", "tpu"}, `-backend: unknown backend "tpu" (known: cpu, cuda, metal)`},
		{[]string{"-backend", "cpu-sse9"}, `-backend: backend cpu has no variant "sse9"`},
		{[]string{"-backend", ""}, "no backend named"},
		{[]string{"-tier", "sse9"}, `-tier: unknown tier "sse9" of backend cpu`},
		{[]string{"-threads", "-1"}, `invalid value "-1" for flag -threads: want 0 (one per CPU) to 4096 threads`},
		{[]string{"-t", "-1"}, `invalid value "-1" for flag -t`},
		{[]string{"-json", "/missing/dir/x.json"}, "flag -json: folder /missing/dir does not exist"},
		{[]string{"-json", "/dev/null/x.json"}, "flag -json: /dev/null is not a folder"},
		{[]string{"-threads", "many"}, `invalid value "many"`},
		{[]string{"-nosuch"}, "-nosuch"},
		{[]string{"stray"}, `unexpected argument "stray"`},
		{[]string{"-case", "no case has this name"}, "no case matches"},
		{[]string{"-op", "rope", "-type", "q4_0"}, "no case matches"},
	}
	for _, tt := range tests {
		code, out, errOut := runArgs(append([]string{"validate"}, tt.args...)...)
		first, _, _ := strings.Cut(errOut, "\n")
		if code != exitUsage || out != "" || !strings.Contains(first, tt.want) {
			t.Errorf("validate %q: code %d, stdout %q, stderr %q; want code 2 and a first line with %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

func TestParseValidate(t *testing.T) {
	cfg, help, err := parseValidate([]string{"-op", "MUL_MAT, soft_max", "-type", "q4_K,f16", "-t", "3", "-case", "n=1", "-v", "-large", "-json", "x.json"})
	if err != nil || help {
		t.Fatal(err, help)
	}
	if len(cfg.filter.Ops) != 2 || cfg.filter.Ops[0] != ops.OpMulMat || cfg.filter.Ops[1] != ops.OpSoftMax {
		t.Errorf("ops: %v", cfg.filter.Ops)
	}
	if len(cfg.filter.Types) != 2 || cfg.filter.Types[0].String() != "q4_K" || cfg.filter.Name != "n=1" {
		t.Errorf("filter: %+v", cfg.filter)
	}
	if cfg.threads != 3 || !cfg.verbose || !cfg.large || cfg.json != "x.json" {
		t.Errorf("config: %+v", cfg)
	}
	// The cpu backend expands to one backend per supported tier.
	var want []string
	for _, tr := range cpu.Tiers() {
		if tr.Supported {
			want = append(want, "cpu-"+tr.Name)
		}
	}
	if got := targetNames(cfg.backends); !slices.Equal(got, want) {
		t.Errorf("backends %v, want %v", got, want)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-tier", "generic"}, []string{"cpu-generic"}},
		{[]string{"-backend", "cpu-generic"}, []string{"cpu-generic"}},
		{[]string{"-backend", "cpu-generic,cpu"}, want},
		{[]string{"-backend", "all"}, availableNames(supportedTiers()...)},
		{[]string{"-backend", "ALL", "-tier", "generic"}, availableNames("cpu-generic")},
	} {
		cfg, _, err := parseValidate(tc.args)
		if got := targetNames(cfg.backends); err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: backends %v, %v; want %v", tc.args, got, err, tc.want)
		}
	}
	for _, bad := range []string{"sse9", cputest.UnsupportedTier()} {
		if bad == "" {
			continue
		}
		if _, _, err := parseValidate([]string{"-tier", bad}); err == nil || !strings.HasPrefix(err.Error(), "-tier: ") {
			t.Errorf("-tier %s: err %v, want a -tier error", bad, err)
		}
	}
}

func TestValidatePasses(t *testing.T) {
	code, out, errOut := runArgs("validate", "-op", "rms_norm,add", "-t", "1")
	if code != exitOK {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"op", "case", "type(s)", "backend", "NMSE", "max err", "result", "RMS_NORM", "REFUSED-OK", " passed, 0 failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestValidateJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	code, _, errOut := runArgs("validate", "-op", "swiglu", "-t", "2", "-json", path)
	if code != exitOK {
		t.Fatalf("code %d: %s", code, errOut)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rs []harness.Result
	if err := json.Unmarshal(b, &rs); err != nil {
		t.Fatal(err)
	}
	tiers := 0
	for _, tr := range cpu.Tiers() {
		if tr.Supported {
			tiers++
		}
	}
	want := tiers * len(harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{ops.OpSwiGLU}}))
	if len(rs) != want {
		t.Fatalf("%d records, want %d (every case on each of %d tiers)", len(rs), want, tiers)
	}
	for _, r := range rs {
		if r.OpName != "SWIGLU" || !strings.HasPrefix(r.Backend, "cpu-") || r.Threads != 2 || !r.Status.Passed() {
			t.Errorf("record %+v", r)
		}
	}

	code, out, _ := runArgs("validate", "-op", "swiglu", "-json", "-")
	if code != exitOK || !strings.HasPrefix(out, "[") || strings.Contains(out, "┌") {
		t.Errorf("-json -: code %d, stdout %q", code, out)
	}
}

func TestList(t *testing.T) {
	code, out, _ := runArgs("validate", "-list", "-op", "cpy", "-type", "q4_K")
	if code != exitOK || !strings.Contains(out, "f32->q4_K") || !strings.Contains(out, "refuse") {
		t.Errorf("code %d:\n%s", code, out)
	}
}

// broken is a CPU backend that computes nothing, so every computing case
// fails.
type broken struct{ *cpu.Backend }

func (broken) Compute(*ops.Tensor) error { return nil }

// withBackends makes opbench open backends from a registry of the default
// one's entries and extra, until the test ends.
func withBackends(t *testing.T, extra ...registry.Entry) {
	r := new(registry.Registry)
	for _, e := range append(registry.Entries(), extra...) {
		if err := r.Register(e); err != nil {
			t.Fatal(err)
		}
	}
	saved := backends
	backends = r
	t.Cleanup(func() { backends = saved })
}

// supportedTiers returns "cpu-" and the name of each tier this CPU supports.
func supportedTiers() []string {
	var out []string
	for _, tr := range cpu.Tiers() {
		if tr.Supported {
			out = append(out, "cpu-"+tr.Name)
		}
	}
	return out
}

// availableNames returns cpu, the CPU targets given, followed by the
// other registered targets that can open here: what "-backend all"
// selects.
func availableNames(cpu ...string) []string {
	out := cpu
	for _, t := range registry.Available() {
		if t.Entry.Name != "cpu" {
			out = append(out, t.Name())
		}
	}
	return out
}

func TestValidateFailsExit1(t *testing.T) {
	withBackends(t, registry.Entry{Name: "broken", Open: func(c registry.Config) (ops.Backend, error) {
		b, err := cpu.New(c.Threads)
		return broken{b}, err
	}})
	code, out, _ := runArgs("validate", "-backend", "broken", "-op", "scale", "-v")
	if code != exitFailure {
		t.Fatalf("code %d, want 1:\n%s", code, out)
	}
	computed := 0 // the SCALE cases that compute: each fails on broken
	for _, c := range harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{ops.OpScale}}) {
		if c.Expect == harness.ExpectMatch {
			computed++
		}
	}
	for _, want := range []string{"FAIL", "NaN/Inf mismatches", "input a f32", fmt.Sprintf(" passed, %d failed", computed)} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestBackendsCommand: "opbench backends" lists every backend and CPU
// tier, with whether it can open here and why not.
func TestBackendsCommand(t *testing.T) {
	withBackends(t, registry.Entry{
		Name: "absent", Description: "a backend whose device is missing",
		Available: func() error { return errors.New("no device found") },
		Open:      func(registry.Config) (ops.Backend, error) { return nil, errors.New("unreachable") },
	})
	code, out, errOut := runArgs("backends")
	if code != exitOK || errOut != "" {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	lines := strings.Split(out, "\n")
	row := func(name string) string {
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == name {
				return l
			}
		}
		t.Errorf("no row for %s:\n%s", name, out)
		return ""
	}
	def, err := registry.Resolve("cpu", "")
	if err != nil {
		t.Fatal(err)
	}
	if r := row("cpu"); !strings.Contains(r, "yes") || !strings.Contains(r, "default tier "+def.Variant) {
		t.Errorf("cpu row %q lacks yes and its default tier %s", r, def.Variant)
	}
	if r := row(def.Name()); !strings.Contains(r, "the default") {
		t.Errorf("%s row %q does not say it is the default", def, r)
	}
	for _, tr := range cpu.Tiers() {
		r := row("cpu-" + tr.Name)
		if tr.Supported && !strings.Contains(r, "yes") || !tr.Supported && (!strings.Contains(r, "no") || !strings.Contains(r, tr.Reason)) {
			t.Errorf("tier %s (supported %v, %s): row %q", tr.Name, tr.Supported, tr.Reason, r)
		}
	}
	// Targets that cannot open here say why: the test entry, metal off
	// macOS, and each CUDA target without its GPU or emulator.
	var closed []registry.Target
	for _, name := range []string{"cuda", "metal", "absent"} {
		e, err := backends.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, tg := range e.Targets() {
			if tg.Err() != nil {
				closed = append(closed, tg)
			}
		}
		if !strings.Contains(out, e.Description) {
			t.Errorf("no description of %s", name)
		}
	}
	if len(closed) < 2 {
		t.Errorf("only %v cannot open here", closed)
	}
	for _, tg := range closed {
		if r := row(tg.Name()); !strings.Contains(r, " no ") || !strings.Contains(r, tg.Err().Error()) {
			t.Errorf("%s row %q lacks no or the reason %q", tg, r, tg.Err())
		}
	}
	if code, _, errOut := runArgs("backends", "extra"); code != exitUsage || !strings.Contains(errOut, `unexpected argument "extra"`) {
		t.Errorf("backends extra: code %d, %q", code, errOut)
	}
	if code, out, _ := runArgs("backends", "-h"); code != exitOK || !strings.Contains(out, "-backend all") {
		t.Errorf("backends -h: code %d, %q", code, out)
	}
}

// wrapped is a CPU backend under another name.
type wrapped struct{ *cpu.Backend }

// TestValidateAll: "-backend all" validates every backend that can open
// here, a newly registered one included, and passes over those that
// cannot open.
func TestValidateAll(t *testing.T) {
	withBackends(t,
		registry.Entry{Name: "wrapped", Open: func(c registry.Config) (ops.Backend, error) {
			b, err := cpu.New(c.Threads)
			return wrapped{b}, err
		}},
		registry.Entry{Name: "absent", Available: func() error { return errors.New("no device found") },
			Open: func(registry.Config) (ops.Backend, error) { return nil, errors.New("unreachable") }},
	)
	code, out, errOut := runArgs("validate", "-backend", "all", "-tier", "generic", "-op", "swiglu", "-t", "1", "-json", "-")
	if code != exitOK {
		t.Fatalf("code %d:\n%s\n%s", code, out, errOut)
	}
	var rs []harness.Result
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, r := range rs {
		n[r.Backend]++
	}
	cases := len(harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{ops.OpSwiGLU}}))
	if n["cpu-generic"] != cases || n["wrapped"] != cases || n["absent"] != 0 {
		t.Errorf("records per backend %v, want %d each on cpu-generic and wrapped", n, cases)
	}
	// Besides, "all" takes every other target that can open here (the
	// emulated GPUs), but of the CPU only the tier asked for.
	for name := range n {
		if name == "cpu-generic" || name == "wrapped" {
			continue
		}
		tg, err := backends.Resolve(name, "")
		if err != nil || tg.Err() != nil || tg.Entry.Tiers || n[name] != cases {
			t.Errorf("validate -backend all ran %d cases on %s (%v, %v)", n[name], name, err, tg.Err())
		}
	}
}
