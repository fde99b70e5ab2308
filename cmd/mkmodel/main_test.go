package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/tokenizer"
)

func runArgs(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// mk runs mkmodel with args plus -o, failing the test unless it succeeds,
// and returns the path and the output.
func mk(t testing.TB, name string, args ...string) (string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	code, out, errOut := runArgs(append([]string{"-o", path}, args...)...)
	if code != exitOK {
		t.Fatalf("mkmodel %q: exit %d\n%s%s", args, code, out, errOut)
	}
	return path, out
}

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

// decodeLogits loads path and returns the logits of the last token of
// prompt.
func decodeLogits(t testing.TB, path string, prompt []int32) []float32 {
	t.Helper()
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	p := model.DefaultContextParams()
	p.NCtx, p.NBatch, p.NUBatch = 64, 64, 64
	c, err := m.NewContext(backend(t), p)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Decode(model.SimpleBatch(prompt, 0, 0)); err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), c.Logits(-1)...)
}

// meanStd returns the mean and standard deviation of v.
func meanStd(v []float32) (mean, std float64) {
	for _, x := range v {
		mean += float64(x)
	}
	mean /= float64(len(v))
	for _, x := range v {
		std += (float64(x) - mean) * (float64(x) - mean)
	}
	return mean, math.Sqrt(std / float64(len(v)))
}

// TestTinyModel writes the tiny preset and checks that model.Load and
// tokenizer.Load take it, that text round-trips through the tokenizer, and
// that a decode gives finite logits with a standard deviation near 1 (the
// weight scaling's promise), for several seeds and types.
func TestTinyModel(t *testing.T) {
	tests := []struct {
		args []string
		// types of some tensors in the file.
		types map[string]quant.Type
	}{
		{[]string{"-seed", "1"}, map[string]quant.Type{"blk.0.attn_q.weight": quant.F16, "blk.1.ffn_norm.weight": quant.F32, "output.weight": quant.F16}},
		{[]string{"-seed", "2", "-type", "q8_0"}, map[string]quant.Type{"blk.0.attn_q.weight": quant.Q8_0, "output.weight": quant.Q8_0, "output_norm.weight": quant.F32}},
		{[]string{"-seed", "3", "-type", "q4_0", "-ff", "172"}, map[string]quant.Type{"blk.0.ffn_up.weight": quant.Q4_0, "blk.0.ffn_down.weight": quant.F16, "output.weight": quant.Q8_0}},
		{[]string{"-seed", "4", "-type", "q4_K_M", "-embd", "256", "-heads", "8", "-tied"}, map[string]quant.Type{
			"blk.0.attn_q.weight": quant.Q4_K, "blk.0.attn_v.weight": quant.Q4_K, "blk.1.attn_v.weight": quant.Q6_K,
			"token_embd.weight": quant.Q6_K, "blk.1.ffn_down.weight": quant.Q8_0, "blk.0.ffn_down.weight": quant.Q5_0}},
	}
	texts := []string{"Hello world", "once upon a time, the quick brown fox", "ünïcödé ✓ 日本語 😀", "  two  spaces\nand a newline\t", "x"}
	for _, tt := range tests {
		path, out := mk(t, "m.gguf", append([]string{"-preset", "tiny"}, tt.args...)...)
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var params int64
		for _, ti := range f.Tensors {
			n := int64(1)
			for _, x := range ti.Ne {
				n *= x
			}
			params += n
		}
		for name, want := range tt.types {
			if ti, ok := f.TensorInfo(name); !ok || ti.Type != want {
				t.Errorf("%q: tensor %s has type %v (present %v), want %v", tt.args, name, ti.Type, ok, want)
			}
		}
		f.Close()
		if !strings.Contains(out, "("+strconv.FormatInt(params, 10)+")") {
			t.Errorf("%q: output does not report the %d parameters the file holds:\n%s", tt.args, params, out)
		}

		tok, err := tokenizer.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range texts {
			ids, err := tok.Encode(s, true)
			if err != nil {
				t.Fatal(err)
			}
			if ids[0] != tokBOS {
				t.Errorf("Encode(%q) does not start with BOS: %v", s, ids)
			}
			back, err := tok.Decode(ids)
			if err != nil || back != s {
				t.Errorf("Decode(Encode(%q)) = %q, %v", s, back, err)
			}
		}
		prompt, _ := tok.Encode("once upon a time there was", true)
		logits := decodeLogits(t, path, prompt)
		if len(logits) != 512 {
			t.Fatalf("%d logits, want 512", len(logits))
		}
		for i, l := range logits {
			if math.IsNaN(float64(l)) || math.IsInf(float64(l), 0) {
				t.Fatalf("%q: logit %d is %v", tt.args, i, l)
			}
		}
		mean, std := meanStd(logits)
		t.Logf("%q: logits mean %.3f std %.3f", tt.args, mean, std)
		if std < 0.5 || std > 2 || math.Abs(mean) > 0.5 {
			t.Errorf("%q: logits mean %.3f std %.3f, want mean near 0 and std near 1", tt.args, mean, std)
		}
	}
}

