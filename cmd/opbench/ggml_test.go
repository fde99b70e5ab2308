package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/bench"
)

// fakeHeader numbers the ops the fake test-backend-ops knows.
const fakeHeader = `
enum ggml_op {
	GGML_OP_NONE = 0,
	GGML_OP_RMS_NORM = 25,
	GGML_OP_MUL_MAT = 29,
	GGML_OP_SSM_SCAN = 77,
	GGML_OP_COUNT,
};
enum ggml_unary_op { GGML_UNARY_OP_SILU = 10 };
enum ggml_glu_op { GGML_GLU_OP_SWIGLU = 2 };
`

// fakeBackendOps is a stand-in for test-backend-ops: it reads the
// --test-file it is given and answers each line in the SQL form, naming
// ops by the numbers it was built with (names), timing MUL_MAT at 50 us
// and RMS_NORM at 2 us, and not running SSM_SCAN.
const fakeBackendOps = `#!/bin/sh
file=""
while [ $# -gt 0 ]; do
	case "$1" in
	--test-file) file="$2"; shift ;;
	esac
	shift
done
[ -n "$file" ] || { echo "no test file" >&2; exit 1; }
awk -v names="$NAMES" '
BEGIN { n = split(names, kv, ","); for (i = 1; i <= n; i++) { split(kv[i], p, "="); op[p[1]] = p[2] } }
{
	name = op[$1]; sup = 1; t = "2.000000"
	if (name == "MUL_MAT") t = "50.000000"
	if (name == "SSM_SCAN") { sup = 0; t = "0.000000" }
	printf "INSERT INTO test_backend_ops (test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description, backend_reg_name) VALUES ('"'"'2026-01-01T00:00:00Z'"'"', '"'"'fake123'"'"', '"'"'CPU'"'"', '"'"'%s'"'"', '"'"'name=%s,type=f32'"'"', '"'"'perf'"'"', '"'"'%d'"'"', '"'"'1'"'"', '"'"''"'"', '"'"'%s'"'"', '"'"'0'"'"', '"'"'1.0'"'"', '"'"'4'"'"', '"'"'%d'"'"', '"'"''"'"', '"'"''"'"');\n", name, $NF, sup, t, sup ? 100 : 0
}' "$file"
`

// fakeGGMLTree lays out a ggml checkout with the fake binary in
// build/bin, and returns the binary's path.
func fakeGGMLTree(t *testing.T, names string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "include"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "build", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "include", "ggml.h"), []byte(fakeHeader), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "build", "bin", "test-backend-ops")
	if err := os.WriteFile(bin, []byte(fakeBackendOps), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NAMES", names)
	return bin
}

func TestGGMLSideBySide(t *testing.T) {
	bin := fakeGGMLTree(t, "25=RMS_NORM,29=MUL_MAT,77=SSM_SCAN")
	out := t.TempDir()
	code, stdout, stderr := runArgs("ggml", "-ggml", bin, "-op", "rms_norm,mul_mat,ssm_scan", "-type", "q8_0",
		"-m", "64", "-k", "256", "-n", "2", "-rounds", "4", "-time", "2ms", "-roofline", "off", "-out", out, "-name", "side", "-plot")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"kernbench/ggml", "RMS_NORM", "MUL_MAT", "not timed: SSM_SCAN", "ggml-cpu", "geomean", "side-speedup-",
		"50.00 µs (50.00-50.00)", "2.00 µs (2.00-2.00)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	s, err := bench.ReadFile(filepath.Join(out, "side.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Baseline == nil || s.Baseline.Backend != "ggml-cpu" || s.Baseline.Version != "fake123" || s.Baseline.Program != bin {
		b, _ := json.Marshal(s.Baseline)
		t.Errorf("baseline %s", b)
	}
	byKey := map[string]bench.Record{}
	for _, r := range s.Records {
		byKey[r.Op+" "+r.Backend] = r
	}
	g := byKey["MUL_MAT ggml-cpu"]
	if len(g.Samples) != 4 || math.Abs(g.Median-50e-6) > 1e-12 || g.Validation != bench.ValidExternal {
		t.Errorf("ggml's MUL_MAT: %d samples, median %g, %s; want 4, 5e-05, external", len(g.Samples), g.Median, g.Validation)
	}

	// -table prints the record's table again, as the run printed it
	// before the line naming the files it wrote.
	code, again, stderr := runArgs("ggml", "-table", filepath.Join(out, "side.json"))
	if code != exitOK || !strings.Contains(again, "50.00 µs (50.00-50.00)") || !strings.HasPrefix(stdout, again) {
		t.Errorf("-table: exit %d, stdout:\n%s\nthe run printed:\n%s\nstderr: %s", code, again, stdout, stderr)
	}
	if r := byKey["SSM_SCAN ggml-cpu"]; r.Validation != bench.ValidUnsupported || r.Timed() {
		t.Errorf("ggml's SSM_SCAN: %+v", r)
	}
	for _, op := range []string{"MUL_MAT", "RMS_NORM", "SSM_SCAN"} {
		var ours bench.Record
		for _, r := range s.Records {
			if r.Op == op && r.Backend != "ggml-cpu" {
				ours = r
			}
		}
		if len(ours.Samples) != 4 || (ours.Validation != bench.ValidOK && ours.Validation != bench.ValidSampled) {
			t.Errorf("kernbench's %s: %d samples, %s", op, len(ours.Samples), ours.Validation)
		}
	}
}

