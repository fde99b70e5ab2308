package model

import (
	"fmt"
	"strings"

	"github.com/kernbench/kernbench/ops"
)

// The architectures the runner knows, by their general.architecture
// names in GGUF (llama.cpp's LLM_ARCH_* names).
const (
	// ArchLlama is LLaMA, and with {arch}.expert_count > 0 a Mixtral-style
	// mixture of experts (llama.cpp writes Mixtral as "llama").
	ArchLlama = "llama"
	// ArchGPTOSS is OpenAI's gpt-oss: attention with per-head sinks,
	// sliding-window and full-attention layers alternating, Q/K/V/O
	// biases, NeoX rope with YaRN, and a mixture of experts with biases
	// and a clamped SwiGLU.
	ArchGPTOSS = "gpt-oss"
	// ArchMamba is Mamba-1: selective state-space layers with a
	// recurrent state per sequence instead of a KV cache.
	ArchMamba = "mamba"
	// ArchMamba2 is Mamba-2: heads with a scalar A each, B and C in
	// groups, produced by in_proj with x and dt, and a grouped RMS norm
	// before out_proj.
	ArchMamba2 = "mamba2"
)

// family is the kind of graph an architecture builds.
type family int

const (
	familyTransformer family = iota // attention and a feed-forward (dense or experts) per layer
	familyMamba                     // a selective state-space block per layer
)

// arch describes one architecture: its graph family and what differs
// between transformers of the family. Everything else (the keys it reads,
// its tensors) follows from these fields in hparamsFromGGUF and
// layerTensors.
type arch struct {
	name   string
	family family
	// ropeMode is the rope of Q and K (transformers).
	ropeMode int
	// ffnNorm is the name of the feed-forward's norm tensor
	// ("ffn_norm", or gpt-oss's "post_attention_norm").
	ffnNorm string
	// moe: the feed-forward is always a mixture of experts (gpt-oss);
	// otherwise it is one when expert_count > 0 (llama).
	moe bool
	// biases: the attention projections and experts have (optional)
	// bias tensors.
	biases bool
	// sinks: attention has per-head sink logits (attn_sinks).
	sinks bool
	// swaPattern is the sliding-window layer pattern (see
	// Hparams.SWAPattern), 0 for none.
	swaPattern int
	// oaiSwiGLU selects gpt-oss's clamped SwiGLU for the experts.
	oaiSwiGLU bool
	// expertNorm is whether the chosen experts' weights are normalized
	// when the file does not say (expert_weights_norm).
	expertNorm bool
	// mamba2 selects Mamba-2's block (familyMamba).
	mamba2 bool
}

// archs is every architecture the runner knows.
var archs = []arch{
	{name: ArchLlama, family: familyTransformer, ropeMode: ops.RopeNormal, ffnNorm: "ffn_norm", expertNorm: true},
	{name: ArchGPTOSS, family: familyTransformer, ropeMode: ops.RopeNeoX, ffnNorm: "post_attention_norm",
		moe: true, biases: true, sinks: true, swaPattern: 2, oaiSwiGLU: true, expertNorm: true},
	{name: ArchMamba, family: familyMamba},
	{name: ArchMamba2, family: familyMamba, mamba2: true},
}

// Architectures returns the general.architecture names the runner loads.
func Architectures() []string {
	out := make([]string, len(archs))
	for i, a := range archs {
		out[i] = a.name
	}
	return out
}

// archOf returns the architecture called name.
func archOf(name string) (arch, bool) {
	for _, a := range archs {
		if a.name == name {
			return a, true
		}
	}
	return arch{}, false
}

// errUnknownArch is the error for a file of an architecture the runner
// does not know, naming it and the known ones.
func errUnknownArch(name string) error {
	return fmt.Errorf("model: architecture %q is not supported (known: %s)", name, strings.Join(Architectures(), ", "))
}

// gpt-oss's clamped SwiGLU constants (llama.cpp hard-codes them for the
// architecture; no GGUF key carries them).
const (
	oaiSwiGLUAlpha = 1.702
	oaiSwiGLULimit = 7.0
)
