package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/ops/cpu"
)

func TestBenchCommandsHelp(t *testing.T) {
	tests := map[string][]string{
		"sweep":    {"Examples:", "opbench sweep -op mul_mat -type q4_0,q8_0,q4_K -m 4096 -n 1,8,32,512", "-preset", "-tier", "Sweep file", "llama-3-8b", "mul_mat        m=4096"},
		"compare":  {"Examples:", "Mann-Whitney", "-fail-on-regression", "-alpha"},
		"plot":     {"Examples:", "roofline", "-x", "-o"},
		"roofline": {"Examples:", "VFMADD231PS", "-t", "-dram-bytes"},
	}
	for cmd, wants := range tests {
		code, out, errOut := runArgs(cmd, "-h")
		if code != exitOK || errOut != "" {
			t.Errorf("%s -h: code %d, stderr %q", cmd, code, errOut)
		}
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s -h lacks %q", cmd, w)
			}
		}
	}
	_, out, _ := runArgs("-h")
	for _, cmd := range []string{"sweep", "compare", "plot", "roofline"} {
		if !strings.Contains(out, "\t"+cmd) {
			t.Errorf("usage lacks %s", cmd)
		}
	}
}

// TestBenchBadFlags: a bad flag value exits 2 with a first line naming it.
func TestBenchBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"sweep"}, "-op: name the ops"},
		{[]string{"sweep", "-op", "frob"}, `-op: ops: unknown op "frob"`},
		{[]string{"sweep", "-op", "view"}, "-op: VIEW computes nothing"},
		{[]string{"sweep", "-op", "mul_mat", "-type", "q9_9"}, `-type: quant: unknown type "q9_9"`},
		{[]string{"sweep", "-op", "rms_norm", "-type", "q4_0"}, "-type: rms_norm takes no type q4_0"},
		{[]string{"sweep", "-op", "mul_mat", "-n", "0"}, "-n: 0 is not positive"},
		{[]string{"sweep", "-op", "mul_mat", "-n", "1,x"}, `-n: "x" is not an integer`},
		{[]string{"sweep", "-op", "mul_mat", "-n", "8..2"}, `-n: bad range "8..2"`},
		{[]string{"sweep", "-op", "rms_norm", "-m", "4"}, "-m: rms_norm has no size m"},
		{[]string{"sweep", "-op", "mul_mat", "-k", "100"}, "k=100"},
		{[]string{"sweep", "-op", "mul_mat", "-tier", "avx9"}, `-tier: unknown tier "avx9"`},
		{[]string{"sweep", "-op", "mul_mat", "-t", "-1"}, `invalid value "-1" for flag -t: want 0 (one per CPU) to 4096 threads`},
		{[]string{"sweep", "-op", "mul_mat", "-threads", "99999"}, `invalid value "99999" for flag -threads: want 0 (one per CPU) to 4096 threads`},
		{[]string{"sweep", "-op", "mul_mat", "-out", "/dev/null/x"}, "flag -out: /dev/null is not a folder"},
		{[]string{"sweep", "-op", "mul_mat", "-cpuprofile", "/dev/null"}, "flag -cpuprofile: /dev/null is not a folder"},
		{[]string{"sweep", "-op", "mul_mat", "-time", "-1s"}, "-time: -1s is not a positive duration"},
		{[]string{"sweep", "-op", "mul_mat", "-time", "soon"}, `invalid value "soon" for flag -time`},
		{[]string{"sweep", "-op", "mul_mat", "-min-samples", "2"}, "-min-samples: 2 is below 3"},
		{[]string{"sweep", "-op", "mul_mat", "-max-mem", "lots"}, `-max-mem: "lots" is not a byte count`},
		{[]string{"sweep", "-op", "mul_mat", "-cost-flops", "x"}, "-cost-flops:"},
		{[]string{"sweep", "-op", "mul_mat", "-ref-budget", "x"}, "-ref-budget:"},
		{[]string{"sweep", "-op", "mul_mat", "-backend", "tpu"}, `-backend: unknown backend "tpu"`},
		{[]string{"sweep", "-op", "mul_mat", "-backend", "cuda"}, "-backend: backend cuda is unavailable: "},
		{[]string{"sweep", "-op", "mul_mat", "-backend", "cpu-sse9"}, `-backend: backend cpu has no variant "sse9"`},
		{[]string{"sweep", "-op", "mul_mat", "-name", "a/b"}, "-name:"},
		{[]string{"sweep", "-op", "mul_mat", "-roofline", ""}, "-roofline:"},
		{[]string{"sweep", "-op", "mul_mat", "stray"}, `unexpected argument "stray"`},
		{[]string{"sweep", "-preset", "llama-9b"}, `-preset: unknown preset "llama-9b"`},
		{[]string{"sweep", "-preset", "llama-7b", "-m", "4"}, "-m: preset llama-7b fixes m"},
		{[]string{"sweep", "-f", "/nonexistent/sweep.json"}, "-f:"},
		{[]string{"sweep", "-f", "x.json", "-op", "mul_mat"}, "-f: give points in the file"},
		{[]string{"sweep", "-nosuch"}, "-nosuch"},
		{[]string{"compare", "a.json"}, "want two record files"},
		{[]string{"compare", "-alpha", "2", "a", "b"}, "-alpha: 2 is not in (0, 1)"},
		{[]string{"compare", "-ignore", "colour", "a", "b"}, `-ignore: unknown field "colour"`},
		{[]string{"compare", "/nonexistent/a.json", "/nonexistent/b.json"}, "no such file"},
		{[]string{"plot"}, "want one record file"},
		{[]string{"plot", "-x", "zz", "a.json"}, `-x: unknown size "zz"`},
		{[]string{"plot", "-y", "furlongs", "a.json"}, `-y: unknown metric "furlongs"`},
		{[]string{"plot", "/nonexistent/a.json"}, "no such file"},
		{[]string{"roofline", "-t", "1,-1"}, `invalid value "1,-1" for flag -t`},
		{[]string{"roofline", "-json", "/nonexistent/r.json"}, "flag -json: folder /nonexistent does not exist"},
		{[]string{"roofline", "-out", "/dev/null"}, "flag -out: /dev/null is not a folder"},
		{[]string{"roofline", "-time", "0s"}, "-time: 0s is not a positive duration"},
		{[]string{"roofline", "-cache-bytes", "1"}, "-cache-bytes:"},
		{[]string{"roofline", "-dram-bytes", "1T"}, "-dram-bytes:"},
		{[]string{"roofline", "-l3-bytes", "64K"}, "-l3-bytes:"},
		{[]string{"roofline", "extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		code, out, errOut := runArgs(tt.args...)
		first, _, _ := strings.Cut(errOut, "\n")
		if code != exitUsage || out != "" || !strings.Contains(first, tt.want) {
			t.Errorf("%q: code %d, stdout %q, stderr %q; want code 2 and a first line with %q", tt.args, code, out, errOut, tt.want)
		}
	}
	// A tier this CPU lacks (if any) is refused by name.
	for _, tier := range cpu.Tiers() {
		if !tier.Supported {
			code, _, errOut := runArgs("sweep", "-op", "add", "-tier", tier.Name)
			if code != exitUsage || !strings.Contains(errOut, "-tier: tier "+tier.Name+" is not supported") {
				t.Errorf("unsupported tier %s: code %d, %q", tier.Name, code, errOut)
			}
			break
		}
	}
}

