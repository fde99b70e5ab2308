package model

import (
	"fmt"
	"slices"
)

// A Batch is the input of one Decode: tokens with their positions, the
// sequences each belongs to, and which of them want logits, as
// llama_batch.
type Batch struct {
	Tokens []int32
	// Pos holds each token's position. Nil fills positions in: each
	// token goes right after the last position of its (first) sequence,
	// counting the cache and the tokens before it in the batch.
	Pos []int32
	// SeqIDs lists the sequences of each token (usually one; a prompt
	// shared by several sequences lists them all). Nil puts every token
	// in sequence 0.
	SeqIDs [][]int32
	// Logits marks the tokens whose logits Decode keeps. Nil keeps the
	// last token's only.
	Logits []bool
}

// SimpleBatch returns a batch of tokens of sequence seq at positions p0,
// p0+1, ..., with logits for the last token only.
func SimpleBatch(tokens []int32, p0 int32, seq int32) Batch {
	b := Batch{Tokens: tokens, Pos: make([]int32, len(tokens)), SeqIDs: make([][]int32, len(tokens)), Logits: make([]bool, len(tokens))}
	for i := range tokens {
		b.Pos[i] = p0 + int32(i)
		b.SeqIDs[i] = []int32{seq}
	}
	if len(tokens) > 0 {
		b.Logits[len(tokens)-1] = true
	}
	return b
}

// SetSimple makes b the batch SimpleBatch(tokens, p0, seq) returns,
// reusing b's memory, so that a decoding loop that keeps one Batch
// allocates nothing per token. b keeps tokens, not a copy.
func (b *Batch) SetSimple(tokens []int32, p0 int32, seq int32) {
	n := len(tokens)
	b.Tokens = tokens
	if cap(b.Pos) < n {
		b.Pos = make([]int32, n)
	}
	if cap(b.Logits) < n {
		b.Logits = make([]bool, n)
	}
	if cap(b.SeqIDs) < n {
		b.SeqIDs = append(b.SeqIDs[:cap(b.SeqIDs)], make([][]int32, n-cap(b.SeqIDs))...)
	}
	b.Pos, b.Logits, b.SeqIDs = b.Pos[:n], b.Logits[:n], b.SeqIDs[:n]
	for i := range n {
		b.Pos[i] = p0 + int32(i)
		b.Logits[i] = i == n-1
		if cap(b.SeqIDs[i]) < 1 {
			b.SeqIDs[i] = make([]int32, 1)
		}
		b.SeqIDs[i] = b.SeqIDs[i][:1]
		b.SeqIDs[i][0] = seq
	}
}

// prepared is a validated batch with every field filled in.
type prepared struct {
	tokens []int32
	pos    []int32
	seqs   [][]int32
	logits []bool
}

// posMaxer reports the last cached position of a sequence (-1: none).
type posMaxer interface {
	SeqPosMax(seq int32) int32
}

// prepare validates b and fills in its defaults. Each sequence's
// positions must increase strictly within the batch and start after the
// sequence's last cached position, so that no token is asked to attend to
// a later one.
func prepare(b Batch, nVocab, nSeqMax, nBatch int, cache posMaxer) (prepared, error) {
	return prepareWith(b, nVocab, nSeqMax, nBatch, cache, map[int32]int32{})
}

// prepareWith is prepare with the map it tracks each sequence's last
// position in (cleared first), kept by a decoder so that a batch with
// every field set allocates nothing.
func prepareWith(b Batch, nVocab, nSeqMax, nBatch int, cache posMaxer, last map[int32]int32) (prepared, error) {
	clear(last)
	n := len(b.Tokens)
	if n == 0 {
		return prepared{}, fmt.Errorf("model: empty batch")
	}
	if n > nBatch {
		return prepared{}, fmt.Errorf("model: batch of %d tokens exceeds n_batch %d", n, nBatch)
	}
	for _, f := range []struct {
		name string
		n    int
	}{{"Pos", len(b.Pos)}, {"SeqIDs", len(b.SeqIDs)}, {"Logits", len(b.Logits)}} {
		if f.n != 0 && f.n != n {
			return prepared{}, fmt.Errorf("model: batch has %d tokens but %d %s", n, f.n, f.name)
		}
	}
	p := prepared{tokens: b.Tokens, pos: b.Pos, seqs: b.SeqIDs, logits: b.Logits}
	for i, t := range p.tokens {
		if t < 0 || int(t) >= nVocab {
			return prepared{}, fmt.Errorf("model: token %d is %d, outside the vocabulary [0, %d)", i, t, nVocab)
		}
	}
	if p.seqs == nil {
		p.seqs = make([][]int32, n)
		for i := range p.seqs {
			p.seqs[i] = []int32{0}
		}
	}
	for i, ss := range p.seqs {
		if len(ss) == 0 {
			return prepared{}, fmt.Errorf("model: token %d belongs to no sequence", i)
		}
		for j, s := range ss {
			if s < 0 || int(s) >= nSeqMax {
				return prepared{}, fmt.Errorf("model: token %d: sequence id %d outside [0, n_seq_max=%d)", i, s, nSeqMax)
			}
			if slices.Contains(ss[:j], s) {
				return prepared{}, fmt.Errorf("model: token %d lists sequence %d twice", i, s)
			}
		}
	}
	lastOf := func(s int32) int32 {
		if v, ok := last[s]; ok {
			return v
		}
		return cache.SeqPosMax(s)
	}
	if p.pos == nil {
		p.pos = make([]int32, n)
		for i, ss := range p.seqs {
			p.pos[i] = lastOf(ss[0]) + 1
			for _, s := range ss {
				last[s] = p.pos[i]
			}
		}
		clear(last)
	}
	for i, ss := range p.seqs {
		if p.pos[i] < 0 {
			return prepared{}, fmt.Errorf("model: token %d has negative position %d", i, p.pos[i])
		}
		for _, s := range ss {
			if prev := lastOf(s); p.pos[i] <= prev {
				return prepared{}, fmt.Errorf("model: token %d of sequence %d is at position %d, not after the sequence's position %d (positions must increase; remove the tail with seq_rm first)", i, s, p.pos[i], prev)
			}
			last[s] = p.pos[i]
		}
	}
	if p.logits == nil {
		p.logits = make([]bool, n)
		p.logits[n-1] = true
	}
	return p, nil
}

