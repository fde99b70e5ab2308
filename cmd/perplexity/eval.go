package main

import (
	"context"
	"fmt"
	"github.com/kernbench/kernbench/internal/cli"

	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/model/kvcache"
	"github.com/kernbench/kernbench/ops"
)

// An evaluator runs chunks of a token stream through a model the way
// llama-perplexity does: every chunk of nCtx tokens from an empty cache, as
// sequence 0..nSeq-1 of one batch when the batch holds several chunks
// (nSeq = batch / nCtx), otherwise one chunk in batches of nBatch tokens.
// Several chunks share a cache with a stream per sequence (non-unified,
// as llama.cpp's default), so each token's attention reads only its own
// chunk's cells, not every chunk's masked.
// Only the scored positions first .. nCtx-2 ask for logits: the logits at
// position p predict the token at p+1, and the last position predicts
// nothing in the chunk.
type evaluator struct {
	ctx    *model.Context
	nCtx   int                // chunk length
	nSeq   int                // chunks per batch
	nBatch int                // tokens per Decode of one chunk when nSeq == 1
	first  int                // first scored position
	notes  *cli.FallbackNotes // names the nodes the fallback computes
	// allLogits asks for logits at every position, as llama-imatrix does,
	// so that the last layer computes every row (with only the scored
	// positions' logits asked for, it computes those rows alone).
	allLogits bool
}

// newEvaluator makes the context for chunks of nCtx tokens with at most
// nBatch tokens per batch (0: nCtx) and nUBatch per graph, for a run of
// nChunks chunks. base gives the cache type and the attention path.
func newEvaluator(m *model.Model, be ops.Backend, base model.ContextParams, nCtx, nBatch, nUBatch, nChunks int) (*evaluator, error) {
	if nBatch <= 0 {
		nBatch = nCtx
	}
	nSeq := max(1, min(nBatch/nCtx, nChunks, kvcache.MaxSeq))
	e := &evaluator{nCtx: nCtx, nSeq: nSeq, first: nCtx / 2, nBatch: min(nBatch, nCtx)}
	p := base
	p.NCtx = nSeq * nCtx
	p.NSeqMax = nSeq
	p.NBatch = nSeq * e.nBatch
	p.NUBatch = min(nUBatch, p.NBatch)
	p.NonUnified = nSeq > 1
	ctx, err := m.NewContext(be, p)
	if err != nil {
		return nil, err
	}
	e.ctx = ctx
	return e, nil
}

// Close releases the context.
func (e *evaluator) Close() error { return e.ctx.Close() }

// scored returns the scored positions per chunk.
func (e *evaluator) scored() int { return e.nCtx - 1 - e.first }

// A scoreFunc receives one scored position: chunk k, position p, the logits
// there and the token at p+1 they predict. The logits are valid only during
// the call.
type scoreFunc func(k, p int, logits []float32, next int32) error

// run evaluates chunks 0 .. n-1, whose tokens chunk(k) returns (nCtx of
// them, as evaluated), calling score for every scored position in order of
// chunk and position, and done after the last position of each chunk.
func (e *evaluator) run(cx context.Context, n int, chunk func(k int) []int32, score scoreFunc, done func(k int) error) error {
	last := e.nCtx - 2 // last scored position
	for g := 0; g < n; g += e.nSeq {
		ns := min(e.nSeq, n-g)
		e.ctx.KV().Clear()
		for j0 := 0; j0 < e.nCtx; j0 += e.nBatch {
			j1 := min(j0+e.nBatch, e.nCtx)
			w := j1 - j0
			b := model.Batch{
				Tokens: make([]int32, 0, ns*w),
				Pos:    make([]int32, 0, ns*w),
				SeqIDs: make([][]int32, 0, ns*w),
				Logits: make([]bool, 0, ns*w),
			}
			for s := range ns {
				toks := chunk(g + s)
				if len(toks) != e.nCtx {
					return fmt.Errorf("chunk %d has %d tokens, not %d", g+s+1, len(toks), e.nCtx)
				}
				seq := []int32{int32(s)}
				for p := j0; p < j1; p++ {
					b.Tokens = append(b.Tokens, toks[p])
					b.Pos = append(b.Pos, int32(p))
					b.SeqIDs = append(b.SeqIDs, seq)
					b.Logits = append(b.Logits, e.allLogits || p >= e.first && p <= last)
				}
			}
			if err := e.ctx.DecodeContext(cx, b); err != nil {
				return fmt.Errorf("chunk %d: %w", g+1, err)
			}
			e.notes.Note(e.ctx.LastGraph())
			for s := range ns {
				toks := chunk(g + s)
				for p := max(j0, e.first); p < j1 && p <= last; p++ {
					l := e.ctx.Logits(s*w + p - j0)
					if l == nil {
						return fmt.Errorf("chunk %d: no logits at position %d", g+s+1, p)
					}
					if err := score(g+s, p, l, toks[p+1]); err != nil {
						return err
					}
				}
				if j1 == e.nCtx {
					if err := done(g + s); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}
