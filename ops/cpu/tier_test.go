package cpu

import (
	"errors"
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
	b := New(1)
	defer b.Close()
	if b.Tier().Name != "generic" {
		t.Errorf("%s=generic gave tier %s", EnvTier, b.Tier().Name)
	}
}

// TestComputeIntoReadOnly checks that a node whose storage is read-only
// (a memory-mapped weight) is an error, not a fault.
func TestComputeIntoReadOnly(t *testing.T) {
	b := New(1)
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