// A binary whose op numbers differ from the header's is caught: its
// results name other ops than were asked for.
func TestGGMLHeaderMismatch(t *testing.T) {
	bin := fakeGGMLTree(t, "25=MUL_MAT,29=RMS_NORM")
	code, stdout, _ := runArgs("ggml", "-ggml", bin, "-op", "rms_norm", "-k", "256", "-n", "1", "-rounds", "1", "-time", "2ms", "-roofline", "off", "-out", t.TempDir())
	if code != exitFailure || !strings.Contains(stdout, "does not match the binary") {
		t.Errorf("exit %d, stdout:\n%s", code, stdout)
	}
}

func TestGGMLBadFlags(t *testing.T) {
	bin := fakeGGMLTree(t, "25=RMS_NORM")
	t.Setenv("KERNBENCH_GGML", "")
	// A record of another command: no ggml-cpu baseline.
	var buf bytes.Buffer
	if err := (&bench.Set{Schema: bench.Schema, Machine: bench.DetectMachine()}).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	noBaseline := filepath.Join(t.TempDir(), "sweep.json")
	if err := os.WriteFile(noBaseline, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-op", "rms_norm"}, "-ggml: name ggml's test-backend-ops"},
		{[]string{"-ggml", bin, "-op", "rms_norm", "-t", "1,2"}, "-t: test-backend-ops runs"},
		{[]string{"-ggml", bin, "-op", "rms_norm", "-rounds", "0"}, "-rounds: 0"},
		{[]string{"-ggml", bin, "-op", "rms_norm", "-cpuprofile", "x"}, "-cpuprofile"},
		{[]string{"-ggml", bin, "-op", "rms_norm", "-goal", "-1"}, "-goal"},
		{[]string{"-ggml", filepath.Join(t.TempDir(), "missing"), "-op", "rms_norm"}, "-ggml: ggmlperf: test-backend-ops:"},
		{[]string{"-ggml", bin, "-ggml-header", "/nonexistent/ggml.h", "-op", "rms_norm"}, "/nonexistent/ggml.h"},
		{[]string{"-ggml", bin}, "-op: name the ops"},
		{[]string{"-table", filepath.Join(t.TempDir(), "missing.json")}, "-table:"},
		{[]string{"-table", noBaseline}, "is not a record of opbench ggml"},
	}
	for _, tt := range tests {
		code, _, stderr := runArgs(append([]string{"ggml"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("opbench ggml %q: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

func TestGGMLList(t *testing.T) {
	bin := fakeGGMLTree(t, "25=RMS_NORM")
	code, stdout, stderr := runArgs("ggml", "-ggml", bin, "-op", "rms_norm", "-k", "256", "-n", "1,2", "-list")
	if code != exitOK || !strings.Contains(stdout, "25 0 256 2 1 1 1 ") || !strings.Contains(stdout, "2 points") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestSecondsRange: a median and its samples' range in the median's
// unit, and the median alone where the range is missing or makes no
// sense.
func TestSecondsRange(t *testing.T) {
	for _, c := range []struct {
		median, lo, hi float64
		want           string
	}{
		{25.74e-6, 24.38e-6, 26.52e-6, "25.74 µs (24.38-26.52)"},
		{837e-9, 812e-9, 1.2e-6, "837 ns (812-1200)"},
		{999e-6, 980e-6, 1.02e-3, "999.00 µs (980.00-1020.00)"},
		{0.245269, 0.2401, 0.25, "245.269 ms (240.100-250.000)"},
		{1.5, 1.25, 2, "1.500 s (1.250-2.000)"},
		{25e-6, 0, 0, "25.00 µs"},
		{25e-6, 26e-6, 24e-6, "25.00 µs"},
		{0, 1e-6, 2e-6, "-"},
	} {
		if got := secondsRange(c.median, c.lo, c.hi); got != c.want {
			t.Errorf("secondsRange(%g, %g, %g) = %q, want %q", c.median, c.lo, c.hi, got, c.want)
		}
	}
}

// TestRoofPair: both sides' share of the roofline, the ceiling named once
// when they share it, and "-" where either lacks one.
func TestRoofPair(t *testing.T) {
	rec := func(pct float64, roof string) bench.Record { return bench.Record{RooflinePct: pct, Roof: roof} }
	for _, c := range []struct {
		a, b bench.Record
		want string
	}{
		{rec(87.1, "compute"), rec(89.7, "compute"), "87%, 90% compute"},
		{rec(78, "bf16"), rec(86, "bf16"), "78%, 86% bf16"},
		{rec(20.4, "int8"), rec(95, "l3"), "20% int8, 95% l3"},
		{rec(0, ""), rec(90, "compute"), "-"},
		{rec(90, "dram"), rec(0, ""), "-"},
	} {
		if got := roofPair(c.a, c.b); got != c.want {
			t.Errorf("roofPair(%v %s, %v %s) = %q, want %q", c.a.RooflinePct, c.a.Roof, c.b.RooflinePct, c.b.Roof, got, c.want)
		}
	}
}
