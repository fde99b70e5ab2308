package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// llama-perplexity's base-logits file (--kl-divergence-base), as its
// tools/perplexity/perplexity.cpp writes and reads it; all numbers are
// little-endian:
//
//	header (20 bytes)
//	  0  [8]byte  magic "_logits_"
//	  8  int32    n_ctx
//	 12  int32    n_vocab
//	 16  int32    n_chunk
//	tokens: n_chunk*n_ctx int32, as tokenized (llama-perplexity puts BOS at
//	        each chunk's start when it evaluates, not in the file)
//	records: for each chunk, for each scored position p = n_ctx/2 ..
//	         n_ctx-2, 2*((n_vocab+1)/2) + 4 uint16s:
//	  0  float32  scale = (max logit - min logit)/65535
//	  4  float32  min_lp = min logit - max logit - log-sum-exp
//	  8  [n_vocab]uint16 codes, then one zero uint16 when n_vocab is odd
//
// where min logit is raised to max logit - 16 when lower. Token i's
// log-probability is scale*code_i + min_lp (in float32); code 0 stands for
// a logit at or below min logit. llama-perplexity's KL divergence sums
// exp(lp) * (lp - log q) over the tokens with lp > -16, with no
// renormalization, and reads the base's top token as the first with the
// largest lp; llamaKLD and readLlamaRecord do the same, so that a model
// measured here against its file gives llama-perplexity's numbers.
const (
	llamaMagic      = "_logits_"
	llamaHeaderSize = 20
	llamaRange      = 16 // nats below the maximum logit the codes cover
	llamaFloor      = -16
)

// llamaRecordLen returns the uint16s of one record for nVocab tokens.
func llamaRecordLen(nVocab int) int { return 2*((nVocab+1)/2) + 4 }

// parseLlamaHeader reads and checks llama-perplexity's header; size is the
// file's size, which must be exactly what the header implies.
func parseLlamaHeader(b []byte, size int64) (kldHeader, error) {
	var h kldHeader
	if len(b) < llamaHeaderSize {
		return h, fmt.Errorf("llama-perplexity logits file of %d bytes is shorter than its %d-byte header", len(b), llamaHeaderSize)
	}
	le := binary.LittleEndian
	nc, nv, nch := int32(le.Uint32(b[8:])), int32(le.Uint32(b[12:])), int32(le.Uint32(b[16:]))
	switch {
	case nc < minCtx || nc > maxKLDCtx:
		return h, fmt.Errorf("llama-perplexity logits file: n_ctx %d is outside [%d, %d]", nc, minCtx, maxKLDCtx)
	case nv < 2 || nv > maxKLDVocab:
		return h, fmt.Errorf("llama-perplexity logits file: n_vocab %d is outside [2, %d]", nv, maxKLDVocab)
	case nch < 1:
		return h, fmt.Errorf("llama-perplexity logits file: n_chunk is %d", nch)
	}
	h = kldHeader{NVocab: int(nv), NCtx: int(nc), NChunks: int(nch), First: int(nc) / 2, Llama: true}
	want, err := h.fileSize()
	if err != nil {
		return h, err
	}
	if size != want {
		return h, fmt.Errorf("llama-perplexity logits file is %d bytes but its header (n_ctx %d, n_vocab %d, n_chunk %d) implies %d: truncated or corrupt", size, h.NCtx, h.NVocab, h.NChunks, want)
	}
	return h, nil
}

// writeLlamaHeader writes llama-perplexity's header for h.
func writeLlamaHeader(w io.Writer, h kldHeader) error {
	var b [llamaHeaderSize]byte
	copy(b[:8], llamaMagic)
	le := binary.LittleEndian
	le.PutUint32(b[8:], uint32(h.NCtx))
	le.PutUint32(b[12:], uint32(h.NVocab))
	le.PutUint32(b[16:], uint32(h.NChunks))
	_, err := w.Write(b[:])
	return err
}

// expf is C's expf as glibc computes it for the arguments here: the
// float32 rounding of the exact exponential.
func expf(x float32) float32 { return float32(math.Exp(float64(x))) }

