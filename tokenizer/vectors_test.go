package tokenizer

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestVectors reproduces llama.cpp's tokenizer test vectors: every string
// of <vocab>.inp must encode (without BOS/EOS, as test-tokenizer-0 does
// with add_special=false and parse_special=false) to the ids of the
// matching .out line. llama-2-tiny-random.gguf carries the same Llama-2
// vocabulary as ggml-vocab-llama-spm.gguf, so it must match the same
// vectors.
func TestVectors(t *testing.T) {
	for _, tc := range []struct{ model, vectors string }{
		{"ggml-vocab-llama-spm.gguf", "ggml-vocab-llama-spm.gguf"},
		{"ggml-vocab-gpt-2.gguf", "ggml-vocab-gpt-2.gguf"},
		{"llama-2-tiny-random.gguf", "ggml-vocab-llama-spm.gguf"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			tok := loadTokenizer(t, tc.model)
			vs := loadVectors(t, tc.vectors)
			if len(vs) < 40 {
				t.Fatalf("only %d vectors read", len(vs))
			}
			bad := 0
			for i, v := range vs {
				got, err := tok.Encode(v.text, false)
				if err != nil {
					t.Errorf("vector %d %q: %v", i, v.text, err)
					bad++
					continue
				}
				if !equalIDs(got, v.want) {
					t.Errorf("vector %d %q:\n got  %v\n want %v", i, v.text, got, v.want)
					bad++
				}
			}
			t.Logf("%d/%d vectors match", len(vs)-bad, len(vs))
		})
	}
}

// TestVectorsAddSpecial checks that addSpecial adds exactly BOS in front
// for the llama vocabulary (add_bos_token true, add_eos_token false) and
// nothing for GPT-2 (no add_bos_token key: llama.cpp's default is false).
func TestVectorsAddSpecial(t *testing.T) {
	for _, name := range []string{"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"} {
		t.Run(name, func(t *testing.T) {
			tok := loadTokenizer(t, name)
			v := tok.Vocab()
			for _, vec := range loadVectors(t, name) {
				got, err := tok.Encode(vec.text, true)
				if err != nil {
					t.Fatalf("%q: %v", vec.text, err)
				}
				want := vec.want
				if v.AddBOS {
					want = append([]int32{v.BOS}, want...)
				}
				if v.AddEOS {
					want = append(want, v.EOS)
				}
				if !equalIDs(got, want) {
					t.Errorf("%q: got %v, want %v", vec.text, got, want)
				}
			}
		})
	}
}

// TestVectorsRoundTrip decodes the encoded vectors. Decode(Encode(s))
// must give s back exactly for both vocabularies: for llama, Decode drops
// the one space Encode put in front (add_space_prefix), and none of the
// strings contains U+2581 itself.
func TestVectorsRoundTrip(t *testing.T) {
	for _, name := range []string{"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"} {
		t.Run(name, func(t *testing.T) {
			tok := loadTokenizer(t, name)
			for _, vec := range loadVectors(t, name) {
				for _, special := range []bool{false, true} {
					ids, err := tok.Encode(vec.text, special)
					if err != nil {
						t.Fatalf("%q: %v", vec.text, err)
					}
					got, err := tok.Decode(ids)
					if err != nil {
						t.Fatalf("%q: decode: %v", vec.text, err)
					}
					if got != vec.text {
						t.Errorf("addSpecial=%v: Decode(Encode(%q)) = %q", special, vec.text, got)
					}
				}
			}
		})
	}
}

// TestStories260K: the 512-token vocabulary of the tiny llama model splits
// "Once upon a time" into its four words, each one token with its "▁".
func TestStories260K(t *testing.T) {
	tok := loadTokenizer(t, "stories260K.gguf")
	v := tok.Vocab()
	if v.NumTokens() != 512 || v.Model != ModelSPM || v.BOS != 1 || v.EOS != 2 || v.UNK != 0 || v.PAD != -1 {
		t.Fatalf("vocab: model %q, %d tokens, BOS %d EOS %d UNK %d PAD %d", v.Model, v.NumTokens(), v.BOS, v.EOS, v.UNK, v.PAD)
	}
	ids, err := tok.Encode("Once upon a time", true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"<s>", "▁Once", "▁upon", "▁a", "▁time"}
	var got []string
	for _, id := range ids {
		got = append(got, tok.TokenText(id))
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("pieces %q, want %q (ids %v)", got, want, ids)
	}
	if ids[0] != v.BOS {
		t.Errorf("first id %d, want BOS %d", ids[0], v.BOS)
	}
	s, err := tok.Decode(ids)
	if err != nil || s != "Once upon a time" {
		t.Errorf("Decode = %q, %v", s, err)
	}
}

