package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/sample"
	"github.com/kernbench/kernbench/tokenizer"
)

// samplingParams returns the sampler settings of the flags for a context
// of nCtx cells, and the seed used (a random one for -seed -1).
func (c *config) samplingParams(nCtx int) (sample.Params, uint64) {
	seed := uint64(c.seed)
	if c.seed < 0 {
		seed = rand.Uint64() >> 1
	}
	last := c.repeatLastN
	if last < 0 {
		last = nCtx
	}
	return sample.Params{
		Temp:           float32(c.temp),
		TopK:           c.topK,
		TopP:           float32(c.topP),
		MinP:           float32(c.minP),
		Typical:        float32(c.typical),
		TFSZ:           float32(c.tfs),
		MinKeep:        c.minKeep,
		RepeatLastN:    last,
		RepeatPenalty:  float32(c.repeatPenalty),
		FreqPenalty:    float32(c.freqPenalty),
		PresentPenalty: float32(c.presPen),
		Mirostat:       c.mirostat,
		MirostatTau:    float32(c.mirostatTau),
		MirostatEta:    float32(c.mirostatEta),
		Seed:           seed,
	}, seed
}

// genStats are the timings of one generation.
type genStats struct {
	load       time.Duration
	prompt     time.Duration
	nPrompt    int
	eval       time.Duration
	nEval      int
	sampling   time.Duration
	nSampled   int
	total      time.Duration
	stopReason string
}

// generate runs the generation mode: prompt, then sampled tokens streamed
// to stdout, then the timings on stderr.
func generate(cx context.Context, c *config, m *model.Model, be ops.Backend, stdout, stderr io.Writer) error {
	t0 := c.start
	tok, err := loadTokenizer(m)
	if err != nil {
		return err
	}
	prompt := c.prompt
	if c.promptFile != "" {
		b, err := os.ReadFile(c.promptFile)
		if err != nil {
			return fmt.Errorf("reading the prompt: %w", err)
		}
		prompt = string(b)
	}
	tokens, err := tok.Encode(prompt, true)
	if err != nil {
		return fmt.Errorf("tokenizing the prompt: %w", err)
	}
	if len(tokens) == 0 {
		return cli.Usagef("p", "the prompt is empty and the vocabulary adds no BOS: there is nothing to continue")
	}
	ctx, err := m.NewContext(be, c.contextParams(m, c.nCtx))
	if err != nil {
		return err
	}
	defer ctx.Close()
	cp := ctx.Params()
	if len(tokens) >= cp.NCtx {
		return cli.Usagef("c", "the prompt is %d tokens and the context holds %d: raise -c", len(tokens), cp.NCtx)
	}
	sp, seed := c.samplingParams(cp.NCtx)
	chain, err := sample.FromParams(sp, m.Hparams.NVocab)
	if err != nil {
		return err
	}
	for _, t := range tokens {
		chain.Accept(t)
	}
	info := describe(c.modelPath, m)
	fmt.Fprintf(stderr, "run: model %s: %s, %s, %s params\n", baseName(info.Filename), info.Desc, formatSize(info.Size), formatParams(info.Params))
	fmt.Fprintf(stderr, "run: backend %s; n_ctx %d, n_batch %d, n_ubatch %d, KV cache %v, flash attention %s\n",
		cli.BackendDesc(be), cp.NCtx, cp.NBatch, cp.NUBatch, cp.KVType, onOff(cp.FlashAttn))
	if cp.Fallback != nil {
		fmt.Fprintf(stderr, "run: -fallback: the nodes %s does not support run on %s\n", be.Name(), cli.BackendDesc(cp.Fallback))
	}
	seedText := ""
	if sp.Temp > 0 {
		seedText = fmt.Sprintf("; seed %d", seed)
	}
	fmt.Fprintf(stderr, "run: sampling: %s%s; prompt %d tokens, generating %s\n",
		strings.Join(chain.Names(), " -> "), seedText, len(tokens), limitText(c.n))
	if cp.NCtx > m.Hparams.NCtxTrain {
		fmt.Fprintf(stderr, "run: warning: the model was trained on %d tokens of context, -c is %d\n", m.Hparams.NCtxTrain, cp.NCtx)
	}

	st := genStats{load: time.Since(t0)} // model, tokenizer, context and sampler
	err = stream(cx, c, ctx, tok, chain, prompt, tokens, stdout, &st)
	st.total = time.Since(t0)
	if err != nil {
		fmt.Fprintln(stdout)
		return err
	}
	if ops.IsEmulated(be) && !ops.IsDryRun(be) {
		fmt.Fprintf(stderr, "\nrun: stopped: %s\nrun: no timings: %s is emulated, and an emulator's times are not the device's performance\n", st.stopReason, be.Name())
		return nil
	}
	printTimings(stderr, &st)
	return nil
}

