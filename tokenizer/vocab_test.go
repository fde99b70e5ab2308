package tokenizer

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/gguf"
)

// kv is one metadata entry for buildGGUF.
type kv struct {
	key string
	val any
}

// buildGGUF writes a tensor-less GGUF file with the entries and parses it.
func buildGGUF(t testing.TB, kvs ...kv) *gguf.File {
	t.Helper()
	w := gguf.NewWriter()
	for _, e := range kvs {
		if err := w.Add(e.key, e.val); err != nil {
			t.Fatalf("Add(%s): %v", e.key, err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// smallSPM is the metadata of a valid four-token SPM vocabulary.
func smallSPM() []kv {
	return []kv{
		{KeyModel, "llama"},
		{KeyTokens, []string{"<unk>", "<s>", "</s>", "▁a"}},
		{KeyScores, []float32{0, 0, 0, -1}},
		{KeyTokenType, []int32{2, 3, 3, 1}},
		{KeyBOS, uint32(1)},
		{KeyEOS, uint32(2)},
		{KeyUNK, uint32(0)},
		{KeyPAD, uint32(0xFFFFFFFF)},
	}
}

// with returns base with key set to val (replaced, or added), or removed
// when val is nil.
func with(base []kv, key string, val any) []kv {
	var out []kv
	found := false
	for _, e := range base {
		if e.key == key {
			found = true
			if val == nil {
				continue
			}
			e.val = val
		}
		out = append(out, e)
	}
	if !found && val != nil {
		out = append(out, kv{key, val})
	}
	return out
}

func TestVocabFromGGUF(t *testing.T) {
	v, err := VocabFromGGUF(buildGGUF(t, smallSPM()...))
	if err != nil {
		t.Fatal(err)
	}
	if v.Model != ModelSPM || v.NumTokens() != 4 || v.BOS != 1 || v.EOS != 2 || v.UNK != 0 || v.PAD != -1 ||
		!v.AddBOS || v.AddEOS || !v.AddSpacePrefix || v.Score(3) != -1 || v.Type(1) != TypeControl {
		t.Errorf("vocab %+v", v)
	}

	v, err = VocabFromGGUF(buildGGUF(t, with(with(with(with(smallSPM(), KeyAddBOS, false), KeyAddEOS, true), KeyAddSpacePrefix, false), KeyBOS, int32(-1))...))
	if err != nil {
		t.Fatal(err)
	}
	if v.AddBOS || !v.AddEOS || v.AddSpacePrefix || v.BOS != -1 {
		t.Errorf("flags from metadata not applied: %+v", v)
	}

	v, err = VocabFromGGUF(buildGGUF(t, with(with(with(smallSPM(), KeyScores, nil), KeyTokenType, nil), KeyEOS, nil)...))
	if err != nil {
		t.Fatal(err)
	}
	if v.Scores != nil || v.Types != nil || v.EOS != -1 || v.Type(1) != TypeNormal {
		t.Errorf("optional keys: %+v", v)
	}

	bpe := []kv{
		{KeyModel, "gpt2"}, {KeyPre, "gpt-2"},
		{KeyTokens, []string{"a", "b", "ab"}},
		{KeyMerges, []string{"a b"}},
	}
	v, err = VocabFromGGUF(buildGGUF(t, bpe...))
	if err != nil {
		t.Fatal(err)
	}
	if v.AddBOS || v.AddSpacePrefix || len(v.Merges) != 1 || v.BOS != -1 {
		t.Errorf("BPE vocab %+v", v)
	}
}

func TestVocabFromGGUFErrors(t *testing.T) {
	bpe := []kv{
		{KeyModel, "gpt2"}, {KeyPre, "gpt-2"},
		{KeyTokens, []string{"a", "b", "ab"}},
		{KeyMerges, []string{"a b"}},
	}
	for _, tc := range []struct {
		name string
		kvs  []kv
		want string // in the error
	}{
		{"no model", with(smallSPM(), KeyModel, nil), KeyModel},
		{"unknown model", with(smallSPM(), KeyModel, "bert"), `"bert"`},
		{"model not a string", with(smallSPM(), KeyModel, uint32(1)), KeyModel},
		{"no tokens", with(smallSPM(), KeyTokens, nil), KeyTokens},
		{"tokens not strings", with(smallSPM(), KeyTokens, []int32{1, 2, 3, 4}), KeyTokens},
		{"empty tokens", with(with(with(smallSPM(), KeyTokens, []string{}), KeyScores, nil), KeyTokenType, nil), "no tokens"},
		{"scores short", with(smallSPM(), KeyScores, []float32{0, 0}), KeyScores},
		{"scores not numbers", with(smallSPM(), KeyScores, []string{"a", "b", "c", "d"}), KeyScores},
		{"types long", with(smallSPM(), KeyTokenType, []int32{1, 1, 1, 1, 1}), KeyTokenType},
		{"type out of range", with(smallSPM(), KeyTokenType, []int32{1, 1, 9, 1}), "invalid type 9"},
		{"bad byte token", with(smallSPM(), KeyTokenType, []int32{2, 3, 3, 6}), "<0xXX>"},
		{"bos out of range", with(smallSPM(), KeyBOS, uint32(4)), KeyBOS},
		{"bos not an integer", with(smallSPM(), KeyBOS, "1"), KeyBOS},
		{"add_bos not a bool", with(smallSPM(), KeyAddBOS, uint8(1)), KeyAddBOS},
		{"pre not a string", with(smallSPM(), KeyPre, int32(0)), KeyPre},
		{"gpt2 without merges", with(bpe, KeyMerges, nil), KeyMerges},
		{"gpt2 bad merge", with(bpe, KeyMerges, []string{"ab"}), `"ab"`},
		{"gpt2 unknown pre", with(bpe, KeyPre, "llama3"), `"llama3"`},
		{"gpt2 no pre", with(bpe, KeyPre, nil), "pre-tokenizer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := VocabFromGGUF(buildGGUF(t, tc.kvs...))
			if err == nil {
				t.Fatalf("no error; vocab %+v", v)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	good := func() *Vocab { return spmVocab(piece{"a", -1, 0}) }
	for _, tc := range []struct {
		name string
		edit func(v *Vocab)
		want string
	}{
		{"unknown model", func(v *Vocab) { v.Model = "ugm" }, `"ugm"`},
		{"no tokens", func(v *Vocab) { v.Tokens, v.Scores, v.Types = nil, nil, nil }, "no tokens"},
		{"score count", func(v *Vocab) { v.Scores = v.Scores[:1] }, "scores"},
		{"type count", func(v *Vocab) { v.Types = v.Types[1:] }, "types"},
		{"negative type", func(v *Vocab) { v.Types[5] = -1 }, "invalid type"},
		{"EOS range", func(v *Vocab) { v.EOS = int32(len(v.Tokens)) }, "EOS"},
		{"PAD below -1", func(v *Vocab) { v.PAD = -2 }, "PAD"},
		{"empty user-defined", func(v *Vocab) { v.Tokens[len(v.Tokens)-1] = ""; v.Types[len(v.Types)-1] = TypeUserDefined }, "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := good()
			tc.edit(v)
			_, err := New(v)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: err %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	if _, err := New(nil); err == nil {
		t.Error("New(nil): no error")
	}
	if _, err := New(good()); err != nil {
		t.Errorf("good vocab: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load("/nonexistent/model.gguf"); err == nil {
		t.Error("missing file: no error")
	}
	if _, err := Load(testdataFile(t, "tinyllamas-stories-260k-f32.ggufv1.gguf")); err == nil {
		t.Error("GGUF v1: no error")
	}
}

func TestSplitMerge(t *testing.T) {
	for _, tc := range []struct {
		in, l, r string
		ok       bool
	}{
		{"a b", "a", "b", true},
		{"Ġ t", "Ġ", "t", true},
		{"  x", " ", "x", true}, // a rule may start with a space
		{"a b c", "a", "b c", true},
		{"ab", "", "", false},
		{"a ", "", "", false},
		{"", "", "", false},
	} {
		l, r, ok := splitMerge(tc.in)
		if l != tc.l || r != tc.r || ok != tc.ok {
			t.Errorf("splitMerge(%q) = %q %q %v", tc.in, l, r, ok)
		}
	}
}

// FuzzVocabFromGGUF mutates a valid tokenizer-only GGUF file: reading and
// building never panic, and whatever builds encodes and decodes text.
func FuzzVocabFromGGUF(f *testing.F) {
	for _, kvs := range [][]kv{smallSPM(), {
		{KeyModel, "gpt2"}, {KeyPre, "gpt-2"},
		{KeyTokens, []string{"a", "b", "ab", "Ġ"}},
		{KeyMerges, []string{"a b"}},
		{KeyTokenType, []int32{1, 1, 1, 4}},
	}} {
		w := gguf.NewWriter()
		for _, e := range kvs {
			if err := w.Add(e.key, e.val); err != nil {
				f.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		gf, err := gguf.Parse(b)
		if err != nil {
			return
		}
		v, err := VocabFromGGUF(gf)
		if err != nil {
			return
		}
		tok, err := New(v)
		if err != nil {
			t.Fatalf("VocabFromGGUF accepted a vocabulary New rejects: %v", err)
		}
		ids, err := tok.Encode("ab a\xff", true)
		if err != nil {
			return // e.g. no byte-fallback and no unknown token
		}
		if _, err := tok.Decode(ids); err != nil {
			t.Fatalf("Decode of Encode's output: %v", err)
		}
	})
}
