package main

import (
	"math"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/quantize"
)

// archArgs are small shapes of each architecture whose rows (256) take
// every type, K types included.
var archArgs = map[string][]string{
	"llama":   {"-arch", "llama", "-layers", "2", "-embd", "256", "-heads", "4", "-kv-heads", "2", "-ff", "256", "-vocab", "300", "-ctx", "128"},
	"mixtral": {"-arch", "mixtral", "-layers", "2", "-embd", "256", "-heads", "4", "-kv-heads", "2", "-ff", "256", "-vocab", "300", "-ctx", "128", "-experts", "4"},
	"gpt-oss": {"-arch", "gpt-oss", "-layers", "2", "-embd", "256", "-heads", "4", "-kv-heads", "2", "-head-dim", "64", "-ff", "256", "-vocab", "300", "-ctx", "128", "-experts", "4", "-experts-used", "2", "-swa", "4"},
	"mamba":   {"-arch", "mamba", "-layers", "2", "-embd", "256", "-d-inner", "256", "-d-state", "8", "-dt-rank", "32", "-vocab", "300", "-ctx", "128"},
	"mamba2":  {"-arch", "mamba2", "-layers", "2", "-embd", "256", "-d-inner", "512", "-d-state", "16", "-dt-rank", "8", "-groups", "2", "-vocab", "300", "-ctx", "128"},
}

// TestArchitectures writes each architecture with every type quantize
// takes, loads it with model.Load (which checks every key, tensor name,
// shape and type) and decodes a prompt: the logits are finite with a
// standard deviation near 1, and with f32 weights they equal the float64
// reference's. It also pins general.architecture and a few tensors' types
// under the mixes' rules.
func TestArchitectures(t *testing.T) {
	prompt := []int32{1, 72, 105, 33, 200, 17, 5, 290, 44}
	for _, arch := range archNames {
		for _, s := range quantize.Schemes() {
			if s.NeedsImatrix {
				continue // mkmodel refuses them (TestUsage)
			}
			path, _ := mk(t, arch+".gguf", append([]string{"-type", s.Name}, archArgs[arch]...)...)
			m, err := model.Load(path)
			if err != nil {
				t.Fatalf("%s %s: %v", arch, s.Name, err)
			}
			want := map[string]string{"mixtral": "llama"}[arch]
			if want == "" {
				want = arch
			}
			if m.Hparams.Arch != want {
				t.Errorf("%s: general.architecture %q", arch, m.Hparams.Arch)
			}
			m.Close()
			logits := decodeLogits(t, path, prompt)
			for i, l := range logits {
				if math.IsNaN(float64(l)) || math.IsInf(float64(l), 0) {
					t.Fatalf("%s %s: logit %d is %v", arch, s.Name, i, l)
				}
			}
			mean, std := meanStd(logits)
			if std < 0.3 || std > 3 || math.Abs(mean) > 1 {
				t.Errorf("%s %s: logits mean %.3f std %.3f, want mean near 0 and std near 1", arch, s.Name, mean, std)
			}
			if s.Name == "f32" {
				checkReference(t, arch, path, prompt)
			}
		}
	}
	// The mixes' rules reach the experts, and Mamba's conv kernel stays f32.
	for _, tc := range []struct {
		arch, typ string
		types     map[string]quant.Type
	}{
		{"mixtral", "q4_K_M", map[string]quant.Type{"blk.1.ffn_down_exps.weight": quant.Q6_K, "blk.0.ffn_up_exps.weight": quant.Q4_K, "blk.0.ffn_gate_inp.weight": quant.F32}},
		{"gpt-oss", "q8_0", map[string]quant.Type{"blk.1.ffn_gate_exps.weight": quant.Q8_0, "blk.1.attn_sinks.weight": quant.F32, "blk.0.ffn_down_exps.bias": quant.F32, "blk.0.attn_q.bias": quant.F32}},
		{"mamba", "q4_0", map[string]quant.Type{"blk.0.ssm_conv1d.weight": quant.F32, "blk.0.ssm_a": quant.F32, "blk.1.ssm_in.weight": quant.Q4_0, "blk.1.ssm_dt.weight": quant.Q4_0}},
		{"mamba2", "q4_K_M", map[string]quant.Type{"blk.0.ssm_conv1d.weight": quant.F32, "blk.0.ssm_norm.weight": quant.F32, "blk.0.ssm_d": quant.F32, "blk.1.ssm_in.weight": quant.Q4_K}},
	} {
		path, _ := mk(t, tc.arch+".gguf", append([]string{"-type", tc.typ}, archArgs[tc.arch]...)...)
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range tc.types {
			if ti, ok := f.TensorInfo(name); !ok || ti.Type != want {
				t.Errorf("%s %s: %s has type %v (present %v), want %v", tc.arch, tc.typ, name, ti.Type, ok, want)
			}
		}
		f.Close()
	}
}

// checkReference compares the runner's logits of an f32 file with the
// float64 reference forward of the same file.
func checkReference(t *testing.T, arch, path string, prompt []int32) {
	t.Helper()
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ref, err := model.ReferenceForward(m, prompt)
	if err != nil {
		t.Fatal(err)
	}
	got := decodeLogits(t, path, prompt)
	want := ref[len(prompt)-1]
	scale, worst := 0.0, 0.0
	for i, w := range want {
		scale = math.Max(scale, math.Abs(w))
		worst = math.Max(worst, math.Abs(float64(got[i])-w))
	}
	// decodeLogits uses the default F16 cache (Mamba's states are f32):
	// the model package's tolF16 of 2e-3 relative.
	if worst/scale > 2e-3 {
		t.Errorf("%s f32: logits differ from the reference by %.3g of their largest", arch, worst/scale)
	}
}

// TestArchBadArgs: sizes of one architecture given to another, and bad
// sizes, are usage errors naming the flag.
func TestArchBadArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "x", "-arch", "rwkv"}, `-arch: unknown architecture "rwkv"`},
		{[]string{"-o", "x", "-experts", "4"}, "-experts: -arch llama has no such size"},
		{[]string{"-o", "x", "-arch", "mamba", "-swa", "4"}, "-swa: -arch mamba"},
		{[]string{"-o", "x", "-arch", "mixtral", "-experts-used", "9"}, "-experts-used: 9 is outside [1, -experts 8]"},
		{[]string{"-o", "x", "-arch", "gpt-oss", "-head-dim", "7"}, "-head-dim: 7 must be even"},
		{[]string{"-o", "x", "-arch", "mamba", "-d-conv", "-1"}, "-d-conv: -1 is outside"},
		{[]string{"-o", "x", "-arch", "mamba", "-groups", "2"}, "-groups: -arch mamba has no such size"},
		{[]string{"-o", "x", "-arch", "mamba2", "-groups", "3"}, "-groups: 3 does not divide"},
	} {
		code, out, errOut := runArgs(tc.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("mkmodel %q: exit %d, stderr %q; want exit 2 naming %q", tc.args, code, errOut, tc.want)
		}
	}
}