// limitText describes -n.
func limitText(n int) string {
	if n < 0 {
		return "until end of text or a full context"
	}
	return fmt.Sprintf("at most %d tokens", n)
}

// onOff writes a switch.
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// stream evaluates the prompt and generates, printing the prompt and then
// every token as soon as it is sampled.
func stream(cx context.Context, c *config, ctx *model.Context, tok tokenizer.Tokenizer, chain *sample.Chain, prompt string, tokens []int32, stdout io.Writer, st *genStats) error {
	out := func(s string) error {
		if s == "" {
			return nil
		}
		if _, err := io.WriteString(stdout, s); err != nil {
			return fmt.Errorf("writing the output: %w", err)
		}
		if f, ok := stdout.(interface{ Flush() error }); ok {
			return f.Flush()
		}
		return nil
	}
	if err := out(prompt); err != nil {
		return err
	}
	dec := tokenizer.NewDecoder(tok)
	for _, t := range tokens {
		if _, err := dec.Add(t); err != nil {
			return err
		}
	}
	cp := ctx.Params()
	t := time.Now()
	for p0 := 0; p0 < len(tokens); p0 += cp.NBatch {
		chunk := tokens[p0:min(p0+cp.NBatch, len(tokens))]
		if err := ctx.DecodeContext(cx, model.SimpleBatch(chunk, int32(p0), 0)); err != nil {
			return fmt.Errorf("evaluating the prompt: %w", err)
		}
		c.notes.Note(ctx.LastGraph())
	}
	st.prompt, st.nPrompt = time.Since(t), len(tokens)

	eos := tok.Vocab().EOS
	pos := len(tokens)
	seq := slices.Clip(tokens) // the tokens decoded so far
	st.stopReason = fmt.Sprintf("-n %d reached", c.n)
	var batch model.Batch // kept, with one, so that a token allocates no batch
	one := make([]int32, 1)
	for i := 0; c.n < 0 || i < c.n; i++ {
		if cx.Err() != nil {
			st.stopReason = "interrupted"
			break
		}
		logits := ctx.Logits(-1)
		where := "after the prompt"
		if i > 0 {
			where = fmt.Sprintf("after generated token %d", i)
		}
		if err := cli.CheckLogits(cx, ctx, seq, logits, where); err != nil {
			return err
		}
		t = time.Now()
		id, err := chain.Sample(logits)
		st.sampling += time.Since(t)
		if err != nil {
			return fmt.Errorf("sampling token %d: %w", i, err)
		}
		st.nSampled++
		if id == eos && !c.ignoreEOS {
			st.stopReason = "end of text"
			break
		}
		piece, err := dec.Add(id)
		if err != nil {
			return err
		}
		if err := out(piece); err != nil {
			return err
		}
		if c.n >= 0 && i == c.n-1 {
			break
		}
		if pos >= cp.NCtx {
			st.stopReason = fmt.Sprintf("context full (%d tokens)", cp.NCtx)
			break
		}
		t = time.Now()
		one[0] = id
		batch.SetSimple(one, int32(pos), 0)
		if err := ctx.DecodeContext(cx, batch); err != nil {
			if cx.Err() != nil {
				st.stopReason = "interrupted"
				break
			}
			return fmt.Errorf("evaluating token %d: %w", i, err)
		}
		c.notes.Note(ctx.LastGraph())
		st.eval += time.Since(t)
		st.nEval++
		pos++
		seq = append(seq, id)
	}
	return out(dec.Flush() + "\n")
}

// printTimings writes the timings like llama.cpp's perf report.
func printTimings(w io.Writer, st *genStats) {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	rate := func(label string, d time.Duration, n int, unit string) {
		perTok, perSec := 0.0, 0.0
		if n > 0 {
			perTok = ms(d) / float64(n)
		}
		if d > 0 {
			perSec = float64(n) / d.Seconds()
		}
		fmt.Fprintf(w, "run: %16s = %10.2f ms / %5d %-6s (%8.2f ms per token, %8.2f tokens per second)\n",
			label, ms(d), n, unit, perTok, perSec)
	}
	fmt.Fprintf(w, "\nrun: stopped: %s\n", st.stopReason)
	fmt.Fprintf(w, "run: %16s = %10.2f ms\n", "load time", ms(st.load))
	rate("prompt eval time", st.prompt, st.nPrompt, "tokens")
	rate("eval time", st.eval, st.nEval, "runs")
	rate("sampling time", st.sampling, st.nSampled, "runs")
	fmt.Fprintf(w, "run: %16s = %10.2f ms / %5d tokens\n", "total time", ms(st.total), st.nPrompt+st.nEval)
}
