package tokenizer

import (
	"fmt"
	"math"

	"github.com/kernbench/kernbench/gguf"
)

// GGUF metadata keys of the tokenizer.
const (
	KeyModel          = "tokenizer.ggml.model"
	KeyPre            = "tokenizer.ggml.pre"
	KeyTokens         = "tokenizer.ggml.tokens"
	KeyScores         = "tokenizer.ggml.scores"
	KeyTokenType      = "tokenizer.ggml.token_type"
	KeyMerges         = "tokenizer.ggml.merges"
	KeyBOS            = "tokenizer.ggml.bos_token_id"
	KeyEOS            = "tokenizer.ggml.eos_token_id"
	KeyUNK            = "tokenizer.ggml.unknown_token_id"
	KeyPAD            = "tokenizer.ggml.padding_token_id"
	KeyAddBOS         = "tokenizer.ggml.add_bos_token"
	KeyAddEOS         = "tokenizer.ggml.add_eos_token"
	KeyAddSpacePrefix = "tokenizer.ggml.add_space_prefix"
)

// VocabFromGGUF reads the tokenizer vocabulary from f's metadata and
// checks it (Vocab.Validate).
//
// Required: tokenizer.ggml.model and tokenizer.ggml.tokens, and for "gpt2"
// tokenizer.ggml.merges. Optional: pre (default ""), scores (default all
// 0), token_type (default all normal), the special token ids (default -1;
// a negative id or the all-ones uint32/uint64 value also means none), and
// the flags, whose defaults are llama.cpp's: for "llama" add_bos_token
// true, add_eos_token false, add_space_prefix true; for "gpt2" all false.
// A key of the wrong type, an array whose length differs from the token
// count, or a special id past the end of the vocabulary is an error.
func VocabFromGGUF(f *gguf.File) (*Vocab, error) {
	if f == nil {
		return nil, fmt.Errorf("tokenizer: nil GGUF file")
	}
	v := &Vocab{BOS: -1, EOS: -1, UNK: -1, PAD: -1}
	var err error
	if v.Model, err = f.String(KeyModel); err != nil {
		return nil, fmt.Errorf("tokenizer: reading the model name: %w", err)
	}
	switch v.Model {
	case ModelSPM:
		v.AddBOS, v.AddSpacePrefix = true, true
	case ModelBPE:
	default:
		return nil, fmt.Errorf("tokenizer: %s: unsupported tokenizer model %q (want %q or %q)", KeyModel, v.Model, ModelSPM, ModelBPE)
	}
	if _, ok := f.Get(KeyPre); ok {
		if v.Pre, err = f.String(KeyPre); err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
	}
	if v.Tokens, err = f.Strings(KeyTokens); err != nil {
		return nil, fmt.Errorf("tokenizer: reading the tokens: %w", err)
	}
	n := len(v.Tokens)
	if n == 0 {
		return nil, fmt.Errorf("tokenizer: %s has no tokens", KeyTokens)
	}
	if _, ok := f.Get(KeyScores); ok {
		if v.Scores, err = f.Float32s(KeyScores); err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		if len(v.Scores) != n {
			return nil, fmt.Errorf("tokenizer: %s has %d entries for %d tokens", KeyScores, len(v.Scores), n)
		}
	}
	if _, ok := f.Get(KeyTokenType); ok {
		types, err := f.Int32s(KeyTokenType)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		if len(types) != n {
			return nil, fmt.Errorf("tokenizer: %s has %d entries for %d tokens", KeyTokenType, len(types), n)
		}
		v.Types = make([]TokenType, n)
		for i, t := range types {
			v.Types[i] = TokenType(t)
		}
	}
	if _, ok := f.Get(KeyMerges); ok || v.Model == ModelBPE {
		if v.Merges, err = f.Strings(KeyMerges); err != nil {
			return nil, fmt.Errorf("tokenizer: reading the merges: %w", err)
		}
	}
	for _, s := range []struct {
		key string
		dst *int32
	}{{KeyBOS, &v.BOS}, {KeyEOS, &v.EOS}, {KeyUNK, &v.UNK}, {KeyPAD, &v.PAD}} {
		if *s.dst, err = specialID(f, s.key, n); err != nil {
			return nil, err
		}
	}
	for _, s := range []struct {
		key string
		dst *bool
	}{{KeyAddBOS, &v.AddBOS}, {KeyAddEOS, &v.AddEOS}, {KeyAddSpacePrefix, &v.AddSpacePrefix}} {
		if _, ok := f.Get(s.key); !ok {
			continue
		}
		if *s.dst, err = f.Bool(s.key); err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
	}
	if err := v.Validate(); err != nil {
		return nil, err
	}
	return v, nil
}

// specialID reads a special token id: -1 when absent or when the file
// stores "none" (a negative number, or all ones in a uint32 or uint64).
func specialID(f *gguf.File, key string, n int) (int32, error) {
	val, ok := f.Get(key)
	if !ok {
		return -1, nil
	}
	var id int64
	switch x := val.Any().(type) {
	case uint8:
		id = int64(x)
	case uint16:
		id = int64(x)
	case uint32:
		if x == math.MaxUint32 {
			return -1, nil
		}
		id = int64(x)
	case uint64:
		if x == math.MaxUint64 {
			return -1, nil
		}
		if x > math.MaxInt64 {
			id = math.MaxInt64
		} else {
			id = int64(x)
		}
	case int8:
		id = int64(x)
	case int16:
		id = int64(x)
	case int32:
		id = int64(x)
	case int64:
		id = x
	default:
		return 0, fmt.Errorf("tokenizer: %s holds a %s, not an integer", key, val.TypeString())
	}
	if id < 0 {
		return -1, nil
	}
	if id >= int64(n) {
		return 0, fmt.Errorf("tokenizer: %s = %d is out of range for %d tokens", key, id, n)
	}
	return int32(id), nil
}

// Load opens the GGUF file at path and builds the tokenizer its metadata
// describes.
func Load(path string) (Tokenizer, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	v, verr := VocabFromGGUF(f)
	if cerr := f.Close(); verr == nil && cerr != nil {
		verr = cerr
	}
	if verr != nil {
		return nil, fmt.Errorf("%s: %w", path, verr)
	}
	t, err := New(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}