// TestDeterministic: the file depends on the seed, not on the thread
// count.
func TestDeterministic(t *testing.T) {
	read := func(args ...string) []byte {
		path, _ := mk(t, "m.gguf", append([]string{"-preset", "tiny", "-type", "q4_0"}, args...)...)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b, c := read("-seed", "5", "-t", "1"), read("-seed", "5", "-t", "3"), read("-seed", "6", "-t", "3")
	if !bytes.Equal(a, b) {
		t.Error("-t 1 and -t 3 wrote different files")
	}
	if bytes.Equal(a, c) || len(a) != len(c) {
		t.Error("-seed 5 and -seed 6 wrote the same file (or files of different sizes)")
	}
}

// TestWeightScale: the matrices are drawn with standard deviation
// 1/sqrt(n_in), norms are 1.
func TestWeightScale(t *testing.T) {
	path, _ := mk(t, "m.gguf", "-preset", "tiny", "-type", "f32", "-ff", "256")
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, name := range []string{"token_embd.weight", "blk.0.attn_q.weight", "blk.1.ffn_down.weight", "output.weight", "blk.0.attn_norm.weight"} {
		ti, _ := f.TensorInfo(name)
		data, err := f.TensorData(name)
		if err != nil {
			t.Fatal(err)
		}
		v := make([]float32, len(data)/4)
		if err := quant.DequantizeRow(quant.F32, data, v); err != nil {
			t.Fatal(err)
		}
		mean, std := meanStd(v)
		if ti.NDims == 1 {
			if mean != 1 || std != 0 {
				t.Errorf("%s: mean %v std %v, want all ones", name, mean, std)
			}
			continue
		}
		want := 1 / math.Sqrt(float64(ti.Ne[0]))
		// The sample std of n normal draws is within a few 1/sqrt(2n) of
		// the true one.
		if tol := 5 * want / math.Sqrt(2*float64(len(v))); math.Abs(std-want) > tol || math.Abs(mean) > 5*want/math.Sqrt(float64(len(v))) {
			t.Errorf("%s: mean %.4g std %.4g, want 0 and %.4g", name, mean, std, want)
		}
	}
}

// TestBuildVocab checks the vocabulary's structure: special and byte
// tokens first, unique pieces, descending scores, and every piece
// reachable by the tokenizer's pairwise merges.
func TestBuildVocab(t *testing.T) {
	for _, n := range []int{259, 300, 2000, 40000} {
		v, err := buildVocab(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Tokens) != n || v.Validate() != nil {
			t.Fatalf("vocab %d: %d tokens, Validate %v", n, len(v.Tokens), v.Validate())
		}
		if v.Tokens[tokUNK] != "<unk>" || v.Tokens[tokBOS] != "<s>" || v.Tokens[tokEOS] != "</s>" || v.Tokens[3] != "<0x00>" || v.Tokens[258] != "<0xFF>" {
			t.Errorf("vocab %d: specials and bytes misplaced: %q", n, v.Tokens[:4])
		}
		seen := map[string]bool{}
		for i, s := range v.Tokens {
			if seen[s] {
				t.Fatalf("vocab %d: token %q twice", n, s)
			}
			seen[s] = true
			if i > minVocab && v.Scores[i] >= v.Scores[i-1] {
				t.Fatalf("vocab %d: score of %d (%q) not below its predecessor's", n, i, s)
			}
		}
		for i := minVocab; i < n; i++ {
			s := v.Tokens[i]
			if v.Types[i] != tokenizer.TypeNormal {
				t.Errorf("vocab %d: %q has type %v", n, s, v.Types[i])
			}
			if utf8.RuneCountInString(s) > 1 {
				_, size := utf8.DecodeLastRuneInString(s)
				if !seen[s[:len(s)-size]] || !seen[s[len(s)-size:]] {
					t.Errorf("vocab %d: %q is not the merge of two tokens", n, s)
				}
			}
		}
	}
	// With a large vocabulary, common words are merged into few tokens.
	v, _ := buildVocab(40000)
	tok, err := tokenizer.New(v)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := tok.Encode("the cat sat", false)
	if len(ids) != 3 {
		t.Errorf("Encode(the cat sat) = %d tokens %v, want 3 (▁the ▁cat ▁sat)", len(ids), ids)
	}
	if _, err := buildVocab(258); err == nil {
		t.Error("vocab of 258 accepted")
	}
}

// TestPresetOverride: explicit flags win over the preset's values.
func TestPresetOverride(t *testing.T) {
	c, err := parse([]string{"-o", "x", "-preset", "100m", "-layers", "1", "-vocab", "300"})
	if err != nil {
		t.Fatal(err)
	}
	want := shape{Layers: 1, Embd: 768, Heads: 12, KVHeads: 4, FF: 2048, Vocab: 300, Ctx: 2048}
	if c.shape != want {
		t.Errorf("shape %+v, want %+v", c.shape, want)
	}
	c, err = parse([]string{"-o", "x", "-preset", "stories15m"})
	if err != nil || !c.Tied {
		t.Errorf("stories15m: tied %v, %v; want tied", c.Tied, err)
	}
	c, err = parse([]string{"-o", "x", "-preset", "stories15m", "-tied=false"})
	if err != nil || c.Tied {
		t.Errorf("stories15m -tied=false: tied %v, %v", c.Tied, err)
	}
	for _, p := range presets {
		if err := p.synth().validate(); err != nil {
			t.Errorf("preset %s: %v", p.name, err)
		}
	}
	if n, _ := presets[2].params(false); n < 95e6 || n > 105e6 {
		t.Errorf("preset 100m has %d parameters", n)
	}
	// The count agrees with the tensor list.
	for _, tied := range []bool{false, true} {
		s := presets[2].shape
		var sum int64
		for _, td := range s.tensors(tied) {
			n := int64(1)
			for _, x := range td.ne {
				n *= x
			}
			sum += n
		}
		if n, ok := s.params(tied); !ok || n != sum {
			t.Errorf("params(tied %v) = %d, %v; the tensors hold %d", tied, n, ok, sum)
		}
	}
}

// TestBadArgs: every bad command line exits 2 with one line naming the
// argument at fault.
// TestArchPresets checks the architecture presets of make llama-side:
// each sets its architecture and sizes, lands near the parameter count
// the models have, and yields to flags given explicitly; a
// conflicting -arch is a usage error.
func TestArchPresets(t *testing.T) {
	tests := []struct {
		args           []string
		arch           string
		experts, used  int
		layers, embd   int
		paramsLo, hiPa float64
	}{
		{[]string{"-preset", "moe-100m"}, "mixtral", 8, 2, 8, 768, 105e6, 112e6},
		{[]string{"-preset", "gpt-oss-100m"}, "gpt-oss", 8, 4, 8, 768, 105e6, 112e6},
		{[]string{"-preset", "mamba-24x768"}, "mamba", 0, 0, 24, 768, 100e6, 150e6},
		{[]string{"-preset", "mamba2-24x768"}, "mamba2", 0, 0, 24, 768, 130e6, 150e6},
		{[]string{"-preset", "moe-100m", "-experts-used", "1", "-layers", "2"}, "mixtral", 8, 1, 2, 768, 20e6, 80e6},
		{[]string{"-preset", "moe-100m", "-arch", "mixtral"}, "mixtral", 8, 2, 8, 768, 105e6, 112e6},
		{[]string{"-preset", "100m", "-arch", "mixtral", "-ff", "512"}, "mixtral", 8, 2, 8, 768, 130e6, 140e6},
	}
	for _, tt := range tests {
		c, err := parse(append([]string{"-o", filepath.Join(t.TempDir(), "x.gguf")}, tt.args...))
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		n, _ := c.synth.paramCount()
		if c.Arch != tt.arch || c.Experts != tt.experts || c.ExpertsUsed != tt.used || c.Layers != tt.layers || c.Embd != tt.embd ||
			float64(n) < tt.paramsLo || float64(n) > tt.hiPa {
			t.Errorf("%q: arch %s, experts %d/%d, layers %d, embd %d, %d params; want %s %d/%d %d %d, %g..%g",
				tt.args, c.Arch, c.Experts, c.ExpertsUsed, c.Layers, c.Embd, n, tt.arch, tt.experts, tt.used, tt.layers, tt.embd, tt.paramsLo, tt.hiPa)
		}
	}
	if _, err := parse([]string{"-o", filepath.Join(t.TempDir(), "x.gguf"), "-preset", "mamba-24x768", "-arch", "llama"}); err == nil ||
		!strings.Contains(err.Error(), "preset mamba-24x768 is a mamba model, not llama") {
		t.Errorf("conflicting -arch: %v", err)
	}
}

func TestBadArgs(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{}, "-o: no output file"},
		{[]string{"-o", "x", "-layers", "0"}, "-layers: 0 is outside"},
		{[]string{"-o", "x", "-embd", "65"}, "-embd: 65 is not a multiple of -heads 4"},
		{[]string{"-o", "x", "-kv-heads", "3"}, "-kv-heads: 3 does not divide -heads 4"},
		{[]string{"-o", "x", "-embd", "12"}, "-heads: head size 3"},
		{[]string{"-o", "x", "-vocab", "100"}, "-vocab: 100 is less than"},
		{[]string{"-o", "x", "-vocab", "99999999"}, "-vocab: 99999999 is outside"},
		{[]string{"-o", "x", "-type", "q9_9"}, `-type: unknown type "q9_9"`},
		{[]string{"-o", "x", "-type", "iq2_xxs"}, "-type: iq2_xxs needs an importance matrix"},
		{[]string{"-o", "x", "-preset", "huge"}, `-preset: unknown preset "huge"`},
		{[]string{"-o", "x", "-t", "-2"}, `invalid value "-2" for flag -t: want 0 (one per CPU) to 4096 threads`},
		{[]string{"-o", filepath.Join(t.TempDir(), "no", "such", "dir", "m.gguf")}, "-o: folder"},
		{[]string{"-o", t.TempDir()}, "is a folder"},
		{[]string{"-o", "x", "-preset", "llama-7b"}, "x would be 13.5 GB (12.6 GiB) (6.74B parameters as f16), more than 4 GiB: give -force"},
		{[]string{"-o", "x", "-eps", "-1"}, "-eps: -1"},
		{[]string{"-o", "x", "-rope-base", "0"}, "-rope-base: 0"},
		{[]string{"-o", "x", "-output-type", "q8_K"}, "-output-type"},
		{[]string{"-o", "x", "-layers", "many"}, `invalid value "many" for flag -layers`},
		{[]string{"-nosuch"}, "-nosuch"},
		{[]string{"-o", "x", "stray"}, `unexpected argument "stray"`},
		{[]string{"-o", "x", "-layers", "1048576"}, "-layers: 1048576 is outside"},
		{[]string{"-o", "x", "-layers", "65536", "-embd", "16777216", "-heads", "1", "-kv-heads", "1"}, "too many parameters"},
	}
	for _, tt := range tests {
		code, out, errOut := runArgs(tt.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tt.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("mkmodel %q: exit %d, stdout %q, stderr %q; want exit 2 and one line containing %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := runArgs("-h")
	if code != exitOK || !strings.Contains(out, "100m") || !strings.Contains(out, "N(0, 1/n_in)") {
		t.Errorf("-h: exit %d, output %q", code, out)
	}
}

// TestWriteFailure: an output that cannot be written is refused before
// any work.
func TestWriteFailure(t *testing.T) {
	code, out, errOut := runArgs("-o", filepath.Join(t.TempDir(), "no", "such", "dir", "m.gguf"))
	if code != exitUsage || out != "" || !strings.Contains(errOut, "does not exist") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestSizeShown: mkmodel says how large the file is before writing it.
func TestSizeShown(t *testing.T) {
	_, out := mk(t, "m.gguf")
	if !strings.HasPrefix(out, "mkmodel: writing ") || !strings.Contains(strings.SplitN(out, "\n", 2)[0], " kB") {
		t.Errorf("first line %q", strings.SplitN(out, "\n", 2)[0])
	}
}
