package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	shared "github.com/kernbench/kernbench/internal/shareddata"
	"github.com/kernbench/kernbench/internal/testmodel"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
)

// testdata returns the path of a file in shared/testdata, found by walking
// up from the working directory, or skips the test when it is absent.
func testdata(t *testing.T, name string) string {
	t.Helper()
	return shared.Path(t, name)
}

// trace runs the command and returns its exit status, stdout and stderr.
func trace(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	rc := run(context.Background(), args, &out, &errb)
	return rc, out.String(), errb.String()
}

func TestFlagErrors(t *testing.T) {
	dir := t.TempDir()
	type flagCase struct {
		args []string
		want string
	}
	cases := []flagCase{
		{nil, "no model"},
		{[]string{"-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"-m", "x.gguf", "extra"}, `unexpected argument "extra"`},
		{[]string{"-m", "x.gguf", "-fa", "maybe"}, `invalid value "maybe" for flag -fa`},
		{[]string{"-m", "x.gguf", "-kv", "q4_0"}, `flag -kv-type: KV cache type "q4_0"`},
		{[]string{"-m", "x.gguf", "-kv-type", "q4_0"}, `flag -kv-type: KV cache type "q4_0"`},
		{[]string{"-m", "x.gguf", "-ctk", "f16", "-ctv", "f32"}, `flag -ctv`},
		{[]string{"-m", "x.gguf", "-kv-type", "q8_0", "-fa", "off"}, `-fa: a q8_0 KV cache needs flash attention`},
		{[]string{"-m", "x.gguf", "-chrome", filepath.Join(dir, "no", "t.json")}, `flag -chrome: folder`},
		{[]string{"-m", "x.gguf", "-chrome", dir}, `flag -chrome: ` + dir + ` is a folder`},
		{[]string{"-m", "x.gguf", "-chrome", filepath.Join(dir, "a"), "-pprof", filepath.Join(dir, "a")}, `flag -pprof: ` + filepath.Join(dir, "a") + ` is also the output of -chrome`},
		{[]string{"-m", "x.gguf", "-n", "-1"}, "-n -1"},
		{[]string{"-m", "x.gguf", "-t", "-2"}, `invalid value "-2" for flag -t`},
		{[]string{"-m", "x.gguf", "-n", "x"}, `invalid value "x" for flag -n`},
		{[]string{"-m", "x.gguf", "-dot", "g.dot", "-layer", "1", "-layers", "1-2"}, "both given"},
		{[]string{"-m", "x.gguf", "-dot", "g.dot", "-layers", "3-1"}, "backwards"},
		{[]string{"-m", "x.gguf", "-dot", "g.dot", "-layer", "one"}, "not a number"},
		{[]string{"-m", "x.gguf", "-dot", "g.dot", "-match", "("}, "-match"},
		{[]string{"-m", "x.gguf", "-layer", "1"}, "give -dot FILE too"},
		{[]string{"-m", "x.gguf", "-render", "gif"}, `-render "gif"`},
		{[]string{"-m", "x.gguf", "-fallback", "tpu"}, `flag -fallback: unknown backend "tpu"`},
		{[]string{"-op", "add", "-fallback", "cpu"}, "-fallback is for model mode"},
		{[]string{"-m", "x.gguf", "-p", " "}, "prompt is empty"},
		{[]string{"-m", "x.gguf", "-k", "4"}, "single-op mode"},
		{[]string{"-op", "softmax", "-m", "4", "-k", "4"}, "traces mul_mat"},
		{[]string{"-op", "mul_mat", "-m", "model.gguf", "-k", "32"}, "-m is M"},
		{[]string{"-op", "mul_mat", "-m", "64", "-k", "0"}, "-k 0"},
		{[]string{"-op", "mul_mat", "-m", "64", "-k", "32", "-n", "9999999"}, "-n 9999999"},
		{[]string{"-op", "mul_mat", "-m", "64", "-k", "32", "-type", "q9_9"}, "-type"},
		{[]string{"-op", "mul_mat", "-m", "64", "-k", "32", "-r", "0"}, "-r 0"},
		{[]string{"-op", "mul_mat", "-m", "64", "-k", "32", "-fa", "on"}, "model mode"},
		{[]string{"-m", "x.gguf", "-metal-capture", filepath.Join(dir, "x.gputrace")}, "-metal-capture needs"},
		{[]string{"-m", "x.gguf", "-backend", "tpu"}, `-backend: unknown backend "tpu"`},
		{[]string{"-m", "x.gguf", "-tier", "sse9"}, `flag -tier: backend cpu has no variant "sse9"`},
		{[]string{"-m", "x.gguf", "-backend", "cuda"}, "-backend: backend cuda is unavailable: "},
		{[]string{"-m", "x.gguf", "-counters"}, "is not an emulated backend (cuda-emu, metal-emu)"},
		{[]string{"-m", "x.gguf", "-gpu", "h100"}, "-gpu is for -counters"},
	}
	if tier := cputest.UnsupportedTier(); tier != "" {
		cases = append(cases, flagCase{[]string{"-m", "x.gguf", "-tier", tier}, "flag -tier: backend cpu-" + tier + " is unavailable"})
	}
	for _, tc := range cases {
		rc, out, errs := trace(tc.args...)
		if rc != 2 || out != "" || !strings.HasPrefix(errs, "trace: ") || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("trace %q: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, rc, out, errs, tc.want)
		}
	}
	if runtime.GOOS != "darwin" {
		_, _, errs := trace("-m", "x.gguf", "-metal-capture", "x.gputrace")
		if !strings.Contains(errs, "needs macOS and the Metal backend") {
			t.Errorf("metal capture: %q", errs)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused command wrote %v", entries)
	}
}

func TestHelp(t *testing.T) {
	rc, out, errs := trace("-h")
	if rc != 0 || errs != "" {
		t.Fatalf("-h: exit %d, stderr %q", rc, errs)
	}
	for _, want := range []string{"Examples:", "trace -m stories260K.gguf", "-kv-type", "deprecated spelling of -kv-type", "-op mul_mat", "-dot FILE", "-layers A-B", "go tool pprof"} {
		if !strings.Contains(out, want) {
			t.Errorf("-h lacks %q", want)
		}
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.gguf")
	if err := os.WriteFile(bad, []byte("GGUF but not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-m", filepath.Join(dir, "missing.gguf")},
		{"-m", bad},
		{"-op", "mul_mat", "-type", "q4_0", "-m", "8", "-k", "20"}, // not a multiple of 32
	} {
		rc, _, errs := trace(args...)
		if rc != 1 || !strings.HasPrefix(errs, "trace: ") || strings.Count(errs, "\n") != 1 {
			t.Errorf("trace %q: exit %d, stderr %q; want exit 1 and one line", args, rc, errs)
		}
	}
	if _, _, errs := trace("-m", testdata(t, "stories260K.gguf"), "-n", "10", "-c", "8"); !strings.Contains(errs, "need 15 cells") {
		t.Errorf("context too small: %q", errs)
	}
}

// TestModelOutputs is the command's done-when check: one run writes the
// dot dump, the Chrome trace, the pprof profile and the summary.
func TestModelOutputs(t *testing.T) {
	model := testdata(t, "stories260K.gguf")
	dir := t.TempDir()
	g, tj, pp := filepath.Join(dir, "g.dot"), filepath.Join(dir, "t.json"), filepath.Join(dir, "p.pb.gz")
	rc, out, errs := trace("-m", model, "-p", "Once upon a time", "-n", "2", "-t", "2",
		"-dot", g, "-render", "none", "-chrome", tj, "-pprof", pp, "-summary")
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errs)
	}
	t.Logf("\n%s", out)
	for _, want := range []string{"prompt: 5 tokens", "memory plan (cpu): arena", "generated: 2 tokens", "wrote " + g, "wrote " + tj, "wrote " + pp, "MUL_MAT(f32)", "layer.4", "GFLOP/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}

	text, err := os.ReadFile(g)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(text, []byte("digraph ")) || !bytes.Contains(text, []byte(`class="node"`)) || !bytes.Contains(text, []byte(" ms (")) {
		t.Errorf("dot file:\n%.300s", text)
	}

	raw, err := os.ReadFile(tj)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Name string         `json:"name"`
			Ph   string         `json:"ph"`
			Ts   *float64       `json:"ts"`
			Dur  *float64       `json:"dur"`
			Pid  *int           `json:"pid"`
			Tid  *int           `json:"tid"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	spans, nodes := 0, 0
	for _, e := range doc.TraceEvents {
		if e.Ph != "X" {
			continue
		}
		if e.Ts == nil || e.Dur == nil || e.Pid == nil || e.Tid == nil || e.Args == nil || *e.Ts < 0 || *e.Dur < 0 {
			t.Fatalf("bad slice %+v", e)
		}
		if *e.Tid == 0 {
			spans++
		} else {
			nodes++
			if _, ok := e.Args["op"]; !ok {
				t.Errorf("slice %s without op", e.Name)
			}
		}
	}
	// A span for the prompt and each token, a slice per record.
	var records int
	if _, err := fmt.Sscanf(out[strings.Index(out, "wrote "+pp):], "wrote "+pp+": %d records", &records); err != nil {
		t.Fatal(err)
	}
	if spans != 3 || nodes != records || records < 3*5*9 {
		t.Errorf("%d spans and %d node slices for %d records", spans, nodes, records)
	}

	f, err := os.Open(pp)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, fn := range p.Function {
		names[fn.Name] = true
	}
	for _, want := range []string{"forward", "layer.0", "layer.4", "attn", "ffn", "MUL_MAT(f32)", "FLASH_ATTN_EXT(f32)"} {
		if !names[want] {
			t.Errorf("profile lacks %s", want)
		}
	}
}

func TestLayerDumpRendered(t *testing.T) {
	model := testdata(t, "stories260K.gguf")
	dir := t.TempDir()
	g := filepath.Join(dir, "l1.dot")
	rc, out, errs := trace("-m", model, "-fa", "off", "-dot", g, "-layer", "1", "-render", "svg")
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errs)
	}
	// One layer of five, and what feeds it: the previous layer's
	// output, the positions and the mask.
	var kept, all, boundary int
	if _, err := fmt.Sscanf(out[strings.Index(out, "wrote "+g):], "wrote "+g+": %d of %d nodes, %d more at the boundary", &kept, &all, &boundary); err != nil {
		t.Fatalf("%v in:\n%s", err, out)
	}
	if kept == 0 || kept*4 > all || boundary != 3 {
		t.Errorf("-layer 1 keeps %d of %d nodes, %d at the boundary", kept, all, boundary)
	}
	svg := filepath.Join(dir, "l1.svg")
	if _, err := os.Stat(svg); err != nil {
		if !strings.Contains(errs, "dot program is not installed") {
			t.Errorf("no %s and no notice: %q", svg, errs)
		}
		t.Skip("the dot program is not installed")
	}
}

func TestSingleOp(t *testing.T) {
	dir := t.TempDir()
	tj := filepath.Join(dir, "mm.json")
	rc, out, errs := trace("-op", "mul_mat", "-type", "q4_0", "-m", "64", "-n", "3", "-k", "256", "-r", "4", "-t", "1", "-chrome", tj, "-summary")
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errs)
	}
	for _, want := range []string{"MUL_MAT q4_0 weight [64 x 256] by f32 [256 x 3]", "4 runs: median", "MUL_MAT(q4_0)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	raw, err := os.ReadFile(tj)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), `"cat":"MUL_MAT(q4_0)"`); n != 4 {
		t.Errorf("%d MUL_MAT slices, want 4", n)
	}
}

// TestOutputNeverAnInput: an output naming the model (by any path) is
// refused before any work, and the model is left byte for byte as it
// was; -kv still works, with a warning that names -kv-type.
func TestOutputNeverAnInput(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(testdata(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(dir, "m.gguf")
	os.WriteFile(mp, src, 0o644)
	link := filepath.Join(dir, "link.gguf")
	os.Symlink(mp, link)
	for _, flag := range []string{"-chrome", "-pprof", "-dot"} {
		for _, out := range []string{mp, filepath.Join(dir, ".", "m.gguf"), link} {
			rc, stdout, errs := trace("-m", mp, flag, out, "-render", "none")
			if rc != 2 || stdout != "" || !strings.Contains(errs, "flag "+flag+": ") || !strings.Contains(errs, "is the input") {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q", flag, out, rc, stdout, errs)
			}
		}
	}
	if b, _ := os.ReadFile(mp); !bytes.Equal(b, src) {
		t.Error("the model changed")
	}
	rc, _, errs := trace("-m", mp, "-kv", "f32", "-chrome", filepath.Join(dir, "t.json"))
	if rc != 0 || !strings.Contains(errs, "trace: -kv is deprecated: use -kv-type") {
		t.Errorf("-kv f32: exit %d, stderr %q", rc, errs)
	}
}

// TestNaNWeight: NaN logits are an error naming the first node whose
// output is not finite.
func TestNaNWeight(t *testing.T) {
	path := testmodel.Poisoned(t, "stories260K.gguf", "output_norm.weight", float32(math.NaN()))
	rc, _, errs := trace("-m", path, "-n", "3")
	if rc != 1 || !strings.Contains(errs, "the logits are not finite") || !strings.Contains(errs, "RMS_NORM") && !strings.Contains(errs, "MUL(f32)") {
		t.Errorf("exit %d, stderr %q", rc, errs)
	}
	t.Log(errs)
}
