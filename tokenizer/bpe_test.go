package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// bpeVocab builds a BPE vocabulary holding the 256 byte characters, the
// extra tokens and the merges, plus a control token <|end|> as BOS/EOS.
func bpeVocab(extra []string, merges ...string) *Vocab {
	v := &Vocab{Model: ModelBPE, Pre: PreGPT2, BOS: 0, EOS: 0, UNK: -1, PAD: -1, Merges: merges}
	v.Tokens = append(v.Tokens, "<|end|>")
	v.Types = append(v.Types, TypeControl)
	for b := 0; b < 256; b++ {
		v.Tokens = append(v.Tokens, string(byteToRune[b]))
		v.Types = append(v.Types, TypeNormal)
	}
	for _, s := range extra {
		v.Tokens = append(v.Tokens, s)
		v.Types = append(v.Types, TypeNormal)
	}
	return v
}

func TestByteToRune(t *testing.T) {
	seen := map[rune]bool{}
	for b := 0; b < 256; b++ {
		r := byteToRune[b]
		if seen[r] {
			t.Fatalf("byte %#x maps to %U twice", b, r)
		}
		seen[r] = true
		if runeToByte[r] != uint16(b)+1 {
			t.Fatalf("inverse of %U is %d, want %d", r, int(runeToByte[r])-1, b)
		}
	}
	for b, want := range map[byte]rune{' ': 'Ġ', '\n': 'Ċ', '\t': 'ĉ', 'a': 'a', 0: 0x100, 0xAD: 0x143, 0xFF: 'ÿ', 0x7F: 0x121} {
		if byteToRune[b] != want {
			t.Errorf("byte %#x -> %U, want %U", b, byteToRune[b], want)
		}
	}
}

func TestBPEEncode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		extra  []string
		merges []string
		text   string
		want   string
	}{
		{"no merges", nil, []string{"x y"}, "abc", "a|b|c"},
		{"lower rank first", []string{"ab", "bc"}, []string{"b c", "a b"}, "abc", "a|bc"},
		{"lower rank first, mirrored", []string{"ab", "bc"}, []string{"a b", "b c"}, "abc", "ab|c"},
		{"merges chain", []string{"ab", "abc"}, []string{"a b", "ab c"}, "abc", "abc"},
		{"leftmost on equal pairs", []string{"aa"}, []string{"a a"}, "aaa", "aa|a"},
		{"space is Ġ", []string{"Ġa"}, []string{"Ġ a"}, "a a", "a|Ġa"},
		{"merges stay inside a piece", []string{"aĠ"}, []string{"a Ġ"}, "a a", "a|Ġ|a"},
		{"merged text missing from vocab", nil, []string{"a b"}, "ab", "a|b"},
		{"utf-8 bytes", []string{"Ã©"}, []string{"Ã ©"}, "é", "Ã©"},
		{"control text is plain text", nil, nil, "<|end|>", "<|||e|n|d|||>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			merges := tc.merges
			if merges == nil {
				merges = []string{"x y"}
			}
			tok := mustNew(t, bpeVocab(tc.extra, merges...))
			ids, err := tok.Encode(tc.text, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := piecesOf(tok, ids); got != tc.want {
				t.Errorf("Encode(%q) = %s, want %s", tc.text, got, tc.want)
			}
			if back, err := tok.Decode(ids); err != nil || back != tc.text {
				t.Errorf("Decode = %q, %v", back, err)
			}
		})
	}
}

func TestBPESpecialAndDecode(t *testing.T) {
	v := bpeVocab([]string{"<tool>"}, "x y")
	v.Types[len(v.Types)-1] = TypeUserDefined
	v.AddBOS, v.AddEOS = true, true
	tok := mustNew(t, v)
	ids, err := tok.Encode("a<tool>b", true)
	if err != nil {
		t.Fatal(err)
	}
	if got := piecesOf(tok, ids); got != "<|end|>|a|<tool>|b|<|end|>" {
		t.Errorf("got %s", got)
	}
	s, err := tok.Decode(ids)
	if err != nil || s != "a<tool>b" {
		t.Errorf("Decode = %q, %v", s, err)
	}
	// Invalid UTF-8 is read as U+FFFD, as llama.cpp does.
	ids, err = tok.Encode("a\xffb", false)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := tok.Decode(ids); s != "a\uFFFDb" {
		t.Errorf("invalid byte: %q", s)
	}
	if _, err := tok.Decode([]int32{int32(len(v.Tokens))}); err == nil {
		t.Error("out-of-range id: no error")
	}
}

