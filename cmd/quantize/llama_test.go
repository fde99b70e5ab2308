package main

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/imatrix"
	"github.com/kernbench/kernbench/internal/shareddata"
)

// syntheticImatrix writes an importance matrix for every matrix of the
// model at mp whose name starts with "blk." (as llama-imatrix collects
// them): per column a mean square that varies over columns, with some
// columns at zero, from 16 rows per matrix.
func syntheticImatrix(t *testing.T, mp, path string) *imatrix.Matrix {
	t.Helper()
	f, err := gguf.Open(mp)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := &imatrix.Matrix{Entries: map[string]*imatrix.Entry{}, Datasets: []string{"synthetic"}, ChunkCount: 1, ChunkSize: 16}
	for k, ti := range f.Tensors {
		if ti.NDims < 2 || !strings.HasPrefix(ti.Name, "blk.") || strings.Contains(ti.Name, "norm") {
			continue
		}
		nmat := ti.Ne[2]
		e := &imatrix.Entry{Sums: make([]float32, ti.Ne[0]*nmat), Counts: make([]int64, nmat)}
		for i := range e.Sums {
			if (i+k)%29 == 3 {
				continue
			}
			x := math.Sin(float64(i*7+k*13)) + 1.1
			e.Sums[i] = float32(16 * x * x)
		}
		for i := range e.Counts {
			e.Counts[i] = 16
		}
		m.Entries[ti.Name] = e
	}
	var b bytes.Buffer
	if err := m.WriteGGUF(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return m
}

// sameTensors fails t unless the GGUF files a and b hold the same tensors
// (names, types, shapes, bytes; llama-quantize orders them differently)
// and the same file type and quantize.imatrix.* metadata, and returns how
// many tensors of each type they hold.
func sameTensors(t *testing.T, a, b string) map[string]int {
	t.Helper()
	fa, err := gguf.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	fb, err := gguf.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	if len(fa.Tensors) != len(fb.Tensors) {
		t.Fatalf("%d tensors, llama-quantize's file %d", len(fa.Tensors), len(fb.Tensors))
	}
	counts := map[string]int{}
	for _, ta := range fa.Tensors {
		tb, ok := fb.TensorInfo(ta.Name)
		if !ok || ta.Type != tb.Type || ta.Ne != tb.Ne {
			t.Errorf("tensor %s: %v %v, llama-quantize's %v %v (present %v)", ta.Name, ta.Type, ta.Ne, tb.Type, tb.Ne, ok)
			continue
		}
		da, _ := fa.TensorData(ta.Name)
		db, _ := fb.TensorData(tb.Name)
		if !bytes.Equal(da, db) {
			n := 0
			for j := range da {
				if da[j] != db[j] {
					n++
				}
			}
			t.Errorf("tensor %s (%v): %d of %d bytes differ from llama-quantize's", ta.Name, ta.Type, n, len(da))
		}
		counts[ta.Type.String()]++
	}
	for _, key := range []string{"general.file_type", "quantize.imatrix.entries_count", "quantize.imatrix.chunks_count", "quantize.imatrix.dataset"} {
		va, oka := fa.Get(key)
		vb, okb := fb.Get(key)
		if oka != okb || (oka && va.String() != vb.String()) {
			t.Errorf("%s: %v (%v), llama-quantize's %v (%v)", key, va, oka, vb, okb)
		}
	}
	return counts
}

// TestLlamaQuantizeInterop quantizes stories260K-wide (every row 256
// wide) and a Mixtral-style model from mkmodel with llama-quantize itself
// (the program $KERNBENCH_LLAMA_QUANTIZE names; skipped without it) and
// with this command, with and without an importance matrix, into the file
// types both write, and requires the same tensors, byte for byte.
func TestLlamaQuantizeInterop(t *testing.T) {
	prog := os.Getenv("KERNBENCH_LLAMA_QUANTIZE")
	if prog == "" {
		t.Skip("KERNBENCH_LLAMA_QUANTIZE (the path of llama.cpp's llama-quantize) is not set")
	}
	dir := t.TempDir()
	// A Mixtral-style model of 16 layers (8 experts, GQA 4, rows of 64
	// and 128) made by mkmodel, for the experts' types, the per-expert
	// weights and the layer and GQA rules stories260K-wide does not reach.
	moe := filepath.Join(dir, "moe.gguf")
	mk := filepath.Join(dir, "mkmodel")
	if out, err := exec.Command("go", "build", "-o", mk, "../mkmodel").CombinedOutput(); err != nil {
		t.Fatalf("building mkmodel: %v\n%s", err, out)
	}
	if out, err := exec.Command(mk, "-arch", "mixtral", "-heads", "8", "-kv-heads", "2", "-layers", "16", "-type", "f32", "-o", moe).CombinedOutput(); err != nil {
		t.Fatalf("mkmodel: %v\n%s", err, out)
	}
	wide := shareddata.Path(t, "stories260K-wide.gguf")
	ims := map[string]string{wide: filepath.Join(dir, "wide-imatrix.gguf"), moe: filepath.Join(dir, "moe-imatrix.gguf")}
	for mp, im := range ims {
		syntheticImatrix(t, mp, im)
	}
	// An importance matrix made here, by perplexity -imatrix-out over
	// wiki.test.raw, for the IQ mixes.
	made := filepath.Join(dir, "wide-made-imatrix.gguf")
	ppl := filepath.Join(dir, "perplexity")
	if out, err := exec.Command("go", "build", "-o", ppl, "../perplexity").CombinedOutput(); err != nil {
		t.Fatalf("building perplexity: %v\n%s", err, out)
	}
	text := shareddata.Path(t, "wiki.test.raw")
	if out, err := exec.Command(ppl, "-m", wide, "-f", text, "-c", "64", "--chunks", "4", "-t", "2", "-imatrix-out", made, "-progress=false").CombinedOutput(); err != nil {
		t.Fatalf("perplexity -imatrix-out: %v\n%s", err, out)
	}
	for _, c := range []struct {
		mp   string
		typ  string
		imat bool
		made bool // with the matrix perplexity made, not the synthetic one
	}{
		// The IQ mixes, most used first; iq3_m and iq3_s also without a
		// matrix (the others need one).
		{wide, "iq3_m", true, true}, {wide, "iq3_s", true, true}, {wide, "iq3_xxs", true, true},
		{wide, "iq2_m", true, true}, {wide, "iq2_xs", true, true}, {wide, "iq2_xxs", true, true},
		{wide, "iq2_s", true, true}, {wide, "iq1_m", true, true}, {wide, "iq1_s", true, true},
		{wide, "iq3_xs", true, true}, {wide, "q2_K_S", true, true},
		{wide, "iq3_m", false, false}, {wide, "iq3_s", false, false}, {wide, "iq2_xxs", true, false},
		{moe, "iq2_m", true, false}, {moe, "iq1_s", true, false}, {moe, "iq3_xs", true, false}, {moe, "iq3_m", false, false},

		{wide, "q4_K_M", true, false}, {wide, "q4_0", true, false}, {wide, "iq4_nl", true, false}, {wide, "iq4_xs", true, false},
		{wide, "q4_1", true, false}, {wide, "q5_0", true, false}, {wide, "q5_1", true, false}, {wide, "q2_K", true, false},
		{wide, "q3_K_M", true, false}, {wide, "q5_K_M", true, false}, {wide, "q6_K", true, false},
		{wide, "iq4_nl", false, false}, {wide, "iq4_xs", false, false}, {wide, "tq1_0", false, false}, {wide, "tq2_0", false, false},
		{wide, "mxfp4_moe", false, false}, {wide, "q4_0", false, false}, {wide, "q4_K_M", false, false},
		{moe, "mxfp4_moe", false, false}, {moe, "mxfp4_moe", true, false}, {moe, "iq4_xs", false, false}, {moe, "iq4_xs", true, false},
		{moe, "iq4_nl", true, false}, {moe, "q4_0", true, false}, {moe, "q5_0", true, false}, {moe, "q4_K_M", true, false}, {moe, "q3_K_M", false, false},
	} {
		mp, im := c.mp, ims[c.mp]
		name := strings.TrimSuffix(filepath.Base(mp), ".gguf") + "-" + c.typ
		if c.imat {
			name += "-imatrix"
		}
		if c.made {
			im = made
			name += "-made"
		}
		t.Run(name, func(t *testing.T) {
			theirs, ours := filepath.Join(dir, name+"-llama.gguf"), filepath.Join(dir, name+"-ours.gguf")
			args := []string{}
			if c.imat {
				args = append(args, "--imatrix", im)
			}
			args = append(args, mp, theirs, strings.ToUpper(c.typ), "1")
			if out, err := exec.Command(prog, args...).CombinedOutput(); err != nil {
				t.Fatalf("llama-quantize %v: %v\n%s", args, err, out)
			}
			args = []string{"-t", "2"}
			if c.imat {
				args = append(args, "-imatrix", im)
			}
			args = append(args, mp, ours, c.typ)
			if code, _, errs := runArgs(args...); code != 0 {
				t.Fatalf("quantize %v: exit %d: %s", args, code, errs)
			}
			t.Logf("tensor types: %v", sameTensors(t, ours, theirs))
		})
	}
}
