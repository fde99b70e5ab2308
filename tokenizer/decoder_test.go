package tokenizer

import (
	"strings"
	"testing"
)

// TestDecoderSplitCharacter streams " this is 🦙.cpp": the llama emoji is
// four byte tokens, and the Decoder must hold them back until the last.
func TestDecoderSplitCharacter(t *testing.T) {
	tok := loadTokenizer(t, "ggml-vocab-llama-spm.gguf")
	text := " this is 🦙.cpp"
	ids, err := tok.Encode(text, true)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(tok)
	var out []string
	sawHeld := false
	for _, id := range ids {
		s, err := d.Add(id)
		if err != nil {
			t.Fatal(err)
		}
		if tok.Vocab().Type(id) == TypeByte && s == "" {
			sawHeld = true
		}
		out = append(out, s)
	}
	if rest := d.Flush(); rest != "" {
		t.Errorf("Flush = %q, want nothing held", rest)
	}
	if !sawHeld {
		t.Errorf("no byte token was held back: %q", out)
	}
	// Decoder keeps the space that Encode added in front.
	if got := strings.Join(out, ""); got != " "+text {
		t.Errorf("streamed %q, want %q", got, " "+text)
	}
	for _, s := range out {
		if strings.ContainsRune(s, '\uFFFD') {
			t.Errorf("piece %q has a replacement character", s)
		}
	}
}

func TestDecoderFlushAndErrors(t *testing.T) {
	v := spmVocab(piece{"▁a", -1, 0})
	tok := mustNew(t, v)
	d := NewDecoder(tok)
	emoji := []byte("🦙")
	for i, c := range emoji[:3] {
		s, err := d.Add(3 + int32(c))
		if err != nil || s != "" {
			t.Fatalf("byte %d: %q %v", i, s, err)
		}
	}
	if _, err := d.Add(-5); err == nil {
		t.Error("bad id: no error")
	}
	if got := d.Flush(); got != "\uFFFD\uFFFD\uFFFD" {
		t.Errorf("Flush of three bytes of four = %q", got)
	}
	if got := d.Flush(); got != "" {
		t.Errorf("second Flush = %q", got)
	}
	// An invalid byte cannot start a character: it comes out at once.
	s, err := d.Add(3 + 0xFF)
	if err != nil || s != "\uFFFD" {
		t.Errorf("0xFF: %q %v", s, err)
	}
	s, _ = d.Add(3 + 0xC3)
	s2, _ := d.Add(3 + 0xA9)
	s3, _ := d.Add(1) // control: nothing
	s4, _ := d.Add(int32(len(v.Tokens) - 1))
	if s != "" || s2 != "é" || s3 != "" || s4 != " a" {
		t.Errorf("got %q %q %q %q", s, s2, s3, s4)
	}
}

// foreign is a Tokenizer from outside the package: Decoder falls back to
// Decode for it.
type foreign struct{ Tokenizer }

func TestDecoderForeign(t *testing.T) {
	tok := mustNew(t, spmVocab(piece{"é", -1, 0}))
	d := NewDecoder(foreign{tok})
	s, err := d.Add(int32(tok.Vocab().NumTokens() - 1))
	if err != nil || s != "é" {
		t.Errorf("got %q %v", s, err)
	}
}

func TestDecoderZero(t *testing.T) {
	var d Decoder
	if _, err := d.Add(1); err == nil {
		t.Error("zero Decoder: no error")
	}
}
