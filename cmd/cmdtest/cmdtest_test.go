package cmdtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/internal/require"
	"github.com/kernbench/kernbench/internal/shareddata"
	"github.com/kernbench/kernbench/internal/testmodel"
	"github.com/kernbench/kernbench/quant"
)

// The commands, built once for the package's tests.
var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
	tempBin   string // binDir when the tests made it
)

func TestMain(m *testing.M) {
	code := m.Run()
	if tempBin != "" {
		os.RemoveAll(tempBin)
	}
	os.Exit(code)
}

// commands returns the folder holding the six commands: the tests' own
// build of this source, or $KERNBENCH_CMDTEST_BIN.
func commands(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if d := os.Getenv("KERNBENCH_CMDTEST_BIN"); d != "" {
			binDir = d
			return
		}
		// go test puts its own GOROOT/bin first in the test's PATH.
		goTool, err := exec.LookPath("go")
		if err != nil {
			buildErr = fmt.Errorf("no go tool to build the commands: %w", err)
			return
		}
		if tempBin, buildErr = os.MkdirTemp("", "kernbench-cmdtest-"); buildErr != nil {
			return
		}
		out, err := exec.Command(goTool, "build", "-o", tempBin, "github.com/kernbench/kernbench/cmd/...").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building the commands: %v\n%s", err, out)
			return
		}
		binDir = tempBin
	})
	if buildErr != nil {
		if strings.HasPrefix(buildErr.Error(), "no go tool") {
			require.Skip(t, "%v", buildErr)
		}
		t.Fatal(buildErr)
	}
	return binDir
}

// result is what a command did.
type result struct {
	code           int
	stdout, stderr string
	state          *os.ProcessState
	took           time.Duration
}

// run runs command name with args in dir.
func run(t *testing.T, dir, name string, args ...string) result {
	t.Helper()
	return runFor(t, 3*time.Minute, dir, name, args...)
}

// runFor is run, killing the command after limit.
func runFor(t *testing.T, limit time.Duration, dir, name string, args ...string) result {
	t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(cx, filepath.Join(commands(t), name), args...)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: o.String(), stderr: e.String(), state: cmd.ProcessState, took: time.Since(start)}
	if cmd.ProcessState != nil {
		r.code = cmd.ProcessState.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %q: %v", name, args, err)
	}
	return r
}

// snapshot returns every file under dir, by path, with a digest of what
// it is: the target of a symbolic link, the contents of a file.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[rel] = "link to " + target
			return err
		case d.IsDir():
			out[rel] = "folder"
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		_, err = io.Copy(h, f)
		out[rel] = fmt.Sprintf("%x", h.Sum(nil))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// changes lists how after differs from before.
func changes(before, after map[string]string) []string {
	var out []string
	for p, d := range before {
		switch a, ok := after[p]; {
		case !ok:
			out = append(out, p+" removed")
		case a != d:
			out = append(out, p+" changed")
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			out = append(out, p+" created")
		}
	}
	slices.Sort(out)
	return out
}

