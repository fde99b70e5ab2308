package main

import (
	"path/filepath"
	"testing"

	"github.com/kernbench/kernbench/gguf"
	shared "github.com/kernbench/kernbench/internal/shareddata"
	"github.com/kernbench/kernbench/internal/testmodel"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/quant"
)

// TestArchitectures quantizes a model of each architecture to q8_0 and
// loads the result: the experts (3-D) are quantized, the routers, biases,
// sinks and Mamba's conv kernels, A and D stay f32, as llama-quantize
// leaves them.
func TestArchitectures(t *testing.T) {
	vocab := shared.Path(t, "stories260K.gguf")
	want := map[string]map[string]quant.Type{
		"llama":   {"blk.0.ffn_down.weight": quant.F16, "blk.0.attn_q.weight": quant.Q8_0},
		"mixtral": {"blk.0.ffn_up_exps.weight": quant.Q8_0, "blk.0.ffn_gate_inp.weight": quant.F32},
		"gpt-oss": {"blk.1.ffn_gate_exps.weight": quant.Q8_0, "blk.1.ffn_gate_exps.bias": quant.F32, "blk.0.attn_sinks.weight": quant.F32, "blk.0.attn_q.weight": quant.Q8_0},
		"mamba":   {"blk.0.ssm_in.weight": quant.Q8_0, "blk.0.ssm_conv1d.weight": quant.F32, "blk.0.ssm_a": quant.F32, "blk.0.ssm_d": quant.F32},
		"mamba2":  {"blk.0.ssm_in.weight": quant.Q8_0, "blk.0.ssm_norm.weight": quant.F32, "blk.0.ssm_a": quant.F32},
	}
	for _, arch := range testmodel.Archs {
		dir := t.TempDir()
		src, dst := filepath.Join(dir, "src.gguf"), filepath.Join(dir, "dst.gguf")
		if err := testmodel.Write(src, arch, vocab); err != nil {
			t.Fatal(err)
		}
		if code, _, errs := runArgs(src, dst, "q8_0"); code != 0 {
			t.Fatalf("%s: exit %d: %s", arch, code, errs)
		}
		m, err := model.Load(dst)
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		m.Close()
		f, err := gguf.Open(dst)
		if err != nil {
			t.Fatal(err)
		}
		for name, typ := range want[arch] {
			if ti, ok := f.TensorInfo(name); !ok || ti.Type != typ {
				t.Errorf("%s: %s is %v (present %v), want %v", arch, name, ti.Type, ok, typ)
			}
		}
		f.Close()
	}
}
