package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/internal/testmodel"
)

// TestArchitectures measures a model of each architecture one chunk per
// batch and four chunks per batch (four sequences: a stream each for the
// attention models, a state each for Mamba): the perplexities agree. A
// model of an unknown architecture is refused with its name.
func TestArchitectures(t *testing.T) {
	text, _ := wikiText(t, 3000)
	vocab := testdata(t, "stories260K.gguf")
	for _, arch := range testmodel.Archs {
		path := filepath.Join(t.TempDir(), arch+".gguf")
		if err := testmodel.Write(path, arch, vocab); err != nil {
			t.Fatal(err)
		}
		var ppls []float64
		for _, b := range []string{"32", "128"} {
			code, out, errs := runCmd("-m", path, "-f", text, "-c", "32", "-b", b, "-kv-type", "f32", "-t", "2", "--chunks", "8")
			if code != 0 {
				t.Fatalf("%s -b %s: exit %d: %s", arch, b, code, errs)
			}
			_, ppl, _ := parsePPL(t, out)
			ppls = append(ppls, ppl)
		}
		t.Logf("%s: PPL %v with one chunk per batch, %v with four", arch, ppls[0], ppls[1])
		if relDiff(ppls[1], ppls[0]) > 1e-5 {
			t.Errorf("%s: PPL %v with one chunk per batch, %v with four", arch, ppls[0], ppls[1])
		}
	}
	bad := filepath.Join(t.TempDir(), "falcon.gguf")
	if err := testmodel.Write(bad, "falcon", vocab); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCmd("-m", bad, "-f", text)
	if code != cli.ExitFailure || !strings.Contains(errs, `architecture "falcon" is not supported`) {
		t.Errorf("falcon: exit %d, stderr %q", code, errs)
	}
}
