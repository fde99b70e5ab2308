package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/internal/shareddata"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/ops/tuning"
)

func TestTuneFlagErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-param", "cpu.nope"}, `unknown parameter "cpu.nope"`},
		{[]string{"-rounds", "0"}, "-rounds: 0"},
		{[]string{"-t", "0"}, "-t: 0"},
		{[]string{"-time", "0s"}, "-time"},
		{[]string{"-m", "-3"}, "sizes must be positive"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"-out", filepath.Join(file, "sub")}, "is not a folder"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"tune"}, tt.args...), &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%q: exit %d, %q; want %d and %q", tt.args, code, stderr.String(), exitUsage, tt.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"tune", "-list"}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), cpu.GemvRows.Name) ||
		!strings.Contains(stdout.String(), "MUL_MAT q4_0 m=4096,n=1,k=4096") {
		t.Errorf("-list: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
}

// TestTuneWritesWhatTheBackendLoads runs a small, short search (its
// choice means nothing here: the test checks the plumbing, not the
// timing) and checks that tuned.json holds every candidate validated and
// timed, and that a CPU backend pointed at it runs with the chosen value.
func TestTuneWritesWhatTheBackendLoads(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"tune", "-m", "64", "-k", "256", "-time", "2ms", "-rounds", "1", "-t", "2", "-out", dir}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	path := filepath.Join(dir, tuning.FileName)
	f, err := tuning.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	params := cpu.Tunables()
	if len(f.Params) != len(params) {
		t.Fatalf("tuned.json params %+v, want one for each of %d parameters", f.Params, len(params))
	}
	points := map[string]string{cpu.GemvRows.Name: "m=64,n=1,k=256", cpu.SgemmRows.Name: "m=64,n=512,k=256", cpu.X8Prefetch.Name: "m=64,n=1,k=256", cpu.EltL3Bytes.Name: "k=256,n=512", cpu.Gemv512.Name: "m=64,n=1,k=256"}
	for i, res := range f.Params {
		p := params[i]
		if res.Name != p.Name || !p.Allowed(res.Value) || len(res.Candidates) != len(p.Candidates) || !strings.Contains(res.Point, points[p.Name]) {
			t.Errorf("result %+v for %s", res, p.Name)
		}
		for _, c := range res.Candidates {
			if c.Error != "" || len(c.Costs) != 1 || !(c.Median > 0) {
				t.Errorf("%s candidate %+v: want validated and timed once", p.Name, c)
			}
		}
	}
	t.Setenv(tuning.Env, path)
	be, err := cpu.New(1)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	v, src := be.Tuned()
	for _, res := range f.Params {
		if v[res.Name] != res.Value || src != path {
			t.Errorf("backend runs %s = %d from %q, want %d from %s", res.Name, v[res.Name], src, res.Value, path)
		}
	}
}

// TestTuneModel runs the decode parameters on a model's tokens (-model):
// every candidate validated (its logits equal the defaults') and timed,
// the point naming the model; a second model makes the cost their
// geometric mean; a missing model is an error.
func TestTuneModel(t *testing.T) {
	stories := shareddata.Path(t, "stories260K.gguf")
	wide := shareddata.Path(t, "stories260K-wide.gguf")
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"tune", "-param", cpu.X8Prefetch.Name + "," + cpu.GemvRows.Name, "-model", stories + "," + wide,
		"-tokens", "2", "-rounds", "1", "-t", "2", "-out", dir}
	if code := run(args, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	f, err := tuning.ReadFile(filepath.Join(dir, tuning.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Params) != 2 {
		t.Fatalf("tuned.json params %+v", f.Params)
	}
	for _, res := range f.Params {
		if !strings.Contains(res.Point, "geomean of the time per token of decode of stories260K.gguf, stories260K-wide.gguf (2 tokens after") {
			t.Errorf("%s point %q", res.Name, res.Point)
		}
		for _, c := range res.Candidates {
			if c.Error != "" || len(c.Costs) != 1 || !(c.Median > 0) {
				t.Errorf("%s candidate %+v: want validated and timed once", res.Name, c)
			}
		}
	}

	stdout.Reset()
	stderr.Reset()
	missing := filepath.Join(dir, "missing.gguf")
	if code := run([]string{"tune", "-param", cpu.X8Prefetch.Name, "-model", missing, "-out", dir}, &stdout, &stderr); code != exitFailure || !strings.Contains(stderr.String(), "missing.gguf") {
		t.Errorf("a missing model: exit %d, %q", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"tune", "-tokens", "0"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "-tokens: 0") {
		t.Errorf("-tokens 0: exit %d, %q", code, stderr.String())
	}
}
