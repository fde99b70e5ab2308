package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/imatrix"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/quantize"
)

func runArgs(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// llamaHparams adds the hyperparameters of a small llama (64 wide, 4
// heads of 16, blocks layers) to w, so that the runner's checks pass.
func llamaHparams(w *gguf.Writer, blocks uint32) {
	w.Add("general.architecture", "llama")
	w.Add("llama.block_count", blocks)
	w.Add("llama.context_length", uint32(128))
	w.Add("llama.embedding_length", uint32(64))
	w.Add("llama.feed_forward_length", uint32(40))
	w.Add("llama.attention.head_count", uint32(4))
	w.Add("llama.attention.layer_norm_rms_epsilon", float32(1e-5))
}

// source writes a small f32 llama the runner takes: rows of 64 (legacy
// types fit, K types do not) and of 40 (ffn_down: nothing quantized fits).
func source(t testing.TB) string {
	t.Helper()
	return sourceWith(t, "", 0)
}

// sourceWith is source with the first element of tensor poison set to
// value.
func sourceWith(t testing.TB, poison string, value float32) string {
	t.Helper()
	w := gguf.NewWriter()
	llamaHparams(w, 1)
	add := func(name string, ne ...int64) {
		n := int64(1)
		for _, x := range ne {
			n *= x
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i%17) / 17
		}
		if name == poison {
			v[0] = value
		}
		b := make([]byte, 4*n)
		if err := quant.QuantizeRow(quant.F32, v, b); err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensor(name, quant.F32, ne, b); err != nil {
			t.Fatal(err)
		}
	}
	add("token_embd.weight", 64, 10)
	add("blk.0.attn_norm.weight", 64)
	for _, n := range []string{"attn_q", "attn_k", "attn_v", "attn_output"} {
		add("blk.0."+n+".weight", 64, 64)
	}
	add("blk.0.ffn_norm.weight", 64)
	add("blk.0.ffn_gate.weight", 64, 40)
	add("blk.0.ffn_up.weight", 64, 40)
	add("blk.0.ffn_down.weight", 40, 64)
	add("output_norm.weight", 64)
	add("output.weight", 64, 10)
	path := filepath.Join(t.TempDir(), "src.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestQuantizeCommand runs the command and checks the file and its
// per-tensor report.
func TestQuantizeCommand(t *testing.T) {
	src := source(t)
	out := filepath.Join(t.TempDir(), "out.gguf")
	// Flags after the arguments work too.
	code, stdout, stderr := runArgs(src, out, "Q4_K_M", "-t", "2", "-token-embd-type", "q8_0")
	if code != exitOK {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]quant.Type{
		"token_embd.weight":      quant.Q8_0, // -token-embd-type
		"blk.0.attn_norm.weight": quant.F32,  // 1-D
		"blk.0.attn_q.weight":    quant.Q5_0, // q4_K's fallback
		"blk.0.ffn_down.weight":  quant.F16,  // rows of 40
		"output.weight":          quant.Q8_0, // output rule: rows do not fit q4_K
	}
	for name, typ := range want {
		if ti, _ := f.TensorInfo(name); ti.Type != typ {
			t.Errorf("%s: %v, want %v", name, ti.Type, typ)
		}
	}
	if ft, _ := f.Uint(quantize.KeyFileType); ft != uint64(quantize.FileTypeQ4_K_M) {
		t.Errorf("general.file_type = %d, want 15", ft)
	}
	for _, s := range []string{
		"blk.0.attn_q.weight", "[64, 64]", "f32 -> q5_0", "FALLBACK from q4_K",
		"blk.0.ffn_down.weight", "rows of 40", "bits per weight", "7 tensors fell back",
	} {
		if !strings.Contains(stdout, s) {
			t.Errorf("output lacks %q:\n%s", s, stdout)
		}
	}
}

// TestBadArgs: every bad command line exits 2 with one line naming the
// argument at fault.
func TestBadArgs(t *testing.T) {
	src := source(t)
	out := filepath.Join(t.TempDir(), "out.gguf")
	tests := []struct {
		args []string
		want string
	}{
		{nil, "want 3 arguments (in.gguf out.gguf TYPE), got 0"},
		{[]string{src, out}, "got 2"},
		{[]string{src, out, "q4_0", "extra"}, "got 4"},
		{[]string{src, out, "q9_9"}, `TYPE: unknown type "q9_9"`},
		{[]string{src, out, "q8_K"}, `TYPE: unknown type "q8_K"`},
		{[]string{"-t", "-1", src, out, "q4_0"}, `invalid value "-1" for flag -t: want 0 (one per CPU) to 4096 threads`},
		{[]string{src, src, "q8_0"}, "is the input"},
		{[]string{src, filepath.Join(filepath.Dir(src), ".", filepath.Base(src)), "q8_0"}, "is the input"},
		{[]string{src, filepath.Join(t.TempDir(), "no", "dir", "out.gguf"), "q8_0"}, "does not exist"},
		{[]string{src, t.TempDir(), "q8_0"}, "is a folder"},
		{[]string{"-t", "x", src, out, "q4_0"}, `invalid value "x" for flag -t`},
		{[]string{src, out, "iq2_xxs"}, "TYPE: IQ2_XXS needs an importance matrix (-imatrix FILE)"},
		{[]string{src, out, "IQ1_M"}, "IQ1_M needs an importance matrix"},
		{[]string{src, out, "q2_K_S"}, "Q2_K_S needs an importance matrix"},
		{[]string{src, out, "iq3_xs"}, "IQ3_XS needs an importance matrix"},
		{[]string{src, out, "IQ2_M"}, "IQ2_M needs an importance matrix"},
		{[]string{"-output-type", "q9", src, out, "q4_0"}, "-output-type"},
		{[]string{"-token-embd-type", "q8_1", src, out, "q4_0"}, "-token-embd-type"},
		{[]string{"-nosuch", src, out, "q4_0"}, "-nosuch"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runArgs(tt.args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("quantize %q: exit %d, stdout %q, stderr %q; want exit 2 and one line containing %q", tt.args, code, stdout, stderr, tt.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a bad command line wrote %s", out)
	}
}

// TestImatrixFailures: a missing, corrupt or mismatched importance
// matrix is exit 1 with the reason, and no file.
func TestImatrixFailures(t *testing.T) {
	src := source(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.gguf")
	corrupt := filepath.Join(dir, "corrupt.dat")
	os.WriteFile(corrupt, []byte{1, 0, 0, 0, 9, 0, 0, 0}, 0o644)
	// An entry for blk.0.attn_q.weight of the wrong width (the model's is 64).
	wrong := filepath.Join(dir, "wrong.gguf")
	m := &imatrix.Matrix{Entries: map[string]*imatrix.Entry{"blk.0.attn_q.weight": {Sums: make([]float32, 32), Counts: []int64{1}}}, Datasets: []string{"x"}, ChunkSize: 1}
	var b bytes.Buffer
	if err := m.WriteGGUF(&b); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(wrong, b.Bytes(), 0o644)
	for _, c := range []struct{ im, want string }{
		{filepath.Join(dir, "missing.gguf"), "no such file"},
		{corrupt, "legacy imatrix: 1 entries cannot fit in 8 bytes"},
		{wrong, "the importance matrix has 32 weights for tensor blk.0.attn_q.weight, which needs 64"},
	} {
		code, _, stderr := runArgs("-imatrix", c.im, src, out, "q4_0")
		if code != exitFailure || !strings.Contains(stderr, c.want) {
			t.Errorf("-imatrix %s: exit %d, stderr %q; want 1 and %q", filepath.Base(c.im), code, stderr, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("-imatrix %s left %s", filepath.Base(c.im), out)
		}
	}
}

// TestFailures: a missing or corrupt input is exit 1 with the error.
func TestFailures(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.gguf")
	os.WriteFile(bad, []byte("GGUF\x03\x00\x00\x00garbage"), 0o644)
	for _, in := range []string{filepath.Join(dir, "missing.gguf"), bad} {
		code, _, stderr := runArgs(in, filepath.Join(dir, "out.gguf"), "q8_0")
		if code != exitFailure || !strings.Contains(stderr, filepath.Base(in)) && !strings.Contains(stderr, "gguf") {
			t.Errorf("quantize %s: exit %d, stderr %q", in, code, stderr)
		}
	}
}

func TestHelpAndRules(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"-rules"}, {"-help"}} {
		code, stdout, _ := runArgs(args...)
		if code != exitOK || !strings.Contains(stdout, "q4_K_M") || !strings.Contains(stdout, "use_more_bits") || !strings.Contains(stdout, "Fallbacks") {
			t.Errorf("quantize %q: exit %d, output %q", args, code, stdout)
		}
	}
}

// TestInputNeverOverwritten: the output named as the input by any path
// (the same name, another spelling, a symbolic or a hard link) is refused
// before any work, and the input stays byte for byte what it was.
func TestInputNeverOverwritten(t *testing.T) {
	src := source(t)
	dir := filepath.Dir(src)
	before, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(dir, "sym.gguf")
	hard := filepath.Join(dir, "hard.gguf")
	if err := os.Symlink(src, sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(src, hard); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(".", src)
	if err != nil {
		rel = src
	}
	for _, out := range []string{src, filepath.Join(dir, ".", "src.gguf"), sym, hard, rel} {
		code, stdout, stderr := runArgs(src, out, "q8_0")
		if code != exitUsage || !strings.Contains(stderr, "is the input") {
			t.Errorf("quantize IN %s: exit %d, stderr %q", out, code, stderr)
		}
		if strings.Contains(stdout, "tensors to") {
			t.Errorf("quantize IN %s started work: %s", out, stdout)
		}
	}
	after, _ := os.ReadFile(src)
	if !bytes.Equal(before, after) {
		t.Error("the input changed")
	}
}

// TestBlockCountZero: a file whose block_count says 0 while it has layer
// tensors is refused, not quantized with every layer on the wrong rule.
func TestBlockCountZero(t *testing.T) {
	w := gguf.NewWriter()
	llamaHparams(w, 0)
	for _, name := range []string{"token_embd.weight", "blk.0.attn_v.weight", "blk.1.attn_v.weight", "output.weight"} {
		if err := w.AddTensor(name, quant.F32, []int64{64, 4}, make([]byte, 4*64*4)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "zero.gguf")
	if err := w.WriteFile(src); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.gguf")
	code, _, stderr := runArgs(src, out, "q4_K_M")
	if code != exitFailure || !strings.Contains(stderr, "block_count = 0") {
		t.Errorf("exit %d, stderr %q; want exit 1 naming block_count = 0", code, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files left behind: %v", ents)
	}
}

// TestFailureLeavesNoFile: a tensor with a NaN fails the run, which leaves
// neither the output nor a temporary file.
func TestFailureLeavesNoFile(t *testing.T) {
	nan := sourceWith(t, "blk.0.attn_q.weight", float32(math.NaN()))
	dir := t.TempDir()
	src := filepath.Join(dir, "nan.gguf")
	b, err := os.ReadFile(nan)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runArgs(src, filepath.Join(dir, "out.gguf"), "q8_0")
	if code != exitFailure || !strings.Contains(stderr, "blk.0.attn_q.weight") || !strings.Contains(stderr, "NaN") {
		t.Errorf("exit %d, stderr %q; want exit 1 naming the tensor and the NaN", code, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files left behind: %v", ents)
	}
}