// TestLlama2TinyRandomVocab checks the full Llama-2 vocabulary loads with
// its metadata: 32000 tokens, one unknown, two control and 256 byte tokens.
func TestLlama2TinyRandomVocab(t *testing.T) {
	tok := loadTokenizer(t, "llama-2-tiny-random.gguf")
	v := tok.Vocab()
	count := map[TokenType]int{}
	for i := range v.Tokens {
		count[v.Type(int32(i))]++
	}
	if v.NumTokens() != 32000 || count[TypeByte] != 256 || count[TypeControl] != 2 || count[TypeUnknown] != 1 || count[TypeNormal] != 31741 {
		t.Errorf("%d tokens, types %v", v.NumTokens(), count)
	}
	if !v.AddBOS || v.AddEOS || !v.AddSpacePrefix {
		t.Errorf("flags AddBOS %v AddEOS %v AddSpacePrefix %v, want llama.cpp's defaults true false true", v.AddBOS, v.AddEOS, v.AddSpacePrefix)
	}
	for b := 0; b < 256; b++ {
		id := int32(3 + b)
		if v.Tokens[id] != byteTokenText(byte(b)) || v.Type(id) != TypeByte {
			t.Fatalf("token %d = %q (%v), want byte token %s", id, v.Tokens[id], v.Type(id), byteTokenText(byte(b)))
		}
	}
}

// TestWikiText encodes the whole WikiText-2 test split (1.3 MB) with the
// llama vocabulary in one call, as perplexity does, and decodes it back.
// The merge loop is heap-based, O(n log n); a quadratic one would take
// hours on this text, so the generous time bound only catches that.
func TestWikiText(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes 1.3 MB; skipped with -short")
	}
	raw, err := os.ReadFile(testdataFile(t, "wiki.test.raw"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	for _, name := range []string{"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"} {
		tok := loadTokenizer(t, name)
		start := time.Now()
		ids, err := tok.Encode(text, true)
		el := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes -> %d tokens in %v", name, len(text), len(ids), el)
		if el > 60*time.Second {
			t.Errorf("%s: encoding took %v", name, el)
		}
		// English text averages three to five bytes per token.
		if r := float64(len(text)) / float64(len(ids)); r < 3 || r > 6 {
			t.Errorf("%s: %.2f bytes per token", name, r)
		}
		back, err := tok.Decode(ids)
		if err != nil {
			t.Fatal(err)
		}
		if back != text {
			t.Errorf("%s: decoded text differs from the input", name)
		}
	}
}

func BenchmarkEncodeWikiText(b *testing.B) {
	raw, err := os.ReadFile(testdataFile(b, "wiki.test.raw"))
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"} {
		b.Run(name, func(b *testing.B) {
			tok := loadTokenizer(b, name)
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := tok.Encode(string(raw), false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestParseVectors pins the reading of the .inp/.out format on a small
// example: empty strings, strings with newlines, the leading space of the
// .out lines.
func TestParseVectors(t *testing.T) {
	inp := "a b\n__ggml_vocab_test__\n\n__ggml_vocab_test__\n\n\n__ggml_vocab_test__\n x\ny \n__ggml_vocab_test__\n"
	out := " 1 2\n\n 3\n 4 5 6\n"
	vs, err := parseVectors(inp, out)
	if err != nil {
		t.Fatal(err)
	}
	want := []vocabVector{{"a b", []int32{1, 2}}, {"", []int32{}}, {"\n", []int32{3}}, {" x\ny ", []int32{4, 5, 6}}}
	if len(vs) != len(want) {
		t.Fatalf("got %d vectors, want %d: %q", len(vs), len(want), vs)
	}
	for i := range want {
		if vs[i].text != want[i].text || !equalIDs(vs[i].want, want[i].want) {
			t.Errorf("vector %d = %q %v, want %q %v", i, vs[i].text, vs[i].want, want[i].text, want[i].want)
		}
	}
	if _, err := parseVectors(inp, " 1\n"); err == nil {
		t.Error("count mismatch not reported")
	}
	if _, err := parseVectors("a\n__ggml_vocab_test__\n", " x\n"); err == nil {
		t.Error("bad id not reported")
	}
}