func TestBPEGPT2Words(t *testing.T) {
	tok := loadTokenizer(t, "ggml-vocab-gpt-2.gguf")
	for _, tc := range []struct{ text, want string }{
		{"Hello world", "Hello|Ġworld"},
		{"<|endoftext|>", "<|endoftext|>"},
		{"I've", "I|'ve"},
	} {
		ids, err := tok.Encode(tc.text, false)
		if err != nil {
			t.Fatal(err)
		}
		got := piecesOf(tok, ids)
		if tc.text == "<|endoftext|>" {
			// Plain text: never the control token itself.
			for _, id := range ids {
				if id == tok.Vocab().EOS {
					t.Errorf("%q encoded to the EOS token: %s", tc.text, got)
				}
			}
			continue
		}
		if got != tc.want {
			t.Errorf("Encode(%q) = %s, want %s", tc.text, got, tc.want)
		}
	}
	if s, _ := tok.Decode([]int32{tok.Vocab().EOS}); s != "" {
		t.Errorf("control token decodes to %q, want nothing", s)
	}
}

// FuzzBPERoundTrip: Encode never fails or panics, and for valid UTF-8
// Decode(Encode(s)) == s, with the GPT-2 vocabulary.
func FuzzBPERoundTrip(f *testing.F) {
	tok := loadTokenizer(f, "ggml-vocab-gpt-2.gguf")
	for _, s := range []string{"Hello world", "  a\n\n b", "I'm 'RE", "🦙 x\xff", "<|endoftext|>", "\t\u3000", "3,141.59"} {
		f.Add(s)
	}
	addVectorSeeds(f, "ggml-vocab-gpt-2.gguf")
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := tok.Encode(s, true)
		if err != nil {
			t.Fatalf("Encode(%q): %v", s, err)
		}
		n := tok.Vocab().NumTokens()
		for _, id := range ids {
			if id < 0 || int(id) >= n {
				t.Fatalf("Encode(%q) produced id %d", s, id)
			}
		}
		back, err := tok.Decode(ids)
		if err != nil {
			t.Fatalf("Decode: %v", err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("Decode(Encode(%q)) = %q", s, back)
		}
		if !utf8.ValidString(s) && !utf8.ValidString(back) {
			t.Fatalf("invalid input %q decoded to invalid %q (want U+FFFD)", s, back)
		}
	})
}

// FuzzSPMRoundTrip: Encode never fails or panics with the Llama vocabulary
// (byte fallback covers every byte), and Decode(Encode(s)) == s for valid
// UTF-8 without U+2581 (which decodes as a space).
func FuzzSPMRoundTrip(f *testing.F) {
	tok := loadTokenizer(f, "ggml-vocab-llama-spm.gguf")
	for _, s := range []string{"Hello world", " lead", "\xe2x\xff", "<s>a</s>", "é🦙"} {
		f.Add(s)
	}
	addVectorSeeds(f, "ggml-vocab-llama-spm.gguf")
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := tok.Encode(s, true)
		if err != nil {
			t.Fatalf("Encode(%q): %v", s, err)
		}
		back, err := tok.Decode(ids)
		if err != nil {
			t.Fatalf("Decode: %v", err)
		}
		if utf8.ValidString(s) && !strings.Contains(s, spaceEscape) && back != s {
			t.Fatalf("Decode(Encode(%q)) = %q", s, back)
		}
	})
}

// FuzzDecode: any id sequence decodes without panicking; out-of-range ids
// are errors.
func FuzzDecode(f *testing.F) {
	tok := loadTokenizer(f, "ggml-vocab-llama-spm.gguf")
	f.Add([]byte{1, 0, 3, 0, 200, 10})
	f.Fuzz(func(t *testing.T, b []byte) {
		var ids []int32
		bad := false
		for i := 0; i+1 < len(b); i += 2 {
			id := int32(b[i])<<8 | int32(b[i+1]) - 300
			ids = append(ids, id)
			bad = bad || id < 0 || int(id) >= tok.Vocab().NumTokens()
		}
		_, err := tok.Decode(ids)
		if bad != (err != nil) {
			t.Fatalf("Decode(%v): err %v", ids, err)
		}
		d := NewDecoder(tok)
		var sb strings.Builder
		for _, id := range ids {
			s, _ := d.Add(id)
			sb.WriteString(s)
		}
		sb.WriteString(d.Flush())
		if !utf8.ValidString(sb.String()) {
			t.Fatalf("Decoder produced invalid UTF-8 %q", sb.String())
		}
	})
}

func addVectorSeeds(f *testing.F, name string) {
	inp, err := readTestdata(f, name+".inp")
	if err != nil {
		return
	}
	for _, s := range strings.Split(inp, vectorSep) {
		f.Add(s)
	}
}
