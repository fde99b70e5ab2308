package model

import (
	"fmt"
	"math"
)

// Rope scaling kinds, as GGUF's "{arch}.rope.scaling.type" names them.
const (
	RopeScalingNone   = "none"
	RopeScalingLinear = "linear"
	RopeScalingYaRN   = "yarn"
)

// Hparams are a model's hyperparameters, read from GGUF metadata
// ("{arch}.*" keys) as llama.cpp reads them.
type Hparams struct {
	// Arch is general.architecture ("llama").
	Arch string

	NVocab    int // vocabulary size: tokenizer.ggml.tokens, else token_embd's rows
	NCtxTrain int // context_length
	NEmbd     int // embedding_length
	NLayer    int // block_count
	NFF       int // feed_forward_length
	NHead     int // attention.head_count
	NHeadKV   int // attention.head_count_kv (default NHead)
	HeadDimK  int // attention.key_length (default NEmbd/NHead)
	HeadDimV  int // attention.value_length (default NEmbd/NHead)
	NRot      int // rope.dimension_count (default HeadDimK)

	// RMSEps is attention.layer_norm_rms_epsilon.
	RMSEps float32

	// Rope: base frequency (rope.freq_base, default 10000) and scaling.
	RopeFreqBase float32
	// RopeFreqScale multiplies the angle: 1/rope.scaling.factor for
	// linear and YaRN scaling (or 1/rope.scale_linear), else 1.
	RopeFreqScale float32
	// RopeScaling is RopeScalingNone, RopeScalingLinear or RopeScalingYaRN.
	RopeScaling string
	// RopeNCtxOrig is rope.scaling.original_context_length (default
	// NCtxTrain), used by YaRN.
	RopeNCtxOrig int
	// YaRN parameters: ExtFactor is 1 for YaRN and 0 otherwise (unless
	// rope.scaling.yarn_ext_factor says), AttnFactor 1 (or
	// rope.scaling.attn_factor), BetaFast 32 and BetaSlow 1 as llama.cpp.
	RopeExtFactor  float32
	RopeAttnFactor float32
	RopeBetaFast   float32
	RopeBetaSlow   float32
}

// NEmbdKGQA returns the width of one token's keys over all KV heads.
func (h Hparams) NEmbdKGQA() int { return h.HeadDimK * h.NHeadKV }

// NEmbdVGQA returns the width of one token's values over all KV heads.
func (h Hparams) NEmbdVGQA() int { return h.HeadDimV * h.NHeadKV }

// maxDim bounds every size so that products of a few of them cannot
// overflow and a corrupt file cannot ask for absurd allocations.
const maxDim = 1 << 24

// Validate checks that the hyperparameters describe a model this package
// can run, naming the first one at fault.
func (h Hparams) Validate() error {
	if h.Arch != "llama" {
		return fmt.Errorf("model: architecture %q is not supported (only \"llama\")", h.Arch)
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"n_vocab", h.NVocab}, {"context_length", h.NCtxTrain}, {"embedding_length", h.NEmbd},
		{"block_count", h.NLayer}, {"feed_forward_length", h.NFF}, {"attention.head_count", h.NHead},
		{"attention.head_count_kv", h.NHeadKV}, {"attention.key_length", h.HeadDimK},
		{"attention.value_length", h.HeadDimV}, {"rope.dimension_count", h.NRot},
	} {
		if f.v <= 0 || f.v > maxDim {
			return fmt.Errorf("model: %s.%s = %d is outside [1, %d]", h.Arch, f.name, f.v, maxDim)
		}
	}
	if h.NHead%h.NHeadKV != 0 {
		return fmt.Errorf("model: %d attention heads is not a multiple of %d KV heads", h.NHead, h.NHeadKV)
	}
	if h.NRot%2 != 0 || h.NRot > h.HeadDimK {
		return fmt.Errorf("model: rope.dimension_count %d must be even and at most the head size %d", h.NRot, h.HeadDimK)
	}
	if !(h.RMSEps >= 0) || math.IsInf(float64(h.RMSEps), 0) {
		return fmt.Errorf("model: attention.layer_norm_rms_epsilon %v must be finite and >= 0", h.RMSEps)
	}
	if !(h.RopeFreqBase > 0) || !(h.RopeFreqScale > 0) || math.IsInf(float64(h.RopeFreqBase), 0) || math.IsInf(float64(h.RopeFreqScale), 0) {
		return fmt.Errorf("model: rope freq_base %v and freq_scale %v must be finite and > 0", h.RopeFreqBase, h.RopeFreqScale)
	}
	switch h.RopeScaling {
	case RopeScalingNone, RopeScalingLinear, RopeScalingYaRN:
	default:
		return fmt.Errorf("model: rope scaling type %q is not supported (none, linear, yarn)", h.RopeScaling)
	}
	for _, v := range []float32{h.RopeExtFactor, h.RopeAttnFactor, h.RopeBetaFast, h.RopeBetaSlow} {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("model: rope YaRN parameters must be finite: ext %v attn %v beta %v/%v",
				h.RopeExtFactor, h.RopeAttnFactor, h.RopeBetaFast, h.RopeBetaSlow)
		}
	}
	if h.RopeNCtxOrig < 0 {
		return fmt.Errorf("model: rope original context length %d is negative", h.RopeNCtxOrig)
	}
	return nil
}
