package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops"
)

// kldBase is an open KLD base file, positioned at its first record.
type kldBase struct {
	f      io.Closer
	r      *bufio.Reader
	h      kldHeader
	tokens []int32
}

// openKLD opens and checks a KLD base file for a model with nVocab tokens
// whose vocabulary hashes to hash.
func openKLD(path string, nVocab int, hash uint64) (*kldBase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	kb, err := readKLDStart(f, st.Size(), nVocab, hash)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("KLD base file %s: %w", path, err)
	}
	kb.f = f
	return kb, nil
}

// readKLDStart reads the header and tokens of a KLD base file of size bytes
// from rd and checks them against the model's vocabulary (nVocab tokens
// hashing to hash). The records follow in the returned reader.
func readKLDStart(rd io.Reader, size int64, nVocab int, hash uint64) (*kldBase, error) {
	r := bufio.NewReaderSize(rd, 1<<20)
	// The magic says the format, and so the header's length.
	hb := make([]byte, kldHeaderSize)
	if m, err := r.Peek(len(llamaMagic)); err == nil && string(m) == llamaMagic {
		hb = hb[:llamaHeaderSize]
	}
	nr, err := io.ReadFull(r, hb)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	var h kldHeader
	if len(hb) == llamaHeaderSize {
		h, err = parseLlamaHeader(hb[:nr], size)
	} else {
		h, err = parseKLDHeader(hb[:nr], size)
	}
	if err != nil {
		return nil, err
	}
	if h.NVocab != nVocab {
		return nil, fmt.Errorf("made with a vocabulary of %d tokens; this model has %d", h.NVocab, nVocab)
	}
	// llama-perplexity's file holds no vocabulary hash: its size is all
	// there is to check.
	if !h.Llama && h.VocabHash != hash {
		return nil, fmt.Errorf("made with another vocabulary (same size, %d tokens, but other token texts)", nVocab)
	}
	// The header's sizes match the file's, so this allocation is bounded
	// by the file size.
	tokens := make([]int32, h.NChunks*h.NCtx)
	if err := binary.Read(r, binary.LittleEndian, tokens); err != nil {
		return nil, fmt.Errorf("reading the tokens: %w", err)
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= nVocab {
			return nil, fmt.Errorf("token %d (chunk %d, position %d) is %d, outside the vocabulary of %d", i, i/h.NCtx+1, i%h.NCtx, t, nVocab)
		}
	}
	return &kldBase{r: r, h: h, tokens: tokens}, nil
}

// readRecord reads the next record, whose position predicts target.
func (kb *kldBase) readRecord(buf []byte, target int, r *kldRecord) error {
	if kb.h.Llama {
		return readLlamaRecord(kb.r, buf, kb.h.NVocab, target, r)
	}
	return readRecord(kb.r, buf, kb.h.NVocab, r)
}

// Close closes the file.
func (kb *kldBase) Close() error {
	if kb.f == nil {
		return nil
	}
	return kb.f.Close()
}

