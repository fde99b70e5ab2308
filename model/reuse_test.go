package model

import (
	"math"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// decodeTokens decodes toks one at a time after a prompt, returning each
// step's logits (copied).
func decodeTokens(t *testing.T, c *Context, prompt, toks []int32) [][]float32 {
	t.Helper()
	if err := c.Decode(SimpleBatch(prompt, 0, 0)); err != nil {
		t.Fatal(err)
	}
	var out [][]float32
	var b Batch
	for i, tok := range toks {
		b.SetSimple([]int32{tok}, int32(len(prompt)+i), 0)
		if err := c.Decode(b); err != nil {
			t.Fatal(err)
		}
		out = append(out, append([]float32(nil), c.Logits(-1)...))
	}
	return out
}

// TestReusedGraphMatchesFreshOne decodes tokens one by one (each step
// after the first reusing the graph, its cache views moved to the new
// cell) and checks every step's logits bit for bit against a context that
// builds a fresh graph per token, on both attention paths, across n_kv's
// padding boundaries (where the graph's shape changes).
func TestReusedGraphMatchesFreshOne(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	prompt := []int32{1, 403, 262, 491, 33}
	toks := make([]int32, 40)
	for i := range toks {
		toks[i] = int32(5 + i*37%400)
	}
	for _, flash := range []bool{true, false} {
		params := func(p *ContextParams) { p.NCtx, p.NBatch, p.NUBatch = 128, 128, 128 }
		reused := newCtx(t, m, flash, quant.F16, params)
		fresh := newCtx(t, m, flash, quant.F16, params)
		got := decodeTokens(t, reused, prompt, toks)
		// The fresh context forgets its graph before every token.
		if err := fresh.Decode(SimpleBatch(prompt, 0, 0)); err != nil {
			t.Fatal(err)
		}
		for i, tok := range toks {
			fresh.reuse = nil
			if err := fresh.Decode(SimpleBatch([]int32{tok}, int32(len(prompt)+i), 0)); err != nil {
				t.Fatal(err)
			}
			want := fresh.Logits(-1)
			for j := range want {
				if math.Float32bits(got[i][j]) != math.Float32bits(want[j]) {
					t.Fatalf("flash=%v token %d: logit %d = %v with the reused graph, %v with a fresh one", flash, i, j, got[i][j], want[j])
				}
			}
		}
	}
}

// TestDecodedTokenAllocatesNothing checks llama.cpp-style generation
// costs no garbage: once the graph of a token's shape exists, decoding
// the next token with a kept Batch allocates nothing.
func TestDecodedTokenAllocatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation count")
	}
	m := loadModel(t, "stories260K.gguf")
	c := newCtx(t, m, true, quant.F16, func(p *ContextParams) { p.NCtx, p.NBatch, p.NUBatch = 256, 256, 256 })
	prompt := make([]int32, 64)
	for i := range prompt {
		prompt[i] = int32(3 + i*7%500)
	}
	if err := c.Decode(SimpleBatch(prompt, 0, 0)); err != nil {
		t.Fatal(err)
	}
	// Positions 64..85 share n_kv = 96 (padding 32), so every token
	// after the first reuses its graph.
	var b Batch
	tok := []int32{7}
	pos := int32(len(prompt))
	allocs := testing.AllocsPerRun(20, func() {
		b.SetSimple(tok, pos, 0)
		pos++
		if err := c.Decode(b); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("a decoded token allocates %v times, want 0", allocs)
	}
}
