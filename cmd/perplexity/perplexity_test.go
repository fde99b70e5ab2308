package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/internal/cli"
	shared "github.com/kernbench/kernbench/internal/shareddata"
	"github.com/kernbench/kernbench/internal/testmodel"
	"github.com/kernbench/kernbench/model"
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

// wikiText writes the first n bytes of wiki.test.raw (CRLF line endings)
// to a temporary file and returns its path and contents.
func wikiText(t *testing.T, n int) (string, string) {
	t.Helper()
	b, err := os.ReadFile(testdata(t, "wiki.test.raw"))
	if err != nil {
		t.Fatal(err)
	}
	b = b[:n]
	p := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, string(b)
}

var (
	runningRe = regexp.MustCompile(`\[(\d+)\]([0-9.]+),`)
	finalRe   = regexp.MustCompile(`Final estimate: PPL = ([0-9.]+) \+/- ([0-9.]+)`)
)

// parsePPL returns the running values and the final estimate of an output.
func parsePPL(t *testing.T, out string) (running []float64, ppl, unc float64) {
	t.Helper()
	for i, m := range runningRe.FindAllStringSubmatch(out, -1) {
		if k, _ := strconv.Atoi(m[1]); k != i+1 {
			t.Fatalf("running value %d is numbered %s", i+1, m[1])
		}
		v, _ := strconv.ParseFloat(m[2], 64)
		running = append(running, v)
	}
	m := finalRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no final estimate in\n%s", out)
	}
	ppl, _ = strconv.ParseFloat(m[1], 64)
	unc, _ = strconv.ParseFloat(m[2], 64)
	return running, ppl, unc
}

func relDiff(a, b float64) float64 { return math.Abs(a-b) / math.Max(math.Abs(b), 1e-300) }

func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"-f", "t.txt"}, "-m"},
		{[]string{"-m", "x.gguf"}, "-f"},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "-c", "1"}, "-c"},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "-c", "many"}, "-c"},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "--chunks", "0"}, "-chunks"},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "-chunks", "-3"}, "-chunks"},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "-b", "-1"}, "-b"},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "-t", "-1"}, "-t"},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "-c", "2"}, "-c"},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "-kld", "a", "-kld-base", "b"}, "-kld"},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "-fa", "x"}, "-fa"},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "-kv-type", "q8_0", "-fa", "off"}, "-fa"},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "-lf=maybe"}, "-lf"},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "-nope"}, "-nope"},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "extra"}, `"extra"`},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "-backend", "cuda"}, "-backend: backend cuda is unavailable: "},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "-backend", "cpu-sse9"}, `-backend: backend cpu has no variant "sse9"`},
		{[]string{"-m", "x.gguf", "-f", "t.txt", "-fallback", "tpu"}, `-fallback: unknown backend "tpu"`},
	} {
		code, out, errs := runCmd(tc.args...)
		if code != cli.ExitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, code, cli.ExitUsage, errs)
			continue
		}
		if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tc.flag) || !strings.HasPrefix(errs, "perplexity: ") {
			t.Errorf("%q: stderr %q: want one line naming %s", tc.args, errs, tc.flag)
		}
		if out != "" {
			t.Errorf("%q: stdout %q", tc.args, out)
		}
	}
	code, out, _ := runCmd("-h")
	if code != 0 || !strings.Contains(out, "-lf") || !strings.Contains(out, "CRLF") || !strings.Contains(out, "-kld-base") || !strings.Contains(out, "Examples:") {
		t.Errorf("-h: exit %d, usage lacks -lf's explanation or -kld-base:\n%s", code, out)
	}
}

