package cli

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/kernbench/kernbench/internal/testmodel"
	"github.com/kernbench/kernbench/model"
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
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	be, err := OpenBackend(BackendOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	ctx, err := m.NewContext(be, model.ContextParams{NCtx: 64, NBatch: 2, KVType: model.DefaultContextParams().KVType, FlashAttn: true, NSeqMax: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	toks := []int32{1, 100, 200, 300, 400}
	for p0 := 0; p0 < len(toks); p0 += 2 { // n_batch 2
		if err := ctx.Decode(model.SimpleBatch(toks[p0:min(p0+2, len(toks))], int32(p0), 0)); err != nil {
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