// compare runs the KL-divergence mode.
func (s *session) compare(cx context.Context, be ops.Backend, base model.ContextParams) error {
	c := s.c
	nv := s.m.Hparams.NVocab
	kb, err := openKLD(c.kld, nv, vocabHash(s.tok.Vocab().Tokens))
	if err != nil {
		return err
	}
	defer kb.Close()
	h := kb.h
	if h.Llama {
		// llama-perplexity's file holds the tokens as tokenized; it puts
		// BOS at each chunk's start when it evaluates them, as we do.
		if v := s.tok.Vocab(); v.AddBOS && v.BOS >= 0 {
			for k := range h.NChunks {
				kb.tokens[k*h.NCtx] = v.BOS
			}
		}
	}
	if c.ctxSet && c.nCtx != h.NCtx {
		return cli.Usagef("c", "the KLD file was made with -c %d, not %d (leave -c out to use the file's)", h.NCtx, c.nCtx)
	}
	if c.textPath != "" {
		text, err := s.readTokens()
		if err != nil {
			return err
		}
		if len(text) < h.NChunks*h.NCtx {
			return fmt.Errorf("%s tokenizes to %d tokens, fewer than the %d the KLD file holds: it is not the text the file was made from", c.textPath, len(text), h.NChunks*h.NCtx)
		}
		want := s.chunkTokens(text, h.NCtx, h.NChunks)
		for i, t := range kb.tokens {
			if want[i] != t {
				return fmt.Errorf("the tokens of %s differ from the KLD file's at chunk %d, position %d (%d, file %d): not the text (or -lf setting) the file was made from", c.textPath, i/h.NCtx+1, i%h.NCtx, want[i], t)
			}
		}
	}
	n := h.NChunks
	if c.nChunks > 0 {
		n = min(n, c.nChunks)
	}
	ev, err := newEvaluator(s.m, be, base, h.NCtx, c.nBatch, c.nUBatch, n)
	if ev != nil {
		ev.notes = s.notes
	}
	if err != nil {
		return err
	}
	defer ev.Close()
	fmt.Fprintf(s.stderr, "perplexity: KLD base %s: %d chunks of %d tokens, %d scored per chunk; comparing %d chunk(s), %d per batch\n",
		c.kld, h.NChunks, h.NCtx, h.scored(), n, ev.nSeq)

	chunk := func(k int) []int32 { return kb.tokens[k*h.NCtx : (k+1)*h.NCtx] }
	var st kldStats
	var rec kldRecord
	buf := make([]byte, h.recordSize())
	rep := newReporter(s.stdout, s.stderr, "kld", n, c.progress)
	rep.line(chunkHeader())
	score := func(k, p int, l []float32, next int32) error {
		if err := checkLogits(cx, ev, chunk(k), k, p, l); err != nil {
			return err
		}
		if err := kb.readRecord(buf, int(next), &rec); err != nil {
			return fmt.Errorf("KLD base file %s: chunk %d, position %d: %w", c.kld, k+1, p, err)
		}
		lse, am := logSumExp(l)
		st.add(lse-float64(l[next]), -float64(rec.TargetLP), klDivergence(&rec, l, lse), am == int(rec.Argmax))
		return nil
	}
	done := func(k int) error {
		rep.line(st.chunkLine(k + 1))
		q, _ := meanUnc(st.kld, st.kld2, st.n)
		rep.update(k+1, fmt.Sprintf("mean KLD %.6f", q))
		return rep.werr
	}
	err = ev.run(cx, n, chunk, score, done)
	rep.finish()
	if err != nil {
		return err
	}
	rep.write("\n")
	st.report(s.stdout)
	return rep.werr
}

// klDivergence returns KL(P || Q) = sum_i P_i (log P_i - log Q_i) at one
// position, where Q is the softmax of logits (whose log-sum-exp is lse) and
// P is the base distribution of rec: the dequantized log-probabilities of
// the tokens it keeps, renormalized to sum to 1 over them. Renormalizing
// makes the 16-bit quantization error second order: a model compared with
// itself gets about 1e-8 nats rather than the ±1e-4 of the raw codes.
//
// A record of llama-perplexity's file gets its formula instead (llamaKLD).
func klDivergence(rec *kldRecord, logits []float32, lse float64) float64 {
	if rec.Llama {
		return llamaKLD(rec, logits, lse)
	}
	// With w_i = exp(lp_i) for the kept tokens, Z = sum w_i and
	// P_i = w_i / Z: KL = (sum w_i (lp_i - lq_i)) / Z - log Z.
	lo, sc := float64(rec.Lo), float64(rec.Scale)
	var z, s float64
	for i, code := range rec.Codes {
		if code == 0 {
			continue
		}
		lp := lo + sc*float64(code-1)
		w := math.Exp(lp)
		z += w
		s += w * (lp - (float64(logits[i]) - lse))
	}
	if z == 0 {
		return 0
	}
	return s/z - math.Log(z)
}
