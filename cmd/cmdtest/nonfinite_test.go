package cmdtest

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/internal/shareddata"
	"github.com/kernbench/kernbench/internal/testmodel"
	_ "github.com/kernbench/kernbench/ops/backends" // to know which backends open here
	"github.com/kernbench/kernbench/ops/registry"
)

// nodeRE finds the node a non-finite error names.
var nodeRE = regexp.MustCompile(`comes from node "([^"]+)"`)

// TestNonFiniteNodeOnEveryBackend: perplexity over a synthetic model with
// one weight poisoned by a NaN (a gpt-oss attention sink, with flash
// attention on and off; a gpt-oss expert; Mamba's A) exits 1 with "the
// logits are not finite" on cpu, cuda-emu and metal-emu, each naming the
// same node, the one that reads the weight. (The CUDA flash-attention
// kernel once turned the sink's NaN into a finite perplexity, and the
// emulated backends blamed inp_embd for every NaN.)
func TestNonFiniteNodeOnEveryBackend(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(shareddata.Path(t, "wiki.test.raw"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "text.txt"), b[:min(len(b), 20000)], 0o644); err != nil {
		t.Fatal(err)
	}
	vocab := shareddata.Path(t, "stories260K.gguf")
	var backends []string
	for _, name := range []string{"cpu", "cuda-emu", "metal-emu"} {
		tg, err := registry.Resolve(name, "")
		if err == nil {
			err = tg.Err()
		}
		if err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		backends = append(backends, name)
	}
	tests := []struct {
		arch, tensor, fa string
		node             string // the prefix of the node's name
	}{
		{"gpt-oss", "blk.0.attn_sinks.weight", "on", "fattn-"},
		{"gpt-oss", "blk.1.attn_sinks.weight", "off", "kq_soft_max-"},
		{"gpt-oss", "blk.0.ffn_up_exps.weight", "on", "ffn_moe_up-"},
		{"mamba", "blk.0.ssm_a", "off", "ssm_scan-"},
	}
	for _, tc := range tests {
		clean := filepath.Join(t.TempDir(), tc.arch+".gguf")
		if err := testmodel.Write(clean, tc.arch, vocab); err != nil {
			t.Fatal(err)
		}
		model := testmodel.PoisonFile(t, clean, tc.tensor, float32(math.NaN()))
		var first string
		for _, be := range backends {
			r := run(t, dir, "perplexity", "-m", model, "-f", "text.txt", "-c", "32", "--chunks", "2", "-t", "2", "-backend", be, "-fa", tc.fa)
			what := tc.tensor + " -fa " + tc.fa + " -backend " + be
			m := nodeRE.FindStringSubmatch(r.stderr)
			if r.code != 1 || !strings.Contains(r.stderr, "the logits are not finite") || m == nil {
				t.Errorf("%s: exit %d, want 1 naming a node; stderr:\n%s", what, r.code, r.stderr)
				continue
			}
			if !strings.HasPrefix(m[1], tc.node) {
				t.Errorf("%s: node %q, want %s*", what, m[1], tc.node)
			}
			if first == "" {
				first = m[1]
			} else if m[1] != first {
				t.Errorf("%s: node %q, where %s names %q", what, m[1], backends[0], first)
			}
		}
		t.Logf("%s: node %q on %v", tc.tensor, first, backends)
	}
}
