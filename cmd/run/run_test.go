package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/internal/require"
	shared "github.com/kernbench/kernbench/internal/shareddata"
	"github.com/kernbench/kernbench/internal/testmodel"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
	"github.com/kernbench/kernbench/ops/registry"
	"github.com/kernbench/kernbench/tokenizer"
)

// testdata returns the path of a shared test file, or skips the test.
func testdata(t *testing.T, name string) string {
	t.Helper()
	return shared.Path(t, name)
}

// runCmd runs the command in-process.
func runCmd(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestFlagErrors(t *testing.T) {
	type flagCase struct {
		args []string
		flag string // the flag the message must name
	}
	cases := []flagCase{
		{[]string{"-p", "x"}, "-m"},
		{[]string{"-m", "x.gguf", "-zzz"}, "-zzz"},
		{[]string{"-m", "x.gguf", "-n", "abc"}, "-n"},
		{[]string{"-m", "x.gguf", "-n", "-2"}, "-n"},
		{[]string{"-m", "x.gguf", "-n", "4,8"}, "-n"},
		{[]string{"-m", "x.gguf", "-temp", "warm"}, "-temp"},
		{[]string{"-m", "x.gguf", "-top-p", "2"}, "-top-p"},
		{[]string{"-m", "x.gguf", "-min-p", "-0.1"}, "-min-p"},
		{[]string{"-m", "x.gguf", "-top-k", "-1"}, "-top-k"},
		{[]string{"-m", "x.gguf", "-repeat-last-n", "-2"}, "-repeat-last-n"},
		{[]string{"-m", "x.gguf", "-repeat-penalty", "0"}, "-repeat-penalty"},
		{[]string{"-m", "x.gguf", "-mirostat", "3"}, "-mirostat"},
		{[]string{"-m", "x.gguf", "-mirostat-lr", "-1"}, "-mirostat-lr"},
		{[]string{"-m", "x.gguf", "-seed", "-7"}, "-seed"},
		{[]string{"-m", "x.gguf", "-fa", "sometimes"}, "-fa"},
		{[]string{"-m", "x.gguf", "-kv-type", "q4_0"}, "-kv-type"},
		{[]string{"-m", "x.gguf", "-ctk", "f16", "-ctv", "f32"}, "-ctv"},
		{[]string{"-m", "x.gguf", "-kv-type", "q8_0", "-fa", "off"}, "-fa"},
		{[]string{"-m", "x.gguf", "-t", "-1"}, "-t"},
		{[]string{"-m", "x.gguf", "-ub", "0"}, "-ub"},
		{[]string{"-m", "x.gguf", "-p", "a", "-f", "b.txt"}, "-f"},
		{[]string{"-m", "x.gguf", "-bench", "-o", "xml"}, "-o"},
		{[]string{"-m", "x.gguf", "-bench", "-r", "0"}, "-r"},
		{[]string{"-m", "x.gguf", "-bench", "-p", "abc"}, "-p"},
		{[]string{"-m", "x.gguf", "-bench", "-n", "1,-4"}, "-n"},
		{[]string{"-m", "x.gguf", "-bench", "-p", "0", "-n", "0"}, "-p"},
		{[]string{"-m", "x.gguf", "-bench", "-f", "p.txt"}, "-f"},
		{[]string{"-m", "x.gguf", "stray"}, `"stray"`},
		{[]string{"-m", "x.gguf", "-backend", "tpu"}, `-backend: unknown backend "tpu"`},
		{[]string{"-m", "x.gguf", "-backend", "metal"}, "-backend: backend metal is unavailable: "},
		{[]string{"-m", "x.gguf", "-tier", "sse9"}, `-tier: backend cpu has no variant "sse9"`},
		{[]string{"-m", "x.gguf", "-fallback", "tpu"}, `-fallback: unknown backend "tpu"`},
		{[]string{"-m", "x.gguf", "-fallback", "cuda-0"}, "-fallback: backend cuda-0 is unavailable: "},
		{[]string{"-m", "x.gguf", "-tier", "generic", "-fallback", "cpu-generic"}, "-fallback: cpu-generic is the backend itself"},
		{[]string{"-m", "x.gguf", "-cpuprofile", "x.gguf"}, "-cpuprofile: x.gguf is the input"},
		{[]string{"-m", "x.gguf", "-cpuprofile", os.TempDir()}, "-cpuprofile: " + os.TempDir() + " is a folder"},
	}
	if tier := cputest.UnsupportedTier(); tier != "" {
		cases = append(cases, flagCase{[]string{"-m", "x.gguf", "-tier", tier}, "-tier: backend cpu-" + tier + " is unavailable"})
	}
	for _, tc := range cases {
		code, out, errs := runCmd(tc.args...)
		if code != cli.ExitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, code, cli.ExitUsage, errs)
			continue
		}
		if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tc.flag) || !strings.HasPrefix(errs, "run: ") {
			t.Errorf("%q: stderr %q: want one line naming %s", tc.args, errs, tc.flag)
		}
		if out != "" {
			t.Errorf("%q: stdout %q, want nothing", tc.args, out)
		}
	}
}

