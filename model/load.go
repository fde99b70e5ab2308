package model

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/ops"
)

// Load opens the GGUF file at path and returns its model. The weights stay
// in the memory-mapped file: Close the model to release it.
func Load(path string) (*Model, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	m, err := FromGGUF(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w (loading %s)", err, path)
	}
	m.closer = f
	return m, nil
}

// FromGGUF returns the model of an open GGUF file. The file must stay open
// while the model is used; closing the model does not close it.
func FromGGUF(f *gguf.File) (*Model, error) {
	h, err := HparamsFromGGUF(f)
	if err != nil {
		return nil, err
	}
	w, err := weightsFromGGUF(f, h)
	if err != nil {
		return nil, err
	}
	m, err := New(h, w)
	if err != nil {
		return nil, err
	}
	m.file = f
	return m, nil
}

// File returns the GGUF file the model was loaded from (nil for a model
// made by New), for metadata such as the vocabulary.
func (m *Model) File() *gguf.File { return m.file }

// meta reads "{arch}.name" keys of a file, wrapping errors with the key.
type meta struct {
	f    *gguf.File
	arch string
}

func (m meta) key(name string) string { return m.arch + "." + name }

// uint returns the required integer key, in [1, maxDim].
func (m meta) uint(name string) (int, error) {
	k := m.key(name)
	v, err := m.f.Uint(k)
	if err != nil {
		if errors.Is(err, gguf.ErrKeyNotFound) {
			return 0, fmt.Errorf("model: missing hyperparameter %s", k)
		}
		return 0, fmt.Errorf("model: hyperparameter %s: %w", k, err)
	}
	if v == 0 || v > maxDim {
		return 0, fmt.Errorf("model: hyperparameter %s = %d is outside [1, %d]", k, v, maxDim)
	}
	return int(v), nil
}

// optUint returns the integer key, or def when it is absent.
func (m meta) optUint(name string, def int) (int, error) {
	if _, ok := m.f.Get(m.key(name)); !ok {
		return def, nil
	}
	return m.uint(name)
}

