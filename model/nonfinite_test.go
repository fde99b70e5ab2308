package model

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/internal/testmodel"
	"github.com/kernbench/kernbench/ops"
	_ "github.com/kernbench/kernbench/ops/backends" // the GPU backends register themselves
	"github.com/kernbench/kernbench/ops/registry"
	"github.com/kernbench/kernbench/quant"
)

// TestCheckLogits: finite logits pass; a NaN weight of layer 4's
// feed-forward gate is traced to the node that reads it.
func TestCheckLogits(t *testing.T) {
	if err := CheckLogits(context.Background(), nil, nil, []float32{1, -2, 3}, "x"); err != nil {
		t.Fatalf("finite logits: %v", err)
	}
	if i := FirstNonFiniteLogit([]float32{0, float32(math.Inf(-1))}); i != 1 {
		t.Errorf("FirstNonFiniteLogit = %d", i)
	}
	path := testmodel.Poisoned(t, "stories260K.gguf", "blk.4.ffn_gate.weight", float32(math.NaN()))
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, err := m.NewContext(backend(t), ContextParams{NCtx: 64, NBatch: 2, KVType: DefaultContextParams().KVType, FlashAttn: true, NSeqMax: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	toks := []int32{1, 100, 200, 300, 400}
	for p0 := 0; p0 < len(toks); p0 += 2 { // n_batch 2
		if err := ctx.Decode(SimpleBatch(toks[p0:min(p0+2, len(toks))], int32(p0), 0)); err != nil {
			t.Fatal(err)
		}
	}
	err = CheckLogits(context.Background(), ctx, toks, ctx.Logits(-1), "token 5")
	var nf *NonFiniteError
	if !errors.As(err, &nf) || nf.Node == nil {
		t.Fatalf("error %v, want a *NonFiniteError with the node", err)
	}
	if n := nf.Node; n.Node != "ffn_gate-4" || n.Layer != 4 || n.Block != "ffn" || n.Op != "MUL_MAT(f32)" {
		t.Errorf("node %+v", n)
	}
	t.Log(err)
}

// TestFindNonFiniteBackends poisons one weight of a synthetic model of
// each new architecture (a gpt-oss attention sink, with flash attention on
// and off; a gpt-oss expert; Mamba's A and D, Mamba-2's A) and searches
// for the node behind the NaN on the CPU and on every emulated GPU backend
// that opens here: each names the same node, the one that reads the
// weight, not one whose bytes the memory plan gave to a later node (the
// search once named inp_embd on cuda-emu and metal-emu for all of them).
func TestFindNonFiniteBackends(t *testing.T) {
	vocab := testdata(t, "stories260K.gguf")
	var targets []registry.Target
	for _, name := range []string{"cpu", "cuda-emu", "metal-emu"} {
		tg, err := registry.Resolve(name, "")
		if err == nil {
			err = tg.Err()
		}
		if err != nil {
			if name == "cpu" {
				t.Fatal(err)
			}
			t.Logf("%s: %v", name, err)
			continue
		}
		targets = append(targets, tg)
	}
	tests := []struct {
		arch, tensor string
		flash        bool
		block        string // what the block of the node must start with
	}{
		{"gpt-oss", "blk.0.attn_sinks.weight", true, "attn"},
		{"gpt-oss", "blk.1.attn_sinks.weight", false, "attn"},
		{"gpt-oss", "blk.0.ffn_up_exps.weight", true, "ffn"},
		{"mamba", "blk.1.ssm_a", false, ""},
		{"mamba", "blk.0.ssm_d", false, ""},
		{"mamba2", "blk.0.ssm_a", false, ""},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		clean := filepath.Join(dir, tc.arch+".gguf")
		if err := testmodel.Write(clean, tc.arch, vocab); err != nil {
			t.Fatal(err)
		}
		m, err := Load(testmodel.PoisonFile(t, clean, tc.tensor, float32(math.NaN())))
		if err != nil {
			t.Fatal(err)
		}
		var first *NonFinite
		for _, tg := range targets {
			got := findOn(t, m, tg, tc.flash)
			if got == nil {
				t.Errorf("%s %s (fa %v) on %s: no node found", tc.arch, tc.tensor, tc.flash, tg.Name())
				continue
			}
			t.Logf("%s %s (fa %v) on %s: %v", tc.arch, tc.tensor, tc.flash, tg.Name(), got)
			if got.Node == "inp_embd" || !strings.HasPrefix(got.Block, tc.block) {
				t.Errorf("%s %s on %s: %v, want a node of a block %q…", tc.arch, tc.tensor, tg.Name(), got, tc.block)
			}
			if first == nil {
				first = got
			} else if got.Node != first.Node {
				t.Errorf("%s %s (fa %v): %s names %q, %s names %q", tc.arch, tc.tensor, tc.flash, targets[0].Name(), first.Node, tg.Name(), got.Node)
			}
		}
		m.Close()
	}
}

// findOn opens tg (with the CPU for the nodes it lacks) and searches m's
// run of a few tokens for the first non-finite node.
func findOn(t *testing.T, m *Model, tg registry.Target, flash bool) *NonFinite {
	t.Helper()
	be, err := tg.Open(2)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	var fallback ops.Backend
	if !tg.Entry.Complete {
		fallback = backend(t)
	}
	ctx, err := m.NewContext(be, ContextParams{NCtx: 32, NBatch: 8, NUBatch: 8, KVType: quant.F16, FlashAttn: flash, NSeqMax: 1, Fallback: fallback})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	n, err := FindNonFinite(context.Background(), ctx, []int32{1, 30, 60, 90, 120, 150, 180, 210})
	if err != nil {
		t.Fatalf("%s: %v", tg.Name(), err)
	}
	return n
}