func TestParseSweep(t *testing.T) {
	cfg, help, err := parseSweep([]string{"-op", "mul_mat", "-type", "q4_0,q8_0", "-m", "4096", "-n", "1..8", "-k", "4096,14336",
		"-t", "1,2,2", "-tier", "generic", "-time", "300ms", "-min-samples", "7", "-cost-flops", "1e10", "-max-mem", "2G", "-ref-budget", "-1", "-plot"})
	if err != nil || help {
		t.Fatal(err, help)
	}
	e := cfg.entries[0]
	if len(cfg.entries) != 1 || strings.Join(e.Ops, ",") != "mul_mat" || len(e.Types) != 2 || len(e.Dims["n"]) != 4 || e.Dims["n"][3] != 8 || len(e.Dims["k"]) != 2 {
		t.Errorf("entries %+v", cfg.entries)
	}
	if len(cfg.threads) != 2 || len(cfg.targets) != 1 || cfg.targets[0].Name() != "cpu-generic" || cfg.protocol.Time != 300*time.Millisecond || cfg.protocol.MinSamples != 7 ||
		cfg.protocol.CostFlops != 1e10 || cfg.maxMem != 2<<30 || cfg.refBudget != -1 || !cfg.plot {
		t.Errorf("config %+v", cfg)
	}

	// A sweep file sets time, threads and tiers unless flags do.
	path := filepath.Join(t.TempDir(), "s.json")
	spec := `{"time": "50ms", "threads": [1], "tiers": ["generic"], "sweeps": [{"preset": "mamba-1.4b", "dims": {"n": [1]}}]}`
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err = parseSweep([]string{"-f", path, "-t", "2"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.protocol.Time != 50*time.Millisecond || len(cfg.threads) != 1 || cfg.threads[0] != 2 || len(cfg.targets) != 1 || cfg.targets[0].Name() != "cpu-generic" || cfg.entries[0].Preset != "mamba-1.4b" {
		t.Errorf("file config %+v", cfg)
	}
	if err := os.WriteFile(path, []byte(`{"sweeps": [{"ops": ["frob"]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := parseSweep([]string{"-f", path}); err == nil || !strings.Contains(err.Error(), "sweep 1: op:") {
		t.Errorf("bad file entry: %v", err)
	}
	// No -tier: the fastest supported tier.
	cfg, _, _ = parseSweep([]string{"-op", "add"})
	best := ""
	for _, t := range cpu.Tiers() {
		if t.Supported {
			best = t.Name
		}
	}
	if len(cfg.targets) != 1 || cfg.targets[0].Name() != "cpu-"+best {
		t.Errorf("default backends %v, want cpu-%s", cfg.targets, best)
	}
	// -backend all: every backend that can open here, the CPU by its
	// default tier unless -tier says otherwise.
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-backend", "all"}, availableNames("cpu-" + best)},
		{[]string{"-backend", "all", "-tier", "all"}, availableNames(supportedTiers()...)},
		{[]string{"-backend", "cpu-generic,cpu", "-tier", "generic"}, []string{"cpu-generic"}},
	} {
		cfg, _, err := parseSweep(append([]string{"-op", "add"}, tc.args...))
		var got []string
		for _, t := range cfg.targets {
			got = append(got, t.Name())
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: backends %v, %v; want %v", tc.args, got, err, tc.want)
		}
	}
}

// TestSweepPlotCompare runs a small sweep end to end, plots it, and
// compares it with itself and with a copy made twice as slow.
func TestSweepPlotCompare(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runArgs("sweep", "-op", "mul_mat,rms_norm", "-type", "q8_0", "-m", "32", "-k", "256", "-n", "1,2",
		"-t", "1", "-time", "20ms", "-roofline", "off", "-out", dir, "-name", "t", "-plot")
	if code != exitOK {
		t.Fatalf("sweep: code %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"GFLOP/s", "GB/s", "% roof", "MUL_MAT", "m=32,n=2,k=256", "RMS_NORM", "ok ", "4 records; wrote "} {
		if !strings.Contains(out, want) {
			t.Errorf("sweep output lacks %q:\n%s", want, out)
		}
	}
	// -k applies to every op that has a k.
	if n := strings.Count(errOut, "\n"); n != 5 || !strings.Contains(errOut, "note: rms_norm takes none of the types") || !strings.Contains(errOut, "[4/4] RMS_NORM f32 k=256,n=2") {
		t.Errorf("progress lines:\n%s", errOut)
	}
	for _, f := range []string{"t.json", "t.csv", "t-mul_mat.png", "t-mul_mat.svg", "t-rms_norm.png", "t-roofline.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	set, err := bench.ReadFile(filepath.Join(dir, "t.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Records) != 4 || set.Machine.ID == "" || len(set.Machine.Features) == 0 || set.GoVersion == "" || set.Commit == "" ||
		!strings.Contains(set.Command, "-op mul_mat,rms_norm") || set.Protocol.TimeTargetS != 0.02 || set.Roofline != nil {
		t.Errorf("set %+v", set)
	}
	for _, r := range set.Records {
		if r.Validation != bench.ValidOK || !r.Timed() || r.Threads != 1 || !strings.HasPrefix(r.Backend, "cpu-") {
			t.Errorf("record %+v", r)
		}
	}
	csvSet, err := bench.ReadFile(filepath.Join(dir, "t.csv"))
	if err != nil || len(csvSet.Records) != 4 {
		t.Fatalf("csv: %v", err)
	}

	code, out, errOut = runArgs("plot", filepath.Join(dir, "t.json"), "-out", filepath.Join(dir, "charts"), "-x", "n")
	if code != exitOK || strings.Count(out, "wrote ") != 6 {
		t.Errorf("plot: code %d\n%s\n%s", code, out, errOut)
	}

	a := filepath.Join(dir, "t.json")
	code, out, _ = runArgs("compare", a, filepath.Join(dir, "t.csv"), "-fail-on-regression")
	if code != exitOK || strings.Count(out, "~ within noise") != 4 || !strings.Contains(out, "geomean speed B/A 1.000x over 4 points") {
		t.Errorf("compare with itself: code %d\n%s", code, out)
	}

	// Timings on a shared machine are too noisy for a test, so A and B
	// get synthetic samples: ten spread over 10% around the measured
	// median, and twice those (at 2 threads, as a slowed variant).
	fast, slow := *set, *set
	fast.Records, slow.Records = nil, nil
	for _, r := range set.Records {
		r.Samples = make([]float64, 10)
		for i := range r.Samples {
			r.Samples[i] = r.Median * (1 + 0.01*float64(i))
		}
		r.Stats = bench.Summarize(r.Samples)
		bench.Derive(&r, nil, 0)
		fast.Records = append(fast.Records, r)
		s := r
		s.Samples = make([]float64, 10)
		for i := range s.Samples {
			s.Samples[i] = 2 * r.Samples[i]
		}
		s.Stats, s.Threads = bench.Summarize(s.Samples), 2
		bench.Derive(&s, nil, 0)
		slow.Records = append(slow.Records, s)
	}
	a = filepath.Join(dir, "fast.json")
	b := filepath.Join(dir, "slow.json")
	for path, s := range map[string]*bench.Set{a: &fast, b: &slow} {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WriteJSON(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	code, out, errOut = runArgs("compare", "-fail-on-regression", a, b)
	if code != exitFailure || strings.Count(out, "SLOWER") != 4 || !strings.Contains(out, "joined ignoring threads (A: 1, B: 2)") ||
		!strings.Contains(out, "geomean speed B/A 0.500x") || !strings.Contains(errOut, "4 point(s) slower") {
		t.Errorf("compare with a 2x slower copy: code %d\n%s\n%s", code, out, errOut)
	}
	if code, _, _ := runArgs("compare", a, b); code != exitOK {
		t.Errorf("without -fail-on-regression: code %d", code)
	}

	code, out, _ = runArgs("sweep", "-preset", "llama-7b", "-n", "1", "-list")
	if code != exitOK || !strings.Contains(out, "llama-7b ffn_down") || !strings.Contains(out, "7 points") {
		t.Errorf("-list: code %d\n%s", code, out)
	}
}

func TestRooflineCommand(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runArgs("roofline", "-t", "1", "-time", "5ms", "-dram-bytes", "4M", "-cache-bytes", "32K", "-l3-bytes", "2M", "-out", dir)
	if code != exitOK {
		t.Fatalf("roofline: code %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"f32-fma", "read", "cache", "l3 2M", "dram", "1 thread(s): peak ", "GFLOP/s f32 FMA", "GB/s", "ridge", "wrote "} {
		if !strings.Contains(out, want) {
			t.Errorf("roofline output lacks %q:\n%s", want, out)
		}
	}
	path := filepath.Join(dir, rooflineFile)
	rf, err := readRooflineFile(path)
	if err != nil || rf.Machine.ID == "" || len(rf.Roofline.Peaks) == 0 {
		t.Fatalf("roofline.json: %v %+v", err, rf)
	}

	// A sweep in that folder takes the roofline from it and rates its
	// points against it.
	code, out, errOut = runArgs("sweep", "-op", "mul_mat", "-type", "f32", "-m", "64", "-n", "4", "-k", "64", "-t", "1",
		"-time", "10ms", "-out", dir, "-name", "r")
	if code != exitOK || !strings.Contains(errOut, "roofline: from "+path) {
		t.Fatalf("sweep: code %d\n%s\n%s", code, out, errOut)
	}
	set, err := bench.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	if set.Roofline == nil || set.Records[0].RooflinePct <= 0 || set.Records[0].Roof == "" {
		t.Errorf("record %+v, roofline %v", set.Records[0], set.Roofline != nil)
	}
	code, _, errOut = runArgs("sweep", "-op", "add", "-roofline", filepath.Join(dir, "nope.json"), "-out", dir)
	if code != exitUsage || !strings.Contains(errOut, "-roofline:") {
		t.Errorf("missing roofline file: code %d %q", code, errOut)
	}

	code, out, _ = runArgs("roofline", "-t", "1", "-time", "5ms", "-dram-bytes", "4M", "-l3-bytes", "0", "-out", "", "-json", "-")
	if strings.Contains(out, `"level": "l3"`) {
		t.Errorf("-l3-bytes 0 measured the L3:\n%.300s", out)
	}
	if code != exitOK || !strings.HasPrefix(out, "{") || !strings.Contains(out, `"schema": "kernbench-roofline/v1"`) {
		t.Errorf("-json -: code %d\n%.300s", code, out)
	}
}

// TestSweepFiles: the sweep files kept in results/sweeps parse and expand.
func TestSweepFiles(t *testing.T) {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no go.mod above the working directory")
		}
		dir = parent
	}
	files, _ := filepath.Glob(filepath.Join(dir, "results", "sweeps", "*.json"))
	if len(files) == 0 {
		t.Skip("no sweep files in results/sweeps")
	}
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := bench.ParseSpec(r)
		r.Close()
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		// Tiers are not checked: the file may name tiers this CPU lacks.
		if pts, _, err := bench.ExpandAll(spec.Sweeps); err != nil || len(pts) == 0 {
			t.Errorf("%s: %d points, %v", f, len(pts), err)
		}
	}
}

// TestSweepCPUProfile: -cpuprofile writes one readable profile per point
// and backend, named after the record.
func TestSweepCPUProfile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "prof")
	code, out, errOut := runArgs("sweep", "-op", "mul_mat", "-type", "q4_0", "-m", "64", "-k", "256", "-n", "1,8",
		"-t", "1", "-time", "50ms", "-roofline", "off", "-out", dir, "-name", "p", "-cpuprofile", prof)
	if code != exitOK {
		t.Fatalf("sweep: code %d\n%s\n%s", code, out, errOut)
	}
	set, err := bench.ReadFile(filepath.Join(dir, "p.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Records) != 2 {
		t.Fatalf("%d records", len(set.Records))
	}
	for _, r := range set.Records {
		data, err := os.ReadFile(filepath.Join(prof, bench.ProfileName(r)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := profile.ParseData(data); err != nil {
			t.Errorf("%s: %v", bench.ProfileName(r), err)
		}
	}
}

// smallSweep runs a quick sweep into dir (named name, or the default
// name for "") and returns its output.
func smallSweep(t *testing.T, dir, name string) string {
	t.Helper()
	args := []string{"sweep", "-op", "rms_norm", "-k", "256", "-n", "1,2", "-t", "1", "-time", "5ms", "-min-samples", "3", "-roofline", "off", "-out", dir}
	if name != "" {
		args = append(args, "-name", name)
	}
	code, out, errOut := runArgs(args...)
	if code != exitOK {
		t.Fatalf("sweep: code %d\n%s\n%s", code, out, errOut)
	}
	return out
}

// TestPlotBadSizes: a record whose size is 0 or negative is refused with
// its place named, not a panic and a 0-byte PNG; -o still works, with a
// warning that names -out.
func TestPlotBadSizes(t *testing.T) {
	dir := t.TempDir()
	smallSweep(t, dir, "t")
	raw, err := os.ReadFile(filepath.Join(dir, "t.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"0", "-4"} {
		bad := bytes.Replace(raw, []byte(`"k": 256`), []byte(`"k": `+v), 1)
		if bytes.Equal(bad, raw) {
			t.Fatalf("no \"k\": 256 in %s", raw)
		}
		path := filepath.Join(dir, "bad.json")
		os.WriteFile(path, bad, 0o644)
		charts := filepath.Join(dir, "charts"+v)
		code, out, errOut := runArgs("plot", "-out", charts, path)
		if code != exitUsage || !strings.Contains(errOut, "record 1 (RMS_NORM f32 k=256,n=1): size k is "+v+": sizes must be positive") {
			t.Errorf("k %s: code %d, stdout %q, stderr %q", v, code, out, errOut)
		}
		if ents, _ := os.ReadDir(charts); len(ents) != 0 {
			t.Errorf("k %s: wrote %v", v, ents)
		}
	}
	code, out, errOut := runArgs("plot", "-o", filepath.Join(dir, "c"), filepath.Join(dir, "t.json"))
	if code != exitOK || !strings.Contains(errOut, "opbench plot: -o is deprecated: use -out") || !strings.Contains(out, "wrote "+filepath.Join(dir, "c", "t-rms_norm.png")) {
		t.Errorf("-o: code %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestSweepNamesUnique: sweeps started in the same second into one folder
// get names of their own; -name replaces its files, never an input.
func TestSweepNamesUnique(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	now = func() time.Time { return at }
	defer func() { now = time.Now }()
	dir := t.TempDir()
	smallSweep(t, dir, "")
	first, err := os.ReadFile(filepath.Join(dir, "sweep-20250304-050607.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := smallSweep(t, dir, "")
	if !strings.Contains(out, "sweep-20250304-050607-2.json") {
		t.Errorf("second sweep: %s", out)
	}
	smallSweep(t, dir, "")
	if b, _ := os.ReadFile(filepath.Join(dir, "sweep-20250304-050607.json")); !bytes.Equal(b, first) {
		t.Error("the first sweep's records changed")
	}
	for _, f := range []string{"-2.json", "-2.csv", "-3.json", "-3.csv", ".csv"} {
		if _, err := os.Stat(filepath.Join(dir, "sweep-20250304-050607"+f)); err != nil {
			t.Error(err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 6 {
		t.Errorf("files %v", ents)
	}
	// -name replaces its own files, but not the sweep file it reads.
	smallSweep(t, dir, "x")
	smallSweep(t, dir, "x")
	spec := filepath.Join(dir, "spec.json")
	os.WriteFile(spec, []byte(`{"sweeps": [{"ops": ["rms_norm"], "dims": {"k": [256], "n": [1]}}]}`), 0o644)
	code, _, errOut := runArgs("sweep", "-f", spec, "-out", dir, "-name", "spec", "-time", "5ms", "-roofline", "off")
	if code != exitUsage || !strings.Contains(errOut, "is the input "+spec+" (-f)") {
		t.Errorf("-name onto -f: code %d, stderr %q", code, errOut)
	}
}
