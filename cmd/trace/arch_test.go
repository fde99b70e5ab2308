package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/kernbench/kernbench/internal/testmodel"
)

// TestArchitectures traces a model of each architecture: the dot dump
// shows the routing (ARGSORT top-k, MUL_MAT_ID) and the scan (SSM_CONV,
// SSM_SCAN), and the pprof stacks name the layer kind (attn, attn_swa,
// ffn_moe, ssm). An unknown architecture is refused with its name.
func TestArchitectures(t *testing.T) {
	vocab := testdata(t, "stories260K.gguf")
	for _, tc := range []struct {
		arch   string
		dot    []string // node names in the dot dump
		blocks []string // frames of the pprof stacks
	}{
		{"llama", []string{"fattn-0"}, []string{"attn", "ffn"}},
		{"mixtral", []string{"ffn_moe_argsort-0", "ffn_moe_topk-0", "ffn_moe_gate-1", "ffn_moe_weighted-1"}, []string{"attn", "ffn_moe", "MUL_MAT_ID(f32)", "ARGSORT(f32)"}},
		{"gpt-oss", []string{"ffn_moe_swiglu_oai-0", "fattn-1"}, []string{"attn_swa", "attn", "ffn_moe", "SWIGLU_OAI(f32)"}},
		{"mamba", []string{"ssm_conv-0", "ssm_scan-1"}, []string{"ssm", "SSM_SCAN(f32)", "SSM_CONV(f32)"}},
		{"mamba2", []string{"ssm_conv-0", "ssm_scan-1", "ssm_norm-1"}, []string{"ssm", "SSM_SCAN(f32)", "SSM_CONV(f32)"}},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, tc.arch+".gguf")
		if err := testmodel.Write(path, tc.arch, vocab); err != nil {
			t.Fatal(err)
		}
		g, pp := filepath.Join(dir, "g.dot"), filepath.Join(dir, "p.pb.gz")
		rc, out, errs := trace("-m", path, "-p", "Once upon a time", "-n", "2", "-dot", g, "-render", "none", "-pprof", pp, "-summary")
		if rc != 0 {
			t.Fatalf("%s: exit %d: %s", tc.arch, rc, errs)
		}
		if !strings.Contains(out, "generated: 2 tokens") {
			t.Errorf("%s: output:\n%s", tc.arch, out)
		}
		text, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range tc.dot {
			if !strings.Contains(string(text), want) {
				t.Errorf("%s: the dot dump lacks %s", tc.arch, want)
			}
		}
		f, err := os.Open(pp)
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, fn := range p.Function {
			names[fn.Name] = true
		}
		for _, want := range tc.blocks {
			if !names[want] {
				t.Errorf("%s: the profile lacks %s", tc.arch, want)
			}
		}
	}
	bad := filepath.Join(t.TempDir(), "falcon.gguf")
	if err := testmodel.Write(bad, "falcon", vocab); err != nil {
		t.Fatal(err)
	}
	if rc, _, errs := trace("-m", bad); rc != 1 || !strings.Contains(errs, `architecture "falcon" is not supported`) {
		t.Errorf("falcon: exit %d, stderr %q", rc, errs)
	}
}
