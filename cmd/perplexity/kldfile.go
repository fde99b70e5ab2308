package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/bits"
)

// The KLD base file format is documented in the package comment (doc.go).
const (
	kldMagic      = "KBLOGPRB"
	kldVersion    = 1
	kldHeaderSize = 40
	kldRecordHead = 16 // bytes before the codes of a record

	kldRange = 32.0  // nats below the maximum that codes cover
	kldCodes = 65534 // steps between code 1 and code 65535

	maxKLDVocab = 1 << 24
	maxKLDCtx   = 1 << 24
)

// kldHeader is the header of a KLD base file, of either format.
type kldHeader struct {
	NVocab, NCtx, NChunks, First int
	VocabHash                    uint64 // kernbench's format only
	// Llama marks llama-perplexity's format (llamakld.go).
	Llama bool
}

// scored returns the scored positions per chunk.
func (h kldHeader) scored() int { return h.NCtx - 1 - h.First }

// recordSize returns the bytes of one position's record.
func (h kldHeader) recordSize() int {
	if h.Llama {
		return 2 * llamaRecordLen(h.NVocab)
	}
	return kldRecordHead + 2*h.NVocab
}

// headerSize returns the bytes of the header.
func (h kldHeader) headerSize() int {
	if h.Llama {
		return llamaHeaderSize
	}
	return kldHeaderSize
}

// fileSize returns the size a file with header h must have, or an error
// when it overflows an int64.
func (h kldHeader) fileSize() (int64, error) {
	mul := func(a, b uint64) (uint64, bool) {
		hi, lo := bits.Mul64(a, b)
		return lo, hi == 0 && lo <= math.MaxInt64
	}
	tok, ok1 := mul(uint64(h.NChunks), uint64(h.NCtx)*4)
	pos, ok2 := mul(uint64(h.NChunks), uint64(h.scored()))
	rec, ok3 := mul(pos, uint64(h.recordSize()))
	total := uint64(h.headerSize()) + tok + rec
	if !ok1 || !ok2 || !ok3 || total > math.MaxInt64 || total < rec {
		return 0, errors.New("the sizes in the header overflow")
	}
	return int64(total), nil
}