// ubatch is one micro-batch: tokens of a prepared batch, in groups of
// equal length, one group per sequence (or per cache stream) when the
// batch was split by sequence (splitEqual), else one group.
type ubatch struct {
	// start is the batch index of the first token of a simple split's
	// micro-batch (tokens [start, start+len(tokens)) of the batch).
	start  int
	tokens []int32
	pos    []int32
	seqs   [][]int32
	// idx holds each token's index in the batch.
	idx []int
	// out lists the indices (within the micro-batch) of the tokens that
	// want logits, in order.
	out []int32
	// groups is the number of groups (1 for a simple split); group g is
	// tokens [g*n/groups, (g+1)*n/groups), all of sequence groupSeq[g]
	// (nil for a simple split).
	groups   int
	groupSeq []int32
}

// groupLen returns the number of tokens in each group.
func (u ubatch) groupLen() int { return len(u.tokens) / u.groups }

// split cuts p into micro-batches of at most size tokens, in order (as
// llama.cpp's simple split).
func (p prepared) split(size int) []ubatch {
	us, _, _ := p.splitTo(size, nil, nil, nil)
	return us
}

// splitTo is split appending the micro-batches to us and their token
// indices and output rows to idx and out (all reused from their start),
// and returning the three, so that a decoder keeping them allocates
// nothing.
func (p prepared) splitTo(size int, us []ubatch, idx []int, out []int32) ([]ubatch, []int, []int32) {
	n := len(p.tokens)
	us, idx, out = us[:0], idx[:0], out[:0]
	if cap(idx) < n {
		idx = make([]int, 0, n)
	}
	if cap(out) < n {
		out = make([]int32, 0, n)
	}
	for s := 0; s < n; s += size {
		e := min(s+size, n)
		i0, o0 := len(idx), len(out)
		for i := s; i < e; i++ {
			idx = append(idx, i)
			if p.logits[i] {
				out = append(out, int32(i-s))
			}
		}
		us = append(us, ubatch{start: s, tokens: p.tokens[s:e], pos: p.pos[s:e], seqs: p.seqs[s:e], groups: 1,
			idx: idx[i0:len(idx):len(idx)], out: out[o0:len(out):len(out)]})
	}
	return us, idx, out
}

// splitEqual cuts p into micro-batches of at most size tokens (and at
// most maxGroup of one sequence) in which
// every sequence present has the same number of tokens, as llama.cpp's
// equal split does for recurrent models and for caches with a stream per
// sequence: each micro-batch takes the next tokens of several sequences,
// as many of each, grouped by sequence in increasing id order. With
// sequential, the sequences of a micro-batch are consecutive ids (a run
// of cache streams). Every token must belong to exactly one sequence,
// else the error says so.
func (p prepared) splitEqual(size, maxGroup int, sequential bool) ([]ubatch, error) {
	var order []int32
	queue := map[int32][]int{}
	for i, ss := range p.seqs {
		if len(ss) != 1 {
			return nil, fmt.Errorf("model: token %d belongs to %d sequences; this model's memory keeps each sequence apart (decode the shared tokens once and copy them with seq_cp)", i, len(ss))
		}
		s := ss[0]
		if _, ok := queue[s]; !ok {
			order = append(order, s)
		}
		queue[s] = append(queue[s], i)
	}
	slices.Sort(order)
	var out []ubatch
	for {
		var act []int32
		for _, s := range order {
			if len(queue[s]) > 0 && (!sequential || len(act) == 0 || s == act[len(act)-1]+1) {
				act = append(act, s)
			} else if sequential && len(act) > 0 {
				break
			}
		}
		if len(act) == 0 {
			return out, nil
		}
		act = act[:min(len(act), size)]
		n := min(size/len(act), maxGroup)
		for _, s := range act {
			n = min(n, len(queue[s]))
		}
		u := ubatch{start: -1, groups: len(act), groupSeq: act}
		for _, s := range act {
			for _, i := range queue[s][:n] {
				if p.logits[i] {
					u.out = append(u.out, int32(len(u.tokens)))
				}
				u.idx = append(u.idx, i)
				u.tokens = append(u.tokens, p.tokens[i])
				u.pos = append(u.pos, p.pos[i])
				u.seqs = append(u.seqs, p.seqs[i])
			}
			queue[s] = queue[s][n:]
		}
		out = append(out, u)
	}
}
