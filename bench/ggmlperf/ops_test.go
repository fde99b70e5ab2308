package ggmlperf

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// header is a ggml.h in the shape ggml writes it, with the numbering
// rules ReadEnums must follow: an explicit start, comments between
// members, blank lines, a trailing comma, another enum that mentions
// ggml_op in its name.
const header = `
#pragma once
    enum ggml_op_pool { GGML_OP_POOL_MAX, GGML_OP_POOL_AVG };

    // available tensor operations:
    enum ggml_op {
        GGML_OP_NONE = 0,

        GGML_OP_DUP,
        GGML_OP_ADD, /* a comment, with a comma */
        GGML_OP_MUL,
        GGML_OP_SUM_ROWS,
        GGML_OP_RMS_NORM, // normalize
        GGML_OP_MUL_MAT = 30,
        GGML_OP_MUL_MAT_ID,
        GGML_OP_SCALE,
        GGML_OP_CPY,
        GGML_OP_CONT,
        GGML_OP_GET_ROWS,
        GGML_OP_SOFT_MAX,
        GGML_OP_ROPE,
        GGML_OP_ARGSORT,
        GGML_OP_FLASH_ATTN_EXT,
        GGML_OP_SSM_CONV,
        GGML_OP_SSM_SCAN,
        GGML_OP_UNARY,
        GGML_OP_GLU,

        GGML_OP_COUNT,
    };

    enum ggml_unary_op {
        GGML_UNARY_OP_ABS,
        GGML_UNARY_OP_GELU = 8,
        GGML_UNARY_OP_GELU_QUICK,
        GGML_UNARY_OP_SILU,
        GGML_UNARY_OP_COUNT,
    };

    enum ggml_glu_op {
        GGML_GLU_OP_REGLU,
        GGML_GLU_OP_GEGLU,
        GGML_GLU_OP_SWIGLU,
        GGML_GLU_OP_SWIGLU_OAI,
        GGML_GLU_OP_COUNT,
    };
`

