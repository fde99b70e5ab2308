package model_test

// The tests of the scheduler, the memory plan and the records on a real
// model's graph: they live here, above graphs, so that graphs and its
// tests do not import model.

import (
	"math"
	"slices"
	"testing"

	"github.com/kernbench/kernbench/graphs"
	"github.com/kernbench/kernbench/graphs/graphstest"
	shared "github.com/kernbench/kernbench/internal/shareddata"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
	"github.com/kernbench/kernbench/tokenizer"
)

const promptText = "Once upon a time"

// TestModelMemoryPlan runs stories260K (5 layers) with the memory plan
// and without reuse: the logits are bit-identical, and the plan's arena is
// smaller than the sum of the intermediates.
func TestModelMemoryPlan(t *testing.T) {
	b := cputest.New(t, 2)
	defer b.Close()
	for _, flash := range []bool{true, false} {
		run := func(o graphs.Options) (*promptRun, []float32) {
			r := prompt(t, "stories260K.gguf", promptText, b, func(p *model.ContextParams) {
				p.FlashAttn, p.Sched = flash, o
			})
			return r, slices.Clone(r.Context.Logits(-1))
		}
		planned, lp := run(graphs.Options{})
		_, lr := run(graphs.Options{NoReuse: true})
		_, li := run(graphs.Options{NoInPlace: true})
		for i := range lp {
			if math.Float32bits(lp[i]) != math.Float32bits(lr[i]) || math.Float32bits(lp[i]) != math.Float32bits(li[i]) {
				t.Fatalf("flash=%v: logit %d is %v planned, %v without reuse, %v without in-place", flash, i, lp[i], lr[i], li[i])
			}
		}
		if nl := planned.Model.Hparams.NLayer; nl != 5 {
			t.Fatalf("stories260K has %d layers, want 5", nl)
		}
		m := planned.Context.LastGraph().Plan().Memory()[0]
		t.Logf("flash=%v: %d tokens: arena %d bytes (peak live %d) for %d intermediates of %d bytes, %d in place",
			flash, len(planned.Tokens), m.Size, m.PeakLive, m.Tensors, m.Total, m.InPlace)
		if m.Size >= m.Total || m.Size < m.PeakLive || m.InPlace == 0 {
			t.Errorf("flash=%v: memory plan %+v: want peak < total, >= peak live, some in place", flash, m)
		}
		// Five layers' worth of intermediates in at most two layers' room.
		if m.Size*5 > m.Total*2 {
			t.Errorf("flash=%v: arena %d of %d bytes: reuse across layers is missing", flash, m.Size, m.Total)
		}
	}
}

// TestModelScopes checks the model places every node it computes in a
// layer and block, and the records carry them.
func TestModelScopes(t *testing.T) {
	b := cputest.New(t, 2)
	defer b.Close()
	r := prompt(t, "stories260K.gguf", promptText, b, nil)
	g := r.Context.LastGraph()
	perLayer := map[int]int{}
	for _, n := range g.Computed() {
		layer, block := g.Scope(n)
		switch {
		case layer >= 0 && (block == "attn" || block == "ffn"):
			perLayer[layer]++
		case layer < 0 && (block == "input" || block == "output"):
		default:
			t.Errorf("%s: layer %d block %q", n.Label(), layer, block)
		}
	}
	if len(perLayer) != 5 {
		t.Errorf("nodes in layers %v, want 0..4", perLayer)
	}
	for l, n := range perLayer {
		if n != perLayer[0] && l < 4 {
			t.Errorf("layer %d has %d nodes, layer 0 %d", l, n, perLayer[0])
		}
	}
	if len(r.Records) != len(g.Computed()) {
		t.Fatalf("%d records for %d computed nodes", len(r.Records), len(g.Computed()))
	}
	for _, rec := range r.Records {
		if l, bl := g.Scope(rec.Node); l != rec.Layer || bl != rec.Block || rec.Backend != ops.Backend(b) {
			t.Errorf("record of %s: layer %d block %q on %v", rec.Node.Label(), rec.Layer, rec.Block, rec.Backend)
		}
	}
	// Weights carry their layer in their GGUF names.
	for _, n := range g.Leaves() {
		if l, _ := g.Scope(n); n.Name == "blk.3.attn_q.weight" && l != 3 {
			t.Errorf("%s in layer %d", n.Name, l)
		}
	}
}

