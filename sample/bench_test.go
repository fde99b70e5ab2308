package sample

import "testing"

const benchVocab = 32000

func benchChain(b *testing.B, p Params) {
	logits := randLogits(99, benchVocab, 3)
	c, err := FromParams(p, benchVocab)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Sample(logits); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChain samples from 32000 logits with llama.cpp's default chain
// (top-k 40, top-p 0.95, min-p 0.05, temp 0.8, dist).
func BenchmarkChain(b *testing.B) { benchChain(b, DefaultParams()) }

// BenchmarkChainPenalties adds a repetition penalty over a 64-token window.
func BenchmarkChainPenalties(b *testing.B) {
	p := DefaultParams()
	p.RepeatPenalty = 1.1
	benchChain(b, p)
}

// BenchmarkChainTopPOnly runs top-p over the whole vocabulary (no top-k),
// exercising the partial sort.
func BenchmarkChainTopPOnly(b *testing.B) {
	p := DefaultParams()
	p.TopK, p.MinP = 0, 0
	benchChain(b, p)
}

// BenchmarkChainGreedy is temperature 0.
func BenchmarkChainGreedy(b *testing.B) {
	p := DefaultParams()
	p.Temp = 0
	benchChain(b, p)
}

// BenchmarkChainMirostatV2 sorts the whole vocabulary every step.
func BenchmarkChainMirostatV2(b *testing.B) {
	p := DefaultParams()
	p.Mirostat = 2
	benchChain(b, p)
}
