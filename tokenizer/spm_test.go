package tokenizer

import (
	"strings"
	"testing"
)

// spmVocab builds a small SPM vocabulary: <unk>, <s>, </s>, the 256 byte
// tokens, then the given pieces (type normal unless typed) with scores.
type piece struct {
	text  string
	score float32
	typ   TokenType
}

func spmVocab(pieces ...piece) *Vocab {
	v := &Vocab{Model: ModelSPM, BOS: 1, EOS: 2, UNK: 0, PAD: -1, AddBOS: true, AddSpacePrefix: true}
	add := func(s string, score float32, typ TokenType) {
		v.Tokens = append(v.Tokens, s)
		v.Scores = append(v.Scores, score)
		v.Types = append(v.Types, typ)
	}
	add("<unk>", 0, TypeUnknown)
	add("<s>", 0, TypeControl)
	add("</s>", 0, TypeControl)
	for b := 0; b < 256; b++ {
		add(byteTokenText(byte(b)), 0, TypeByte)
	}
	for _, p := range pieces {
		typ := p.typ
		if typ == TypeUndefined {
			typ = TypeNormal
		}
		add(p.text, p.score, typ)
	}
	return v
}

// pieces returns the texts of ids, joined by '|'.
func piecesOf(tok Tokenizer, ids []int32) string {
	var s []string
	for _, id := range ids {
		s = append(s, tok.TokenText(id))
	}
	return strings.Join(s, "|")
}

func mustNew(t *testing.T, v *Vocab) Tokenizer {
	t.Helper()
	tok, err := New(v)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return tok
}

func TestSPMEncode(t *testing.T) {
	abc := []piece{{"a", -1, 0}, {"b", -1, 0}, {"c", -1, 0}, {"▁", -1, 0}}
	with := func(extra ...piece) []piece { return append(append([]piece{}, abc...), extra...) }
	for _, tc := range []struct {
		name   string
		pieces []piece
		prefix bool
		text   string
		want   string
	}{
		{"characters", abc, false, "abc", "a|b|c"},
		{"higher score merges first", with(piece{"ab", -3, 0}, piece{"bc", -2, 0}), false, "abc", "a|bc"},
		{"higher score merges first, mirrored", with(piece{"ab", -2, 0}, piece{"bc", -3, 0}), false, "abc", "ab|c"},
		{"equal scores: leftmost first", with(piece{"ab", -2, 0}, piece{"bc", -2, 0}), false, "abc", "ab|c"},
		{"merges chain", with(piece{"ab", -2, 0}, piece{"abc", -9, 0}), false, "abc", "abc"},
		{"a merged pair needs its text as a token", with(piece{"abc", 5, 0}), false, "abc", "a|b|c"},
		{"space prefix", with(piece{"▁a", -1, 0}), true, "a b", "▁a|▁|b"},
		{"spaces escaped", with(piece{"▁▁", -1, 0}), false, "a  b", "a|▁▁|b"},
		{"byte fallback", abc, false, "aé", "a|<0xC3>|<0xA9>"},
		{"control text is not matched", with(piece{"<", -1, 0}, piece{"s", -1, 0}, piece{">", -1, 0}, piece{"<s", -1, 0}), false, "<s>", "<s|>"},
		{"unknown text is not matched", with(piece{"<", -1, 0}, piece{"u", -1, 0}, piece{"n", -1, 0}, piece{"k", -1, 0}, piece{">", -1, 0}, piece{"<u", -1, 0}, piece{"<un", -1, 0}, piece{"<unk", -1, 0}), false, "<unk>", "<unk|>"},
		{"user-defined token cut out, space prefix after it", with(piece{"<t>", 0, TypeUserDefined}, piece{"▁a", -1, 0}, piece{"▁b", -1, 0}), true, "a<t>b", "▁a|<t>|▁b"},
		{"user-defined: longest first", with(piece{"xy", 0, TypeUserDefined}, piece{"xyz", 0, TypeUserDefined}), false, "axyzxy", "a|xyz|xy"},
		{"empty", abc, true, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := spmVocab(tc.pieces...)
			v.AddSpacePrefix = tc.prefix
			tok := mustNew(t, v)
			ids, err := tok.Encode(tc.text, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := piecesOf(tok, ids); got != tc.want {
				t.Errorf("Encode(%q) = %s, want %s", tc.text, got, tc.want)
			}
		})
	}
}