// directPPL computes the running perplexities and the final estimate of
// llama-perplexity's method with the float64 reference forward pass.
func directPPL(t *testing.T, modelPath, text string, nCtx, nChunks int) (running []float64, ppl, unc float64) {
	t.Helper()
	m, err := model.Load(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tk, err := tokenizer.Load(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	toks, err := tk.Encode(text, true)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(toks) / nCtx; n < nChunks {
		t.Fatalf("text has only %d chunks", n)
	}
	var sum, sum2 float64
	var n int
	for k := range nChunks {
		chunk := append([]int32(nil), toks[k*nCtx:(k+1)*nCtx]...)
		chunk[0] = tk.Vocab().BOS
		logits, err := model.ReferenceForward(m, chunk)
		if err != nil {
			t.Fatal(err)
		}
		for p := nCtx / 2; p < nCtx-1; p++ {
			l := logits[p]
			mx := math.Inf(-1)
			for _, v := range l {
				mx = math.Max(mx, v)
			}
			var s float64
			for _, v := range l {
				s += math.Exp(v - mx)
			}
			nll := mx + math.Log(s) - l[chunk[p+1]]
			sum += nll
			sum2 += nll * nll
			n++
		}
		running = append(running, math.Exp(sum/float64(n)))
	}
	mean := sum / float64(n)
	ppl = math.Exp(mean)
	return running, ppl, ppl * math.Sqrt((sum2/float64(n)-mean*mean)/float64(n-1))
}

func TestPerplexityMatchesReference(t *testing.T) {
	mp := testdata(t, "stories260K.gguf")
	path, text := wikiText(t, 700)
	const nCtx, nChunks = 64, 4
	want, wantPPL, wantUnc := directPPL(t, mp, text, nCtx, nChunks)
	for _, extra := range [][]string{
		{"-kv-type", "f32", "-fa", "off"},
		{"-kv-type", "f32"},
		{}, // f16 cache, flash attention
	} {
		args := append([]string{"-m", mp, "-f", path, "-c", strconv.Itoa(nCtx), "--chunks", strconv.Itoa(nChunks), "-t", "2"}, extra...)
		code, out, errs := runCmd(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errs)
		}
		got, ppl, unc := parsePPL(t, out)
		// With an F32 cache the runner's logits match the float64
		// reference to float32 rounding (the model's tests allow 1e-5 of
		// their scale); measured here: PPL and its error agree to 3e-8
		// and 2e-7, the printing precision. An F16 cache rounds K and V to
		// 11 significant bits: measured 1.3e-5 on the final PPL and 4.3e-4
		// on the first chunk's (31 positions); allowed 2e-3, the model
		// tests' bound for logits with an F16 cache.
		tol := 1e-5
		if len(extra) == 0 {
			tol = 2e-3
		}
		if len(got) != nChunks {
			t.Fatalf("%v: %d running values, want %d", extra, len(got), nChunks)
		}
		for i := range got {
			if relDiff(got[i], want[i]) > tol {
				t.Errorf("%v: [%d] %v, reference %v", extra, i+1, got[i], want[i])
			}
		}
		t.Logf("%v: PPL %v ± %v, reference %v ± %v (relative differences %.1e, %.1e)", extra, ppl, unc, wantPPL, wantUnc, relDiff(ppl, wantPPL), relDiff(unc, wantUnc))
		if relDiff(ppl, wantPPL) > tol || relDiff(unc, wantUnc) > tol {
			t.Errorf("%v: PPL %v ± %v, reference %v ± %v", extra, ppl, unc, wantPPL, wantUnc)
		}
	}
}

func TestBatchingGivesTheSameResult(t *testing.T) {
	mp := testdata(t, "stories260K.gguf")
	path, _ := wikiText(t, 700)
	var first string
	for _, b := range []string{"0", "16", "256"} { // one chunk per batch, 4 batches per chunk, 4 chunks per batch
		code, out, errs := runCmd("-m", mp, "-f", path, "-c", "64", "-b", b, "-ub", "16", "-kv-type", "f32", "-t", "1")
		if code != 0 {
			t.Fatalf("-b %s: exit %d: %s", b, code, errs)
		}
		if !strings.Contains(errs, "scored per chunk") {
			t.Errorf("-b %s: stderr lacks the run summary:\n%s", b, errs)
		}
		if first == "" {
			first = out
			continue
		}
		r0, p0, _ := parsePPL(t, first)
		r1, p1, _ := parsePPL(t, out)
		if len(r0) != len(r1) || relDiff(p1, p0) > 1e-5 {
			t.Errorf("-b %s: %v chunks, PPL %v; -b 0: %v chunks, PPL %v", b, len(r1), p1, len(r0), p0)
		}
	}
}

func TestLF(t *testing.T) {
	mp := testdata(t, "stories260K.gguf")
	crlf, text := wikiText(t, 700)
	if !strings.Contains(text, "\r\n") {
		t.Fatal("the test text has no CRLF")
	}
	lf := filepath.Join(t.TempDir(), "lf.txt")
	if err := os.WriteFile(lf, []byte(strings.ReplaceAll(text, "\r\n", "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"-m", mp, "-c", "64", "-t", "1", "-progress=false"}
	_, a, _ := runCmd(append(common, "-f", crlf, "-lf")...)
	_, b, _ := runCmd(append(common, "-f", lf)...)
	_, c, _ := runCmd(append(common, "-f", crlf)...)
	if a != b {
		t.Errorf("-lf on the CRLF text differs from the LF text:\n%s\n%s", a, b)
	}
	if a == c {
		t.Error("-lf changed nothing on a CRLF text")
	}
}

func TestTooShort(t *testing.T) {
	mp := testdata(t, "stories260K.gguf")
	path, _ := wikiText(t, 60)
	code, _, errs := runCmd("-m", mp, "-f", path, "-c", "128")
	if code != cli.ExitFailure || !strings.Contains(errs, "needs at least 256") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	code, _, errs = runCmd("-m", testdata(t, "tinyllamas-stories-260k-f32.ggufv1.gguf"), "-f", path)
	if code != cli.ExitFailure || !strings.Contains(errs, "version 1") {
		t.Errorf("v1 model: exit %d, stderr %q", code, errs)
	}
}

var (
	meanKLDRe = regexp.MustCompile(`Mean    KLD: +(-?[0-9.]+) ± +([0-9.]+)`)
	sameTopRe = regexp.MustCompile(`Same top p: +([0-9.]+) ± +([0-9.]+) %`)
	pplQRe    = regexp.MustCompile(`Mean PPL\(Q\) +: +([0-9.]+)`)
	pplBaseRe = regexp.MustCompile(`Mean PPL\(base\) +: +([0-9.]+)`)
)

// field parses the first number re captures in out.
func field(t *testing.T, re *regexp.Regexp, out string) float64 {
	t.Helper()
	m := re.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %v in\n%s", re, out)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// makeBase writes a KLD base file of stories260K over the test text and
// returns its path, the text's path and the base run's PPL.
func makeBase(t *testing.T) (base, text string, ppl float64) {
	t.Helper()
	mp := testdata(t, "stories260K.gguf")
	text, _ = wikiText(t, 1200)
	base = filepath.Join(t.TempDir(), "base.kld")
	code, out, errs := runCmd("-m", mp, "-f", text, "-c", "64", "--chunks", "4", "-t", "2", "-kld-base", base)
	if code != 0 {
		t.Fatalf("-kld-base: exit %d: %s", code, errs)
	}
	_, ppl, _ = parsePPL(t, out)
	st, err := os.Stat(base)
	if err != nil {
		t.Fatal(err)
	}
	// Header, 4*64 tokens, 4*31 records of 16 + 2*512 bytes.
	if want := int64(kldHeaderSize + 4*4*64 + 4*31*(16+2*512)); st.Size() != want {
		t.Errorf("base file is %d bytes, want %d", st.Size(), want)
	}
	if _, err := os.Stat(base + ".tmp"); err == nil {
		t.Error("the temporary file is left behind")
	}
	return base, text, ppl
}

func TestKLDSelf(t *testing.T) {
	base, text, basePPL := makeBase(t)
	mp := testdata(t, "stories260K.gguf")
	code, out, errs := runCmd("-m", mp, "-kld", base, "-f", text, "-t", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if k := field(t, meanKLDRe, out); math.Abs(k) > 1e-6 {
		t.Errorf("mean KLD of a model with itself %v, want 0", k)
	}
	if p := field(t, sameTopRe, out); p != 100 {
		t.Errorf("same top p %v%%, want 100%%", p)
	}
	q, b := field(t, pplQRe, out), field(t, pplBaseRe, out)
	if relDiff(q, b) > 1e-6 || relDiff(b, basePPL) > 1e-5 {
		t.Errorf("PPL(Q) %v, PPL(base) %v, the base run's PPL %v: want all equal", q, b, basePPL)
	}
	for _, s := range []string{"Maximum KLD", "99.0%   KLD", "Median  KLD", " 1.0%   KLD", "Minimum KLD", "Mean ln(PPL(Q)/PPL(base))", "RMS Δp"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q", s)
		}
	}
	if n := strings.Count(out, "\n    "); n < 4 {
		t.Errorf("%d per-chunk lines, want 4:\n%s", n, out)
	}
}

func TestKLDWide(t *testing.T) {
	base, _, _ := makeBase(t)
	// The wide model computes the same function up to float rounding;
	// the MUL_MAT attention path differs from the base's flash attention.
	// Two chunks per batch: the records must still be read in order.
	code, out, errs := runCmd("-m", testdata(t, "stories260K-wide.gguf"), "-kld", base, "-fa", "off", "--chunks", "3", "-b", "128", "-t", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	k := field(t, meanKLDRe, out)
	if k < 0 || k > 1e-3 {
		t.Errorf("mean KLD %v, want small and not negative", k)
	}
	if p := field(t, sameTopRe, out); p < 95 {
		t.Errorf("same top p %v%%", p)
	}
}

func TestKLDRefused(t *testing.T) {
	base, _, _ := makeBase(t)
	mp := testdata(t, "stories260K.gguf")
	dir := t.TempDir()
	raw, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	write, mutate := fileWriter(t, dir), mutator(raw)
	other, _ := wikiText(t, 1200)
	otherText, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	shifted := write("shifted.txt", append([]byte("Preface. "), otherText...))
	for _, tc := range []struct {
		name  string
		model string
		file  string
		extra []string
		code  int
		msg   string
	}{
		{"garbage", mp, write("garbage.kld", []byte("this is not a KLD file at all, not even close")), nil, 1, "not a KLD base file"},
		{"empty", mp, write("empty.kld", nil), nil, 1, "shorter than"},
		{"truncated", mp, write("trunc.kld", raw[:len(raw)-10]), nil, 1, "truncated"},
		{"longer", mp, write("long.kld", append(append([]byte(nil), raw...), 0)), nil, 1, "truncated or corrupt"},
		{"version", mp, write("v2.kld", mutate(8, 2)), nil, 1, "version 2"},
		{"n_ctx", mp, write("ctx.kld", mutate(16, 66)), nil, 1, "first scored position"},
		{"hash", mp, write("hash.kld", mutate(32, raw[32]^1)), nil, 1, "another vocabulary"},
		{"token", mp, write("tok.kld", mutate(kldHeaderSize+8, 0xff, 0xff, 0, 0)), nil, 1, "outside the vocabulary"},
		{"record", mp, write("rec.kld", mutate(kldHeaderSize+4*4*64+12, 0xff, 0xff, 0xff, 0x7f)), nil, 1, "most probable token"},
		{"vocab size", testdata(t, "llama-2-tiny-random.gguf"), base, nil, 1, "vocabulary of 512 tokens; this model has 32000"},
		{"other text", mp, base, []string{"-f", shifted}, 1, "differ from the KLD file's"},
		{"other -c", mp, base, []string{"-c", "128"}, 2, "-c 64"},
	} {
		args := append([]string{"-m", tc.model, "-kld", tc.file, "-t", "1"}, tc.extra...)
		code, _, errs := runCmd(args...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", tc.name, code, errs, tc.code, tc.msg)
		}
	}
}

func TestInterruptedBaseLeavesNoFile(t *testing.T) {
	mp := testdata(t, "stories260K.gguf")
	text, _ := wikiText(t, 700)
	base := filepath.Join(t.TempDir(), "base.kld")
	cx, cancel := context.WithCancel(context.Background())
	cancel()
	var o, e bytes.Buffer
	code := runContext(cx, []string{"-m", mp, "-f", text, "-c", "64", "-kld-base", base}, &o, &e)
	if code != cli.ExitFailure || !strings.Contains(e.String(), "canceled") {
		t.Errorf("exit %d, stderr %q", code, e.String())
	}
	if ents, _ := os.ReadDir(filepath.Dir(base)); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestKLDBaseNeverAnInput: -kld-base naming the model or the text (by any
// path) is refused before any work, and the file is left as it was.
func TestKLDBaseNeverAnInput(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(testdata(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(dir, "m.gguf")
	os.WriteFile(mp, src, 0o644)
	text, _ := wikiText(t, 700)
	link := filepath.Join(dir, "link")
	os.Symlink(text, link)
	textBefore, _ := os.ReadFile(text)
	for _, out := range []string{mp, filepath.Join(dir, ".", "m.gguf"), text, link} {
		code, stdout, errs := runCmd("-m", mp, "-f", text, "-c", "64", "-kld-base", out)
		if code != cli.ExitUsage || !strings.Contains(errs, "flag -kld-base") || !strings.Contains(errs, "is the input") || stdout != "" {
			t.Errorf("-kld-base %s: exit %d, stdout %q, stderr %q", out, code, stdout, errs)
		}
	}
	if b, _ := os.ReadFile(mp); !bytes.Equal(b, src) {
		t.Error("the model changed")
	}
	if b, _ := os.ReadFile(text); !bytes.Equal(b, textBefore) {
		t.Error("the text changed")
	}
}

// TestEmptyChunks: -c 2 would score no position of a chunk (and print
// PPL = NaN): it is refused.
func TestEmptyChunks(t *testing.T) {
	text, _ := wikiText(t, 700)
	code, stdout, errs := runCmd("-m", testdata(t, "stories260K.gguf"), "-f", text, "-c", "2")
	if code != cli.ExitUsage || !strings.Contains(errs, "flag -c") || strings.Contains(stdout, "NaN") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
}

// TestNaNWeight: a NaN weight makes the logits NaN: an error naming the
// chunk and position and the first node whose output is not finite, not
// PPL = NaN.
func TestNaNWeight(t *testing.T) {
	path := testmodel.Poisoned(t, "stories260K.gguf", "blk.3.attn_q.weight", float32(math.Inf(1)))
	text, _ := wikiText(t, 700)
	base := filepath.Join(t.TempDir(), "base.kld")
	code, stdout, errs := runCmd("-m", path, "-f", text, "-c", "64", "-kld-base", base)
	t.Log(errs)
	if code != cli.ExitFailure || strings.Contains(stdout, "NaN") || strings.Contains(stdout, "Final estimate") {
		t.Fatalf("exit %d, stdout %q", code, stdout)
	}
	for _, s := range []string{"chunk 1, position 32: the logits are not finite", `"Qcur-3"`, "MUL_MAT(f32)", "layer 3"} {
		if !strings.Contains(errs, s) {
			t.Errorf("stderr lacks %q", s)
		}
	}
	if ents, _ := os.ReadDir(filepath.Dir(base)); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestEveryBackendAgrees measures stories260K's perplexity over 4 chunks
// on every registered backend that can open here and is not a CPU tier
// (the GPU backends, emulated ones included) against the CPU's figure.
//
// With an f32 KV cache the backends differ only in the order of f32 sums
// (logits agree to an NMSE of about 1e-13), and the figures agree to 5
// digits. With the default f16 cache, a K or V element whose f32 value
// lands on the other side of an f16 rounding boundary moves by a whole
// f16 ulp, which amplifies those differences about 10^4-fold (logits
// NMSE about 5e-10, for the CPU's own tiers against each other too): the
// figures agree to about 1e-4 relative (cuda-emu 78.8752, cpu-avx2
// 78.8636, cpu-generic 78.8650), and the test allows 5e-4.
func TestEveryBackendAgrees(t *testing.T) {
	path := testdata(t, "stories260K.gguf")
	text := testdata(t, "wiki.test.raw")
	ppl := func(backend, kv string) float64 {
		t.Helper()
		args := []string{"-m", path, "-f", text, "-c", "128", "--chunks", "4", "-t", "2", "-kv-type", kv}
		if backend != "" {
			args = append(args, "-backend", backend)
		}
		code, out, errs := runCmd(args...)
		m := finalRe.FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("%s: exit %d, no final estimate:\n%s\n%s", backend, code, out, errs)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	for _, c := range []struct {
		kv  string
		tol float64
	}{{"f32", 1e-5}, {"f16", 5e-4}} {
		want := ppl("", c.kv)
		for _, tg := range registry.Available() {
			if tg.Entry.Tiers {
				continue
			}
			t.Run(tg.Name()+"/"+c.kv, func(t *testing.T) {
				if got := ppl(tg.Name(), c.kv); math.Abs(got-want) > c.tol*want {
					t.Errorf("PPL %.4f, the CPU's %.4f: they differ by more than %g relative", got, want, c.tol)
				}
			})
		}
	}
}

// fileWriter returns a function that writes b to dir/name and returns
// the path, failing t on an error.
func fileWriter(t *testing.T, dir string) func(name string, b []byte) string {
	return func(name string, b []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// mutator returns a function that copies raw with b written at off: a
// file damaged in one place.
func mutator(raw []byte) func(off int, b ...byte) []byte {
	return func(off int, b ...byte) []byte {
		c := append([]byte(nil), raw...)
		copy(c[off:], b)
		return c
	}
}
