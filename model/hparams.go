package model

import (
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops"
)

// Rope scaling kinds, as GGUF's "{arch}.rope.scaling.type" names them.
const (
	RopeScalingNone   = "none"
	RopeScalingLinear = "linear"
	RopeScalingYaRN   = "yarn"
)

// Hparams are a model's hyperparameters, read from GGUF metadata
// ("{arch}.*" keys) as llama.cpp reads them. Fields that an architecture
// does not have are zero: a LLaMA model has no SSM sizes, a Mamba model no
// attention heads.
type Hparams struct {
	// Arch is general.architecture ("llama", "gpt-oss", "mamba",
	// "mamba2").
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
	// RopeMode is the architecture's rope: ops.RopeNormal (adjacent
	// pairs: llama) or ops.RopeNeoX (halves: gpt-oss).
	RopeMode int

	// Mixture of experts, when NExpert > 0: each token's router picks
	// NExpertUsed of NExpert feed-forward experts of width NFFExp.
	NExpert     int // expert_count
	NExpertUsed int // expert_used_count
	NFFExp      int // expert_feed_forward_length (llama: feed_forward_length)
	// ExpertWeightsNorm normalizes the chosen experts' router
	// probabilities to sum to 1 (expert_weights_norm; true for llama
	// and gpt-oss, which do so by architecture).
	ExpertWeightsNorm bool
	// ExpertWeightsScale multiplies the expert weights
	// (expert_weights_scale); 0 means 1.
	ExpertWeightsScale float32

	// Sliding-window attention: NSWA > 0 (attention.sliding_window) is
	// the window of the layers that have one; with SWAPattern n > 0 those
	// are the layers il with il%n < n-1 (gpt-oss: n = 2, the even
	// layers), the others attend to the whole context.
	NSWA       int
	SWAPattern int

	// Selective state space (Mamba): ssm.conv_kernel, ssm.inner_size,
	// ssm.state_size, ssm.time_step_rank (Mamba-2: the number of heads)
	// and, for Mamba-2, ssm.group_count (B and C are shared by the heads
	// of a group).
	SSMConv   int
	SSMInner  int
	SSMState  int
	SSMDtRank int
	SSMGroups int
}

// SSMConvChannels returns the channels of the SSM's conv: d_inner for
// Mamba-1, d_inner + 2*n_group*d_state for Mamba-2 (x, B and C).
func (h Hparams) SSMConvChannels() int {
	if h.SSMGroups > 0 {
		return h.SSMInner + 2*h.SSMGroups*h.SSMState
	}
	return h.SSMInner
}

// NEmbdKGQA returns the width of one token's keys over all KV heads.
func (h Hparams) NEmbdKGQA() int { return h.HeadDimK * h.NHeadKV }

// NEmbdVGQA returns the width of one token's values over all KV heads.
func (h Hparams) NEmbdVGQA() int { return h.HeadDimV * h.NHeadKV }

// LayerSWA reports whether layer il attends through a sliding window of
// NSWA positions.
func (h Hparams) LayerSWA(il int) bool {
	return h.NSWA > 0 && h.SWAPattern > 0 && il%h.SWAPattern < h.SWAPattern-1
}

// Recurrent reports whether the model keeps a recurrent state per
// sequence (Mamba) instead of a KV cache of every token.
func (h Hparams) Recurrent() bool {
	a, ok := archOf(h.Arch)
	return ok && a.family == familyMamba
}

// maxDim bounds every size so that products of a few of them cannot
// overflow and a corrupt file cannot ask for absurd allocations.
const maxDim = 1 << 24

// maxExperts bounds expert_count (llama.cpp's LLAMA_MAX_EXPERTS is 512).
const maxExperts = 512

type dimCheck struct {
	name string
	v    int
}

func checkDims(arch string, dims []dimCheck) error {
	for _, f := range dims {
		if f.v <= 0 || f.v > maxDim {
			return fmt.Errorf("model: %s.%s = %d is outside [1, %d]", arch, f.name, f.v, maxDim)
		}
	}
	return nil
}

// Validate checks that the hyperparameters describe a model this package
// can run, naming the first one at fault.
func (h Hparams) Validate() error {
	a, ok := archOf(h.Arch)
	if !ok {
		return errUnknownArch(h.Arch)
	}
	if err := checkDims(h.Arch, []dimCheck{
		{"n_vocab", h.NVocab}, {"context_length", h.NCtxTrain}, {"embedding_length", h.NEmbd},
		{"block_count", h.NLayer},
	}); err != nil {
		return err
	}
	if !(h.RMSEps >= 0) || math.IsInf(float64(h.RMSEps), 0) {
		return fmt.Errorf("model: attention.layer_norm_rms_epsilon %v must be finite and >= 0", h.RMSEps)
	}
	if a.family == familyMamba {
		return h.validateSSM()
	}
	return h.validateAttention()
}

