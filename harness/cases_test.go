package harness

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
	"github.com/kernbench/kernbench/quant"
)

func TestCaseIDsUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range AllCases() {
		if seen[c.ID()] {
			t.Errorf("duplicate case %s", c.ID())
		}
		seen[c.ID()] = true
		if c.Name == "" || len(c.Types) == 0 || c.Build == nil {
			t.Errorf("case %s lacks a name, types or Build", c.ID())
		}
	}
}

// TestMatVecOddRowCases pins the mat-vec cases whose rows are an odd
// number of 32-element blocks (k=96, one column), for the quantized types
// of 32-element blocks: a GPU's one-column kernel (CUDA's kb_mmvq1) stages
// such a row in shared memory at offsets that are not multiples of 16
// bytes, where an H200 faulted with CUDA_ERROR_MISALIGNED_ADDRESS.
// TestBackends runs them on every backend, the emulated ones included,
// whose alignment checks report the fault.
func TestMatVecOddRowCases(t *testing.T) {
	for _, ty := range []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.IQ4_NL, quant.MXFP4} {
		found := false
		for _, c := range Cases() {
			found = found || c.Op == ops.OpMulMat && c.Types[0] == ty && c.Name == "m=16,n=1,k=96" && c.Expect == ExpectMatch
		}
		if !found {
			t.Errorf("no MUL_MAT %v case m=16,n=1,k=96 in the default set", ty)
		}
	}
}

// TestCoverage pins what the default set must hold: every compute op with
// cases that compute and cases that must be refused; every weight type for
// MUL_MAT and GET_ROWS; the named types of MUL_MAT_ID, FLASH_ATTN_EXT and
// CPY.
func TestCoverage(t *testing.T) {
	cases := Cases()
	has := func(op ops.Op, e Expect, typ quant.Type, name string) bool {
		return slices.ContainsFunc(cases, func(c Case) bool {
			return c.Op == op && c.Expect == e && (typ == AnyType || c.Types[0] == typ) && strings.Contains(c.TypeString(), name)
		})
	}
	for _, op := range ops.ComputeOps() {
		if !has(op, ExpectMatch, AnyType, "") {
			t.Errorf("%v: no case that computes", op)
		}
		if !has(op, ExpectRefuse, AnyType, "") {
			t.Errorf("%v: no case the op must refuse", op)
		}
	}
	for _, typ := range quant.Types() {
		if !typ.IsFloat() && !typ.IsQuantized() {
			continue
		}
		for _, op := range []ops.Op{ops.OpMulMat, ops.OpGetRows} {
			if !has(op, ExpectMatch, typ, "") {
				t.Errorf("%v: no case for %v", op, typ)
			}
		}
	}
	for _, typ := range []quant.Type{quant.F32, quant.F16, quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q6_K} {
		if !has(ops.OpMulMatID, ExpectMatch, typ, "") {
			t.Errorf("MUL_MAT_ID: no case for %v", typ)
		}
	}
	for _, typ := range []quant.Type{quant.F16, quant.F32, quant.Q8_0, quant.Q4_0} {
		if !has(ops.OpFlashAttnExt, ExpectMatch, typ, "") {
			t.Errorf("FLASH_ATTN_EXT: no case for K/V %v", typ)
		}
	}
	for _, typ := range []quant.Type{quant.F32, quant.F16, quant.BF16, quant.Q8_0, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q4_K, quant.Q6_K} {
		if !has(ops.OpCpy, ExpectMatch, typ, "f32->") {
			t.Errorf("CPY: no case f32->%v", typ)
		}
	}
	if !has(ops.OpCpy, ExpectMatch, quant.F32, "f16->f32") {
		t.Error("CPY: no case f16->f32")
	}
	// Edge shapes named by the case sets.
	for _, want := range []struct {
		op   ops.Op
		name string
	}{
		{ops.OpMulMat, "m=1,"}, {ops.OpMulMat, "n=1,"}, {ops.OpMulMat, "b permuted"}, {ops.OpMulMat, "a=2x1,b=4x3"},
		{ops.OpMulMatID, "only 3 experts routed"}, {ops.OpMulMatID, "tokens=1"},
		{ops.OpSoftMax, "masked"}, {ops.OpSoftMax, "sinks"}, {ops.OpSoftMax, "alibi"}, {ops.OpSoftMax, "a permuted"},
		{ops.OpFlashAttnExt, "heads=8,kv=4"}, {ops.OpFlashAttnExt, "kv=1"}, {ops.OpFlashAttnExt, "masked"}, {ops.OpFlashAttnExt, "d=40"},
		{ops.OpRope, "pos from 100000"}, {ops.OpRope, "odd d"}, {ops.OpRope, "yarn"},
	} {
		if !slices.ContainsFunc(cases, func(c Case) bool { return c.Op == want.op && strings.Contains(c.Name, want.name) }) {
			t.Errorf("%v: no case named like %q", want.op, want.name)
		}
	}
	for _, c := range cases {
		if strings.Contains(c.Name, "masked") && c.Check == nil {
			t.Errorf("%s: masked rows without a zero check", c.ID())
		}
	}
}

