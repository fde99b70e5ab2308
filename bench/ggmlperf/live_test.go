package ggmlperf

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/kernbench/kernbench/harness"
)

// TestEveryOpRunsInGGML sends every benchmark op's default point to a
// test-backend-ops binary named by $KERNBENCH_GGML and checks that each
// comes back timed under its own op (the CPU backend runs them all).
func TestEveryOpRunsInGGML(t *testing.T) {
	path := os.Getenv("KERNBENCH_GGML")
	if path == "" {
		t.Skip("KERNBENCH_GGML is not set: no test-backend-ops binary to run (see README, \"Side by side with ggml\")")
	}
	bin, err := Open(path, os.Getenv("KERNBENCH_GGML_HEADER"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []Case
	for i, o := range harness.OpDefs() {
		p, err := harness.NewPoint(o.Op, o.DefaultType, nil)
		if err != nil {
			t.Fatal(err)
		}
		node, err := p.Node()
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewCase(node, fmt.Sprintf("kb%d", i), bin.Enums)
		if err != nil {
			t.Fatalf("%v: %v", p, err)
		}
		cases = append(cases, c)
	}
	res, err := bin.Perf(context.Background(), cases, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if !r.Supported {
			t.Errorf("%s: not supported: %s", cases[i].Line(), r.Error)
			continue
		}
		t.Logf("%-15s %10.2f us/run over %d runs  (%s)", r.Op, r.TimeUS, r.Runs, r.Params)
	}
}
