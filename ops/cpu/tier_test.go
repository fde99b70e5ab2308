package cpu

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func TestTiers(t *testing.T) {
	tiers := Tiers()
	if len(tiers) == 0 || tiers[0].Name != "generic" || !tiers[0].Supported {
		t.Fatalf("first tier must be a supported generic: %+v", tiers)
	}
	for _, tr := range tiers {
		if !tr.Supported && tr.Reason == "" {
			t.Errorf("tier %s unsupported without a reason", tr.Name)
		}
		if tr.Supported {
			b, err := NewWithOptions(Options{Threads: 1, Tier: tr.Name})
			if err != nil {
				t.Errorf("tier %s: %v", tr.Name, err)
				continue
			}
			if b.Tier().Name != tr.Name {
				t.Errorf("asked for %s, got %s", tr.Name, b.Tier().Name)
			}
			b.Close()
		} else {
			t.Logf("tier %s skipped on this CPU: %s", tr.Name, tr.Reason)
		}
	}
	if _, err := NewWithOptions(Options{Tier: "sse9"}); err == nil || !strings.Contains(err.Error(), "generic") {
		t.Errorf("unknown tier: err %v should list the known tiers", err)
	}
	t.Setenv(EnvTier, "generic")
	b := newTestBackend(t, 1)
	defer b.Close()
	if b.Tier().Name != "generic" {
		t.Errorf("%s=generic gave tier %s", EnvTier, b.Tier().Name)
	}
}

// newTestBackend returns a CPU backend of threads workers and the default
// tier, closed when the test ends.
func newTestBackend(t testing.TB, threads int) *Backend {
	t.Helper()
	b, err := New(threads)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestBadEnvTier checks that a $KERNBENCH_CPU naming a tier that is
// unknown, or that this CPU lacks, is an error naming the tier and the
// variable from New and NewWithOptions, not a quiet fallback, and that an
// explicit Options.Tier still wins over the variable.
func TestBadEnvTier(t *testing.T) {
	bad := []struct{ tier, want string }{{"sse9", `unknown tier "sse9"`}}
	for _, tr := range Tiers() {
		if !tr.Supported {
			bad = append(bad, struct{ tier, want string }{tr.Name, fmt.Sprintf("tier %q is not supported on this CPU: %s", tr.Name, tr.Reason)})
		}
	}
	for _, tc := range bad {
		t.Setenv(EnvTier, tc.tier)
		for name, open := range map[string]func() (*Backend, error){
			"New":            func() (*Backend, error) { return New(1) },
			"NewWithOptions": func() (*Backend, error) { return NewWithOptions(Options{Threads: 1}) },
		} {
			b, err := open()
			if err == nil {
				b.Close()
				t.Errorf("%s with %s=%s: no error (tier %s)", name, EnvTier, tc.tier, b.Tier().Name)
				continue
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), EnvTier) {
				t.Errorf("%s with %s=%s: err %q, want one naming %s and %q", name, EnvTier, tc.tier, err, EnvTier, tc.want)
			}
		}
		b, err := NewWithOptions(Options{Threads: 1, Tier: "generic"})
		if err != nil {
			t.Errorf("Options.Tier generic with %s=%s: %v", EnvTier, tc.tier, err)
			continue
		}
		b.Close()
	}
}

// TestComputeIntoReadOnly checks that a node whose storage is read-only
// (a memory-mapped weight) is an error, not a fault.
func TestComputeIntoReadOnly(t *testing.T) {
	b := newTestBackend(t, 1)
	defer b.Close()
	a, err := ops.NewTensor("a", quant.F32, 8)
	if err != nil {
		t.Fatal(err)
	}
	ab, _ := ops.NewHostBuffer(a.Extent())
	a.Buffer = ab
	dst, err := ops.NewTensor("dst", quant.F32, 8)
	if err != nil {
		t.Fatal(err)
	}
	dst.Buffer = ops.WrapHostBytesReadOnly(make([]byte, dst.Extent()))
	cpy, err := ops.Cpy(a, dst)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Compute(cpy); !errors.Is(err, ops.ErrReadOnly) {
		t.Errorf("CPY into a read-only tensor: err = %v, want ErrReadOnly", err)
	}
}

// extend returns (for tests that swap one kernel) a copy of ks named name, for a faster tier to override.
func (ks *kernelSet) extend(name string) *kernelSet {
	return &kernelSet{
		name:     name,
		dots:     maps.Clone(ks.dots),
		act:      maps.Clone(ks.act),
		gemm:     maps.Clone(ks.gemm),
		gemv:     maps.Clone(ks.gemv),
		gemvSide: maps.Clone(ks.gemvSide),
		vec:      ks.vec,
		elt:      ks.elt,
		deq:      maps.Clone(ks.deq),
		rope:     ks.rope,
		ssm:      ks.ssm,
		fa:       ks.fa,
	}
}

// TestCPUDisableEnv runs a child test process with $KERNBENCH_CPU_DISABLE
// set: a feature it names takes its tiers away (AVX2 leaves generic
// only), and a name cpuid does not know is an error naming it.
func TestCPUDisableEnv(t *testing.T) {
	if os.Getenv("KERNBENCH_TEST_DISABLE_CHILD") == "1" {
		b, err := New(1)
		if err != nil {
			fmt.Print("error: ", err)
			return
		}
		fmt.Print("tier: ", b.Tier().Name)
		b.Close()
		return
	}
	for _, c := range []struct{ disable, want string }{
		{"AVX2", "tier: generic"},
		{"avx2, AVX512F", "tier: generic"},
		{"NOSUCHFEATURE", "error: cpu: $KERNBENCH_CPU_DISABLE=\"NOSUCHFEATURE\": \"NOSUCHFEATURE\" is not a CPU feature"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestCPUDisableEnv$")
		cmd.Env = append(os.Environ(), "KERNBENCH_TEST_DISABLE_CHILD=1", "KERNBENCH_CPU_DISABLE="+c.disable, EnvTier+"=")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", c.disable, err)
		}
		if !strings.HasPrefix(string(out), c.want) {
			t.Errorf("KERNBENCH_CPU_DISABLE=%s: %q, want %q", c.disable, out, c.want)
		}
	}
}