// TestTolerances checks every computing case finds a tolerance, every
// entry has a reason and is used by some case.
func TestTolerances(t *testing.T) {
	table := Tolerances()
	used := map[int]bool{}
	for _, c := range AllCases() {
		if c.Expect != ExpectMatch {
			continue
		}
		tol, err := LookupTolerance(c.Op, primaryType(c), c.Tag)
		if err != nil {
			t.Errorf("%s: %v", c.ID(), err)
			continue
		}
		for i, e := range table {
			if e.Op == tol.Op && e.Type == tol.Type && e.Tag == tol.Tag {
				used[i] = true
			}
		}
	}
	for i, e := range table {
		if e.Reason == "" {
			t.Errorf("tolerance %v/%v has no reason", e.Op, e.Type)
		}
		if !e.Exact && !(e.MaxNMSE > 0 && e.MaxNMSE < 1e-3) {
			t.Errorf("tolerance %v/%v: max NMSE %g is not in (0, 1e-3)", e.Op, e.Type, e.MaxNMSE)
		}
		if !used[i] {
			t.Errorf("tolerance %v/%v/%q is used by no case", e.Op, e.Type, e.Tag)
		}
	}
}

// leafBytes builds c on be and returns the bytes of its leaves.
func leafBytes(t *testing.T, be ops.Backend, c Case) [][]byte {
	t.Helper()
	b := newBuilder(be, c.seed())
	if _, err := build(c, b); err != nil {
		t.Fatalf("%s: %v", c.ID(), err)
	}
	var out [][]byte
	for _, l := range b.leaves {
		p, err := readStorage(l.t, b.guard)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// TestInputsDeterministic checks the same case gives bit-identical inputs
// on two backends, and another seed other inputs.
func TestInputsDeterministic(t *testing.T) {
	b1, b2 := cputest.New(t, 1), cputest.New(t, 2)
	defer b1.Close()
	defer b2.Close()
	for _, c := range Cases() {
		if c.Expect != ExpectMatch || c.Op != ops.OpMulMat && c.Op != ops.OpFlashAttnExt {
			continue
		}
		x, y := leafBytes(t, b1, c), leafBytes(t, b2, c)
		if len(x) != len(y) || !bytes.Equal(bytes.Join(x, nil), bytes.Join(y, nil)) {
			t.Fatalf("%s: inputs differ between backends", c.ID())
		}
		c.Seed = c.seed() + 1
		z := leafBytes(t, b1, c)
		if bytes.Equal(bytes.Join(x, nil), bytes.Join(z, nil)) {
			t.Fatalf("%s: another seed gives the same input", c.ID())
		}
	}
}

func TestFilter(t *testing.T) {
	cases := Cases()
	tests := []struct {
		name string
		f    Filter
		ok   func(c Case) bool
	}{
		{"op", Filter{Ops: []ops.Op{ops.OpSoftMax, ops.OpRope}}, func(c Case) bool { return c.Op == ops.OpSoftMax || c.Op == ops.OpRope }},
		{"type", Filter{Types: []quant.Type{quant.Q4_K}}, func(c Case) bool { return slices.Contains(c.Types, quant.Q4_K) }},
		{"name", Filter{Name: "b permuted"}, func(c Case) bool { return strings.Contains(c.Name, "b permuted") }},
		{"all", Filter{Ops: []ops.Op{ops.OpMulMat}, Types: []quant.Type{quant.Q4_0}, Name: "n=1"},
			func(c Case) bool {
				return c.Op == ops.OpMulMat && c.Types[0] == quant.Q4_0 && strings.Contains(c.Name, "n=1")
			}},
	}
	for _, tt := range tests {
		got := Select(cases, tt.f)
		if len(got) == 0 {
			t.Errorf("%s: nothing selected", tt.name)
		}
		n := 0
		for _, c := range cases {
			if tt.ok(c) {
				n++
			}
		}
		if len(got) != n || slices.ContainsFunc(got, func(c Case) bool { return !tt.ok(c) }) {
			t.Errorf("%s: selected %d cases, want %d", tt.name, len(got), n)
		}
	}
}