func TestHelp(t *testing.T) {
	code, out, errs := runCmd("-h")
	if code != cli.ExitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, f := range []string{"-top-k", "-mirostat-ent", "-bench", "-kv-type", "-fa", "Examples:", "(default 0.05)"} {
		if !strings.Contains(out, f) {
			t.Errorf("usage lacks %s", f)
		}
	}
	if strings.Contains(out, "0000000") {
		t.Errorf("usage prints a float32 default in float64 digits:\n%s", out)
	}
}

func TestBadModel(t *testing.T) {
	code, _, errs := runCmd("-m", "no-such-model.gguf", "-p", "hi")
	if code != cli.ExitFailure || !strings.Contains(errs, "no-such-model.gguf") {
		t.Errorf("missing file: exit %d, stderr %q", code, errs)
	}
	code, _, errs = runCmd("-m", testdata(t, "tinyllamas-stories-260k-f32.ggufv1.gguf"), "-p", "hi")
	if code != cli.ExitFailure || !strings.Contains(errs, "version 1") {
		t.Errorf("v1 file: exit %d, stderr %q; want a failure naming version 1", code, errs)
	}
}

// greedyDirect generates n tokens greedily with the model API, the way the
// command should, and returns the text printed after the prompt.
func greedyDirect(t *testing.T, path, prompt string, n int) string {
	t.Helper()
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tk, err := tokenizer.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	be := cputest.New(t, 2)
	defer be.Close()
	p := model.DefaultContextParams()
	p.NCtx, p.NBatch, p.NUBatch = 256, 256, 256 // as the command's -c 256
	ctx, err := m.NewContext(be, p)
	if err != nil {
		t.Fatal(err)
	}
	toks, err := tk.Encode(prompt, true)
	if err != nil {
		t.Fatal(err)
	}
	dec := tokenizer.NewDecoder(tk)
	for _, id := range toks {
		dec.Add(id)
	}
	if err := ctx.Decode(model.SimpleBatch(toks, 0, 0)); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	pos := int32(len(toks))
	for range n {
		l := ctx.Logits(-1)
		best := 0
		for i, v := range l {
			if v > l[best] {
				best = i
			}
		}
		if int32(best) == tk.Vocab().EOS {
			break
		}
		s, _ := dec.Add(int32(best))
		out.WriteString(s)
		if err := ctx.Decode(model.SimpleBatch([]int32{int32(best)}, pos, 0)); err != nil {
			t.Fatal(err)
		}
		pos++
	}
	out.WriteString(dec.Flush())
	return out.String()
}