// vocabHash returns the FNV-1a 64 hash of the token texts, each followed by
// a zero byte.
func vocabHash(tokens []string) uint64 {
	h := fnv.New64a()
	for _, t := range tokens {
		io.WriteString(h, t)
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// write writes the header.
func (h kldHeader) write(w io.Writer) error {
	var b [kldHeaderSize]byte
	copy(b[:8], kldMagic)
	le := binary.LittleEndian
	le.PutUint32(b[8:], kldVersion)
	le.PutUint32(b[12:], uint32(h.NVocab))
	le.PutUint32(b[16:], uint32(h.NCtx))
	le.PutUint32(b[20:], uint32(h.NChunks))
	le.PutUint32(b[24:], uint32(h.First))
	le.PutUint64(b[32:], h.VocabHash)
	_, err := w.Write(b[:])
	return err
}

// parseKLDHeader reads and checks a header. size is the file's size, which
// must be exactly what the header implies; the error names the field at
// fault.
func parseKLDHeader(b []byte, size int64) (kldHeader, error) {
	var h kldHeader
	if len(b) < kldHeaderSize {
		return h, fmt.Errorf("file of %d bytes is shorter than the %d-byte header", len(b), kldHeaderSize)
	}
	if string(b[:8]) != kldMagic {
		return h, fmt.Errorf("not a KLD base file: magic %q is neither kernbench's %q nor llama-perplexity's %q", b[:8], kldMagic, llamaMagic)
	}
	le := binary.LittleEndian
	if v := le.Uint32(b[8:]); v != kldVersion {
		return h, fmt.Errorf("KLD file version %d is not supported (want %d)", v, kldVersion)
	}
	nv, nc, nch, first := le.Uint32(b[12:]), le.Uint32(b[16:]), le.Uint32(b[20:]), le.Uint32(b[24:])
	switch {
	case nv < 2 || nv > maxKLDVocab:
		return h, fmt.Errorf("header: n_vocab %d is outside [2, %d]", nv, maxKLDVocab)
	case nc < minCtx || nc > maxKLDCtx:
		return h, fmt.Errorf("header: n_ctx %d is outside [%d, %d]", nc, minCtx, maxKLDCtx)
	case nch < 1:
		return h, fmt.Errorf("header: n_chunks is 0")
	case first != nc/2:
		return h, fmt.Errorf("header: first scored position %d is not n_ctx/2 = %d", first, nc/2)
	case le.Uint32(b[28:]) != 0:
		return h, fmt.Errorf("header: reserved field is %d, not 0", le.Uint32(b[28:]))
	}
	h = kldHeader{NVocab: int(nv), NCtx: int(nc), NChunks: int(nch), First: int(first), VocabHash: le.Uint64(b[32:])}
	want, err := h.fileSize()
	if err != nil {
		return h, err
	}
	if size != want {
		return h, fmt.Errorf("file is %d bytes but its header (n_vocab %d, n_ctx %d, n_chunks %d) implies %d: truncated or corrupt", size, h.NVocab, h.NCtx, h.NChunks, want)
	}
	return h, nil
}

// A kldRecord is one scored position's base distribution.
type kldRecord struct {
	Scale, Lo float32
	TargetLP  float32
	Argmax    int32
	Codes     []uint16
	// Llama marks a record of llama-perplexity's format, whose codes
	// read differently (see llamaLogProb).
	Llama bool
}

// LogProb returns the base log-probability of token i, and false for a
// token below the floor (probability 0).
func (r *kldRecord) LogProb(i int) (float64, bool) {
	if r.Llama {
		return float64(r.llamaLogProb(i)), true
	}
	c := r.Codes[i]
	if c == 0 {
		return 0, false
	}
	return float64(r.Lo) + float64(r.Scale)*float64(c-1), true
}

// quantizeLogProbs fills r from logits whose log-sum-exp is lse and whose
// most probable token is argmax, with the exact log-probability of target.
func quantizeLogProbs(r *kldRecord, logits []float32, lse float64, argmax, target int) {
	maxLP := float64(logits[argmax]) - lse
	minLP := maxLP
	for _, l := range logits {
		minLP = min(minLP, float64(l)-lse)
	}
	lo := max(minLP, maxLP-kldRange)
	r.Lo = float32(lo)
	r.Scale = float32((maxLP - float64(r.Lo)) / kldCodes)
	r.TargetLP = float32(float64(logits[target]) - lse)
	r.Argmax = int32(argmax)
	r.Llama = false
	r.Codes = r.Codes[:0]
	lo32, sc := float64(r.Lo), float64(r.Scale)
	for _, l := range logits {
		lp := float64(l) - lse
		var code uint16
		switch {
		case sc == 0:
			code = 1 // a flat distribution: every token at lo
		case lp < lo32-sc/2:
			code = 0 // below the floor
		default:
			k := math.Round((lp-lo32)/sc) + 1
			code = uint16(min(max(k, 1), 65535))
		}
		r.Codes = append(r.Codes, code)
	}
}

// writeRecord writes r, using buf (recordSize bytes) as scratch.
func writeRecord(w io.Writer, buf []byte, r *kldRecord) error {
	le := binary.LittleEndian
	le.PutUint32(buf[0:], math.Float32bits(r.Scale))
	le.PutUint32(buf[4:], math.Float32bits(r.Lo))
	le.PutUint32(buf[8:], math.Float32bits(r.TargetLP))
	le.PutUint32(buf[12:], uint32(r.Argmax))
	for i, c := range r.Codes {
		le.PutUint16(buf[kldRecordHead+2*i:], c)
	}
	_, err := w.Write(buf[:kldRecordHead+2*len(r.Codes)])
	return err
}

// readRecord reads the next record of a file with nVocab tokens into r,
// using buf (recordSize bytes) as scratch, and checks its values.
func readRecord(rd io.Reader, buf []byte, nVocab int, r *kldRecord) error {
	if _, err := io.ReadFull(rd, buf); err != nil {
		return err
	}
	le := binary.LittleEndian
	r.Llama = false
	r.Scale = math.Float32frombits(le.Uint32(buf[0:]))
	r.Lo = math.Float32frombits(le.Uint32(buf[4:]))
	r.TargetLP = math.Float32frombits(le.Uint32(buf[8:]))
	r.Argmax = int32(le.Uint32(buf[12:]))
	finite := func(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }
	switch {
	case !finite(r.Scale) || r.Scale < 0 || !finite(r.Lo) || r.Lo > 0:
		return fmt.Errorf("record has a bad scale %v or floor %v", r.Scale, r.Lo)
	case !finite(r.TargetLP) || r.TargetLP > 0:
		return fmt.Errorf("record has a bad target log-probability %v", r.TargetLP)
	case r.Argmax < 0 || int(r.Argmax) >= nVocab:
		return fmt.Errorf("record's most probable token %d is outside the vocabulary of %d", r.Argmax, nVocab)
	}
	if cap(r.Codes) < nVocab {
		r.Codes = make([]uint16, nVocab)
	}
	r.Codes = r.Codes[:nVocab]
	for i := range r.Codes {
		r.Codes[i] = le.Uint16(buf[kldRecordHead+2*i:])
	}
	return nil
}
