package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu"
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
		{[]string{"validate", "-help"}, exitOK, "-threads", ""},
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
		{[]string{"-backend", "cuda"}, "backend cuda is not available in this build"},
		{[]string{"-backend", "cpu,metal"}, "backend metal is not available in this build"},
		{[]string{"-backend", "tpu"}, `unknown backend "tpu"`},
		{[]string{"-backend", ""}, "no backend named"},
		{[]string{"-threads", "-1"}, "-threads: -1 is negative"},
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
	cfg, help, err := parseValidate([]string{"-op", "MUL_MAT, soft_max", "-type", "q4_K,f16", "-threads", "3", "-case", "n=1", "-v", "-large", "-json", "x.json"})
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
	var got []string
	for _, b := range cfg.backends {
		got = append(got, b.name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("backends %v, want %v", got, want)
	}
	cfg, _, err = parseValidate([]string{"-tier", "generic"})
	if err != nil || len(cfg.backends) != 1 || cfg.backends[0].name != "cpu-generic" {
		t.Errorf("-tier generic: backends %+v, err %v", cfg.backends, err)
	}
	for _, bad := range []string{"sse9", "avx512"} {
		if tr := cpu.Tiers(); bad == "avx512" && slices.ContainsFunc(tr, func(x cpu.Tier) bool { return x.Name == bad && x.Supported }) {
			continue
		}
		if _, _, err := parseValidate([]string{"-tier", bad}); err == nil || !strings.HasPrefix(err.Error(), "-tier: ") {
			t.Errorf("-tier %s: err %v, want a -tier error", bad, err)
		}
	}
}

func TestValidatePasses(t *testing.T) {
	code, out, errOut := runArgs("validate", "-op", "rms_norm,add", "-threads", "1")
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
	code, _, errOut := runArgs("validate", "-op", "swiglu", "-threads", "2", "-json", path)
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

func TestValidateFailsExit1(t *testing.T) {
	saved := backends
	defer func() { backends = saved }()
	backends = append(backends, backendEntry{name: "broken", open: func(n int) (ops.Backend, error) {
		b, err := cpu.New(n)
		return broken{b}, err
	}})
	code, out, _ := runArgs("validate", "-backend", "broken", "-op", "scale", "-v")
	if code != exitFailure {
		t.Fatalf("code %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{"FAIL", "NaN/Inf mismatches", "input a f32", " passed, 4 failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
