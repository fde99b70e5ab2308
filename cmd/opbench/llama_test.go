package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/internal/shareddata"
)

// fakeBenchProgram writes a script that stands in for llama-bench or run
// -bench: it prints the given JSON file, once its arguments are checked
// to hold the common flags.
func fakeBenchProgram(t *testing.T, dir, name, jsonFile string, exitCode int) string {
	t.Helper()
	path := filepath.Join(dir, name)
	body := "#!/bin/sh\ncase \"$*\" in *'-o json'*) ;; *) echo \"no -o json in $*\" >&2; exit 3 ;; esac\n" +
		"cat " + jsonFile + "\nexit " + string(rune('0'+exitCode)) + "\n"
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLlamaFlagErrors(t *testing.T) {
	t.Setenv("KERNBENCH_LLAMA_BENCH", "")
	t.Setenv("KERNBENCH_RUN", "")
	dir := t.TempDir()
	exe := fakeBenchProgram(t, dir, "prog", "/dev/null", 0)
	model := filepath.Join(dir, "m.gguf")
	if err := os.WriteFile(model, []byte("GGUF"), 0o644); err != nil {
		t.Fatal(err)
	}
	notExe := model
	base := []string{"-llama-bench", exe, "-run", exe}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-run", exe, model}, "-llama-bench: name llama.cpp's llama-bench"},
		{[]string{"-llama-bench", exe, model}, "-run: name kernbench's run"},
		{base, "no model"},
		{append(base, "-rounds", "0", model), "-rounds: 0"},
		{append(base, "-r", "0", model), "-r: 0"},
		{append(base, "-t", "0", model), "-t: 0"},
		{append(base, "-fa", "auto", model), `-fa: "auto"`},
		{append(base, "-timeout", "-1s", model), "-timeout"},
		{append(base, "-dram", "-1s", model), "-dram: -1s"},
		{append(base, "-dram", "2m", model), "-dram: 2m0s"},
		{append(base, "-p", "x", model), `-p: "x" is not a token count`},
		{append(base, "-n", "-5", model), "-n: -5 is not in"},
		{append(base, "-p", "0", "-n", "0", model), "no test"},
		{append(base, filepath.Join(dir, "missing.gguf")), "model:"},
		{append(base, dir), "is not a file"},
		{[]string{"-llama-bench", notExe, "-run", exe, model}, "-llama-bench: " + notExe + " is not an executable"},
		{[]string{"-llama-bench", exe, "-run", filepath.Join(dir, "none"), model}, "-run:"},
		{append(base, "-bogus", model), "bogus"},
		{[]string{"-table", filepath.Join(dir, "none.json")}, "-table:"},
		{[]string{"-table", model}, "-table:"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"llama"}, tt.args...), &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, stderr.String(), exitUsage, tt.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"llama", "-h"}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "-llama-bench") || !strings.Contains(stdout.String(), "Examples") {
		t.Errorf("-h: exit %d, %q", code, stdout.String())
	}
}