// float returns the required number key, finite.
func (m meta) float(name string) (float32, error) {
	k := m.key(name)
	v, err := m.f.Float(k)
	if err != nil {
		if errors.Is(err, gguf.ErrKeyNotFound) {
			return 0, fmt.Errorf("model: missing hyperparameter %s", k)
		}
		return 0, fmt.Errorf("model: hyperparameter %s: %w", k, err)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > math.MaxFloat32 {
		return 0, fmt.Errorf("model: hyperparameter %s = %v is not a finite float32", k, v)
	}
	return float32(v), nil
}

// optFloat returns the number key, or def when it is absent.
func (m meta) optFloat(name string, def float32) (float32, error) {
	if _, ok := m.f.Get(m.key(name)); !ok {
		return def, nil
	}
	return m.float(name)
}

// HparamsFromGGUF reads a model's hyperparameters from GGUF metadata. An
// architecture the runner does not know and a missing required key are
// errors that name them.
func HparamsFromGGUF(f *gguf.File) (Hparams, error) {
	name, err := f.String(gguf.KeyArchitecture)
	if err != nil {
		return Hparams{}, fmt.Errorf("model: %w", err)
	}
	a, ok := archOf(name)
	if !ok {
		return Hparams{}, errUnknownArch(name)
	}
	m := meta{f: f, arch: name}
	h := Hparams{Arch: name}
	for _, r := range []struct {
		name string
		dst  *int
	}{
		{"context_length", &h.NCtxTrain}, {"embedding_length", &h.NEmbd}, {"block_count", &h.NLayer},
	} {
		if *r.dst, err = m.uint(r.name); err != nil {
			return Hparams{}, err
		}
	}
	if a.family == familyMamba {
		err = ssmHparams(m, a, &h)
	} else {
		err = attentionHparams(m, a, &h)
	}
	if err != nil {
		return Hparams{}, err
	}
	if h.RMSEps, err = m.float("attention.layer_norm_rms_epsilon"); err != nil {
		return Hparams{}, err
	}

	// The vocabulary size: {arch}.vocab_size, else the tokenizer's token
	// list, else the embedding's rows.
	switch {
	case has(f, m.key("vocab_size")):
		if h.NVocab, err = m.uint("vocab_size"); err != nil {
			return Hparams{}, err
		}
	case has(f, "tokenizer.ggml.tokens"):
		v, _ := f.Get("tokenizer.ggml.tokens")
		if v.Type != gguf.TypeArray || v.ElemType != gguf.TypeString {
			return Hparams{}, fmt.Errorf("model: tokenizer.ggml.tokens holds a %s, not an array of strings", v.TypeString())
		}
		h.NVocab = v.Len()
	default:
		ti, ok := f.TensorInfo("token_embd.weight")
		if !ok {
			return Hparams{}, fmt.Errorf("model: no vocabulary size: neither %s, tokenizer.ggml.tokens nor token_embd.weight", m.key("vocab_size"))
		}
		h.NVocab = int(min(ti.Ne[1], math.MaxInt32))
	}
	if err := h.Validate(); err != nil {
		return Hparams{}, err
	}
	return h, nil
}

// attentionHparams reads a transformer's keys: the feed-forward, the
// heads, rope, experts and the sliding window.
func attentionHparams(m meta, a arch, h *Hparams) error {
	var err error
	h.RopeMode = a.ropeMode
	if a.moe {
		if h.NFFExp, err = m.uint("expert_feed_forward_length"); err != nil {
			return err
		}
		if h.NFF, err = m.optUint("feed_forward_length", h.NFFExp); err != nil {
			return err
		}
	} else if h.NFF, err = m.uint("feed_forward_length"); err != nil {
		return err
	}
	if h.NHead, err = m.uint("attention.head_count"); err != nil {
		return err
	}
	if h.NExpert, err = m.optUint("expert_count", 0); err != nil {
		return err
	}
	if a.moe && h.NExpert == 0 {
		return fmt.Errorf("model: missing hyperparameter %s (a %s model is a mixture of experts)", m.key("expert_count"), a.name)
	}
	if h.NExpert > 0 {
		if !has(m.f, m.key("expert_used_count")) {
			return fmt.Errorf("model: %s = %d needs %s", m.key("expert_count"), h.NExpert, m.key("expert_used_count"))
		}
		if h.NExpertUsed, err = m.uint("expert_used_count"); err != nil {
			return err
		}
		if !a.moe {
			// llama's experts are feed_forward_length wide.
			h.NFFExp = h.NFF
		}
		h.ExpertWeightsNorm = a.expertNorm
		if has(m.f, m.key("expert_weights_norm")) {
			if h.ExpertWeightsNorm, err = m.f.Bool(m.key("expert_weights_norm")); err != nil {
				return fmt.Errorf("model: %w", err)
			}
		}
		if h.ExpertWeightsScale, err = m.optFloat("expert_weights_scale", 0); err != nil {
			return err
		}
	}
	keyLen := 0
	if h.NEmbd%h.NHead == 0 {
		keyLen = h.NEmbd / h.NHead
	} else if !has(m.f, m.key("attention.key_length")) {
		return fmt.Errorf("model: %s %d is not a multiple of %s %d", m.key("embedding_length"), h.NEmbd, m.key("attention.head_count"), h.NHead)
	}
	if h.NHeadKV, err = m.optUint("attention.head_count_kv", h.NHead); err != nil {
		return err
	}
	if h.HeadDimK, err = m.optUint("attention.key_length", keyLen); err != nil {
		return err
	}
	if h.HeadDimV, err = m.optUint("attention.value_length", keyLen); err != nil {
		return err
	}
	if h.NRot, err = m.optUint("rope.dimension_count", h.HeadDimK); err != nil {
		return err
	}
	if h.RopeFreqBase, err = m.optFloat("rope.freq_base", 10000); err != nil {
		return err
	}
	if err := ropeScaling(m, h); err != nil {
		return err
	}
	if a.swaPattern > 0 {
		if h.NSWA, err = m.uint("attention.sliding_window"); err != nil {
			return err
		}
		h.SWAPattern = a.swaPattern
	}
	return nil
}

// ssmHparams reads Mamba's keys (Mamba-2's group count too). llama.cpp's
// converter writes feed_forward_length and attention.head_count as 0 for
// Mamba; they are not read.
func ssmHparams(m meta, a arch, h *Hparams) error {
	for _, r := range []struct {
		name string
		dst  *int
	}{
		{"ssm.conv_kernel", &h.SSMConv}, {"ssm.inner_size", &h.SSMInner},
		{"ssm.state_size", &h.SSMState}, {"ssm.time_step_rank", &h.SSMDtRank},
	} {
		var err error
		if *r.dst, err = m.uint(r.name); err != nil {
			return err
		}
	}
	if has(m.f, m.key("ssm.dt_b_c_rms")) {
		if on, err := m.f.Bool(m.key("ssm.dt_b_c_rms")); err != nil || on {
			if err != nil {
				return fmt.Errorf("model: %w", err)
			}
			return fmt.Errorf("model: %s = true (Falcon-Mamba's norms of dt, B and C) is not supported", m.key("ssm.dt_b_c_rms"))
		}
	}
	if a.mamba2 {
		var err error
		h.SSMGroups, err = m.uint("ssm.group_count")
		return err
	}
	if n, err := m.optUint("ssm.group_count", 0); err != nil || n > 0 {
		if err != nil {
			return err
		}
		return fmt.Errorf("model: %s = %d in a Mamba-1 file (Mamba-2's general.architecture is %q)", m.key("ssm.group_count"), n, ArchMamba2)
	}
	return nil
}

func has(f *gguf.File, key string) bool {
	_, ok := f.Get(key)
	return ok
}

// ropeScaling reads the rope scaling keys as llama.cpp does: a type
// (none, linear, yarn; linear when only a factor is given), a factor whose
// inverse is the frequency scale (or the older rope.scale_linear), and
// YaRN's original context, attention factor and betas.
func ropeScaling(m meta, h *Hparams) error {
	h.RopeScaling = RopeScalingNone
	h.RopeFreqScale, h.RopeExtFactor, h.RopeAttnFactor = 1, 0, 1
	h.RopeBetaFast, h.RopeBetaSlow = 32, 1
	h.RopeNCtxOrig = h.NCtxTrain
	if has(m.f, m.key("rope.scaling.type")) {
		s, err := m.f.String(m.key("rope.scaling.type"))
		if err != nil {
			return fmt.Errorf("model: %w", err)
		}
		h.RopeScaling = strings.ToLower(s)
	}
	factor, err := m.optFloat("rope.scaling.factor", 0)
	if err != nil {
		return err
	}
	if factor == 0 {
		if factor, err = m.optFloat("rope.scale_linear", 0); err != nil {
			return err
		}
	}
	if factor < 0 {
		return fmt.Errorf("model: rope scaling factor %v is negative", factor)
	}
	if factor != 0 && factor != 1 && h.RopeScaling == RopeScalingNone && !has(m.f, m.key("rope.scaling.type")) {
		h.RopeScaling = RopeScalingLinear
	}
	switch h.RopeScaling {
	case RopeScalingNone:
	case RopeScalingLinear, RopeScalingYaRN:
		if factor > 0 {
			h.RopeFreqScale = 1 / factor
		}
	default:
		return fmt.Errorf("model: %s %q is not supported (none, linear, yarn)", m.key("rope.scaling.type"), h.RopeScaling)
	}
	if h.RopeScaling == RopeScalingYaRN {
		h.RopeExtFactor = 1
	}
	for _, r := range []struct {
		name string
		dst  *float32
	}{
		{"rope.scaling.yarn_ext_factor", &h.RopeExtFactor},
		{"rope.scaling.attn_factor", &h.RopeAttnFactor},
		{"rope.scaling.yarn_beta_fast", &h.RopeBetaFast},
		{"rope.scaling.yarn_beta_slow", &h.RopeBetaSlow},
	} {
		if *r.dst, err = m.optFloat(r.name, *r.dst); err != nil {
			return err
		}
	}
	if h.RopeNCtxOrig, err = m.optUint("rope.scaling.original_context_length", h.NCtxTrain); err != nil {
		return err
	}
	return nil
}

// weightsFromGGUF fetches the model's tensors (zero-copy) and refuses files
// with tensors the runner would ignore, such as biases a llama layer does
// not add, whose absence from the forward pass would silently give wrong
// logits.
func weightsFromGGUF(f *gguf.File, h Hparams) (Weights, error) {
	used := map[string]bool{}
	get := func(name string, optional bool) (*ops.Tensor, error) {
		if _, ok := f.TensorInfo(name); !ok {
			if optional {
				return nil, nil
			}
			return nil, fmt.Errorf("model: tensor %s is missing", name)
		}
		used[name] = true
		t, err := f.Tensor(name)
		if err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		return t, nil
	}
	var w Weights
	var err error
	for _, r := range []struct {
		name     string
		dst      **ops.Tensor
		optional bool
	}{
		{"token_embd.weight", &w.TokEmbd, false},
		{"output_norm.weight", &w.OutputNorm, false},
		{"output.weight", &w.Output, true},
		{"rope_freqs.weight", &w.RopeFreqs, true},
	} {
		if *r.dst, err = get(r.name, r.optional); err != nil {
			return Weights{}, err
		}
	}
	w.Layers = make([]Layer, h.NLayer)
	for il := range w.Layers {
		for _, s := range w.Layers[il].layerTensors(h, il) {
			if *s.dst, err = get(s.name, s.optional); err != nil {
				return Weights{}, err
			}
		}
	}
	for _, ti := range f.Tensors {
		if !used[ti.Name] {
			return Weights{}, fmt.Errorf("model: tensor %s is not part of the %s forward pass (tensors the graph would ignore are refused)", ti.Name, h.Arch)
		}
	}
	return w, nil
}
