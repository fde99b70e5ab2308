package tokenizer

import (
	"fmt"
	"sort"
	"strings"
)

// Tokenizer encodes text to token ids and decodes ids to text.
type Tokenizer interface {
	// Encode tokenizes text. With addSpecial it adds BOS in front and EOS
	// at the end where the vocabulary's AddBOS and AddEOS say so. Text is
	// never parsed for control tokens: "<s>" is tokenized as plain text.
	Encode(text string, addSpecial bool) ([]int32, error)
	// Decode turns ids back into text; see the package doc for the rules.
	// An id outside the vocabulary is an error.
	Decode(ids []int32) (string, error)
	// TokenText returns the vocabulary text of id as stored (with "▁" or
	// byte-mapped characters), or "" for an id out of range.
	TokenText(id int32) string
	// Vocab returns the vocabulary the tokenizer was built from. It must
	// not be modified.
	Vocab() *Vocab
}

// New builds the tokenizer for v.Model: ModelSPM or ModelBPE. An unknown
// model or an inconsistent vocabulary is an error. The tokenizer keeps v,
// which must not change afterwards; it is safe for concurrent use.
func New(v *Vocab) (Tokenizer, error) {
	if v == nil {
		return nil, fmt.Errorf("tokenizer: nil vocabulary")
	}
	if err := v.Validate(); err != nil {
		return nil, err
	}
	switch v.Model {
	case ModelSPM:
		return newSPM(v)
	case ModelBPE:
		return newBPE(v)
	}
	return nil, fmt.Errorf("tokenizer: unsupported tokenizer model %q", v.Model)
}

// base holds what both models share: lookup tables, user-defined token
// splitting and the special-token handling of Encode and Decode.
type base struct {
	v *Vocab
	// match maps text to the token that plain text may produce: normal,
	// undefined and user-defined tokens. With duplicate texts the highest
	// id wins, as in llama.cpp's token_to_id.
	match map[string]int32
	// userDefined lists the user-defined tokens, longest text first (ties:
	// lower id first); their text is cut out of the input before
	// tokenizing, as llama.cpp's tokenizer_st_partition does.
	userDefined []int32
}

func newBase(v *Vocab) base {
	b := base{v: v, match: make(map[string]int32, len(v.Tokens))}
	for i, s := range v.Tokens {
		switch v.Type(int32(i)) {
		case TypeNormal, TypeUndefined, TypeUserDefined:
			b.match[s] = int32(i)
		}
		if v.Type(int32(i)) == TypeUserDefined {
			b.userDefined = append(b.userDefined, int32(i))
		}
	}
	sort.SliceStable(b.userDefined, func(i, j int) bool {
		return len(v.Tokens[b.userDefined[i]]) > len(v.Tokens[b.userDefined[j]])
	})
	return b
}

// Vocab implements Tokenizer.
func (b *base) Vocab() *Vocab { return b.v }

// TokenText implements Tokenizer.
func (b *base) TokenText(id int32) string {
	if id < 0 || int(id) >= len(b.v.Tokens) {
		return ""
	}
	return b.v.Tokens[id]
}

// fragment is a piece of the input: raw text to tokenize, or (tok >= 0) a
// user-defined token cut out of it.
type fragment struct {
	text string
	tok  int32
}

// partition cuts the user-defined tokens out of text. Each token, longest
// first, splits every remaining raw fragment at each of its occurrences
// (leftmost first, not overlapping).
func (b *base) partition(text string) []fragment {
	frags := []fragment{{text: text, tok: -1}}
	for _, id := range b.userDefined {
		tt := b.v.Tokens[id]
		if !strings.Contains(text, tt) {
			continue
		}
		var out []fragment
		for _, f := range frags {
			if f.tok >= 0 {
				out = append(out, f)
				continue
			}
			s := f.text
			for {
				i := strings.Index(s, tt)
				if i < 0 {
					break
				}
				if i > 0 {
					out = append(out, fragment{text: s[:i], tok: -1})
				}
				out = append(out, fragment{tok: id})
				s = s[i+len(tt):]
			}
			if s != "" {
				out = append(out, fragment{text: s, tok: -1})
			}
		}
		frags = out
	}
	return frags
}

// encode runs the shared Encode frame: BOS, then each fragment (raw text
// through enc, user-defined tokens as they are), then EOS. enc gets
// whether the previous fragment was a token (or the start of the text),
// which decides the SPM space prefix.
func (b *base) encode(text string, addSpecial bool, enc func(dst []int32, s string, afterSpecial bool) ([]int32, error)) ([]int32, error) {
	var out []int32
	if addSpecial && b.v.AddBOS {
		if b.v.BOS < 0 {
			return nil, fmt.Errorf("tokenizer: vocabulary asks to add BOS but has no bos_token_id")
		}
		out = append(out, b.v.BOS)
	}
	if text != "" {
		afterSpecial := true
		for _, f := range b.partition(text) {
			if f.tok >= 0 {
				out = append(out, f.tok)
				afterSpecial = true
				continue
			}
			var err error
			if out, err = enc(out, f.text, afterSpecial); err != nil {
				return nil, err
			}
			afterSpecial = false
		}
	}
	if addSpecial && b.v.AddEOS {
		if b.v.EOS < 0 {
			return nil, fmt.Errorf("tokenizer: vocabulary asks to add EOS but has no eos_token_id")
		}
		out = append(out, b.v.EOS)
	}
	return out, nil
}

// appendPiece appends the decoded bytes of one token, using normal to
// decode normal tokens.
func (b *base) appendPiece(dst []byte, id int32, normal func(dst []byte, text string) []byte) ([]byte, error) {
	if id < 0 || int(id) >= len(b.v.Tokens) {
		return dst, fmt.Errorf("tokenizer: token id %d out of range [0, %d)", id, len(b.v.Tokens))
	}
	text := b.v.Tokens[id]
	switch b.v.Type(id) {
	case TypeControl, TypeUnknown, TypeUnused:
		return dst, nil
	case TypeUserDefined:
		return append(dst, text...), nil
	case TypeByte:
		if c, ok := parseByteToken(text); ok {
			return append(dst, c), nil
		}
	}
	return normal(dst, text), nil
}
