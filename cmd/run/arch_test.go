package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/internal/testmodel"
	"github.com/kernbench/kernbench/ops/registry"
)

// archModel writes a synthetic model of arch with stories260K's
// vocabulary and returns its path.
func archModel(t *testing.T, arch string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), arch+".gguf")
	if err := testmodel.Write(path, arch, testdata(t, "stories260K.gguf")); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestArchitectures: generation and -bench run on a model of every
// architecture, and a model of an unknown one is refused with an error
// naming it.
func TestArchitectures(t *testing.T) {
	for _, arch := range testmodel.Archs {
		path := archModel(t, arch)
		code, out, errs := runCmd("-m", path, "-p", "Once upon a time", "-n", "8", "-temp", "0", "-c", "64")
		if code != 0 || !strings.Contains(out, "Once upon a time") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", arch, code, out, errs)
		}
		code, out, errs = runCmd("-m", path, "-bench", "-p", "32", "-n", "4", "-r", "1")
		if code != 0 || !strings.Contains(out, "pp32") || !strings.Contains(out, "tg4") {
			t.Errorf("%s -bench: exit %d, stdout %q, stderr %q", arch, code, out, errs)
		}
	}
	code, _, errs := runCmd("-m", archModel(t, "falcon"), "-p", "hi")
	if code != cli.ExitFailure || !strings.Contains(errs, `architecture "falcon" is not supported`) {
		t.Errorf("falcon: exit %d, stderr %q; want a failure naming the architecture", code, errs)
	}
}

// TestArchitecturesOnEveryBackend: the greedy text of each architecture's
// model is the CPU's on every other backend that opens here (cuda-emu and
// metal-emu on the SIMT emulator: MUL_MAT_ID, ARGSORT, sinks, SSM_CONV,
// SSM_SCAN and SWIGLU_OAI on the GPU kernels).
func TestArchitecturesOnEveryBackend(t *testing.T) {
	for _, arch := range testmodel.Archs {
		path := archModel(t, arch)
		args := []string{"-m", path, "-temp", "0", "-p", "Once upon a time", "-n", "8", "-t", "2", "-c", "64"}
		code, want, errs := runCmd(args...)
		if code != 0 {
			t.Fatalf("%s cpu: exit %d: %s", arch, code, errs)
		}
		for _, tg := range registry.Available() {
			if tg.Entry.Tiers {
				continue
			}
			code, got, errs := runCmd(append([]string{"-backend", tg.Name()}, args...)...)
			if code != 0 {
				t.Fatalf("%s on %s: exit %d: %s", arch, tg.Name(), code, errs)
			}
			if got != want {
				t.Errorf("%s on %s: text\n%q\nthe CPU's\n%q", arch, tg.Name(), got, want)
			}
		}
	}
}