func TestGreedyGeneration(t *testing.T) {
	path := testdata(t, "stories260K.gguf")
	const prompt = "Once upon a time"
	args := []string{"-m", path, "-temp", "0", "-p", prompt, "-n", "24", "-t", "2", "-c", "256"}
	code, out1, errs := runCmd(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, out2, _ := runCmd(args...)
	if out1 != out2 {
		t.Errorf("greedy runs differ:\n%q\n%q", out1, out2)
	}
	want := prompt + greedyDirect(t, path, prompt, 24) + "\n"
	if out1 != want {
		t.Errorf("output\n%q\nwant the model's greedy continuation\n%q", out1, want)
	}
	if len(out1) < len(prompt)+40 {
		t.Errorf("output %q is too short for 24 tokens", out1)
	}
	for _, s := range []string{"prompt eval time", "eval time", "tokens per second", "stopped: -n 24 reached", "/    23 runs"} {
		if !strings.Contains(errs, s) {
			t.Errorf("stderr lacks %q:\n%s", s, errs)
		}
	}
}

func TestSampledGenerationIsSeeded(t *testing.T) {
	path := testdata(t, "stories260K.gguf")
	args := []string{"-m", path, "-p", "The dog", "-n", "16", "-seed", "7", "-temp", "1.0", "-top-k", "0", "-top-p", "1", "-min-p", "0", "-t", "1", "-c", "64"}
	code, a, errs := runCmd(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, b, _ := runCmd(args...)
	if a != b {
		t.Errorf("same seed, different text:\n%q\n%q", a, b)
	}
	if !strings.Contains(errs, "seed 7") || !strings.Contains(errs, "dist") {
		t.Errorf("stderr does not report the seed and the dist sampler:\n%s", errs)
	}
	// Mirostat and the penalties run too.
	code, _, errs = runCmd("-m", path, "-p", "The dog", "-n", "8", "-mirostat", "2", "-repeat-penalty", "1.1", "-repeat-last-n", "-1", "-seed", "1", "-c", "64")
	if code != 0 || !strings.Contains(errs, "mirostat") {
		t.Errorf("mirostat run: exit %d, stderr %s", code, errs)
	}
}

func TestPromptFile(t *testing.T) {
	path := testdata(t, "stories260K.gguf")
	pf := filepath.Join(t.TempDir(), "prompt.txt")
	if err := os.WriteFile(pf, []byte("Once upon a time"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, a, errs := runCmd("-m", path, "-f", pf, "-temp", "0", "-n", "8", "-c", "64")
	_, b, _ := runCmd("-m", path, "-p", "Once upon a time", "-temp", "0", "-n", "8", "-c", "64")
	if a != b || !strings.HasPrefix(a, "Once upon a time") {
		t.Errorf("-f gives %q, -p gives %q (%s)", a, b, errs)
	}
	if code, _, errs := runCmd("-m", path, "-f", filepath.Join(t.TempDir(), "none.txt")); code != cli.ExitFailure || !strings.Contains(errs, "none.txt") {
		t.Errorf("missing prompt file: exit %d, %q", code, errs)
	}
}

func TestContextFull(t *testing.T) {
	path := testdata(t, "stories260K.gguf")
	code, out, errs := runCmd("-m", path, "-p", "Once upon a time", "-temp", "0", "-c", "12", "-ignore-eos", "-fa", "off", "-kv-type", "f32")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "context full (12 tokens)") {
		t.Errorf("stderr lacks the context-full stop:\n%s", errs)
	}
	// 5 prompt tokens (BOS included) and 7 generated fill the 12 cells;
	// the 8th is sampled from the last logits and printed too.
	if !strings.Contains(errs, "/     7 runs") || !strings.HasPrefix(out, "Once upon a time") {
		t.Errorf("stdout %q stderr\n%s", out, errs)
	}
	code, _, errs = runCmd("-m", path, "-p", strings.Repeat("one two ", 20), "-c", "16")
	if code != cli.ExitUsage || !strings.Contains(errs, "-c") {
		t.Errorf("prompt longer than the context: exit %d, %q", code, errs)
	}
}

func TestTinyRandom(t *testing.T) {
	path := testdata(t, "llama-2-tiny-random.gguf")
	code, out, errs := runCmd("-m", path, "-p", "Hello world", "-n", "8", "-temp", "0", "-c", "64")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.HasPrefix(out, "Hello world") || !strings.Contains(errs, "F16") {
		t.Errorf("stdout %q, stderr\n%s", out, errs)
	}
}

func TestMeanStd(t *testing.T) {
	for _, tc := range []struct {
		v         []float64
		mean, std float64
	}{
		{[]float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, math.Sqrt(32.0 / 7)},
		{[]float64{3}, 3, 0},
		{nil, 0, 0},
		{[]float64{1, 3}, 2, math.Sqrt2},
	} {
		m, s := meanStd(tc.v)
		if math.Abs(m-tc.mean) > 1e-12 || math.Abs(s-tc.std) > 1e-12 {
			t.Errorf("meanStd(%v) = %v, %v; want %v, %v", tc.v, m, s, tc.mean, tc.std)
		}
	}
}

func TestModelInfo(t *testing.T) {
	path := testdata(t, "stories260K.gguf")
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	h := m.Hparams
	// Count the parameters from the shapes the hyperparameters imply.
	perLayer := 2*h.NEmbd + h.NEmbd*h.NHead*h.HeadDimK + 2*h.NEmbd*h.NEmbdKGQA() + h.NHead*h.HeadDimV*h.NEmbd + 3*h.NEmbd*h.NFF
	want := int64(2*h.NVocab*h.NEmbd + h.NEmbd + h.NLayer*perLayer)
	info := describe(path, m)
	if info.Params != want || info.Size != 4*want {
		t.Errorf("params %d size %d, want %d and %d (all F32)", info.Params, info.Size, want, 4*want)
	}
	if info.Desc != "llama 293K all F32" {
		t.Errorf("desc %q", info.Desc)
	}
	for _, tc := range []struct {
		n    int64
		want string
	}{{292800, "293K"}, {15_200_000, "15M"}, {7_241_000_000, "7.2B"}} {
		if got := sizeLabel(tc.n); got != tc.want {
			t.Errorf("sizeLabel(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
	if formatSize(1171200) != "1.12 MiB" || formatSize(3<<30) != "3.00 GiB" || formatParams(292800) != "0.29 M" || formatParams(7e9) != "7.00 B" {
		t.Error("size or params formatting")
	}
}

func TestBenchJSON(t *testing.T) {
	path := testdata(t, "stories260K.gguf")
	code, out, errs := runCmd("-m", path, "-bench", "-p", "32", "-n", "4", "-r", "3", "-t", "1", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var recs []map[string]any
	if err := json.Unmarshal([]byte(out), &recs); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records, want pp32 and tg4", len(recs))
	}
	for i, want := range []struct{ np, ng float64 }{{32, 0}, {0, 4}} {
		r := recs[i]
		if r["n_prompt"] != want.np || r["n_gen"] != want.ng || r["n_threads"] != 1.0 || r["model_n_params"] != 292800.0 {
			t.Errorf("record %d: %v", i, r)
		}
		ns, _ := r["samples_ns"].([]any)
		ts, _ := r["samples_ts"].([]any)
		if len(ns) != 3 || len(ts) != 3 {
			t.Fatalf("record %d: %d and %d samples, want 3", i, len(ns), len(ts))
		}
		var v []float64
		for j := range ts {
			x := ts[j].(float64)
			// Each speed is the test's tokens over that repetition's time.
			if w := 1e9 * (want.np + want.ng) / ns[j].(float64); math.Abs(x-w) > 1e-9*w {
				t.Errorf("record %d sample %d: %v t/s, want %v", i, j, x, w)
			}
			v = append(v, x)
		}
		m, s := meanStd(v)
		if math.Abs(r["avg_ts"].(float64)-m) > 1e-9*m || math.Abs(r["stddev_ts"].(float64)-s) > 1e-9*m+1e-12 {
			t.Errorf("record %d: avg_ts %v stddev_ts %v, want %v and %v", i, r["avg_ts"], r["stddev_ts"], m, s)
		}
	}
	for _, k := range []string{"build_commit", "cpu_info", "model_filename", "model_type", "model_size", "n_batch", "n_ubatch", "type_k", "type_v", "flash_attn", "test_time", "avg_ns", "stddev_ns"} {
		if _, ok := recs[0][k]; !ok {
			t.Errorf("record lacks %s", k)
		}
	}
}

// TestCPUProfile: -cpuprofile writes a profile pprof reads, holding the
// decode's samples, and leaves nothing at the path when the run fails.
func TestCPUProfile(t *testing.T) {
	path := testdata(t, "stories260K.gguf")
	prof := filepath.Join(t.TempDir(), "run.pprof")
	code, _, errs := runCmd("-m", path, "-bench", "-p", "64", "-n", "64", "-r", "3", "-t", "1", "-cpuprofile", prof)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	f, err := os.Open(prof)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("the profile does not parse: %v", err)
	}
	if len(p.SampleType) == 0 || p.SampleType[0].Type != "samples" {
		t.Errorf("sample types %v, want a CPU profile's", p.SampleType)
	}
	bad := filepath.Join(t.TempDir(), "bad.pprof")
	if code, _, _ := runCmd("-m", filepath.Join(t.TempDir(), "missing.gguf"), "-bench", "-cpuprofile", bad); code == 0 {
		t.Fatal("a missing model ran")
	}
	if _, err := os.Stat(bad); err == nil {
		t.Error("a failed run left a profile")
	}
}

func TestBenchMarkdownAndCSV(t *testing.T) {
	path := testdata(t, "stories260K.gguf")
	code, out, errs := runCmd("-m", path, "-bench", "-p", "16,32", "-n", "0", "-r", "2", "-t", "1", "-no-warmup", "-fa", "off")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 4 || !strings.Contains(lines[0], "| model") || !strings.Contains(lines[0], "t/s |") || !strings.Contains(lines[0], " fa |") {
		t.Fatalf("table:\n%s", out)
	}
	for i, name := range []string{"pp16", "pp32"} {
		row := lines[2+i]
		if !strings.Contains(row, " "+name+" |") || !strings.Contains(row, " ± ") || !strings.Contains(row, "llama 293K all F32") {
			t.Errorf("row %d %q lacks %s", i, row, name)
		}
	}
	code, out, errs = runCmd("-m", path, "-bench", "-p", "8", "-n", "2", "-r", "1", "-t", "1", "-o", "csv")
	if code != 0 {
		t.Fatalf("csv: exit %d: %s", code, errs)
	}
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("csv has %d lines, want a header and 2 rows:\n%s", len(lines), out)
	}
	head := strings.Split(lines[0], ",")
	for _, k := range []string{"model_filename", "n_prompt", "n_gen", "avg_ts", "stddev_ts"} {
		if !slices.Contains(head, k) {
			t.Errorf("csv header lacks %s", k)
		}
	}
	if n := len(strings.Split(lines[1], `","`)); n != len(head) {
		t.Errorf("csv row has %d fields, header %d", n, len(head))
	}
}

// TestEveryBackendGeneratesTheSameText runs the greedy generation on every
// registered backend that can open here and is not a CPU tier (the GPU
// backends, emulated ones included): each must print the CPU's text. A
// partial backend runs with the CPU as its fallback.
func TestEveryBackendGeneratesTheSameText(t *testing.T) {
	path := testdata(t, "stories260K.gguf")
	args := []string{"-m", path, "-temp", "0", "-p", "Once upon a time", "-n", "16", "-t", "2", "-c", "256"}
	code, want, errs := runCmd(args...)
	if code != 0 {
		t.Fatalf("cpu: exit %d: %s", code, errs)
	}
	n := 0
	for _, tg := range registry.Available() {
		if tg.Entry.Tiers {
			continue
		}
		n++
		t.Run(tg.Name(), func(t *testing.T) {
			code, got, errs := runCmd(append([]string{"-backend", tg.Name()}, args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if got != want {
				t.Errorf("text\n%q\nthe CPU's\n%q", got, want)
			}
		})
	}
	t.Logf("%d other backends", n)
}

// TestMetalEmuGreedy runs stories260K on metal-emu (every op on the Metal
// kernels, in the SIMT emulator): the greedy text is the CPU's, no speed
// is reported, and -bench is refused.
func TestMetalEmuGreedy(t *testing.T) {
	tg, err := registry.Resolve("metal-emu", "")
	if err != nil {
		t.Fatal(err)
	}
	if why := tg.Err(); why != nil {
		require.Skip(t, "metal-emu: %v", why)
	}
	path := testdata(t, "stories260K.gguf")
	const prompt = "Once upon a time"
	for _, fa := range []string{"on", "off"} {
		args := []string{"-m", path, "-temp", "0", "-p", prompt, "-n", "16", "-c", "256", "-fa", fa}
		code, cpuOut, errs := runCmd(args...)
		if code != 0 {
			t.Fatalf("cpu: exit %d: %s", code, errs)
		}
		code, emuOut, errs := runCmd(append(args, "-backend", "metal-emu")...)
		if code != 0 {
			t.Fatalf("metal-emu: exit %d: %s", code, errs)
		}
		if emuOut != cpuOut {
			t.Errorf("-fa %s: metal-emu printed\n%q\nthe CPU\n%q", fa, emuOut, cpuOut)
		}
		if strings.Contains(errs, "tokens per second") || !strings.Contains(errs, "metal-emu is emulated") {
			t.Errorf("metal-emu's stderr presents speed or does not say it is emulated:\n%s", errs)
		}
	}
	code, _, errs := runCmd("-m", path, "-bench", "-p", "8", "-n", "0", "-backend", "metal-emu")
	if code != 2 || !strings.Contains(errs, "is emulated") {
		t.Errorf("-bench on metal-emu: exit %d, %s", code, errs)
	}
}

// TestCudaEmuDryBench: -bench on cuda-emu is refused, unless it runs dry
// ($KERNBENCH_CUDA_EMU_EXEC=off), where the host path is what is timed:
// then the table comes, with warnings before and after it that the
// speeds are the host's alone.
func TestCudaEmuDryBench(t *testing.T) {
	tg, err := registry.Resolve("cuda-emu", "")
	if err != nil {
		t.Fatal(err)
	}
	if why := tg.Err(); why != nil {
		require.Skip(t, "cuda-emu: %v", why)
	}
	path := testdata(t, "stories260K.gguf")
	args := []string{"-m", path, "-bench", "-p", "0", "-n", "4", "-r", "1", "-backend", "cuda-emu"}
	if code, _, errs := runCmd(args...); code != 2 || !strings.Contains(errs, "is emulated") {
		t.Errorf("-bench on cuda-emu: exit %d, %s", code, errs)
	}
	t.Setenv("KERNBENCH_CUDA_EMU_EXEC", "off")
	code, out, errs := runCmd(args...)
	if code != 0 || !strings.Contains(out, "tg4") {
		t.Fatalf("-bench on cuda-emu running dry: exit %d, %s\n%s", code, out, errs)
	}
	if strings.Count(errs, "WARNING: cuda-emu r") != 2 || !strings.Contains(errs, "host path's alone") {
		t.Errorf("-bench on cuda-emu running dry does not warn before and after:\n%s", errs)
	}
}

// TestNaNWeight: a NaN in a weight makes the logits NaN, which is an error
// naming the first node that went non-finite (its layer and op), not
// text sampled from NaNs.
func TestNaNWeight(t *testing.T) {
	path := testmodel.Poisoned(t, "stories260K.gguf", "blk.2.ffn_up.weight", float32(math.NaN()))
	code, _, errs := runCmd("-m", path, "-p", "Once upon a time", "-n", "4", "-temp", "0")
	if code != cli.ExitFailure {
		t.Fatalf("exit %d, want 1; stderr %q", code, errs)
	}
	t.Log(errs)
	for _, s := range []string{"after the prompt: the logits are not finite", "layer 2", "MUL_MAT(f32)", "ffn"} {
		if !strings.Contains(errs, s) {
			t.Errorf("stderr lacks %q:\n%s", s, errs)
		}
	}
}
