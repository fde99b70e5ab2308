package tokenizer

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// byteToRune is GPT-2's byte-to-unicode table: the printable bytes '!'-'~',
// '¡'-'¬' and '®'-'ÿ' stand for themselves, the other 68 bytes, in order,
// for U+0100, U+0101, ... U+0143.
var byteToRune [256]rune

// runeToByte inverts byteToRune: runeToByte[r] = b+1 for r < 0x144, 0 for
// a rune that stands for no byte.
var runeToByte [0x144]uint16

func init() {
	next := rune(0x100)
	for b := 0; b < 256; b++ {
		printable := ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF)
		if printable {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = next
			next++
		}
		runeToByte[byteToRune[b]] = uint16(b) + 1
	}
}

// bpe is GPT-2 byte-level BPE (tokenizer.ggml.model "gpt2"), the algorithm
// of llama.cpp's llm_tokenizer_bpe with the "gpt-2" pre-tokenizer.
type bpe struct {
	base
	// ranks maps a merge rule "left right" to its rank, its index in
	// Merges (the first of duplicates wins).
	ranks map[string]int32
}

func newBPE(v *Vocab) (*bpe, error) {
	if len(v.Merges) > math.MaxInt32 {
		return nil, fmt.Errorf("tokenizer: %d merges, too many", len(v.Merges))
	}
	t := &bpe{base: newBase(v), ranks: make(map[string]int32, len(v.Merges))}
	for i, m := range v.Merges {
		if _, ok := t.ranks[m]; !ok {
			t.ranks[m] = int32(i)
		}
	}
	return t, nil
}

// Encode implements Tokenizer.
func (t *bpe) Encode(text string, addSpecial bool) ([]int32, error) {
	return t.encode(text, addSpecial, t.tokenize)
}

// bpeSymbol is one piece of a word in the byte-mapped alphabet, a node of
// a linked list; n == 0 marks a symbol merged into its left neighbour.
type bpeSymbol struct {
	start, n   int32
	prev, next int32
}

// tokenize appends the tokens of one raw fragment: it is split by the
// GPT-2 pre-tokenizer, each piece's bytes are mapped through byteToRune,
// and in each piece the adjacent pair of symbols with the lowest-ranked
// merge rule (leftmost on ties) is merged until no rule applies. Each final
// symbol is its token; a symbol that is not a token (a merge rule whose
// result is missing from the vocabulary) is written one byte-character
// token at a time, or as UNK where even that is missing.
func (t *bpe) tokenize(dst []int32, text string, _ bool) ([]int32, error) {
	if len(text) > (math.MaxInt32-8)/2 {
		return nil, fmt.Errorf("tokenizer: text of %d bytes is too long", len(text))
	}
	var (
		word []byte
		syms []bpeSymbol
		key  []byte
	)
	var q mergeQueue
	for _, piece := range splitGPT2(text) {
		word = word[:0]
		syms = syms[:0]
		for i := 0; i < len(piece); i++ {
			start := len(word)
			word = utf8.AppendRune(word, byteToRune[piece[i]])
			k := int32(len(syms))
			syms = append(syms, bpeSymbol{start: int32(start), n: int32(len(word) - start), prev: k - 1, next: k + 1})
		}
		if len(syms) == 0 {
			continue
		}
		syms[len(syms)-1].next = -1

		q.reset()
		tryAdd := func(l, r int32) {
			if l < 0 || r < 0 {
				return
			}
			ls, rs := syms[l], syms[r]
			key = append(key[:0], word[ls.start:ls.start+ls.n]...)
			key = append(key, ' ')
			key = append(key, word[rs.start:rs.start+rs.n]...)
			rank, ok := t.ranks[string(key)]
			if !ok {
				return
			}
			q.push(bigram{key: bpeKey(rank, l), right: r, size: ls.n + rs.n})
		}
		for i := 1; i < len(syms); i++ {
			tryAdd(int32(i-1), int32(i))
		}
		for q.len() > 0 {
			b := q.pop()
			left := b.left()
			l, r := &syms[left], &syms[b.right]
			if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
				continue // stale: a side was merged away or has grown
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
			sym := word[s.start : s.start+s.n]
			if id, ok := t.match[string(sym)]; ok {
				dst = append(dst, id)
				continue
			}
			for len(sym) > 0 {
				_, n := utf8.DecodeRune(sym)
				id, ok := t.match[string(sym[:n])]
				if !ok {
					id = t.v.UNK
				}
				if id < 0 {
					return nil, fmt.Errorf("tokenizer: no token for byte character %q and no unknown token", sym[:n])
				}
				dst = append(dst, id)
				sym = sym[n:]
			}
		}
	}
	return dst, nil
}

// Decode implements Tokenizer.
func (t *bpe) Decode(ids []int32) (string, error) {
	var out []byte
	for _, id := range ids {
		var err error
		if out, err = t.appendPiece(out, id); err != nil {
			return "", err
		}
	}
	return string(out), nil
}

// appendPiece appends the decoded bytes of one token.
func (t *bpe) appendPiece(dst []byte, id int32) ([]byte, error) {
	return t.base.appendPiece(dst, id, unmapBytes)
}

// unmapBytes appends the bytes that a byte-mapped token text stands for.
// A character outside the byte-to-unicode table is copied as UTF-8.
func unmapBytes(dst []byte, text string) []byte {
	for _, r := range text {
		if r >= 0 && int(r) < len(runeToByte) && runeToByte[r] != 0 {
			dst = append(dst, byte(runeToByte[r]-1))
			continue
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}
