package harness

import (
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu"
)

// TestSampledValidation prepares every MUL_MAT case with a reference
// budget too small for the whole reference: correct results pass as
// sampled, and the faults a sample must catch (the last element, a
// transposed product, a dropped last block of k, nothing computed) fail.
func TestSampledValidation(t *testing.T) {
	base := cpu.New(2)
	defer base.Close()
	faults := []struct {
		name  string
		fault func(*cpu.Backend, *ops.Tensor) error
		match func(Case) bool
	}{
		{"skip the last element", skipLast, nil},
		{"compute nothing", noop, nil},
		{"drop the last block", variant(dropLastBlock), nil},
		{"transposed product", transposed, func(c Case) bool {
			return !strings.Contains(c.Name, "m=1,") && !strings.Contains(c.Name, "n=1,")
		}},
	}
	n := 0
	for _, c := range Cases() {
		if c.Op != ops.OpMulMat || c.Expect != ExpectMatch {
			continue
		}
		p, r := Prepare(base, c, PrepareOptions{RefBudget: 1})
		if r.Status == StatusSkipped && r.Reason == "unsupported" {
			continue
		}
		if p == nil || !Sampled(r) {
			t.Errorf("%s: %s (%s), want a sampled pass", c.ID(), r.Summary(), r.Err)
			continue
		}
		if strings.HasPrefix(c.Name, "m=0,") || strings.Contains(c.Name, ",n=0,") {
			continue // no outputs
		}
		if r.Elements == 0 || r.Elements > 1024 {
			t.Errorf("%s: sampled %d outputs", c.ID(), r.Elements)
		}
		n++
		for _, f := range faults {
			if f.match != nil && !f.match(c) {
				continue
			}
			be := faulty{Backend: base, name: f.name, compute: f.fault}
			if _, r := Prepare(be, c, PrepareOptions{RefBudget: 1}); r.Status != StatusFail {
				t.Errorf("%s with %s: %v (%s): the sample missed the fault", c.ID(), f.name, r.Status, r.Reason)
			}
		}
	}
	if n == 0 {
		t.Fatal("no MUL_MAT case was sampled")
	}
}
