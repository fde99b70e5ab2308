package main

import (
	"fmt"

	"github.com/kernbench/kernbench/tokenizer"
)

// minVocab is the smallest vocabulary: the three special tokens and the
// 256 byte tokens.
const minVocab = 3 + 256

// Special token ids, as in the LLaMA vocabulary.
const (
	tokUNK = 0
	tokBOS = 1
	tokEOS = 2
)

// buildVocab returns a SentencePiece-style (llama) vocabulary of n tokens:
// <unk>, <s> and </s>; the byte tokens <0x00> ... <0xFF>; then normal
// pieces with descending scores: "▁", the printable ASCII characters,
// "▁" followed by each lowercase letter, then for lengths 2, 3, ... every
// string of lowercase letters with "▁" in front and then without, in
// alphabetical order, until the vocabulary is full.
//
// Every piece longer than one character is the concatenation of an
// earlier piece and a single character, so the tokenizer's merges reach
// it, and text of any bytes round-trips through the byte tokens.
func buildVocab(n int) (*tokenizer.Vocab, error) {
	if n < minVocab {
		return nil, fmt.Errorf("a vocabulary needs at least %d tokens (3 special and 256 byte tokens), not %d", minVocab, n)
	}
	v := &tokenizer.Vocab{
		Model:          tokenizer.ModelSPM,
		Pre:            "default",
		Tokens:         make([]string, 0, n),
		Scores:         make([]float32, 0, n),
		Types:          make([]tokenizer.TokenType, 0, n),
		BOS:            tokBOS,
		EOS:            tokEOS,
		UNK:            tokUNK,
		PAD:            -1,
		AddBOS:         true,
		AddSpacePrefix: true,
	}
	add := func(s string, t tokenizer.TokenType, score float32) bool {
		if len(v.Tokens) >= n {
			return false
		}
		v.Tokens = append(v.Tokens, s)
		v.Types = append(v.Types, t)
		v.Scores = append(v.Scores, score)
		return true
	}
	add("<unk>", tokenizer.TypeUnknown, 0)
	add("<s>", tokenizer.TypeControl, 0)
	add("</s>", tokenizer.TypeControl, 0)
	for b := range 256 {
		add(fmt.Sprintf("<0x%02X>", b), tokenizer.TypeByte, 0)
	}
	rank := 0
	piece := func(s string) bool {
		rank++
		return add(s, tokenizer.TypeNormal, -float32(rank))
	}
	if !piece("▁") {
		return v, nil
	}
	for c := byte(33); c < 127; c++ {
		if !piece(string(c)) {
			return v, nil
		}
	}
	for c := byte('a'); c <= 'z'; c++ {
		if !piece("▁" + string(c)) {
			return v, nil
		}
	}
	for length := 2; len(v.Tokens) < n; length++ {
		for _, prefix := range []string{"▁", ""} {
			letters := make([]byte, length)
			for i := range letters {
				letters[i] = 'a'
			}
			for {
				if !piece(prefix + string(letters)) {
					return v, nil
				}
				// Next string in alphabetical order (an odometer).
				i := length - 1
				for i >= 0 && letters[i] == 'z' {
					letters[i] = 'a'
					i--
				}
				if i < 0 {
					break
				}
				letters[i]++
			}
		}
	}
	return v, nil
}
