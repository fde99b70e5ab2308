package tokenizer

import (
	"fmt"
	"strings"
)

// TokenType is a token's kind, as stored in tokenizer.ggml.token_type
// (llama.cpp's llama_token_type).
type TokenType int32

// Token types. The values are those GGUF files store.
const (
	TypeUndefined   TokenType = 0 // no type given; treated as normal
	TypeNormal      TokenType = 1 // ordinary text piece
	TypeUnknown     TokenType = 2 // the unknown token, e.g. <unk>
	TypeControl     TokenType = 3 // control token, e.g. <s>, </s>, <|endoftext|>
	TypeUserDefined TokenType = 4 // added piece, always matched as a whole
	TypeUnused      TokenType = 5 // reserved slot, never produced
	TypeByte        TokenType = 6 // byte-fallback token <0xXX>
)

// String returns the type's name.
func (t TokenType) String() string {
	switch t {
	case TypeUndefined:
		return "undefined"
	case TypeNormal:
		return "normal"
	case TypeUnknown:
		return "unknown"
	case TypeControl:
		return "control"
	case TypeUserDefined:
		return "user-defined"
	case TypeUnused:
		return "unused"
	case TypeByte:
		return "byte"
	}
	return fmt.Sprintf("TokenType(%d)", int32(t))
}

// Tokenizer model names, the values of tokenizer.ggml.model.
const (
	ModelSPM = "llama" // SentencePiece-style, score-driven merges
	ModelBPE = "gpt2"  // GPT-2 byte-level BPE, rank-driven merges
)

// PreGPT2 is the tokenizer.ggml.pre value of the GPT-2 pre-tokenizer, the
// only BPE pre-tokenizer this package implements.
const PreGPT2 = "gpt-2"

// Vocab is a tokenizer vocabulary as GGUF metadata describes it.
//
// Tokens holds each token's text, indexed by id. Scores and Types are
// parallel to Tokens; either may be nil, meaning all scores 0 and all types
// normal. Merges (BPE only) holds "left right" pairs, earlier = higher
// priority. BOS, EOS, UNK and PAD are token ids, or -1 when the vocabulary
// has none.
type Vocab struct {
	Model  string // tokenizer.ggml.model: ModelSPM or ModelBPE
	Pre    string // tokenizer.ggml.pre: the pre-tokenizer ("" if absent)
	Tokens []string
	Scores []float32
	Types  []TokenType
	Merges []string

	BOS, EOS, UNK, PAD int32

	AddBOS, AddEOS bool // whether Encode with addSpecial adds BOS / EOS
	// AddSpacePrefix puts a space in front of the text before
	// tokenizing (SPM only; BPE ignores it, as llama.cpp does).
	AddSpacePrefix bool
}

// NumTokens returns the vocabulary size.
func (v *Vocab) NumTokens() int { return len(v.Tokens) }

// Type returns the type of token id, TypeNormal when the vocabulary has no
// types, and TypeUndefined for an id out of range.
func (v *Vocab) Type(id int32) TokenType {
	if id < 0 || int(id) >= len(v.Tokens) {
		return TypeUndefined
	}
	if v.Types == nil {
		return TypeNormal
	}
	return v.Types[id]
}

// Score returns the score of token id (0 without scores or out of range).
func (v *Vocab) Score(id int32) float32 {
	if v.Scores == nil || id < 0 || int(id) >= len(v.Scores) {
		return 0
	}
	return v.Scores[id]
}

// maxTokens bounds the vocabulary size so that ids fit int32 with room.
const maxTokens = 1 << 30

// Validate checks that the vocabulary is consistent: a known model, at
// least one token, Scores and Types as long as Tokens, known token types,
// special ids in range, byte tokens spelled <0xXX> (SPM), and well-formed
// merges (BPE).
func (v *Vocab) Validate() error {
	switch v.Model {
	case ModelSPM, ModelBPE:
	default:
		return fmt.Errorf("tokenizer: unsupported tokenizer model %q (want %q or %q)", v.Model, ModelSPM, ModelBPE)
	}
	n := len(v.Tokens)
	if n == 0 {
		return fmt.Errorf("tokenizer: vocabulary has no tokens")
	}
	if n > maxTokens {
		return fmt.Errorf("tokenizer: vocabulary has %d tokens, more than %d", n, maxTokens)
	}
	if v.Scores != nil && len(v.Scores) != n {
		return fmt.Errorf("tokenizer: %d scores for %d tokens", len(v.Scores), n)
	}
	if v.Types != nil && len(v.Types) != n {
		return fmt.Errorf("tokenizer: %d token types for %d tokens", len(v.Types), n)
	}
	for i, t := range v.Types {
		if t < TypeUndefined || t > TypeByte {
			return fmt.Errorf("tokenizer: token %d (%q) has invalid type %d", i, v.Tokens[i], int32(t))
		}
		if t == TypeByte && v.Model == ModelSPM {
			if _, ok := parseByteToken(v.Tokens[i]); !ok {
				return fmt.Errorf("tokenizer: token %d has type byte but text %q, want <0xXX>", i, v.Tokens[i])
			}
		}
		if t == TypeUserDefined && v.Tokens[i] == "" {
			return fmt.Errorf("tokenizer: user-defined token %d has empty text", i)
		}
	}
	for _, s := range []struct {
		name string
		id   int32
	}{{"BOS", v.BOS}, {"EOS", v.EOS}, {"UNK", v.UNK}, {"PAD", v.PAD}} {
		if s.id < -1 || int64(s.id) >= int64(n) {
			return fmt.Errorf("tokenizer: %s id %d out of range [0, %d)", s.name, s.id, n)
		}
	}
	if v.Model == ModelBPE {
		if v.Pre != PreGPT2 {
			return fmt.Errorf("tokenizer: unsupported BPE pre-tokenizer %q (only %q is implemented)", v.Pre, PreGPT2)
		}
		if len(v.Merges) == 0 {
			return fmt.Errorf("tokenizer: BPE vocabulary has no merges")
		}
		for i, m := range v.Merges {
			if _, _, ok := splitMerge(m); !ok {
				return fmt.Errorf("tokenizer: merge %d (%q) is not two pieces separated by a space", i, m)
			}
		}
	}
	return nil
}

// splitMerge splits a merge rule at its first space after the first byte,
// as llama.cpp does (so a rule may start with a space).
func splitMerge(m string) (left, right string, ok bool) {
	if len(m) < 3 {
		return "", "", false
	}
	i := strings.IndexByte(m[1:], ' ')
	if i < 0 {
		return "", "", false
	}
	i++
	left, right = m[:i], m[i+1:]
	if right == "" {
		return "", "", false
	}
	return left, right, true
}

// parseByteToken parses the text of a byte-fallback token, "<0xXX>" with
// two hex digits of either case.
func parseByteToken(s string) (byte, bool) {
	if len(s) != 6 || s[0] != '<' || s[1] != '0' || s[2] != 'x' || s[5] != '>' {
		return 0, false
	}
	hi, ok1 := hexVal(s[3])
	lo, ok2 := hexVal(s[4])
	if !ok1 || !ok2 {
		return 0, false
	}
	return hi<<4 | lo, true
}

func hexVal(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// byteTokenText returns the text of the byte-fallback token for b, as
// llama.cpp spells it: "<0x" two upper-case hex digits ">".
func byteTokenText(b byte) string {
	const hex = "0123456789ABCDEF"
	return string([]byte{'<', '0', 'x', hex[b>>4], hex[b&15], '>'})
}
