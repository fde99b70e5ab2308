package bench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
)

// A Layer is one op of a model's layer at the model's sizes, with the
// sizes a sweep varies (tokens n, and the KV length kv) left free.
type Layer struct {
	// Label names the tensors, such as "ffn_gate,ffn_up".
	Label string
	Op    ops.Op
	// Dims are the sizes fixed by the model.
	Dims harness.Dims
}

// A Preset is a model's layer shapes.
type Preset struct {
	Name string
	// About cites the hyperparameters.
	About  string
	Layers []Layer
}

// Free sizes: what a preset sweep varies.
var presetFree = []string{harness.DimN, harness.DimKV}

func mm(label string, m, k int64) Layer {
	return Layer{Label: label, Op: ops.OpMulMat, Dims: harness.Dims{harness.DimM: m, harness.DimK: k}}
}

// attention returns the attention ops of a transformer layer.
func attention(d, heads, kvHeads, width int64) []Layer {
	return []Layer{
		{Label: "attn_norm", Op: ops.OpRMSNorm, Dims: harness.Dims{harness.DimK: width}},
		{Label: "rope q", Op: ops.OpRope, Dims: harness.Dims{harness.DimD: d, harness.DimHeads: heads}},
		{Label: "kq softmax", Op: ops.OpSoftMax, Dims: harness.Dims{harness.DimHeads: heads}},
		{Label: "flash attention", Op: ops.OpFlashAttnExt, Dims: harness.Dims{harness.DimD: d, harness.DimHeads: heads, harness.DimKVHeads: kvHeads}},
	}
}

// presets are the model presets. Sizes are from the models' published
// configurations: LLaMA-7B (dim 4096, 32 heads, FFN 11008), Llama-3-8B
// (dim 4096, 32 query and 8 KV heads, FFN 14336), Mixtral-8x7B (Llama-3-8B's
// attention shape, 8 experts of FFN 14336, 2 used per token), Mamba-1.4B
// (d_model 2048, expand 2 so d_inner 4096, d_state 16, d_conv 4, dt_rank
// ceil(2048/16) = 128). The output projection (vocabulary x width) is left
// out: it runs once per token, not per layer.
var presets = []Preset{
	{
		Name:  "llama-7b",
		About: "LLaMA-7B: width 4096, 32 heads of 128 (no GQA), FFN 11008",
		Layers: append([]Layer{
			mm("attn_q,attn_k,attn_v,attn_output", 4096, 4096),
			mm("ffn_gate,ffn_up", 11008, 4096),
			mm("ffn_down", 4096, 11008),
		}, attention(128, 32, 32, 4096)...),
	},
	{
		Name:  "llama-3-8b",
		About: "Llama-3-8B: width 4096, 32 query heads and 8 KV heads of 128, FFN 14336",
		Layers: append([]Layer{
			mm("attn_q,attn_output", 4096, 4096),
			mm("attn_k,attn_v", 1024, 4096),
			mm("ffn_gate,ffn_up", 14336, 4096),
			mm("ffn_down", 4096, 14336),
		}, attention(128, 32, 8, 4096)...),
	},
	{
		Name:  "mixtral",
		About: "Mixtral-8x7B: width 4096, 32 query heads and 8 KV heads of 128, 8 experts of FFN 14336, 2 used per token",
		Layers: append([]Layer{
			mm("attn_q,attn_output", 4096, 4096),
			mm("attn_k,attn_v", 1024, 4096),
			mm("ffn_gate_inp (router)", 8, 4096),
			{Label: "router softmax", Op: ops.OpSoftMax, Dims: harness.Dims{harness.DimKV: 8, harness.DimHeads: 1}},
			{Label: "router top-k", Op: ops.OpArgsort, Dims: harness.Dims{harness.DimK: 8}},
			{Label: "ffn_gate_exps,ffn_up_exps", Op: ops.OpMulMatID, Dims: harness.Dims{harness.DimM: 14336, harness.DimK: 4096, harness.DimExperts: 8, harness.DimUsed: 2}},
			{Label: "ffn_down_exps", Op: ops.OpMulMatID, Dims: harness.Dims{harness.DimM: 4096, harness.DimK: 14336, harness.DimExperts: 8, harness.DimUsed: 2}},
		}, attention(128, 32, 8, 4096)...),
	},
	{
		Name:  "mamba-1.4b",
		About: "Mamba-1.4B: d_model 2048, d_inner 4096, d_state 16, d_conv 4, dt_rank 128",
		Layers: []Layer{
			{Label: "norm", Op: ops.OpRMSNorm, Dims: harness.Dims{harness.DimK: 2048}},
			mm("ssm_in", 8192, 2048),
			{Label: "ssm_conv1d", Op: ops.OpSSMConv, Dims: harness.Dims{harness.DimDConv: 4, harness.DimDInner: 4096, harness.DimSeqs: 1}},
			mm("ssm_x", 160, 4096),
			mm("ssm_dt", 4096, 128),
			{Label: "ssm_scan", Op: ops.OpSSMScan, Dims: harness.Dims{harness.DimDState: 16, harness.DimDInner: 4096, harness.DimHeadDim: 1, harness.DimSeqs: 1}},
			mm("ssm_out", 2048, 4096),
		},
	},
}

// Presets returns the model presets.
func Presets() []Preset { return slices.Clone(presets) }

// PresetNames returns the presets' names.
func PresetNames() []string {
	out := make([]string, len(presets))
	for i, p := range presets {
		out[i] = p.Name
	}
	return out
}

// LookupPreset returns the preset called name.
func LookupPreset(name string) (Preset, error) {
	for _, p := range presets {
		if p.Name == name {
			return p, nil
		}
	}
	return Preset{}, fmt.Errorf("unknown preset %q (known: %s)", name, strings.Join(PresetNames(), ", "))
}
