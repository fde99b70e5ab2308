package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// splitGPT2 splits text into the pieces of the GPT-2 pre-tokenizer, the
// regular expression
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// matched leftmost-first from the start of the text, each match one piece.
// Go's regexp has no lookahead, so it is matched by hand, as llama.cpp's
// unicode_regex_split_custom_gpt2 does:
//
//   - the contractions are lower case only ("'RE" is not one);
//   - " ?X+" takes one optional leading space (U+0020 only) and then a run
//     of letters, of numbers, or of characters that are none of
//     whitespace, letter, number;
//   - a run of k > 1 whitespace characters followed by more text gives a
//     piece of k-1 of them, so that the last one can lead the next piece
//     (\s+(?!\S)); at the end of the text, or when k == 1, the whole run is
//     one piece (\s+).
//
// Letters are Unicode category L, numbers category N, whitespace Go's
// unicode.IsSpace (the same set as llama.cpp's: \t-\r, space, U+0085,
// U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000).
//
// Invalid UTF-8 bytes each become U+FFFD first, as llama.cpp's
// unicode_cpts_from_utf8 does. The pieces are returned as UTF-8 strings and
// concatenate to the (cleaned) text.
func splitGPT2(text string) []string {
	cpts := make([]rune, 0, len(text))
	for _, r := range text {
		cpts = append(cpts, r) // invalid bytes arrive as utf8.RuneError
	}
	var pieces []string
	var buf []byte
	emit := func(from, to int) {
		buf = buf[:0]
		for _, r := range cpts[from:to] {
			buf = utf8.AppendRune(buf, r)
		}
		pieces = append(pieces, string(buf))
	}
	end := len(cpts)
	class := func(i int) runeClass {
		if i >= end {
			return classEnd
		}
		return classify(cpts[i])
	}

	for pos := 0; pos < end; {
		start := pos
		c := cpts[pos]

		if c == '\'' && pos+1 < end {
			n1 := cpts[pos+1]
			if n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd' {
				emit(pos, pos+2)
				pos += 2
				continue
			}
			if pos+2 < end {
				n2 := cpts[pos+2]
				if (n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l') {
					emit(pos, pos+3)
					pos += 3
					continue
				}
			}
		}

		first := pos
		if c == ' ' {
			first = pos + 1
		}
		if k := class(first); k == classLetter || k == classNumber || k == classOther {
			pos = first
			for class(pos) == k {
				pos++
			}
			emit(start, pos)
			continue
		}

		ws := 0
		for class(pos+ws) == classSpace {
			ws++
		}
		if ws > 1 && pos+ws < end {
			pos += ws - 1
			emit(start, pos)
			continue
		}
		if ws > 0 {
			pos += ws
			emit(start, pos)
			continue
		}
		// Not reached: every character is whitespace, a letter, a number
		// or other. Kept so that the loop always advances.
		pos++
		emit(start, pos)
	}
	return pieces
}

// runeClass is the character class the GPT-2 pattern distinguishes.
type runeClass uint8

const (
	classEnd    runeClass = iota // past the end of the text
	classSpace                   // \s
	classLetter                  // \p{L}
	classNumber                  // \p{N}
	classOther                   // [^\s\p{L}\p{N}]
)

func classify(r rune) runeClass {
	switch {
	case unicode.IsSpace(r):
		return classSpace
	case unicode.IsLetter(r):
		return classLetter
	case unicode.IsNumber(r):
		return classNumber
	}
	return classOther
}
