package graphs

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func TestLayerOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		want int
	}{
		{"blk.12.attn_q.weight", 12},
		{"blk.0.ffn_down.weight", 0},
		{"Qcur-3", 3},
		{"attn_norm_w-17", 17},
		{"token_embd.weight", -1},
		{"blk.x.attn_q.weight", -1},
		{"blk.12", -1},
		{"inp_embd", -1},
		{"a-b", -1},
		{"-5", -1},
		{"x-", -1},
		{"x-1234567890", -1},
		{"x-+1", -1},
		{"", -1},
	} {
		if got := LayerOf(tc.name); got != tc.want {
			t.Errorf("LayerOf(%q) = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func FuzzLayerOf(f *testing.F) {
	for _, s := range []string{"blk.3.attn_q.weight", "Qcur-12", "blk..x", "a-", "-", "blk.99999999999.w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := LayerOf(s)
		if n < -1 || n > 999999999 {
			t.Fatalf("LayerOf(%q) = %d", s, n)
		}
		if n >= 0 && !strings.Contains(s, strconv.Itoa(n)) {
			t.Fatalf("LayerOf(%q) = %d, which the name does not hold", s, n)
		}
	})
}

func TestScopeAndOpLabel(t *testing.T) {
	m := must(t)
	w := m(ops.NewTensor("blk.2.attn_q.weight", quant.Q4_0, 32, 4))
	x := m(ops.NewTensor("x", quant.F32, 32, 2))
	mm := m(ops.MulMat(w, x)).SetName("Qcur-2")
	h := m(ops.NewTensor("h", quant.F16, 32, 2))
	cp := m(ops.Cpy(x, h))
	g := &Graph{}
	if l, b := g.Scope(mm); l != 2 || b != "" {
		t.Errorf("scope from the name: %d %q", l, b)
	}
	g.SetScope(mm, 5, "attn")
	g.SetScope(cp, -7, "output")
	if l, b := g.Scope(mm); l != 5 || b != "attn" {
		t.Errorf("scope set: %d %q", l, b)
	}
	if l, b := g.Scope(cp); l != -1 || b != "output" {
		t.Errorf("negative layer: %d %q", l, b)
	}
	if l, _ := g.Scope(w); l != 2 {
		t.Errorf("weight in layer %d", l)
	}
	g.SetScope(nil, 1, "x") // ignored
	for _, tc := range []struct {
		t    *ops.Tensor
		want string
	}{{mm, "MUL_MAT(q4_0)"}, {cp, "CPY(f32->f16)"}, {x, "NONE(f32)"}} {
		if got := OpLabel(tc.t); got != tc.want {
			t.Errorf("OpLabel(%s) = %q, want %q", tc.t.Label(), got, tc.want)
		}
	}
}
