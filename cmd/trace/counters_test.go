package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/internal/require"
	"github.com/kernbench/kernbench/simt"
)

// counterRows returns the rows of the -counters table in out, by column
// name.
func counterRows(t *testing.T, out string) []map[string]string {
	t.Helper()
	lines := strings.Split(out, "\n")
	var rows []map[string]string
	for i, l := range lines {
		if !strings.HasPrefix(l, "counters per node of ") {
			continue
		}
		// The header's columns are separated by two spaces or more; so
		// are a row's (tabwriter pads with at least two).
		split := func(s string) []string {
			var f []string
			for _, c := range strings.Split(strings.TrimSpace(s), "  ") {
				if c = strings.TrimSpace(c); c != "" {
					f = append(f, c)
				}
			}
			return f
		}
		head := split(lines[i+1])
		for _, l := range lines[i+2:] {
			if !strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "  nodes that launched") {
				break
			}
			f := split(l)
			if len(f) != len(head) {
				t.Fatalf("row %q has %d columns, the header %d: %q", l, len(f), len(head), head)
			}
			row := map[string]string{}
			for j, h := range head {
				row[h] = f[j]
			}
			rows = append(rows, row)
		}
		return rows
	}
	t.Fatalf("no counters table in:\n%s", out)
	return nil
}

// TestCountersModel traces stories260K's prompt on cuda-emu with
// -counters: each MUL_MAT node has a counters line naming its kernel,
// with global loads of 1 to 32 sectors per request, DRAM bytes at least
// its weight's, and an H100 estimate.
func TestCountersModel(t *testing.T) {
	if err := simt.Available(); err != nil {
		require.Skip(t, "SIMT emulator unavailable: %v", err)
	}
	model := testdata(t, "stories260K.gguf")
	rc, out, errs := trace("-m", model, "-p", "Once", "-backend", "cuda-emu", "-counters")
	if rc != 0 {
		t.Fatalf("exit %d, stderr %s", rc, errs)
	}
	if !strings.Contains(out, "counters per node of the prompt's graph") || !strings.Contains(out, "estimates on h100 are lower bounds") {
		t.Fatalf("no counters header:\n%s", out)
	}
	mm, sawQ := 0, false
	for _, r := range counterRows(t, out) {
		if !strings.HasPrefix(r["op"], "MUL_MAT") {
			continue
		}
		mm++
		spr, err := strconv.ParseFloat(r["ld sectors/req"], 64)
		if err != nil || spr < 1 || spr > 32 {
			t.Errorf("node %s: ld sectors/req %q", r["name"], r["ld sectors/req"])
		}
		if !strings.Contains(r["kernels"], "kb_") || !strings.HasSuffix(r["estimate"], "s") || r["limited by"] == "" {
			t.Errorf("node %s: %v", r["name"], r)
		}
		// stories260K's weights are f32: a 64x64 projection is 16 kB.
		sawQ = sawQ || r["name"] == "Qcur-0"
		if r["name"] == "Qcur-0" && !strings.HasSuffix(r["DRAM bytes"], "kB") {
			t.Errorf("Qcur-0 DRAM bytes %q, want at least its 16 kB weight", r["DRAM bytes"])
		}
	}
	if mm == 0 || !sawQ {
		t.Errorf("no MUL_MAT node (or no Qcur-0) in the counters:\n%s", out)
	}
}

// TestCountersOp traces one q4_0 mat-vec on metal-emu with -counters:
// one node, its estimate on the M2 Max by default.
func TestCountersOp(t *testing.T) {
	if err := simt.Available(); err != nil {
		require.Skip(t, "SIMT emulator unavailable: %v", err)
	}
	rc, out, errs := trace("-op", "mul_mat", "-type", "q4_0", "-m", "64", "-k", "256", "-n", "1", "-r", "2", "-backend", "metal-emu", "-counters")
	if rc != 0 {
		t.Fatalf("exit %d, stderr %s", rc, errs)
	}
	rows := counterRows(t, out)
	if len(rows) != 1 || rows[0]["op"] != "MUL_MAT(q4_0)" || rows[0]["name"] != "mul_mat" {
		t.Fatalf("rows %v:\n%s", rows, out)
	}
	if !strings.Contains(out, "estimates on m2max") || !strings.Contains(out, "2 runs:") {
		t.Errorf("output:\n%s", out)
	}
	if rc, _, errs := trace("-op", "mul_mat", "-m", "64", "-k", "256", "-backend", "cuda-emu", "-counters", "-gpu", "h1000"); rc != 2 || !strings.Contains(errs, `-gpu: roofline: unknown GPU "h1000"`) {
		t.Errorf("-gpu h1000: exit %d, %q", rc, errs)
	}
}