func (h Hparams) validateSSM() error {
	if err := checkDims(h.Arch, []dimCheck{
		{"ssm.conv_kernel", h.SSMConv}, {"ssm.inner_size", h.SSMInner},
		{"ssm.state_size", h.SSMState}, {"ssm.time_step_rank", h.SSMDtRank},
	}); err != nil {
		return err
	}
	if int64(h.SSMState)*int64(h.SSMInner) > maxDim*16 {
		return fmt.Errorf("model: a state of %d x %d is too large", h.SSMState, h.SSMInner)
	}
	if a, _ := archOf(h.Arch); a.mamba2 {
		switch {
		case h.SSMGroups <= 0 || h.SSMGroups > maxDim:
			return fmt.Errorf("model: %s.ssm.group_count = %d is outside [1, %d]", h.Arch, h.SSMGroups, maxDim)
		case h.SSMInner%h.SSMDtRank != 0:
			return fmt.Errorf("model: %s.ssm.inner_size %d is not a multiple of the %d heads (ssm.time_step_rank)", h.Arch, h.SSMInner, h.SSMDtRank)
		case h.SSMDtRank%h.SSMGroups != 0 || h.SSMInner%h.SSMGroups != 0:
			return fmt.Errorf("model: %s.ssm.group_count %d does not divide the %d heads and inner size %d", h.Arch, h.SSMGroups, h.SSMDtRank, h.SSMInner)
		}
	} else if h.SSMGroups != 0 {
		return fmt.Errorf("model: %s has no ssm.group_count (Mamba-2 is %q)", h.Arch, ArchMamba2)
	}
	return nil
}

func (h Hparams) validateAttention() error {
	if err := checkDims(h.Arch, []dimCheck{
		{"feed_forward_length", h.NFF}, {"attention.head_count", h.NHead},
		{"attention.head_count_kv", h.NHeadKV}, {"attention.key_length", h.HeadDimK},
		{"attention.value_length", h.HeadDimV}, {"rope.dimension_count", h.NRot},
	}); err != nil {
		return err
	}
	if h.NHead%h.NHeadKV != 0 {
		return fmt.Errorf("model: %d attention heads is not a multiple of %d KV heads", h.NHead, h.NHeadKV)
	}
	if h.NRot%2 != 0 || h.NRot > h.HeadDimK {
		return fmt.Errorf("model: rope.dimension_count %d must be even and at most the head size %d", h.NRot, h.HeadDimK)
	}
	if h.RopeMode != ops.RopeNormal && h.RopeMode != ops.RopeNeoX {
		return fmt.Errorf("model: rope mode %d is not supported", h.RopeMode)
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
	if h.NExpert != 0 {
		switch {
		case h.NExpert < 0 || h.NExpert > maxExperts:
			return fmt.Errorf("model: %s.expert_count = %d is outside [1, %d]", h.Arch, h.NExpert, maxExperts)
		case h.NExpertUsed < 1 || h.NExpertUsed > h.NExpert:
			return fmt.Errorf("model: %s.expert_used_count = %d is outside [1, expert_count = %d]", h.Arch, h.NExpertUsed, h.NExpert)
		case h.NFFExp <= 0 || h.NFFExp > maxDim:
			return fmt.Errorf("model: %s.expert_feed_forward_length = %d is outside [1, %d]", h.Arch, h.NFFExp, maxDim)
		case math.IsNaN(float64(h.ExpertWeightsScale)) || math.IsInf(float64(h.ExpertWeightsScale), 0) || h.ExpertWeightsScale < 0:
			return fmt.Errorf("model: %s.expert_weights_scale = %v must be finite and >= 0", h.Arch, h.ExpertWeightsScale)
		}
	} else if h.NExpertUsed != 0 {
		return fmt.Errorf("model: %s.expert_used_count = %d without experts", h.Arch, h.NExpertUsed)
	}
	if h.NSWA < 0 || h.NSWA > maxDim || h.SWAPattern < 0 || h.SWAPattern > maxDim {
		return fmt.Errorf("model: sliding window %d (pattern %d) is outside [0, %d]", h.NSWA, h.SWAPattern, maxDim)
	}
	return nil
}