func testEnums(t testing.TB) Enums {
	t.Helper()
	e, err := ReadEnums(strings.NewReader(header))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestReadEnums(t *testing.T) {
	e := testEnums(t)
	for _, c := range []struct {
		m    map[string]int
		name string
		want int
	}{
		{e.Ops, "NONE", 0}, {e.Ops, "ADD", 2}, {e.Ops, "MUL", 3}, {e.Ops, "RMS_NORM", 5},
		{e.Ops, "MUL_MAT", 30}, {e.Ops, "MUL_MAT_ID", 31}, {e.Ops, "GLU", 43},
		{e.Unary, "ABS", 0}, {e.Unary, "GELU", 8}, {e.Unary, "SILU", 10},
		{e.GLU, "SWIGLU", 2},
	} {
		if got, ok := c.m[c.name]; !ok || got != c.want {
			t.Errorf("%s = %d (present %v), want %d", c.name, got, ok, c.want)
		}
	}
	if _, ok := e.Ops["POOL_MAX"]; ok {
		t.Error("members of enum ggml_op_pool were read as ops")
	}
}

func TestReadEnumsErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"no enum", "int x;", "no enum ggml_op"},
		{"unclosed", "enum ggml_op { GGML_OP_NONE,", "closing brace"},
		{"odd value", "enum ggml_op { GGML_OP_NONE = 1 << 2, }; enum ggml_unary_op {GGML_UNARY_OP_X}; enum ggml_glu_op {GGML_GLU_OP_Y};", "not a number"},
		{"not an identifier", "enum ggml_op { GGML OP, }; enum ggml_unary_op {GGML_UNARY_OP_X}; enum ggml_glu_op {GGML_GLU_OP_Y};", "not an enumerator"},
		{"no unary", "enum ggml_op { GGML_OP_NONE };", "no enum ggml_unary_op"},
		{"empty", "enum ggml_op { }; enum ggml_unary_op {GGML_UNARY_OP_X}; enum ggml_glu_op {GGML_GLU_OP_Y};", "no GGML_OP_ members"},
	}
	for _, tt := range tests {
		_, err := ReadEnums(strings.NewReader(tt.src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestFindHeader(t *testing.T) {
	root := t.TempDir()
	for _, layout := range []struct{ header, binary string }{
		{"include/ggml.h", "build/bin/test-backend-ops"},      // a ggml checkout
		{"ggml/include/ggml.h", "build/bin/test-backend-ops"}, // a llama.cpp checkout
	} {
		dir := filepath.Join(root, strings.ReplaceAll(layout.header, "/", "_"))
		must(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(layout.header)), 0o755))
		must(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(layout.binary)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, layout.header), []byte(header), 0o644))
		bin := filepath.Join(dir, layout.binary)
		must(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
		got, err := FindHeader(bin)
		if err != nil {
			t.Fatalf("%s: %v", layout.header, err)
		}
		if want := filepath.Join(dir, layout.header); got != want {
			t.Errorf("FindHeader = %s, want %s", got, want)
		}
	}
	lone := filepath.Join(t.TempDir(), "test-backend-ops")
	must(t, os.WriteFile(lone, nil, 0o755))
	if _, err := FindHeader(lone); err == nil || !strings.Contains(err.Error(), "ggml.h") {
		t.Errorf("FindHeader without a header: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// words parses a test file line into its numbers and name.
func words(t *testing.T, line string) ([]int64, string) {
	t.Helper()
	f := strings.Fields(line)
	var out []int64
	for _, s := range f[:len(f)-1] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%q in %q is not a number", s, line)
		}
		out = append(out, v)
	}
	return out, f[len(f)-1]
}

// Every benchmark op's default point has a ggml case whose line holds
// what test-backend-ops reads: the op's number, the node's type and
// shape, its parameters and every source's type, shape and strides.
func TestEveryBenchmarkOpHasACase(t *testing.T) {
	e := testEnums(t)
	for _, o := range harness.OpDefs() {
		p, err := harness.NewPoint(o.Op, o.DefaultType, nil)
		must(t, err)
		node, err := p.Node()
		must(t, err)
		c, err := NewCase(node, "kb7", e)
		if err != nil {
			t.Errorf("%v: %v", p, err)
			continue
		}
		w, name := words(t, c.Line())
		if name != "kb7" {
			t.Errorf("%v: name %q", p, name)
		}
		if w[0] != int64(c.OpNum) || w[1] != int64(node.Type) {
			t.Errorf("%v: op %d type %d, want %d %d", p, w[0], w[1], c.OpNum, node.Type)
		}
		for d := 0; d < 4; d++ {
			if w[2+d] != node.Ne[d] {
				t.Errorf("%v: ne[%d] = %d, want %d", p, d, w[2+d], node.Ne[d])
			}
		}
		np := int(w[6])
		at := 7 + np
		ns := int(w[at])
		at++
		if len(w) != at+ns*9 {
			t.Fatalf("%v: %d numbers for %d params and %d sources: %s", p, len(w), np, ns, c.Line())
		}
		for i := 0; i < ns; i++ {
			s := node.Src[i]
			got := w[at+9*i : at+9*i+9]
			if got[0] != int64(s.Type) {
				t.Errorf("%v: source %d type %d, want %d", p, i, got[0], s.Type)
			}
			for d := 0; d < 4; d++ {
				if got[1+d] != s.Ne[d] || got[5+d] != s.Nb[d] {
					t.Errorf("%v: source %d ne/nb %v, want %v %v", p, i, got[1:], s.Ne, s.Nb)
					break
				}
			}
		}
	}
}

// The parameters land in the words where ggml's CPU kernels read them.
func TestParameterLayout(t *testing.T) {
	e := testEnums(t)
	f := func(x float32) int32 { return int32(math.Float32bits(x)) }
	leaf := func(t quant.Type, ne ...int64) *ops.Tensor {
		var n [4]int64
		for i := range n {
			n[i] = 1
		}
		copy(n[:], ne)
		return &ops.Tensor{Type: t, Ne: n, Nb: ops.ContiguousStrides(t, n)}
	}
	x := leaf(quant.F32, 128, 8, 4)
	pos := leaf(quant.I32, 4)
	rp := ops.RopeParams{NDims: 64, Mode: ops.RopeNeoX, NCtxOrig: 4096, FreqBase: 500000, FreqScale: 0.25, ExtFactor: 1, AttnFactor: 1.5, BetaFast: 32, BetaSlow: 2}
	rope, err := ops.Rope(x, pos, nil, rp)
	must(t, err)
	norm, err := ops.RMSNorm(x, 1e-6)
	must(t, err)
	silu, err := ops.Silu(x)
	must(t, err)
	glu, err := ops.SwiGLU(x, nil, true)
	must(t, err)
	sm, err := ops.SoftMax(x, nil, nil, ops.SoftMaxParams{Scale: 0.125, MaxBias: 8})
	must(t, err)
	tests := []struct {
		name string
		node *ops.Tensor
		op   int
		want []int32
	}{
		{"rope", rope, e.Ops["ROPE"], []int32{0, 64, 2, 0, 4096, f(500000), f(0.25), f(1), f(1.5), f(32), f(2)}},
		{"rms_norm", norm, e.Ops["RMS_NORM"], []int32{f(1e-6)}},
		{"silu", silu, e.Ops["UNARY"], []int32{10}},
		{"swiglu swapped", glu, e.Ops["GLU"], []int32{2, 1}},
		{"soft_max", sm, e.Ops["SOFT_MAX"], []int32{f(0.125), f(8)}},
	}
	for _, tt := range tests {
		c, err := NewCase(tt.node, "x", e)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if c.OpNum != tt.op || len(c.Params) != len(tt.want) {
			t.Errorf("%s: op %d params %v, want %d %v", tt.name, c.OpNum, c.Params, tt.op, tt.want)
			continue
		}
		for i := range tt.want {
			if c.Params[i] != tt.want[i] {
				t.Errorf("%s: word %d = %d, want %d", tt.name, i, c.Params[i], tt.want[i])
			}
		}
	}
}

func TestNewCaseRefuses(t *testing.T) {
	e := testEnums(t)
	x := &ops.Tensor{Type: quant.F32, Ne: [4]int64{8, 1, 1, 1}, Nb: ops.ContiguousStrides(quant.F32, [4]int64{8, 1, 1, 1})}
	sinks := &ops.Tensor{Type: quant.F32, Ne: [4]int64{1, 1, 1, 1}, Nb: ops.ContiguousStrides(quant.F32, [4]int64{1, 1, 1, 1})}
	sm, err := ops.SoftMax(x, nil, sinks, ops.SoftMaxParams{Scale: 1})
	must(t, err)
	norm, err := ops.RMSNorm(x, 1e-6)
	must(t, err)
	noNorm := testEnums(t)
	delete(noNorm.Ops, "RMS_NORM")
	badParams := *norm
	badParams.Params = ops.SoftMaxParams{}
	tests := []struct {
		name string
		node *ops.Tensor
		e    Enums
		id   string
		want string
	}{
		{"hole in sources", sm, e, "a", "source 1 is absent"},
		{"op missing from ggml.h", norm, noNorm, "a", "no GGML_OP_RMS_NORM"},
		{"a view", &ops.Tensor{Op: ops.OpView}, e, "a", "no ggml counterpart"},
		{"wrong parameters", &badParams, e, "a", "unexpected parameters"},
		{"name with a space", norm, e, "a b", "one token"},
		{"name -", norm, e, "-", "one token"},
	}
	for _, tt := range tests {
		_, err := NewCase(tt.node, tt.id, tt.e)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

func FuzzReadEnums(f *testing.F) {
	f.Add(header)
	f.Add("enum ggml_op { GGML_OP_A = 0x10, /* x */ GGML_OP_B }")
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ReadEnums(strings.NewReader(s))
		if err == nil && (len(e.Ops) == 0 || len(e.Unary) == 0 || len(e.GLU) == 0) {
			t.Fatalf("no error but an empty enum: %+v", e)
		}
	})
}
