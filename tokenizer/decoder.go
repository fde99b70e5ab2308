package tokenizer

import (
	"fmt"
	"unicode/utf8"
)

// pieceAppender is implemented by this package's tokenizers: it appends the
// bytes of one token exactly, without Decode's leading-space rule.
type pieceAppender interface {
	appendPiece(dst []byte, id int32) ([]byte, error)
}

// Decoder decodes a stream of token ids, as a generation loop produces
// them, into text. Byte tokens can split a character over several tokens,
// so Decoder holds back the bytes of an incomplete UTF-8 sequence until the
// tokens that complete it arrive, and only ever returns valid UTF-8.
//
// Unlike Tokenizer.Decode, Decoder keeps every leading space: the first
// token "▁Once" comes out as " Once". Make one with NewDecoder; a zero
// Decoder returns an error from Add.
type Decoder struct {
	t       Tokenizer
	pending []byte
}

// NewDecoder returns a Decoder for t.
func NewDecoder(t Tokenizer) *Decoder { return &Decoder{t: t} }

// Add decodes one more token and returns the text it completes, which may
// be "" (a control token, or part of a character). An id out of range is
// an error and leaves the Decoder as it was.
func (d *Decoder) Add(id int32) (string, error) {
	if d == nil || d.t == nil {
		return "", fmt.Errorf("tokenizer: Decoder without a Tokenizer (use NewDecoder)")
	}
	n := len(d.pending)
	var err error
	if pa, ok := d.t.(pieceAppender); ok {
		d.pending, err = pa.appendPiece(d.pending, id)
	} else {
		var s string
		s, err = d.t.Decode([]int32{id})
		d.pending = append(d.pending, s...)
	}
	if err != nil {
		d.pending = d.pending[:n]
		return "", err
	}
	return d.take(false), nil
}

// Flush returns whatever is held back, an incomplete UTF-8 sequence at the
// end of the stream, with U+FFFD for each byte that is not part of a valid
// character, and resets the Decoder.
func (d *Decoder) Flush() string { return d.take(true) }

// take removes and returns the longest prefix of pending that is complete
// (all of it when flush), with invalid bytes replaced by U+FFFD.
func (d *Decoder) take(flush bool) string {
	var out []byte
	i := 0
	for i < len(d.pending) {
		rest := d.pending[i:]
		if !flush && !utf8.FullRune(rest) {
			break // the start of a character whose other bytes are to come
		}
		r, n := utf8.DecodeRune(rest)
		if r == utf8.RuneError && n <= 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
			i++
			continue
		}
		out = append(out, rest[:n]...)
		i += n
	}
	d.pending = append(d.pending[:0], d.pending[i:]...)
	return string(out)
}
