package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/ops/registry"
)

// noNorm is the CPU without RMS_NORM: a backend that really lacks a node
// every llama model needs, registered for these tests only.
type noNorm struct{ ops.Backend }

func (b noNorm) Supports(t *ops.Tensor) error {
	if t.Op == ops.OpRMSNorm {
		return errors.New("no RMS_NORM kernel")
	}
	return b.Backend.Supports(t)
}

func (b noNorm) Name() string { return "test_nonorm" }

// noNormOn makes test_nonorm available: only while TestFallback runs, so
// that the tests that run every available backend leave it out.
var noNormOn bool

func init() {
	registry.Register(registry.Entry{
		Name:        "test_nonorm",
		Description: "the CPU without RMS_NORM (cmd/run's tests only)",
		Available: func() error {
			if !noNormOn {
				return errors.New("only in TestFallback")
			}
			return nil
		},
		Open: func(c registry.Config) (ops.Backend, error) {
			b, err := cpu.NewWithOptions(cpu.Options{Threads: 1, Tier: "generic"})
			if err != nil {
				return nil, err
			}
			return noNorm{b}, nil
		},
	})
}

// TestFallback: a model with a node the backend does not support fails
// without -fallback, naming the node, its reason and the flag; with
// -fallback cpu it runs, and names the nodes the CPU computed, once each.
func TestFallback(t *testing.T) {
	path := testdata(t, "stories260K.gguf")
	noNormOn = true
	defer func() { noNormOn = false }()
	args := []string{"-m", path, "-backend", "test_nonorm", "-p", "Once upon a time", "-n", "3", "-temp", "0"}

	code, _, stderr := runCmd(args...)
	if code != 1 {
		t.Fatalf("without -fallback: exit %d, want 1; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"RMS_NORM", "no RMS_NORM kernel", "-fallback cpu"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("without -fallback: stderr lacks %q:\n%s", want, stderr)
		}
	}

	code, stdout, stderr := runCmd(append([]string{"-fallback", "cpu"}, args...)...)
	if code != 0 {
		t.Fatalf("with -fallback cpu: exit %d; stderr:\n%s", code, stderr)
	}
	if stdout == "" {
		t.Error("with -fallback cpu: no text generated")
	}
	var line string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "(-fallback):") {
			if line != "" {
				t.Errorf("nodes named twice:\n%s\n%s", line, l)
			}
			line = l
		}
	}
	if line == "" {
		t.Fatalf("with -fallback cpu: no line names the nodes run on the CPU; stderr:\n%s", stderr)
	}
	_, list, _ := strings.Cut(line, "(-fallback): ")
	nodes := strings.Split(list, ", ")
	if len(nodes) < 2 {
		t.Errorf("want the model's several RMS_NORM nodes named, got %q", line)
	}
	for _, n := range nodes {
		if !strings.HasSuffix(n, "(RMS_NORM)") {
			t.Errorf("node %q ran on the CPU, but only RMS_NORM nodes need to", n)
		}
	}
}
