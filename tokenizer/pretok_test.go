package tokenizer

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitGPT2(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello world", []string{"Hello", " world"}},
		{"Hello  world", []string{"Hello", " ", " world"}},
		{"  Hello", []string{" ", " Hello"}},
		{"a   ", []string{"a", "   "}},
		{"\n", []string{"\n"}},
		{"\n\n\n", []string{"\n\n\n"}},
		{"a\nb", []string{"a", "\n", "b"}},
		{"a \n b", []string{"a", " \n", " b"}},
		{"\t\tx", []string{"\t", "\t", "x"}},
		{" \t x", []string{" \t", " x"}},
		// Contractions are lower case only.
		{"I've it's we'll", []string{"I", "'ve", " it", "'s", " we", "'ll"}},
		{"'RE 'M We'Ve a'lL", []string{"'", "RE", " '", "M", " We", "'", "Ve", " a", "'", "lL"}},
		{"''''", []string{"''''"}},
		{"don't", []string{"don", "'t"}},
		{"3.3 333 x3", []string{"3", ".", "3", " 333", " x", "3"}},
		{"Hello, world!", []string{"Hello", ",", " world", "!"}},
		{" ------=======", []string{" ------======="}},
		{"ÄŸ ½ ²", []string{"ÄŸ", " ½", " ²"}}, // ½ and ² are numbers (No)
		{"🦙.cpp", []string{"🦙.", "cpp"}},
		{"a\u00a0b", []string{"a", "\u00a0", "b"}}, // NBSP is whitespace, not ' '
		{" ", []string{" "}},
		{"x\xffy", []string{"x", "\uFFFD", "y"}},
	} {
		got := splitGPT2(tc.in)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("splitGPT2(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// gpt2Piece matches one piece of the GPT-2 pattern by its shape, with Go's
// regexp (no lookahead needed to check a single piece). Go's \s is ASCII
// only, so whitespace is spelled out: the Unicode White_Space set.
var gpt2Piece = func() *regexp.Regexp {
	const ws = `\t\n\v\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}`
	return regexp.MustCompile(`^(?:'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^` + ws + `\p{L}\p{N}]+|[` + ws + `]+)$`)
}()

// checkSplit checks the properties every split must have: the pieces
// concatenate to the text (invalid bytes as U+FFFD), each has the shape of
// one alternative of the pattern, and a whitespace run is cut only to give
// its last character to the next piece.
func checkSplit(t *testing.T, text string) {
	pieces := splitGPT2(text)
	clean := strings.ToValidUTF8(text, "\uFFFD")
	if !utf8.ValidString(text) {
		// strings.ToValidUTF8 merges runs of bad bytes; the split
		// replaces each byte.
		var b strings.Builder
		for _, r := range text {
			b.WriteRune(r)
		}
		clean = b.String()
	}
	if j := strings.Join(pieces, ""); j != clean {
		t.Fatalf("pieces of %q join to %q", text, j)
	}
	for i, p := range pieces {
		if p == "" || !gpt2Piece.MatchString(p) {
			t.Fatalf("piece %d %q of %q does not match the pattern", i, p, text)
		}
		if i == 0 {
			continue
		}
		prev := pieces[i-1]
		last, _ := utf8.DecodeLastRuneInString(prev)
		first, _ := utf8.DecodeRuneInString(p)
		if classify(last) == classSpace && classify(first) == classSpace {
			// A whitespace run is cut only before its last character,
			// which then starts the next piece (\s+(?!\S)).
			rs := []rune(p)
			if len(rs) > 1 && classify(rs[1]) == classSpace {
				t.Fatalf("whitespace run cut between %q and %q in %q", prev, p, text)
			}
		}
	}
}

func FuzzSplitGPT2(f *testing.F) {
	for _, s := range []string{"Hello world", "  a\n\n b", "'s'S 're", "x\xff\xfe y", "\t \u3000z", "3,000.5", "🦙🦙 é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkSplit(t, s)
	})
}
