package cpu

import (
	"strings"
	"testing"
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
