package quantize

import (
	"bytes"
	"math"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/tokenizer"
)

// sharedCPU is the tests' shared 2-thread CPU backend.
var sharedCPU = sync.OnceValues(func() (*cpu.Backend, error) { return cpu.New(2) })

// backend returns the shared 2-thread CPU backend, stopping the test when
// it cannot be made.
func backend(t testing.TB) *cpu.Backend {
	t.Helper()
	b, err := sharedCPU()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// promptLogits loads the model at path and returns the logits of every
// token of prompt, decoded in one batch with an f32 KV cache (so that
// only the weights differ between models).
func promptLogits(t testing.TB, path string, prompt []int32) [][]float32 {
	t.Helper()
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	p := model.DefaultContextParams()
	p.NCtx, p.NBatch, p.NUBatch, p.KVType = 64, 64, 64, quant.F32
	c, err := m.NewContext(backend(t), p)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b := model.SimpleBatch(prompt, 0, 0)
	for i := range b.Logits {
		b.Logits[i] = true
	}
	if err := c.Decode(b); err != nil {
		t.Fatal(err)
	}
	out := make([][]float32, len(prompt))
	for i := range out {
		out[i] = append([]float32(nil), c.Logits(i)...)
	}
	return out
}

// relErr returns the relative RMS error of got against want over all
// tokens, and the fraction of tokens whose top logit agrees.
func relErr(got, want [][]float32) (rel, agree float64) {
	var num, den float64
	for i := range want {
		bg, bw := 0, 0
		for j := range want[i] {
			d := float64(got[i][j] - want[i][j])
			num += d * d
			den += float64(want[i][j]) * float64(want[i][j])
			if got[i][j] > got[i][bg] {
				bg = j
			}
			if want[i][j] > want[i][bw] {
				bw = j
			}
		}
		if bg == bw {
			agree++
		}
	}
	return math.Sqrt(num / den), agree / float64(len(want))
}

// TestQuantizedModels quantizes the stories260K models, loads the results
// with model.Load and checks that their logits stay close to the f32
// model's. The bounds are a few times the errors measured when the test
// was written (reported in the log with -v): q8_0 keeps logits within
// about 1%, 4-bit types within about 10%.
//
// stories260K itself has rows of 64 and 172, which exercise the fallbacks;
// stories260K-wide computes the same function with rows of 256, which fit
// every type.
func TestQuantizedModels(t *testing.T) {
	tests := []struct {
		file   string
		scheme string
		maxRel float64
		// fallbacks is how many tensors must fall back.
		fallbacks int
	}{
		{"stories260K-wide.gguf", "q8_0", 0.02, 0},
		{"stories260K-wide.gguf", "q4_0", 0.2, 0},
		{"stories260K-wide.gguf", "q4_K_M", 0.2, 0},
		{"stories260K.gguf", "q8_0", 0.02, 5},
		{"stories260K.gguf", "q4_0", 0.2, 6},
	}
	dir := t.TempDir()
	base := map[string][][]float32{}
	for _, tt := range tests {
		src := testdata(t, tt.file)
		tok, err := tokenizer.Load(src)
		if err != nil {
			t.Fatal(err)
		}
		prompt, err := tok.Encode("Once upon a time, there was a little girl named Lily.", true)
		if err != nil {
			t.Fatal(err)
		}
		want, ok := base[tt.file]
		if !ok {
			want = promptLogits(t, src, prompt)
			base[tt.file] = want
		}
		out := filepath.Join(dir, tt.scheme+"-"+tt.file)
		f := openGGUF(t, src)
		sum, err := Quantize(f, out, Params{Scheme: mustScheme(t, tt.scheme), Threads: 2}, &bytes.Buffer{})
		if err != nil {
			t.Fatalf("%s %s: %v", tt.file, tt.scheme, err)
		}
		if sum.Fallbacks != tt.fallbacks {
			t.Errorf("%s %s: %d fallbacks, want %d", tt.file, tt.scheme, sum.Fallbacks, tt.fallbacks)
		}
		got := promptLogits(t, out, prompt)
		rel, agree := relErr(got, want)
		t.Logf("%s %s: %.2f bpw, logits relative RMS error %.4f, top token agrees on %.0f%% of %d tokens",
			tt.file, tt.scheme, sum.BitsPerWeight(), rel, 100*agree, len(prompt))
		if !(rel <= tt.maxRel) {
			t.Errorf("%s %s: relative error %.4f > %.4f", tt.file, tt.scheme, rel, tt.maxRel)
		}
		if agree < 0.5 {
			t.Errorf("%s %s: top token agrees on only %.0f%% of the tokens", tt.file, tt.scheme, 100*agree)
		}
	}
}
