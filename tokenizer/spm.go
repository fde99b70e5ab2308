package tokenizer

import (
	"fmt"
	"math"
	"strings"
)

// spaceEscape is the character SentencePiece writes for a space.
const spaceEscape = "\u2581"

// spm is the SentencePiece-style tokenizer (tokenizer.ggml.model "llama"),
// the algorithm of llama.cpp's llm_tokenizer_spm.
type spm struct {
	base
	// byteTok is the byte-fallback token of each byte: "<0xXX>", else the
	// one-byte text itself, else UNK; -1 when there is none.
	byteTok [256]int32
}

func newSPM(v *Vocab) (*spm, error) {
	t := &spm{base: newBase(v)}
	for i := range t.byteTok {
		t.byteTok[i] = -1
	}
	var single [256]int32
	for i := range single {
		single[i] = -1
	}
	for i, s := range v.Tokens {
		switch len(s) {
		case 6:
			if c, ok := parseByteToken(s); ok && s == byteTokenText(c) {
				t.byteTok[c] = int32(i)
			}
		case 1:
			single[s[0]] = int32(i)
		}
	}
	for c := range t.byteTok {
		if t.byteTok[c] < 0 {
			t.byteTok[c] = single[c]
		}
		if t.byteTok[c] < 0 {
			t.byteTok[c] = v.UNK
		}
	}
	return t, nil
}

// Encode implements Tokenizer.
func (t *spm) Encode(text string, addSpecial bool) ([]int32, error) {
	return t.encode(text, addSpecial, t.tokenize)
}

// spmSymbol is a piece of the escaped text, a node of a linked list; n == 0
// marks a symbol merged into its left neighbour.
type spmSymbol struct {
	start, n   int32
	prev, next int32
}

// utf8SeqLen is the length of a UTF-8 sequence by its first byte, as
// llama.cpp's unicode_len_utf8 reads it: 1 for ASCII and stray
// continuation bytes, 2, 3 or 4 by the high bits otherwise.
func utf8SeqLen(c byte) int {
	switch c >> 4 {
	case 0xC, 0xD:
		return 2
	case 0xE:
		return 3
	case 0xF:
		return 4
	}
	return 1
}

// tokenize appends the tokens of one raw fragment.
//
// The fragment gets a leading space when the vocabulary asks for it and the
// fragment starts the text or follows a user-defined token, spaces become
// "▁", and the text is cut into UTF-8 characters. Then, repeatedly, the
// adjacent pair whose concatenation is a token of highest score (leftmost
// on ties) is merged, until no adjacent pair forms a token. Each final
// piece is its token, or, when a single character is not a token, the
// byte-fallback tokens of its bytes.
//
// llama.cpp also keeps a map from merged text to the pair it came from, to
// split a final piece that is not a token. A merged piece is always a token
// (a pair is only merged when its text is one), so that path is never
// taken and is left out here.
func (t *spm) tokenize(dst []int32, text string, afterSpecial bool) ([]int32, error) {
	if t.v.AddSpacePrefix && afterSpecial {
		text = " " + text
	}
	text = strings.ReplaceAll(text, " ", spaceEscape)
	if len(text) > math.MaxInt32-8 {
		return nil, fmt.Errorf("tokenizer: text of %d bytes is too long", len(text))
	}

	syms := make([]spmSymbol, 0, len(text))
	for off := 0; off < len(text); {
		n := min(utf8SeqLen(text[off]), len(text)-off)
		k := int32(len(syms))
		syms = append(syms, spmSymbol{start: int32(off), n: int32(n), prev: k - 1, next: k + 1})
		off += n
	}
	if len(syms) == 0 {
		return dst, nil
	}
	syms[len(syms)-1].next = -1

	q := mergeQueue{a: make([]bigram, 0, len(syms))}
	tryAdd := func(l, r int32) {
		if l < 0 || r < 0 {
			return
		}
		s := text[syms[l].start : syms[r].start+syms[r].n]
		id, ok := t.match[s]
		if !ok {
			return
		}
		q.push(bigram{key: spmKey(t.v.Score(id), l), right: r, size: int32(len(s))})
	}
	for i := 1; i < len(syms); i++ {
		tryAdd(int32(i-1), int32(i))
	}

	for q.len() > 0 {
		b := q.pop()
		left := b.left()
		l, r := &syms[left], &syms[b.right]
		// A bigram is stale once either side has changed: merged away
		// (n == 0) or grown by another merge (size no longer adds up).
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = left
		}
		tryAdd(l.prev, left)
		tryAdd(left, l.next)
	}

	for i := int32(0); i != -1; i = syms[i].next {
		s := syms[i]
		piece := text[s.start : s.start+s.n]
		if id, ok := t.match[piece]; ok {
			dst = append(dst, id)
			continue
		}
		for j := 0; j < len(piece); j++ {
			id := t.byteTok[piece[j]]
			if id < 0 {
				return nil, fmt.Errorf("tokenizer: no byte-fallback or unknown token for byte 0x%02X", piece[j])
			}
			dst = append(dst, id)
		}
	}
	return dst, nil
}

// Decode implements Tokenizer. With AddSpacePrefix, the leading space of
// the first token that produces text is dropped.
func (t *spm) Decode(ids []int32) (string, error) {
	var out []byte
	strip := t.v.AddSpacePrefix
	for _, id := range ids {
		n := len(out)
		var err error
		if out, err = t.appendPiece(out, id); err != nil {
			return "", err
		}
		if strip && len(out) > n {
			if out[n] == ' ' {
				out = append(out[:n], out[n+1:]...)
			}
			strip = false
		}
	}
	return string(out), nil
}

// appendPiece appends the decoded bytes of one token.
func (t *spm) appendPiece(dst []byte, id int32) ([]byte, error) {
	return t.base.appendPiece(dst, id, unescapeSpaces)
}

// unescapeSpaces appends text with every "▁" turned into a space.
func unescapeSpaces(dst []byte, text string) []byte {
	for {
		i := strings.Index(text, spaceEscape)
		if i < 0 {
			return append(dst, text...)
		}
		dst = append(dst, text[:i]...)
		dst = append(dst, ' ')
		text = text[i+len(spaceEscape):]
	}
}