// TestModelFallback runs stories260K on a backend that has only MUL_MAT
// and ADD, with the CPU behind it, and checks every logit against the CPU
// alone, for the prompt and three generated tokens.
func TestModelFallback(t *testing.T) {
	for _, flash := range []bool{true, false} {
		ref := cputest.New(t, 2)
		c1, c2 := cputest.New(t, 2), cputest.New(t, 2)
		primary := graphstest.NewFake("fake", c1, true, ops.OpMulMat, ops.OpAdd)
		fallback := graphstest.NewFake("cpu", c2, false)
		want := prompt(t, "stories260K.gguf", promptText, ref, func(p *model.ContextParams) { p.FlashAttn = flash })
		got := prompt(t, "stories260K.gguf", promptText, primary, func(p *model.ContextParams) {
			p.FlashAttn, p.Fallback = flash, fallback
		})
		copies, _ := got.Context.LastGraph().Plan().Copies()
		for step := 0; ; step++ {
			lw, lg := want.Context.Logits(-1), got.Context.Logits(-1)
			for i := range lw {
				if math.Float32bits(lw[i]) != math.Float32bits(lg[i]) {
					t.Fatalf("flash=%v step %d: logit %d is %v with the fallback, %v on the CPU", flash, step, i, lg[i], lw[i])
				}
			}
			if step == 3 {
				break
			}
			next := int32(slices.Index(lw, slices.Max(lw)))
			pos := int32(len(want.Tokens) + step)
			for _, r := range []*promptRun{want, got} {
				if err := r.Context.Decode(model.SimpleBatch([]int32{next}, pos, 0)); err != nil {
					t.Fatal(err)
				}
			}
		}
		nl := want.Model.Hparams.NLayer
		mm := primary.Computed[ops.OpMulMat]
		t.Logf("flash=%v: the fake computed %v; %d copies in the prompt's graph", flash, primary.Computed, copies)
		if mm == 0 || primary.Computed[ops.OpAdd] != 4*2*nl || len(primary.Computed) != 2 {
			t.Errorf("flash=%v: the fake computed %v", flash, primary.Computed)
		}
		if copies == 0 || fallback.Computed[ops.OpRMSNorm] == 0 {
			t.Errorf("flash=%v: %d copies, the CPU computed %v", flash, copies, fallback.Computed)
		}
		for _, b := range []ops.Backend{ref, c1, c2} {
			b.Close()
		}
	}
}

// A promptRun is a context that has decoded a prompt, with the records of every
// step of its graph.
type promptRun struct {
	Model   *model.Model
	Context *model.Context
	Tokens  []int32
	Records []graphs.Record
}

// prompt loads the test model name, decodes text (with BOS) as one batch
// on b with the context parameters mod makes of the defaults (64 cells,
// the flash attention path), and returns the run. Model and context close
// when the test ends.
func prompt(tb testing.TB, name, text string, b ops.Backend, mod func(*model.ContextParams)) *promptRun {
	tb.Helper()
	path := shared.Path(tb, name)
	m, err := model.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	tok, err := tokenizer.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	ids, err := tok.Encode(text, true)
	if err != nil {
		tb.Fatal(err)
	}
	p := model.DefaultContextParams()
	p.NCtx, p.NBatch, p.NUBatch = 64, 64, 64
	if mod != nil {
		mod(&p)
	}
	c, err := m.NewContext(b, p)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	r := &promptRun{Model: m, Context: c, Tokens: ids}
	c.SetRecorder(func(rec graphs.Record) { r.Records = append(r.Records, rec) })
	if err := c.Decode(model.SimpleBatch(ids, 0, 0)); err != nil {
		tb.Fatal(err)
	}
	return r
}
