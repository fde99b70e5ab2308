package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/kernbench/kernbench/graphs"
	"github.com/kernbench/kernbench/graphs/timing"
	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/tokenizer"
)

// result is what a traced run leaves for the outputs.
type result struct {
	// graph is the graph the dot dump shows, with the records of its
	// run and a title.
	graph     *graphs.Graph
	graphRecs []graphs.Record
	title     string
	// records holds every record of the run, spans its prompt and
	// tokens (or runs).
	records *store
	spans   []timing.Span
}

// trace returns the trace of the run for the outputs.
func (r *result) trace() timing.Trace {
	return timing.Trace{Stream: r.records.Records(), Spans: r.spans}
}

// ctxRound is what the default context size is rounded up to.
const ctxRound = 256

// traceModel decodes the prompt and c.n greedy tokens, recording every
// step of every graph.
func traceModel(ctx context.Context, c *config, out, stderr io.Writer) (*result, error) {
	m, err := model.Load(c.model)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	v, err := tokenizer.VocabFromGGUF(m.File())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.model, err)
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.model, err)
	}
	ids, err := tok.Encode(c.prompt, true)
	if err != nil {
		return nil, fmt.Errorf("tokenizing the prompt: %w", err)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("the prompt %q has no tokens", c.prompt)
	}
	h := m.Hparams
	need := len(ids) + c.n
	nCtx := c.nCtx
	if nCtx == 0 {
		nCtx = (need + ctxRound - 1) / ctxRound * ctxRound
	}
	if need > nCtx {
		return nil, fmt.Errorf("the prompt (%d tokens) and %d generated tokens need %d cells; -c is %d", len(ids), c.n, need, nCtx)
	}

	b, fallback, err := cli.OpenWithFallback(c.target, c.fbTarget, c.useFB, cli.ResolveThreads(c.threads))
	if err != nil {
		return nil, err
	}
	defer b.Close()
	if fallback != nil {
		defer fallback.Close()
	}
	p := model.DefaultContextParams()
	p.Fallback = fallback
	p.NCtx, p.NBatch, p.NUBatch = nCtx, len(ids), len(ids)
	p.FlashAttn, p.KVType = c.flash, c.kvType
	mc, err := m.NewContext(b, p)
	if err != nil {
		return nil, err
	}
	defer mc.Close()
	switch {
	case h.Recurrent():
		fmt.Fprintf(out, "model: %s: %s, %d layers, n_embd %d, d_inner %d, d_state %d, d_conv %d, vocab %d\n", c.model, h.Arch, h.NLayer, h.NEmbd, h.SSMInner, h.SSMState, h.SSMConv, h.NVocab)
	default:
		fmt.Fprintf(out, "model: %s: %s, %d layers, n_embd %d, n_head %d/%d, vocab %d", c.model, h.Arch, h.NLayer, h.NEmbd, h.NHead, h.NHeadKV, h.NVocab)
		if h.NExpert > 0 {
			fmt.Fprintf(out, ", %d of %d experts", h.NExpertUsed, h.NExpert)
		}
		if h.NSWA > 0 {
			fmt.Fprintf(out, ", sliding window %d", h.NSWA)
		}
		fmt.Fprintln(out)
	}
	fa := "off"
	if c.flash {
		fa = "on"
	}
	if h.Recurrent() {
		fmt.Fprintf(out, "backend: %s; recurrent states (f32), one sequence\n", cli.BackendDesc(b))
	} else {
		fmt.Fprintf(out, "backend: %s; flash attention %s, KV cache %v, %d cells\n", cli.BackendDesc(b), fa, c.kvType, nCtx)
	}
	emulatedNote(out, b)

	// Every record goes to the store; the prompt's, which the dot dump
	// shows with its graph, are kept whole too.
	res := &result{records: newStore()}
	prompt := true
	// -counters profiles the prompt's graph, run a node at a time.
	var cnt *counters
	if c.counters {
		if cnt, err = newCounters(c.gpu); err != nil {
			return nil, err
		}
		mc.SetStepwise(true)
	}
	mc.SetRecorder(func(r graphs.Record) {
		res.records.Add(r)
		if prompt {
			res.graphRecs = append(res.graphRecs, r)
			cnt.record(r)
		}
	})
	seq := slices.Clip(ids) // the tokens decoded so far
	notes := cli.NewFallbackNotes(stderr, "trace", fallback)
	decode := func(name string, toks []int32, pos int) (time.Duration, error) {
		start := time.Now()
		if err := mc.DecodeContext(ctx, model.SimpleBatch(toks, int32(pos), 0)); err != nil {
			return 0, err
		}
		notes.Note(mc.LastGraph())
		end := time.Now()
		res.spans = append(res.spans, timing.Span{Name: name, Start: start, End: end, Args: map[string]any{"tokens": len(toks), "pos": pos}})
		if pos > 0 {
			seq = append(seq, toks...)
		}
		return end.Sub(start), cli.CheckLogits(ctx, mc, seq, mc.Logits(-1), name)
	}

	// The prompt's forward is the one -metal-capture records.
	var d time.Duration
	err = capture(b, c.metalCapture, func() (err error) {
		if err := cnt.start(); err != nil {
			return err
		}
		d, err = decode(fmt.Sprintf("prompt (%d tokens)", len(ids)), ids, 0)
		if serr := cnt.stop(); err == nil {
			err = serr
		}
		return err
	})
	mc.SetStepwise(false)
	if err != nil {
		return nil, err
	}
	if c.metalCapture != "" {
		fmt.Fprintf(out, "GPU capture of the prompt's forward: %s\n", c.metalCapture)
	}
	res.graph = mc.LastGraph()
	prompt = false
	res.title = fmt.Sprintf("%s: prompt of %d tokens", c.model, len(ids))
	var nodes time.Duration
	for _, r := range res.graphRecs {
		nodes += r.Duration()
	}
	fmt.Fprintf(out, "prompt: %d tokens in %.3f ms (%.1f tokens/s); %d nodes took %.3f ms of it\n",
		len(ids), ms(d), float64(len(ids))/d.Seconds(), len(res.graph.Computed()), ms(nodes))
	if cnt != nil {
		if err := cnt.write(out, "the prompt's graph", res.graph); err != nil {
			return nil, err
		}
	}
	if plan := res.graph.Plan(); plan != nil {
		for _, mem := range plan.Memory() {
			fmt.Fprintf(out, "memory plan (%s): arena %s for %d intermediates of %s (peak live %s), %d computed in place\n",
				mem.Backend, kib(mem.Size), mem.Tensors, kib(mem.Total), kib(mem.PeakLive), mem.InPlace)
		}
		if n, bytes := plan.Copies(); n > 0 {
			fmt.Fprintf(out, "copies between backends: %d, %s\n", n, kib(bytes))
		}
	}

	if c.n > 0 {
		var gen []int32
		var total time.Duration
		for i := range c.n {
			next := argmax(mc.Logits(-1))
			gen = append(gen, next)
			d, err := decode(fmt.Sprintf("token %d", i+1), []int32{next}, len(ids)+i)
			var nf *model.NonFiniteError
			if errors.As(err, &nf) {
				return nil, err
			}
			if err != nil {
				return nil, fmt.Errorf("generating token %d: %w", i+1, err)
			}
			total += d
		}
		text, err := tok.Decode(gen)
		if err != nil {
			text = fmt.Sprint(gen)
		}
		fmt.Fprintf(out, "generated: %d tokens in %.3f ms (%.1f tokens/s): %q\n", c.n, ms(total), float64(c.n)/total.Seconds(), text)
	}
	return res, nil
}

// argmax returns the index of the largest logit (the first on ties).
func argmax(x []float32) int32 {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return int32(best)
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// kib formats a byte count in KiB or MiB.
func kib(n int64) string {
	if n >= 10<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}