// TestLlamaFake runs the command end to end with two fake programs that
// print the outputs captured from llama-bench and run -bench: both sides'
// records are written and paired under kernbench's description of the
// model (llama-bench's differs), with the table naming the ratio; a side
// that fails makes exit 1 with its error in the records.
func TestLlamaFake(t *testing.T) {
	captured, err := filepath.Abs("../../bench/llamabench/testdata/run-bench-stories260K.json")
	if err != nil {
		t.Fatal(err)
	}
	capturedLlama, err := filepath.Abs("../../bench/llamabench/testdata/llama-bench-stories260K.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	llama := fakeBenchProgram(t, dir, "llama-bench", capturedLlama, 0)
	kern := fakeBenchProgram(t, dir, "run", captured, 0)
	// The real file, whose decode bytes the tg records take (the fake
	// programs do not read it).
	model := shareddata.Path(t, "stories260K.gguf")
	decode, err := decodeBytes(model)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	code := run([]string{"llama", "-llama-bench", llama, "-run", kern, "-p", "16", "-n", "8", "-r", "2", "-rounds", "2", "-dram", "20ms", "-out", out, "-name", "side", model}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{"pp16", "tg8", "kernbench/llama.cpp", "geomean", "4 records"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	set, err := bench.ReadFile(filepath.Join(out, "side.json"))
	if err != nil {
		t.Fatal(err)
	}
	if set.Baseline == nil || set.Baseline.Backend != "llama.cpp" || set.Baseline.Program != llama || len(set.Records) != 4 {
		t.Fatalf("set: baseline %+v, %d records", set.Baseline, len(set.Records))
	}
	for _, r := range set.Records {
		if len(r.Samples) != 4 || r.Type != "llama 293K all F32" || r.Shape != "stories260K.gguf" {
			t.Errorf("%s: %d samples, type %q", r.Key(), len(r.Samples), r.Type)
		}
		// A tg test reads the decode bytes per token, and stands beside
		// the DRAM probes; a pp test has neither.
		tg := r.Op == "tg8"
		if wantBytes := map[bool]int64{true: 8 * decode}[tg]; r.Bytes != wantBytes || (r.Roof == bench.LevelDRAM) != tg || (r.RooflinePct > 0) != tg {
			t.Errorf("%s: bytes %d roof %q %.1f%%, want bytes %d and a DRAM share only for tg", r.Key(), r.Bytes, r.Roof, r.RooflinePct, wantBytes)
		}
	}
	// One probe before each of the 4 runs, pooled for the one model.
	if set.Roofline == nil || len(set.Roofline.Peaks) != 1 || set.Roofline.Peaks[0].Level != bench.LevelDRAM ||
		!strings.HasSuffix(set.Roofline.Peaks[0].Kernel, " stories260K.gguf") || set.Roofline.Peaks[0].Samples < 4*3 {
		t.Errorf("roofline %+v: want one dram peak of 4 probes for stories260K.gguf", set.Roofline)
	}
	if !strings.Contains(stdout.String(), "% of DRAM read") || strings.Count(stderr.String(), "DRAM read") != 4 {
		t.Errorf("no DRAM share in the table or 4 probes in the progress:\n%s\n%s", stdout.String(), stderr.String())
	}

	// -table prints the record's table again: the run's table lines, from
	// its first border to the summary, and nothing is run.
	runTable := tableLines(stdout.String())
	var again, errs bytes.Buffer
	if code := run([]string{"llama", "-table", filepath.Join(out, "side.json")}, &again, &errs); code != exitOK {
		t.Fatalf("-table: exit %d\n%s", code, errs.String())
	}
	if got := tableLines(again.String()); len(runTable) == 0 || got != runTable {
		t.Errorf("-table printed\n%s\nwant the run's\n%s", got, runTable)
	}

	bad := filepath.Join(dir, "broken")
	if err := os.WriteFile(bad, []byte("#!/bin/sh\necho 'error: unknown argument: -fa on' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	code = run([]string{"llama", "-llama-bench", bad, "-run", kern, "-p", "16", "-n", "8", "-r", "2", "-rounds", "2", "-dram", "0", "-out", out, "-name", "broken", model}, &stdout, &stderr)
	if code != exitFailure || !strings.Contains(stderr.String(), "unknown argument") || !strings.Contains(stdout.String(), "2 failed runs") {
		t.Errorf("broken llama-bench: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	set, err = bench.ReadFile(filepath.Join(out, "broken.json"))
	if err != nil {
		t.Fatal(err)
	}
	if set.Roofline != nil || strings.Contains(stderr.String(), "DRAM read") {
		t.Errorf("-dram 0: roofline %+v; want no probes", set.Roofline)
	}
}

// tableLines returns the lines of out from the table's top border to the
// summary line under it.
func tableLines(out string) string {
	i := strings.Index(out, "┌")
	j := strings.Index(out, "kernbench against llama.cpp")
	if i < 0 || j < i {
		return ""
	}
	k := strings.IndexByte(out[j:], '\n')
	return out[i : j+k]
}
