package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/ops/cuda"
)

func TestCublasUsage(t *testing.T) {
	for _, tt := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"cublas", "-h"}, exitOK, "cublasGemmEx on the same", ""},
		{[]string{"cublas"}, exitUsage, "", "-f: name the sweep's record set"},
		{[]string{"cublas", "-f", "x.json", "extra"}, exitUsage, "", `unexpected argument "extra"`},
		{[]string{"cublas", "-f", filepath.Join(t.TempDir(), "none.json")}, exitUsage, "", "no such file"},
		{[]string{"cublas", "-lib"}, -1, "cuBLAS is looked for in, in order:\n  libcublas.so.13 (the dynamic loader)", ""},
	} {
		code, out, errOut := runArgs(tt.args...)
		if tt.code >= 0 && code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
			t.Errorf("opbench %q: code %d, stdout %q, stderr %q; want %d, %q, %q", tt.args, code, out, errOut, tt.code, tt.stdout, tt.stderr)
		}
	}
}

// mulMatRecord is a timed MUL_MAT record of backend cuda-0.
func mulMatRecord(typ string, m, n, k int64, median float64) bench.Record {
	return bench.Record{Op: "MUL_MAT", Type: typ, Shape: "s", Backend: "cuda-0",
		Dims:   map[string]int64{"m": m, "n": n, "k": k},
		Timing: bench.Timing{Samples: []float64{median}, Stats: bench.Stats{Median: median}}}
}

// TestCublasBaseline runs the baseline over records with cuBLAS faked:
// only MUL_MAT points are timed, quantized weights as f16, the speed is
// cuBLAS's time over ours; an absent cuBLAS (the first call fails) ends
// the timing with the report's error, a later failure marks its point.
func TestCublasBaseline(t *testing.T) {
	set := &bench.Set{Records: []bench.Record{
		mulMatRecord("f16", 4096, 512, 4096, 2e-3),
		{Op: "SOFT_MAX", Type: "f32", Backend: "cuda-0"},
		mulMatRecord("q4_0", 4096, 1, 11008, 5e-5),
		mulMatRecord("f32", 64, 1, 0, 1e-6),
	}}
	var calls []string
	defer func(f func(string, int, int, int, string) (cuda.GemmTiming, error)) { cublasGemm = f }(cublasGemm)
	cublasGemm = func(be string, m, n, k int, typ string) (cuda.GemmTiming, error) {
		calls = append(calls, strings.Join([]string{be, typ}, " "))
		return cuda.GemmTiming{Median: 1e-3, Samples: []float64{1e-3}, Library: "libcublas.so.12", Version: 120304, What: "gemm " + typ}, nil
	}
	rep := cublasBaseline(set, "s.json", "")
	if rep.Error != "" || rep.Version != 120304 || len(rep.Records) != 3 {
		t.Fatalf("report %+v", rep)
	}
	if strings.Join(calls, ",") != "cuda-0 f16,cuda-0 f16" {
		t.Errorf("cuBLAS calls %q", calls)
	}
	if r := rep.Records[0]; r.Speed != 0.5 || r.OursS != 2e-3 || r.CublasS != 1e-3 {
		t.Errorf("f16 record %+v", r)
	}
	if r := rep.Records[1]; r.Speed != 20 || !strings.Contains(r.CublasOp, "stand-in for q4_0") {
		t.Errorf("q4_0 record %+v", r)
	}
	if r := rep.Records[2]; r.Error == "" || r.CublasS != 0 {
		t.Errorf("a record without k: %+v", r)
	}

	var b strings.Builder
	if err := writeCublasTable(&b, rep); err != nil || !strings.HasPrefix(b.String(), "cuBLAS 120304 (libcublas.so.12)\n") || !strings.Contains(b.String(), "0.50x") {
		t.Errorf("table (%v):\n%s", err, b.String())
	}
	b.Reset()
	if writeCublasTable(&b, cublasBaseline(&bench.Set{}, "s.json", "")); !strings.HasPrefix(b.String(), "no cuBLAS baseline: no MUL_MAT point was timed\n") {
		t.Errorf("table of no MUL_MAT points:\n%s", b.String())
	}

	// No cuBLAS: the first call fails, nothing more is called.
	calls = nil
	cublasGemm = func(be string, m, n, k int, typ string) (cuda.GemmTiming, error) {
		calls = append(calls, be)
		return cuda.GemmTiming{}, errors.New("no cuBLAS library found")
	}
	rep = cublasBaseline(set, "s.json", "cuda-1")
	if rep.Error != "no cuBLAS library found" || len(calls) != 1 || calls[0] != "cuda-1" || len(rep.Records) != 3 || rep.Records[0].OursS != 2e-3 {
		t.Errorf("without cuBLAS: calls %q, report %+v", calls, rep)
	}

	// A failure after a success marks the point.
	n := 0
	cublasGemm = func(be string, m, n2, k int, typ string) (cuda.GemmTiming, error) {
		if n++; n > 1 {
			return cuda.GemmTiming{}, errors.New("CUBLAS_STATUS_ALLOC_FAILED")
		}
		return cuda.GemmTiming{Median: 1e-3, Library: "l"}, nil
	}
	rep = cublasBaseline(set, "s.json", "")
	if rep.Error != "" || rep.Records[0].Error != "" || rep.Records[1].Error != "CUBLAS_STATUS_ALLOC_FAILED" {
		t.Errorf("a later failure: %+v", rep)
	}
}

// TestCublasCommand runs the command on a sweep's record set made on the
// CPU: without a GPU the baseline says why and the exit status is 0.
func TestCublasCommand(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runArgs("sweep", "-op", "mul_mat", "-type", "f16", "-m", "32", "-n", "2", "-k", "32",
		"-time", "5ms", "-min-samples", "3", "-roofline", "off", "-out", dir, "-name", "mm"); code != exitOK {
		t.Fatalf("sweep: exit %d: %s", code, errOut)
	}
	out := filepath.Join(dir, "cublas.json")
	code, stdout, errOut := runArgs("cublas", "-f", filepath.Join(dir, "mm.json"), "-json", out)
	if code != exitOK || !strings.Contains(stdout, "no cuBLAS baseline: ") || !strings.Contains(errOut, "no baseline") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	var rep cublasReport
	b, err := os.ReadFile(out)
	if err == nil {
		err = json.Unmarshal(b, &rep)
	}
	if err != nil {
		t.Fatal(err)
	}
	if rep.Error == "" || len(rep.Records) != 1 || rep.Records[0].OursS <= 0 || rep.Records[0].CublasS != 0 {
		t.Errorf("report %+v", rep)
	}
}
