// Package tokenizer turns text into token ids and back the way llama.cpp
// does, from the vocabulary stored in a GGUF file's tokenizer.ggml.* keys.
//
// Two models are implemented:
//
//   - "llama": the SentencePiece-style tokenizer. Spaces are escaped to
//     U+2581 ("▁"), a space is put in front of the text when the vocabulary
//     asks for it (AddSpacePrefix), the text is split into UTF-8 characters
//     and adjacent pieces are merged greedily, the pair whose merged text is
//     the token with the highest score first. A piece that is not a token
//     at the end is written as byte-fallback tokens <0xXX>.
//   - "gpt2": GPT-2 byte-level BPE. The text is split by the GPT-2
//     pre-tokenizer pattern, each piece's bytes are mapped to printable
//     characters (the byte-to-unicode table), and adjacent symbols are
//     merged by rank, the rank of a pair being its position in
//     tokenizer.ggml.merges.
//
// Special tokens. Text is always tokenized as plain text, as llama.cpp's
// llama_tokenize does with parse_special=false (the setting of its
// tokenizer test): "<s>" in the input is the three characters '<', 's',
// '>', never the BOS token. Control, unknown, unused and byte tokens are
// never matched from text; only normal and user-defined tokens are. As in
// llama.cpp, the text of a user-defined token is cut out of the input first
// and always becomes that token. Encode adds BOS and EOS only when asked
// (addSpecial) and the vocabulary says so (AddBOS, AddEOS).
//
// Decoding. Control, unknown and unused tokens decode to nothing, byte
// tokens to their byte, user-defined tokens to their text unchanged,
// normal tokens to their text with "▁" turned back into a space (llama) or
// with the byte-to-unicode mapping undone (gpt2). For the llama model with
// AddSpacePrefix, Decode drops one leading space from the output, the one
// Encode put there, so Decode(Encode(s)) == s for valid UTF-8 s without
// U+2581 or user-defined token text in it. The streaming Decoder does not
// drop it: it renders tokens the way a generation loop prints them.
package tokenizer
