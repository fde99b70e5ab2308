package harness

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
	"github.com/kernbench/kernbench/ops/registry"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/reference"
)

// nonFiniteCases returns the default cases with planted NaN or Inf.
func nonFiniteCases() []Case {
	return slices.DeleteFunc(Cases(), func(c Case) bool { return len(c.Plants) == 0 })
}

// finiteCases returns the default cases without planted NaN or Inf: those
// the fault tests judge by their NMSE or errors.
func finiteCases() []Case {
	return slices.DeleteFunc(Cases(), func(c Case) bool { return len(c.Plants) > 0 })
}

// TestNonFinite runs the non-finite cases (NaN and infinities planted in
// weights, activations, masks, sinks and K/V rows) on every backend that
// opens here, as TestBackends does with every case: each output must be
// non-finite exactly where the reference's is, of the same kind. It is
// the part of the matrix a NaN fault shows in, quick enough to run alone
// (-run TestNonFinite/cuda-emu).
func TestNonFinite(t *testing.T) {
	cases := nonFiniteCases()
	targets, _ := matrixTargets(registry.Default)
	for _, tg := range targets {
		t.Run(tg.Name(), func(t *testing.T) {
			validateTarget(tg, cases, testThreads).report(t)
		})
	}
}

// TestNonFiniteCoverage: every op that computes has non-finite cases,
// each one's plants reach the reference's output as the case says, and a
// backend that turns NaN into zeros (as the CUDA flash-attention kernel
// did) fails them.
func TestNonFiniteCoverage(t *testing.T) {
	cases := nonFiniteCases()
	for _, o := range OpDefs() {
		if !slices.ContainsFunc(cases, func(c Case) bool { return c.Op == o.Op }) {
			t.Errorf("%v has no non-finite case", o.Op)
		}
	}
	kinds := map[int]bool{}
	for _, c := range cases {
		for _, p := range c.Plants {
			kinds[class(p.Value)] = true
		}
		b := newBuilder(refBackend{}, c.seed())
		node, err := build(c, b)
		if err != nil {
			t.Errorf("%s: %v", c.ID(), err)
			continue
		}
		if err := allocOutput(refBackend{}, node); err != nil {
			t.Fatal(err)
		}
		want, err := reference.Compute(node)
		if err != nil {
			t.Errorf("%s: reference: %v", c.ID(), err)
			continue
		}
		if want, err = expected(node, want); err != nil {
			t.Errorf("%s: %v", c.ID(), err)
			continue
		}
		if c.Check != nil {
			if err := c.Check(want); err != nil {
				t.Errorf("%s: the reference's output: %v", c.ID(), err)
			}
		}
	}
	if !kinds[1] || !kinds[2] || !kinds[3] {
		t.Errorf("plants of kinds %v, want NaN (1), +Inf (2) and -Inf (3)", kinds)
	}

	// The CPU, but writing zeros for NaN: every case whose f32 output
	// must hold a NaN fails, and those that must stay finite pass.
	zeroing := faulty{Backend: cputest.New(t, 1), name: "nan-to-zero", compute: func(be *cpu.Backend, node *ops.Tensor) error {
		if err := be.Compute(node); err != nil || node.Type != quant.F32 {
			return err
		}
		mem, err := node.HostBytes()
		if err != nil {
			return err
		}
		for i := int64(0); i < node.NumElements(); i++ {
			off := elementOffset(node, i)
			if math.IsNaN(float64(math.Float32frombits(binary.LittleEndian.Uint32(mem[off:])))) {
				binary.LittleEndian.PutUint32(mem[off:], 0)
			}
		}
		return nil
	}}
	failed := 0
	for _, c := range cases {
		r := Run(zeroing, c)
		switch {
		case r.Passed():
		case r.Status == StatusFail && strings.Contains(r.Reason, "NaN/Inf mismatches"):
			failed++
		default:
			t.Errorf("%s on %s: %s (err: %s)", c.ID(), zeroing.Name(), r.Summary(), r.Err)
		}
	}
	if failed < len(cases)/2 {
		t.Errorf("%d of %d non-finite cases failed on %s, want most", failed, len(cases), zeroing.Name())
	}
}

// refBackend is host memory and nothing else: the reference reads it.
type refBackend struct{}

func (refBackend) Name() string                      { return "host" }
func (refBackend) Supports(*ops.Tensor) error        { return nil }
func (refBackend) Alloc(n int64) (ops.Buffer, error) { return ops.NewHostBuffer(n) }
func (refBackend) Compute(*ops.Tensor) error         { return nil }
func (refBackend) Close() error                      { return nil }
