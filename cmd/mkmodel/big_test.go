package main

import (
	"math"
	"testing"
	"time"

	"github.com/kernbench/kernbench/tokenizer"
)

// TestPreset100M writes the 100m preset as q4_0, loads it and decodes a
// prompt: the model meant for speed tests must load and run. It takes a
// few seconds, so -short skips it.
func TestPreset100M(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 60 MiB model")
	}
	start := time.Now()
	path, out := mk(t, "m100.gguf", "-preset", "100m", "-type", "q4_0")
	t.Logf("%s(%.1f s)", out, time.Since(start).Seconds())
	tok, err := tokenizer.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := tok.Encode("the quick brown fox", true)
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	logits := decodeLogits(t, path, prompt)
	if len(logits) != 32000 {
		t.Fatalf("%d logits", len(logits))
	}
	for i, l := range logits {
		if math.IsNaN(float64(l)) || math.IsInf(float64(l), 0) {
			t.Fatalf("logit %d is %v", i, l)
		}
	}
	mean, std := meanStd(logits)
	t.Logf("decoded %d tokens in %.2f s: logits mean %.3f std %.3f", len(prompt), time.Since(start).Seconds(), mean, std)
	if std < 0.5 || std > 2 {
		t.Errorf("logits std %.3f, want near 1", std)
	}
}
