package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops"
)

// reporter writes the results to stdout and the progress to stderr without
// the two garbling each other: when both are the same terminal, the
// running "[k]PPL," line is held back while the bar is drawn (the bar shows
// the running value) and written when the bar is done.
type reporter struct {
	stdout  io.Writer
	prog    *cli.Progress
	hold    bool // stdout and the live bar share a terminal
	held    strings.Builder
	werr    error
	partial bool // the last write to stdout did not end a line
}

// newReporter returns a reporter for a job of total chunks.
func newReporter(stdout, stderr io.Writer, label string, total int, progress bool) *reporter {
	r := &reporter{stdout: stdout}
	if progress {
		live := cli.IsTerminal(stderr)
		r.prog = cli.NewProgress(stderr, label, "chunks", total, live)
		r.hold = live && cli.SameFile(stdout, stderr)
	}
	return r
}

// write writes s to stdout, keeping the first error.
func (r *reporter) write(s string) {
	if _, err := io.WriteString(r.stdout, s); err != nil && r.werr == nil {
		r.werr = fmt.Errorf("writing the results: %w", err)
	}
}

// running adds a piece of the running line.
func (r *reporter) running(s string) {
	if r.hold {
		r.held.WriteString(s)
		return
	}
	r.write(s)
	r.partial = true
}

// line writes a whole line (clearing a bar on the same terminal first).
func (r *reporter) line(s string) {
	if r.hold {
		r.prog.Clear()
	}
	r.write(s + "\n")
	r.partial = false
}

// update moves the progress to done chunks.
func (r *reporter) update(done int, note string) { r.prog.Update(done, note) }

// finish closes the bar and the running line.
func (r *reporter) finish() {
	if r.prog != nil {
		r.prog.Finish()
	}
	if r.held.Len() > 0 {
		r.write(r.held.String())
		r.held.Reset()
		r.partial = true
	}
	if r.partial {
		r.write("\n")
		r.partial = false
	}
}

// perplexity runs the perplexity mode, saving the base log-probabilities
// when -kld-base asks.
func (s *session) perplexity(cx context.Context, be ops.Backend, base model.ContextParams) error {
	c := s.c
	tokens, err := s.readTokens()
	if err != nil {
		return err
	}
	nCtx := c.nCtx
	if len(tokens) < 2*nCtx {
		return fmt.Errorf("%s tokenizes to %d tokens; -c %d needs at least %d (two chunks)", c.textPath, len(tokens), nCtx, 2*nCtx)
	}
	nMax := len(tokens) / nCtx
	n := nMax
	if c.nChunks > 0 {
		n = min(c.nChunks, nMax)
	}
	evTokens := s.chunkTokens(tokens, nCtx, n)
	ev, err := newEvaluator(s.m, be, base, nCtx, c.nBatch, c.nUBatch, n)
	if ev != nil {
		ev.notes = s.notes
	}
	if err != nil {
		return err
	}
	defer ev.Close()
	fmt.Fprintf(s.stderr, "perplexity: %s: %d tokens; %d of %d chunks of %d tokens, %d scored per chunk; %d chunk(s) per batch\n",
		c.textPath, len(tokens), n, nMax, nCtx, ev.scored(), ev.nSeq)
	var im *imatrixRun
	if c.imatrix != "" {
		im = startImatrix(ev, c)
	}

	var kw *kldWriter
	if c.kldBase != "" {
		h := kldHeader{NVocab: s.m.Hparams.NVocab, NCtx: nCtx, NChunks: n, First: nCtx / 2, VocabHash: vocabHash(s.tok.Vocab().Tokens)}
		fileTokens := evTokens
		if c.kldFormat == "llama" {
			// llama-perplexity's file holds the tokens as tokenized.
			h.Llama, h.VocabHash, fileTokens = true, 0, tokens[:n*nCtx]
		}
		if kw, err = createKLD(c.kldBase, h, fileTokens); err != nil {
			return err
		}
		defer kw.abort()
	}
	chunk := func(k int) []int32 { return evTokens[k*nCtx : (k+1)*nCtx] }
	var st pplStats
	rep := newReporter(s.stdout, s.stderr, "perplexity", n, c.progress)
	score := func(k, p int, l []float32, next int32) error {
		if err := checkLogits(cx, ev, chunk(k), k, p, l); err != nil {
			return err
		}
		lse, am := logSumExp(l)
		st.add(lse - float64(l[next]))
		if kw != nil {
			return kw.add(l, lse, am, int(next))
		}
		return nil
	}
	done := func(k int) error {
		if err := im.err(); err != nil {
			return err
		}
		ppl := st.ppl()
		rep.running(fmt.Sprintf("[%d]%.4f,", k+1, ppl))
		rep.update(k+1, fmt.Sprintf("[%d]%.4f", k+1, ppl))
		return rep.werr
	}
	err = ev.run(cx, n, chunk, score, done)
	rep.finish()
	if err != nil {
		return err
	}
	ppl, unc, ok := st.estimate()
	if ok {
		rep.line(fmt.Sprintf("Final estimate: PPL = %.4f +/- %.5f", ppl, unc))
	} else {
		rep.line(fmt.Sprintf("Final estimate: PPL = %.4f (no error estimate: the scored NLLs do not vary)", ppl))
	}
	if rep.werr != nil {
		return rep.werr
	}
	if kw != nil {
		if err := kw.commit(); err != nil {
			return err
		}
		fmt.Fprintf(s.stderr, "perplexity: saved the log-probabilities of %d positions to %s\n", st.n, c.kldBase)
	}
	if im != nil {
		return im.write(s.stderr)
	}
	return nil
}

