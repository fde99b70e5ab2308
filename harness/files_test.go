package harness_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
)

// opGroups is the one table of ops whose files are named for a group
// rather than for the op: file is the stem of the op's Go file
// (op_<file>.go) in harness, ops/cpu, ops/cuda and ops/metal, kernel the
// stem of its kernel source in ops/cuda/kernels and ops/metal/kernels.
// Every other op's files are named by its ggml name in lower case:
// op_mul_mat_id.go, kernels/mul_mat_id.cu, kernels/mul_mat_id.metal.
var opGroups = map[ops.Op]struct{ file, kernel string }{
	ops.OpAdd:       {"binary", "elementwise"},
	ops.OpMul:       {"binary", "elementwise"},
	ops.OpScale:     {"unary", "elementwise"},
	ops.OpSilu:      {"unary", "elementwise"},
	ops.OpGelu:      {"unary", "elementwise"},
	ops.OpSwiGLU:    {"swiglu", "elementwise"},
	ops.OpSwiGLUOAI: {"swiglu_oai", "elementwise"},
	ops.OpCont:      {"cont", "cpy"}, // CONT runs CPY's kernels
}

// opStems returns the Go file stem and the kernel stem of op.
func opStems(op ops.Op) (file, kernel string) {
	name := strings.ToLower(op.String())
	file, kernel = name, name
	if g, ok := opGroups[op]; ok {
		file, kernel = g.file, g.kernel
	}
	return file, kernel
}

// TestOpFiles checks that every op harness defines has its op_<name>.go in
// harness and in every backend, and a kernel source of that name in each
// GPU backend's kernels folder; and, the other way, that every op file and
// kernel source is named for an op (or a group of opGroups), so a file
// named another way fails.
func TestOpFiles(t *testing.T) {
	goDirs := []string{".", "../ops/cpu", "../ops/cuda", "../ops/metal"}
	kernelDirs := map[string]string{"../ops/cuda/kernels": ".cu", "../ops/metal/kernels": ".metal"}
	files, kernels := map[string]bool{}, map[string]bool{}
	defs := harness.OpDefs()
	if len(defs) == 0 {
		t.Fatal("harness defines no op")
	}
	for _, d := range defs {
		file, kernel := opStems(d.Op)
		files[file], kernels[kernel] = true, true
		for _, dir := range goDirs {
			p := filepath.Join(dir, "op_"+file+".go")
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%v: no %s", d.Op, p)
			}
		}
		for dir, ext := range kernelDirs {
			p := filepath.Join(dir, kernel+ext)
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%v: no %s", d.Op, p)
			}
		}
	}
	for _, dir := range goDirs {
		names, err := filepath.Glob(filepath.Join(dir, "op_*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range names {
			stem := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "op_"), ".go")
			stem = strings.TrimSuffix(stem, "_test")
			if !files[stem] && !files[stripVariant(stem, files)] {
				t.Errorf("%s is not named for an op harness defines (nor a group of opGroups)", p)
			}
		}
	}
	for dir, ext := range kernelDirs {
		names, err := filepath.Glob(filepath.Join(dir, "*"+ext))
		if err != nil {
			t.Fatal(err)
		}
		if len(names) == 0 {
			t.Errorf("no kernel sources in %s", dir)
		}
		for _, p := range names {
			stem := strings.TrimSuffix(filepath.Base(p), ext)
			if !kernels[stem] && !kernels[stripVariant(stem, kernels)] {
				t.Errorf("%s is not named for an op harness defines (nor a group of opGroups)", p)
			}
		}
	}
}

// stripVariant returns the longest stem of known that name extends with
// "_<variant>" (mul_mat_q -> mul_mat; flash_attn_ext_amd64 ->
// flash_attn_ext), or "" when none does.
func stripVariant(name string, known map[string]bool) string {
	best := ""
	for k := range known {
		if strings.HasPrefix(name, k+"_") && len(k) > len(best) {
			best = k
		}
	}
	return best
}
