package harness

import (
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
)

// TestSampledValidation prepares every MUL_MAT, MUL_MAT_ID and
// FLASH_ATTN_EXT case with a reference budget too small for the whole
// reference: correct results pass as sampled, and the faults a sample must catch (the last element, a
// transposed product, a dropped last block of k, nothing computed, an
// ignored attention mask, a wrong GQA head mapping) fail.
func TestSampledValidation(t *testing.T) {
	base := cputest.New(t, 2)
	defer base.Close()
	faults := []struct {
		name  string
		fault func(*cpu.Backend, *ops.Tensor) error
		match func(Case) bool
	}{
		{"skip the last element", skipLast, nil},
		{"compute nothing", noop, nil},
		{"drop the last block", variant(dropLastBlock), ops_(ops.OpMulMat, ops.OpMulMatID)},
		{"transposed product", transposed, func(c Case) bool {
			return ops_(ops.OpMulMat)(c) && !strings.Contains(c.Name, "m=1,") && !strings.Contains(c.Name, "n=1,")
		}},
		{"ignore the FA mask", variant(dropSource(ops.FAMask)), func(c Case) bool {
			return ops_(ops.OpFlashAttnExt)(c) && strings.Contains(c.Name, "mask")
		}},
		{"GQA head modulo", variant(gqaModulo), func(c Case) bool {
			return ops_(ops.OpFlashAttnExt)(c) && !strings.Contains(c.Name, "kv=1,") && !strings.Contains(c.Name, "heads=4,kv=4,")
		}},
	}
	n := 0
	for _, c := range finiteCases() {
		if c.Op != ops.OpMulMat && c.Op != ops.OpMulMatID && c.Op != ops.OpFlashAttnExt || c.Expect != ExpectMatch {
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
		if p.Node.NumElements() == 0 {
			continue // no outputs
		}
		if r.Elements == 0 || r.Elements > p.Node.NumElements() {
			t.Errorf("%s: sampled %d of %d outputs", c.ID(), r.Elements, p.Node.NumElements())
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