// kldWriter writes a KLD base file through a cli.AtomicFile, so that an
// interrupted or failed run leaves no partial file behind.
type kldWriter struct {
	f   *cli.AtomicFile
	w   *bufio.Writer
	buf []byte
	rec kldRecord
	// llama selects llama-perplexity's format (llamakld.go).
	llama bool
}

// createKLD starts the file at path with the header and the tokens, in
// the format h says.
func createKLD(path string, h kldHeader, tokens []int32) (*kldWriter, error) {
	f, err := cli.CreateAtomic(path)
	if err != nil {
		return nil, fmt.Errorf("creating the KLD base file: %w", err)
	}
	kw := &kldWriter{f: f, w: bufio.NewWriterSize(f, 1<<20), buf: make([]byte, h.recordSize()), llama: h.Llama}
	if h.Llama {
		err = writeLlamaHeader(kw.w, h)
	} else {
		err = h.write(kw.w)
	}
	if err == nil {
		err = binary.Write(kw.w, binary.LittleEndian, tokens)
	}
	if err != nil {
		kw.abort()
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return kw, nil
}

// add writes one position's record.
func (kw *kldWriter) add(l []float32, lse float64, argmax, target int) error {
	var err error
	if kw.llama {
		llamaLogProbs(&kw.rec, l)
		err = writeLlamaRecord(kw.w, kw.buf, &kw.rec)
	} else {
		quantizeLogProbs(&kw.rec, l, lse, argmax, target)
		err = writeRecord(kw.w, kw.buf, &kw.rec)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", kw.f.Path(), err)
	}
	return nil
}

// commit finishes the file and gives it its name.
func (kw *kldWriter) commit() error {
	if err := kw.w.Flush(); err != nil {
		kw.abort()
		return fmt.Errorf("writing %s: %w", kw.f.Path(), err)
	}
	return kw.f.Commit()
}

// abort drops an unfinished file; after commit it does nothing.
func (kw *kldWriter) abort() { kw.f.Abort() }

// checkLogits returns nil when the logits l at position p of chunk k
// (whose tokens are toks) are finite; otherwise an error naming the
// first node of the graph whose output is not (model.CheckLogits), found by
// decoding the chunk again up to p.
func checkLogits(cx context.Context, ev *evaluator, toks []int32, k, p int, l []float32) error {
	if model.FirstNonFiniteLogit(l) < 0 {
		return nil
	}
	return cli.CheckLogits(cx, ev.ctx, toks[:p+1], l, fmt.Sprintf("chunk %d, position %d", k+1, p))
}