// nearestInt rounds f to the nearest integer, ties to even, as
// llama-perplexity's nearest_int does for the magnitudes it gives it.
func nearestInt(f float32) int {
	v := f + 12582912
	return int(int32(math.Float32bits(v))&0x007fffff - 0x00400000)
}

// llamaLogProbs fills r with llama-perplexity's record of logits, in its
// float32 arithmetic: the scale, min_lp and codes its log_softmax stores.
func llamaLogProbs(r *kldRecord, logits []float32) {
	maxL, minL := logits[0], logits[0]
	for _, l := range logits[1:] {
		maxL, minL = max(maxL, l), min(minL, l)
	}
	minL = max(minL, maxL-llamaRange)
	var sumExp float64
	for _, l := range logits {
		sumExp += float64(expf(l - maxL))
	}
	lse := float32(math.Log(sumExp))
	r.Llama = true
	r.Scale = (maxL - minL) / 65535
	r.Lo = (minL - maxL) - lse
	r.Codes = r.Codes[:0]
	var inv float32
	if r.Scale != 0 {
		inv = 1 / r.Scale
	}
	for _, l := range logits {
		var code uint16
		if r.Scale != 0 && l > minL {
			code = uint16(nearestInt(float32(inv * (l - minL))))
		}
		r.Codes = append(r.Codes, code)
	}
}

// writeLlamaRecord writes r (from llamaLogProbs), using buf (recordSize
// bytes) as scratch.
func writeLlamaRecord(w io.Writer, buf []byte, r *kldRecord) error {
	le := binary.LittleEndian
	le.PutUint32(buf[0:], math.Float32bits(r.Scale))
	le.PutUint32(buf[4:], math.Float32bits(r.Lo))
	for i, c := range r.Codes {
		le.PutUint16(buf[8+2*i:], c)
	}
	clear(buf[8+2*len(r.Codes):])
	_, err := w.Write(buf)
	return err
}

// llamaLogProb returns token i's log-probability in a llama-perplexity
// record, computed as llama-perplexity does (float32).
func (r *kldRecord) llamaLogProb(i int) float32 {
	return float32(r.Scale*float32(r.Codes[i])) + r.Lo
}

// readLlamaRecord reads the next record of llama-perplexity's file with
// nVocab tokens into r, using buf (recordSize bytes) as scratch, checks
// its values, and derives what kernbench's records store: the
// log-probability of target, the token at the next position, and the
// most probable token.
func readLlamaRecord(rd io.Reader, buf []byte, nVocab, target int, r *kldRecord) error {
	if _, err := io.ReadFull(rd, buf); err != nil {
		return err
	}
	le := binary.LittleEndian
	r.Llama = true
	r.Scale = math.Float32frombits(le.Uint32(buf[0:]))
	r.Lo = math.Float32frombits(le.Uint32(buf[4:]))
	finite := func(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }
	if !finite(r.Scale) || r.Scale < 0 || !finite(r.Lo) || r.Lo > 0 {
		return fmt.Errorf("record has a bad scale %v or minimum log-probability %v", r.Scale, r.Lo)
	}
	if cap(r.Codes) < nVocab {
		r.Codes = make([]uint16, nVocab)
	}
	r.Codes = r.Codes[:nVocab]
	var best float32
	for i := range r.Codes {
		r.Codes[i] = le.Uint16(buf[8+2*i:])
		if lp := r.llamaLogProb(i); i == 0 || lp > best {
			best, r.Argmax = lp, int32(i)
		}
	}
	if best > 0.01 {
		// The largest log-probability is 0 up to rounding; more than
		// that means codes beyond the 16-nat range its scale covers.
		return fmt.Errorf("record's largest log-probability is %v, above 0", best)
	}
	r.TargetLP = r.llamaLogProb(target)
	return nil
}

// llamaKLD returns llama-perplexity's KL divergence of the model's
// distribution (logits with log-sum-exp lse) from the base in rec:
// sum over the tokens with base log-probability lp > -16 of
// exp(lp) * (lp - log q).
func llamaKLD(rec *kldRecord, logits []float32, lse float64) float64 {
	var sum float64
	for i := range rec.Codes {
		lp := rec.llamaLogProb(i)
		if lp > llamaFloor {
			sum += float64(expf(lp)) * (float64(lp) - (float64(logits[i]) - lse))
		}
	}
	return sum
}