func TestSPMSpecial(t *testing.T) {
	v := spmVocab(piece{"a", -1, 0}, piece{"▁a", -1, 0})
	v.AddEOS = true
	tok := mustNew(t, v)
	ids, err := tok.Encode("a", true)
	if err != nil {
		t.Fatal(err)
	}
	if got := piecesOf(tok, ids); got != "<s>|▁a|</s>" {
		t.Errorf("got %s", got)
	}
	ids, err = tok.Encode("", true)
	if err != nil || piecesOf(tok, ids) != "<s>|</s>" {
		t.Errorf("empty text: %v %v", ids, err)
	}
	v.BOS = -1
	if _, err := mustNew(t, v).Encode("a", true); err == nil || !strings.Contains(err.Error(), "BOS") {
		t.Errorf("AddBOS without BOS: err %v", err)
	}
	if _, err := mustNew(t, v).Encode("a", false); err != nil {
		t.Errorf("without addSpecial the missing BOS does not matter: %v", err)
	}
}

func TestSPMByteFallbackMissing(t *testing.T) {
	v := &Vocab{Model: ModelSPM, Tokens: []string{"a", "<unk>"}, Types: []TokenType{TypeNormal, TypeUnknown}, BOS: -1, EOS: -1, UNK: -1, PAD: -1}
	tok := mustNew(t, v)
	if _, err := tok.Encode("ab", false); err == nil {
		t.Error("no byte token and no UNK: want an error")
	}
	v.UNK = 1
	tok = mustNew(t, v)
	ids, err := tok.Encode("ab", false)
	if err != nil || !equalIDs(ids, []int32{0, 1}) {
		t.Errorf("with UNK: %v %v", ids, err)
	}
}

func TestSPMDecode(t *testing.T) {
	v := spmVocab(piece{"▁a", -1, 0}, piece{"b▁", -1, 0}, piece{"<t>", 0, TypeUserDefined}, piece{"x", 0, TypeUnused})
	tok := mustNew(t, v)
	id := func(s string) int32 {
		for i, tt := range v.Tokens {
			if tt == s {
				return int32(i)
			}
		}
		t.Fatalf("no token %q", s)
		return -1
	}
	for _, tc := range []struct {
		ids    []int32
		prefix bool
		want   string
	}{
		{[]int32{1, id("▁a"), id("b▁"), 2}, true, "ab "},
		{[]int32{1, id("▁a"), id("b▁"), 2}, false, " ab "},
		{[]int32{id("▁a"), id("▁a")}, true, "a a"},
		{[]int32{id("<0xC3>"), id("<0xA9>"), id("▁a")}, true, "é a"},
		{[]int32{0, id("<t>"), id("x")}, true, "<t>"},
		{nil, true, ""},
	} {
		v.AddSpacePrefix = tc.prefix
		got, err := tok.Decode(tc.ids)
		if err != nil || got != tc.want {
			t.Errorf("Decode(%v) prefix=%v = %q, %v; want %q", tc.ids, tc.prefix, got, err, tc.want)
		}
	}
	for _, bad := range []int32{-1, int32(len(v.Tokens))} {
		if _, err := tok.Decode([]int32{bad}); err == nil {
			t.Errorf("Decode(%d): no error", bad)
		}
	}
	if tok.TokenText(-1) != "" || tok.TokenText(int32(len(v.Tokens))) != "" || tok.TokenText(1) != "<s>" {
		t.Error("TokenText")
	}
}

func TestSPMControlTokenTextLlama(t *testing.T) {
	tok := loadTokenizer(t, "ggml-vocab-llama-spm.gguf")
	for _, s := range []string{"<s>", "</s>", "<unk>", "a<s>b</s>", "<0x41>"} {
		ids, err := tok.Encode(s, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if typ := tok.Vocab().Type(id); typ != TypeNormal {
				t.Errorf("Encode(%q) produced %q of type %v", s, tok.TokenText(id), typ)
			}
		}
		if back, _ := tok.Decode(ids); back != s {
			t.Errorf("Decode(Encode(%q)) = %q", s, back)
		}
	}
}