// fixture makes a folder of inputs the bad invocations point at: the
// shared stories260K model (model.gguf, with a symbolic link.gguf and a
// hard link hard.gguf to it), a text, a model with a NaN weight, one
// whose block_count is 0, a sweep file and record sets (one good, two
// with a size of 0 and -4).
func fixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	copyFile := func(src, dst string, n int) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			b = b[:n]
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(shareddata.Path(t, "stories260K.gguf"), "model.gguf", 0)
	copyFile(shareddata.Path(t, "wiki.test.raw"), "text.txt", 20000)
	copyFile(testmodel.Poisoned(t, "stories260K.gguf", "blk.1.attn_k.weight", float32(math.NaN())), "nan.gguf", 0)
	if err := os.Symlink("model.gguf", filepath.Join(dir, "link.gguf")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "model.gguf"), filepath.Join(dir, "hard.gguf")); err != nil {
		t.Fatal(err)
	}

	w := gguf.NewWriter()
	w.Add("general.architecture", "llama")
	w.Add("llama.block_count", uint32(0))
	w.Add("llama.context_length", uint32(128))
	w.Add("llama.embedding_length", uint32(256))
	w.Add("llama.feed_forward_length", uint32(256))
	w.Add("llama.attention.head_count", uint32(4))
	w.Add("llama.attention.layer_norm_rms_epsilon", float32(1e-5))
	for _, name := range []string{"token_embd.weight", "blk.0.attn_v.weight", "blk.0.ffn_down.weight", "output.weight"} {
		if err := w.AddTensor(name, quant.F32, []int64{256, 8}, make([]byte, 4*256*8)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteFile(filepath.Join(dir, "zero.gguf")); err != nil {
		t.Fatal(err)
	}

	spec := `{"sweeps": [{"ops": ["rms_norm"], "dims": {"k": [256], "n": [1]}}]}`
	if err := os.WriteFile(filepath.Join(dir, "spec.json"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, dir, "opbench", "sweep", "-f", "spec.json", "-time", "5ms", "-roofline", "off", "-out", ".", "-name", "good")
	if r.code != 0 {
		t.Fatalf("sweep: %d\n%s", r.code, r.stderr)
	}
	good, err := os.ReadFile(filepath.Join(dir, "good.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, k := range map[string]string{"zero.json": "0", "negative.json": "-4"} {
		bad := bytes.Replace(good, []byte(`"k": 256`), []byte(`"k": `+k), 1)
		if bytes.Equal(bad, good) {
			t.Fatalf("no k of 256 in\n%s", good)
		}
		if err := os.WriteFile(filepath.Join(dir, name), bad, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A badCase is a command line every command must refuse.
type badCase struct {
	cmd  string
	args []string
	code int      // the exit status wanted; 0: any but 0
	want []string // what stderr must say
}

// check runs c in dir and checks it: no panic, the exit status, the
// message, and dir exactly as it was (no input changed, no output or
// temporary file left).
func check(t *testing.T, dir string, c badCase) result {
	t.Helper()
	before := snapshot(t, dir)
	limit := 3 * time.Minute
	if c.cmd == "mkmodel" {
		// A build without the size check writes 13 GB for
		// -preset llama-7b: stop it early.
		limit = 10 * time.Second
	}
	r := runFor(t, limit, dir, c.cmd, c.args...)
	name := c.cmd + " " + strings.Join(c.args, " ")
	if strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine ") {
		t.Errorf("%s: panicked:\n%s", name, r.stderr)
	}
	if r.code == 0 || (c.code != 0 && r.code != c.code) {
		t.Errorf("%s: exit %d, want %v\nstderr: %s", name, r.code, c.code, r.stderr)
	}
	for _, w := range c.want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("%s: stderr lacks %q:\n%s", name, w, r.stderr)
		}
	}
	if ch := changes(before, snapshot(t, dir)); len(ch) > 0 {
		t.Errorf("%s: %s", name, strings.Join(ch, ", "))
	}
	return r
}

// TestBadInvocations runs every command with the bad command lines and
// inputs of issue 14 (and more of the same kinds).
func TestBadInvocations(t *testing.T) {
	dir := fixture(t)
	cases := []badCase{
		// No input is ever written over, whatever the path names it by.
		{"quantize", []string{"model.gguf", "model.gguf", "q8_0"}, 2, []string{"model.gguf is the input model.gguf"}},
		{"quantize", []string{"model.gguf", "./model.gguf", "q8_0"}, 2, []string{"is the input"}},
		{"quantize", []string{"model.gguf", dir + "/model.gguf", "q8_0"}, 2, []string{"is the input"}},
		{"quantize", []string{"model.gguf", "link.gguf", "q8_0"}, 2, []string{"is the input"}},
		{"quantize", []string{"link.gguf", "hard.gguf", "q4_0"}, 2, []string{"is the input"}},
		{"perplexity", []string{"-m", "model.gguf", "-f", "text.txt", "-kld-base", "model.gguf"}, 2, []string{"flag -kld-base", "is the input model.gguf (-m)"}},
		{"perplexity", []string{"-m", "model.gguf", "-f", "text.txt", "-kld-base", "./text.txt"}, 2, []string{"is the input text.txt (-f)"}},
		{"perplexity", []string{"-m", "model.gguf", "-f", "text.txt", "-kld-base", "hard.gguf"}, 2, []string{"is the input"}},
		{"trace", []string{"-m", "model.gguf", "-chrome", "model.gguf"}, 2, []string{"flag -chrome", "is the input"}},
		{"trace", []string{"-m", "model.gguf", "-pprof", "./link.gguf"}, 2, []string{"flag -pprof", "is the input"}},
		{"trace", []string{"-m", "model.gguf", "-dot", "hard.gguf", "-render", "none"}, 2, []string{"flag -dot", "is the input"}},
		{"opbench", []string{"sweep", "-f", "spec.json", "-out", ".", "-name", "spec", "-time", "5ms", "-roofline", "off"}, 2, []string{"is the input spec.json (-f)"}},

		// Outputs are checked before the work starts.
		{"opbench", []string{"validate", "-json", "/missing/dir/x.json"}, 2, []string{"flag -json: folder /missing/dir does not exist"}},
		{"opbench", []string{"roofline", "-json", "missing/r.json"}, 2, []string{"folder missing does not exist"}},
		{"opbench", []string{"sweep", "-op", "rms_norm", "-out", "model.gguf/x"}, 2, []string{"model.gguf is not a folder"}},
		{"quantize", []string{"model.gguf", "missing/out.gguf", "q8_0"}, 2, []string{"folder missing does not exist"}},
		{"mkmodel", []string{"-o", "missing/m.gguf"}, 2, []string{"folder missing does not exist"}},
		{"trace", []string{"-m", "model.gguf", "-chrome", "."}, 2, []string{"is a folder"}},
		{"trace", []string{"-m", "model.gguf", "-chrome", "t.json", "-pprof", "t.json"}, 2, []string{"also the output of -chrome"}},
		{"mkmodel", []string{"-o", "big.gguf", "-preset", "llama-7b"}, 2, []string{"13.5 GB", "-force"}},

		// No panic.
		{"opbench", []string{"plot", "zero.json"}, 2, []string{"size k is 0: sizes must be positive"}},
		{"opbench", []string{"plot", "-out", ".", "negative.json"}, 2, []string{"size k is -4"}},

		// No silent NaN; no empty computation.
		{"perplexity", []string{"-m", "model.gguf", "-f", "text.txt", "-c", "2"}, 2, []string{"flag -c"}},
		{"perplexity", []string{"-m", "nan.gguf", "-f", "text.txt", "-c", "64"}, 1, []string{"the logits are not finite", `"Kcur-1"`, "MUL_MAT(f32)", "layer 1"}},
		{"perplexity", []string{"-m", "nan.gguf", "-f", "text.txt", "-c", "64", "-kld-base", "base.kld"}, 1, []string{"the logits are not finite"}},
		{"run", []string{"-m", "nan.gguf", "-p", "Once upon a time", "-n", "4"}, 1, []string{"the logits are not finite", "layer 1"}},
		{"trace", []string{"-m", "nan.gguf", "-n", "2", "-chrome", "t.json"}, 1, []string{"the logits are not finite", "layer 1"}},
		{"quantize", []string{"zero.gguf", "out.gguf", "q4_K_M"}, 1, []string{"block_count = 0"}},

		// One vocabulary, one validation.
		{"run", []string{"-m", "model.gguf", "-tier", "sse9"}, 2, []string{"flag -tier"}},
		{"perplexity", []string{"-m", "model.gguf", "-f", "text.txt", "-tier", "nosuch"}, 2, []string{"flag -tier"}},
		{"trace", []string{"-m", "model.gguf", "-tier", "sse9"}, 2, []string{"flag -tier"}},
		{"trace", []string{"-m", "model.gguf", "-kv", "q4_0"}, 2, []string{"flag -kv-type"}},
		{"run", []string{"-m", "model.gguf", "-kv-type", "q4_0"}, 2, []string{"flag -kv-type"}},
		{"run", []string{"-m", "model.gguf", "-backend", "tpu"}, 2, []string{"flag -backend"}},
	}
	for _, cmd := range []struct {
		name string
		pre  []string
	}{
		{"run", []string{"-m", "model.gguf", "-p", "hi"}}, {"perplexity", []string{"-m", "model.gguf", "-f", "text.txt"}},
		{"trace", []string{"-m", "model.gguf"}}, {"quantize", []string{"model.gguf", "out.gguf", "q8_0"}},
		{"mkmodel", []string{"-o", "m.gguf"}}, {"opbench", []string{"validate", "-op", "add"}},
		{"opbench", []string{"sweep", "-op", "add"}}, {"opbench", []string{"roofline"}},
	} {
		for _, v := range []string{"-1", "5000", "x"} {
			cases = append(cases, badCase{cmd.name, append(slices.Clone(cmd.pre), "-t", v), 2, []string{"flag -t"}})
		}
	}
	for _, c := range cases {
		r := check(t, dir, c)
		if c.cmd == "opbench" && c.args[0] == "validate" && r.took > 10*time.Second {
			t.Errorf("validate with a bad -json took %v: its output is checked only after the cases ran", r.took)
		}
	}
}

// malformed returns the malformed GGUF files made from a real model,
// each with the error the loader gives for it.
func malformed(t *testing.T, dir string) map[string]string {
	t.Helper()
	good, err := os.ReadFile(filepath.Join(dir, "model.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	files := map[string][]byte{
		"empty":            {},
		"magic only":       []byte("GGUF"),
		"bad magic":        edit(func(b []byte) []byte { copy(b, "GGML"); return b }),
		"version 99":       edit(func(b []byte) []byte { le.PutUint32(b[4:], 99); return b }),
		"version 1":        edit(func(b []byte) []byte { le.PutUint32(b[4:], 1); return b }),
		"huge tensors":     edit(func(b []byte) []byte { le.PutUint64(b[8:], 1<<60); return b }),
		"huge kvs":         edit(func(b []byte) []byte { le.PutUint64(b[16:], 1<<60); return b }),
		"huge key length":  edit(func(b []byte) []byte { le.PutUint64(b[24:], 1<<60); return b }),
		"bad value type":   edit(func(b []byte) []byte { n := le.Uint64(b[24:]); le.PutUint32(b[32+n:], 99); return b }),
		"cut in header":    good[:20],
		"cut in kvs":       good[:1000],
		"cut in data":      good[:len(good)/2],
		"cut at the end":   good[:len(good)-1],
		"garbage after 24": append(bytes.Clone(good[:24]), bytes.Repeat([]byte{0xff}, 4096)...),
	}
	out := map[string]string{}
	for name, b := range files {
		_, err := gguf.Parse(b)
		if err == nil {
			t.Fatalf("the loader takes the %q file", name)
		}
		p := "bad-" + strings.ReplaceAll(name, " ", "-") + ".gguf"
		if err := os.WriteFile(filepath.Join(dir, p), b, 0o644); err != nil {
			t.Fatal(err)
		}
		out[p] = err.Error()
	}
	return out
}

// TestMalformedGGUF runs every command that reads a model on each file of
// a malformed corpus: each is refused with the loader's message.
func TestMalformedGGUF(t *testing.T) {
	dir := fixture(t)
	for path, msg := range malformed(t, dir) {
		for _, args := range [][]string{
			{"run", "-m", path, "-p", "hi"},
			{"perplexity", "-m", path, "-f", "text.txt"},
			{"trace", "-m", path},
			{"quantize", path, "out.gguf", "q8_0"},
		} {
			check(t, dir, badCase{args[0], args[1:], 1, []string{path, msg}})
		}
	}
}

// TestTraceMemory: trace keeps per-node timings, not every token's graph,
// so its peak memory stays within twice run's for the same tokens (3.2 GB
// against 26 MB at 5000 tokens before; 197 MB against 17 MB at 1000).
// Each is the least of two runs, as the garbage collector's timing moves
// a peak by a few MB.
func TestTraceMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ru_maxrss is in KiB on Linux only")
	}
	dir := fixture(t)
	const n = 1000
	least := func(name string, args ...string) int64 {
		a, b := peakRSS(t, dir, name, args...), peakRSS(t, dir, name, args...)
		return min(a, b)
	}
	prompt := "Once upon a time"
	tr := least("trace", "-m", "model.gguf", "-p", prompt, "-n", fmt.Sprint(n), "-t", "2")
	rn := least("run", "-m", "model.gguf", "-p", prompt, "-n", fmt.Sprint(n), "-c", "1024", "-temp", "0", "-ignore-eos", "-t", "2")
	t.Logf("peak RSS for %d tokens: trace %.1f MB, run %.1f MB", n, float64(tr)/1e6, float64(rn)/1e6)
	if tr > 2*rn {
		t.Errorf("trace -n %d peaks at %.1f MB, more than twice run's %.1f MB", n, float64(tr)/1e6, float64(rn)/1e6)
	}
}

// TestSignalsLeaveNoTemporary: SIGINT or SIGTERM while mkmodel or
// quantize writes its output removes the temporary file, and the process
// still ends by the signal.
func TestSignalsLeaveNoTemporary(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to send")
	}
	commands(t)
	work := t.TempDir()
	// A 60 MB f32 model, whose quantization to q4_K_M takes a while.
	src := filepath.Join(work, "src.gguf")
	if r := run(t, work, "mkmodel", "-o", src, "-preset", "stories15m", "-type", "f32"); r.code != 0 {
		t.Fatalf("mkmodel: %d\n%s", r.code, r.stderr)
	}
	for _, tc := range []struct {
		sig  syscall.Signal
		name string
		args []string
	}{
		{syscall.SIGINT, "mkmodel", []string{"-o", "out.gguf", "-preset", "100m", "-type", "f32"}},
		{syscall.SIGTERM, "mkmodel", []string{"-o", "out.gguf", "-preset", "100m", "-type", "q4_K_M"}},
		{syscall.SIGINT, "quantize", []string{src, "out.gguf", "q4_K_M"}},
		{syscall.SIGTERM, "quantize", []string{src, "out.gguf", "q5_K_M"}},
	} {
		dir := t.TempDir()
		cmd := exec.Command(filepath.Join(commands(t), tc.name), tc.args...)
		cmd.Dir = dir
		var e bytes.Buffer
		cmd.Stderr = &e
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait for the temporary file, then signal.
		seen := ""
		for deadline := time.Now().Add(time.Minute); seen == "" && time.Now().Before(deadline); {
			ents, _ := os.ReadDir(dir)
			for _, ent := range ents {
				if strings.Contains(ent.Name(), ".tmp") {
					seen = ent.Name()
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		if seen == "" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("%s %v: no temporary file appeared", tc.name, tc.args)
		}
		time.Sleep(100 * time.Millisecond)
		cmd.Process.Signal(tc.sig)
		cmd.Wait()
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != tc.sig {
			t.Errorf("%s on %v: ended with %v, want killed by the signal (stderr %q)", tc.name, tc.sig, cmd.ProcessState, e.String())
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			var names []string
			for _, ent := range ents {
				names = append(names, ent.Name())
			}
			t.Errorf("%s on %v: left %v", tc.name, tc.sig, names)
		}
	}
}

// TestConcurrentSweeps: two sweeps started together into one folder keep
// both record sets (they often start in the same second, which used to
// give them one name).
func TestConcurrentSweeps(t *testing.T) {
	dir := fixture(t)
	out := filepath.Join(dir, "out")
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = run(t, dir, "opbench", "sweep", "-f", "spec.json", "-time", "5ms", "-roofline", "off", "-out", out).code
		}()
	}
	wg.Wait()
	ents, _ := os.ReadDir(out)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if codes[0] != 0 || codes[1] != 0 || len(names) != 4 {
		t.Errorf("exits %v, files %v; want both sweeps' JSON and CSV", codes, names)
	}
}

// TestHelpHasExamples: every command's -h shows examples.
func TestHelpHasExamples(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"run", "-h"}, {"perplexity", "-h"}, {"trace", "-h"}, {"quantize", "-h"}, {"mkmodel", "-h"},
		{"opbench", "-h"}, {"opbench", "validate", "-h"}, {"opbench", "sweep", "-h"}, {"opbench", "compare", "-h"},
		{"opbench", "plot", "-h"}, {"opbench", "roofline", "-h"}, {"opbench", "backends", "-h"}, {"opbench", "llama", "-h"}, {"opbench", "tune", "-h"},
	} {
		r := run(t, dir, args[0], args[1:]...)
		if r.code != 0 || !strings.Contains(r.stdout, "Examples:") {
			t.Errorf("%q: exit %d, no Examples: in\n%s", args, r.code, r.stdout)
		}
		if strings.Contains(r.stdout, "0000000") {
			t.Errorf("%q: a float default in float64 digits:\n%s", args, r.stdout)
		}
	}
}
