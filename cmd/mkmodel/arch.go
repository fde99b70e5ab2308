package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/kernbench/kernbench/quantize"
)

// The architectures -arch takes. mixtral is written as llama.cpp writes
// Mixtral: general.architecture "llama" with experts.
var archNames = []string{"llama", "mixtral", "gpt-oss", "mamba", "mamba2"}

// archShape holds what an architecture adds to the shape; zero fields
// take the architecture's defaults (defaults).
type archShape struct {
	Arch        string
	Experts     int // expert_count (mixtral 8, gpt-oss 8)
	ExpertsUsed int // expert_used_count (mixtral 2, gpt-oss 4)
	HeadDim     int // gpt-oss: attention.key_length (default embd/heads)
	SWA         int // gpt-oss: attention.sliding_window (default 128)
	DState      int // mamba: ssm.state_size (16)
	DConv       int // mamba: ssm.conv_kernel (4)
	DInner      int // mamba: ssm.inner_size (2*embd)
	DtRank      int // mamba: ssm.time_step_rank (ceil(embd/16)); mamba2: the heads (d_inner/64)
	Groups      int // mamba2: ssm.group_count (1)
}

// archFlags are the flags of archShape's sizes.
func archFlags(a *archShape) []struct {
	name, usage string
	p           *int
} {
	return []struct {
		name, usage string
		p           *int
	}{
		{"experts", "mixtral, gpt-oss: experts per layer (expert_count; default 8)", &a.Experts},
		{"experts-used", "mixtral, gpt-oss: experts each token uses (default 2 and 4)", &a.ExpertsUsed},
		{"head-dim", "gpt-oss: head size (attention.key_length; default embd/heads)", &a.HeadDim},
		{"swa", "gpt-oss: sliding window of the even layers (default 128)", &a.SWA},
		{"d-state", "mamba, mamba2: state size (ssm.state_size; default 16, mamba2 64)", &a.DState},
		{"d-conv", "mamba, mamba2: conv kernel (ssm.conv_kernel; default 4)", &a.DConv},
		{"d-inner", "mamba, mamba2: inner size (ssm.inner_size; default 2*embd)", &a.DInner},
		{"dt-rank", "mamba: time step rank (ssm.time_step_rank; default ceil(embd/16)); mamba2: heads (default d_inner/64)", &a.DtRank},
		{"groups", "mamba2: groups of B and C (ssm.group_count; default 1)", &a.Groups},
	}
}

// defaults fills the zero fields of a for shape s.
func (a *archShape) defaults(s shape) {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	switch a.Arch {
	case "mixtral":
		def(&a.Experts, 8)
		def(&a.ExpertsUsed, 2)
	case "gpt-oss":
		def(&a.Experts, 8)
		def(&a.ExpertsUsed, 4)
		def(&a.SWA, 128)
		if s.Heads > 0 {
			def(&a.HeadDim, s.Embd/s.Heads)
		}
	case "mamba":
		def(&a.DState, 16)
		def(&a.DConv, 4)
		def(&a.DInner, 2*s.Embd)
		def(&a.DtRank, (s.Embd+15)/16)
	case "mamba2":
		def(&a.DState, 64)
		def(&a.DConv, 4)
		def(&a.DInner, 2*s.Embd)
		def(&a.DtRank, max(1, a.DInner/64))
		def(&a.Groups, 1)
	}
}

// ggufArch is general.architecture for the architecture.
func (a archShape) ggufArch() string {
	if a.Arch == "mixtral" {
		return "llama"
	}
	return a.Arch
}

// validate checks the architecture's sizes against the shape, naming
// the flag at fault; for llama and mixtral the shape's own checks apply.
func (m synth) validate() error {
	s, a := m.shape, m.archShape
	known := false
	for _, n := range archNames {
		known = known || n == a.Arch
	}
	if !known {
		return fmt.Errorf("-arch: unknown architecture %q (known: %s)", a.Arch, strings.Join(archNames, ", "))
	}
	sizes := []struct {
		flag string
		v    int
	}{}
	for _, f := range archFlags(&a) {
		sizes = append(sizes, struct {
			flag string
			v    int
		}{f.name, *f.p})
	}
	uses := map[string]string{
		"experts": "mixtral gpt-oss", "experts-used": "mixtral gpt-oss", "head-dim": "gpt-oss", "swa": "gpt-oss",
		"d-state": "mamba mamba2", "d-conv": "mamba mamba2", "d-inner": "mamba mamba2", "dt-rank": "mamba mamba2", "groups": "mamba2",
	}
	for _, f := range sizes {
		if f.v < 0 || f.v > maxDim {
			return fmt.Errorf("-%s: %d is outside [0, %d]", f.flag, f.v, maxDim)
		}
		if f.v != 0 && !slices.Contains(strings.Fields(uses[f.flag]), a.Arch) {
			return fmt.Errorf("-%s: -arch %s has no such size (it is for %s)", f.flag, a.Arch, uses[f.flag])
		}
	}
	switch a.Arch {
	case "llama", "mixtral":
		if err := s.validate(); err != nil {
			return err
		}
	case "gpt-oss":
		// The heads need not divide embd: -head-dim sets their size.
		if err := s.validateRanges(); err != nil {
			return err
		}
		if a.HeadDim < 2 || a.HeadDim%2 != 0 {
			return fmt.Errorf("-head-dim: %d must be even and positive (NeoX rope)", a.HeadDim)
		}
		if a.SWA < 1 {
			return fmt.Errorf("-swa: %d must be positive", a.SWA)
		}
	case "mamba", "mamba2":
		for _, f := range []struct {
			flag string
			v    int
		}{{"layers", s.Layers}, {"embd", s.Embd}, {"vocab", s.Vocab}, {"ctx", s.Ctx}, {"d-state", a.DState}, {"d-conv", a.DConv}, {"d-inner", a.DInner}, {"dt-rank", a.DtRank}} {
			limit := maxDim
			if f.flag == "layers" {
				limit = maxLayers
			}
			if f.v < 1 || f.v > limit {
				return fmt.Errorf("-%s: %d is outside [1, %d]", f.flag, f.v, limit)
			}
		}
		if s.Vocab < minVocab {
			return fmt.Errorf("-vocab: %d is less than the %d special and byte tokens", s.Vocab, minVocab)
		}
		if a.Arch == "mamba2" {
			switch {
			case a.Groups < 1 || a.Groups > maxDim:
				return fmt.Errorf("-groups: %d is outside [1, %d]", a.Groups, maxDim)
			case a.DInner%a.DtRank != 0:
				return fmt.Errorf("-dt-rank: %d heads do not divide -d-inner %d", a.DtRank, a.DInner)
			case a.DtRank%a.Groups != 0 || a.DInner%a.Groups != 0:
				return fmt.Errorf("-groups: %d does not divide the %d heads (-dt-rank) and -d-inner %d", a.Groups, a.DtRank, a.DInner)
			}
		}
	}
	if a.Arch == "mixtral" || a.Arch == "gpt-oss" {
		if a.Experts < 1 || a.Experts > 512 {
			return fmt.Errorf("-experts: %d is outside [1, 512]", a.Experts)
		}
		if a.ExpertsUsed < 1 || a.ExpertsUsed > a.Experts {
			return fmt.Errorf("-experts-used: %d is outside [1, -experts %d]", a.ExpertsUsed, a.Experts)
		}
	}
	if n, ok := m.paramCount(); !ok || n > 1<<40 {
		return fmt.Errorf("the model has too many parameters (more than 2^40)")
	}
	return nil
}

// fillKind is how a tensor's values are made.
type fillKind int

const (
	fillNormal fillKind = iota // N(0, 1/n_in)
	fillOnes                   // norms, Mamba's D
	fillZeros                  // biases, attention sinks
	fillNegA                   // Mamba's A = -exp(A_log): row i is -1, -2, ..., -d_state
	fillDtBias                 // Mamba's dt bias: softplus^-1 of dt log-uniform in [1e-3, 1e-1]
)

// kindOf returns how tensor name of dims dimensions is filled.
func kindOf(name string, dims int) fillKind {
	switch {
	case strings.HasSuffix(name, ".ssm_a"):
		return fillNegA
	case strings.HasSuffix(name, ".ssm_d"):
		return fillOnes
	case strings.HasSuffix(name, "ssm_dt.bias"):
		return fillDtBias
	case strings.HasSuffix(name, ".bias"), strings.Contains(name, "attn_sinks"):
		return fillZeros
	case dims == 1:
		return fillOnes
	}
	return fillNormal
}

// tensorDefs lists the model's tensors as llama.cpp names and shapes
// them, in the order its converters write them.
func (m synth) tensorDefs() []tensorDef {
	s, a := m.shape, m.archShape
	switch a.Arch {
	case "llama":
		return s.tensors(m.Tied)
	}
	e, v := int64(s.Embd), int64(s.Vocab)
	ts := []tensorDef{{"token_embd.weight", []int64{e, v}}}
	for il := range s.Layers {
		p := fmt.Sprintf("blk.%d.", il)
		add := func(name string, ne ...int64) { ts = append(ts, tensorDef{p + name, ne}) }
		if a.Arch == "mamba2" {
			di, ds, nh, ng := int64(a.DInner), int64(a.DState), int64(a.DtRank), int64(a.Groups)
			c := di + 2*ng*ds
			add("attn_norm.weight", e)
			add("ssm_in.weight", e, di+c+nh)
			add("ssm_conv1d.weight", int64(a.DConv), c)
			add("ssm_conv1d.bias", c)
			add("ssm_dt.bias", nh)
			add("ssm_a", 1, nh)
			add("ssm_d", 1, nh)
			add("ssm_norm.weight", di/ng, ng)
			add("ssm_out.weight", di, e)
			continue
		}
		if a.Arch == "mamba" {
			di, ds := int64(a.DInner), int64(a.DState)
			add("attn_norm.weight", e)
			add("ssm_in.weight", e, 2*di)
			add("ssm_conv1d.weight", int64(a.DConv), di)
			add("ssm_conv1d.bias", di)
			add("ssm_x.weight", di, int64(a.DtRank)+2*ds)
			add("ssm_dt.weight", int64(a.DtRank), di)
			add("ssm_dt.bias", di)
			add("ssm_a", ds, di)
			add("ssm_d", di)
			add("ssm_out.weight", di, e)
			continue
		}
		hd := int64(s.Embd / s.Heads)
		if a.Arch == "gpt-oss" {
			hd = int64(a.HeadDim)
		}
		q, kv := hd*int64(s.Heads), hd*int64(s.KVHeads)
		f, n := int64(s.FF), int64(a.Experts)
		add("attn_norm.weight", e)
		add("attn_q.weight", e, q)
		add("attn_k.weight", e, kv)
		add("attn_v.weight", e, kv)
		add("attn_output.weight", q, e)
		if a.Arch == "gpt-oss" {
			add("attn_q.bias", q)
			add("attn_k.bias", kv)
			add("attn_v.bias", kv)
			add("attn_output.bias", e)
			add("attn_sinks.weight", int64(s.Heads))
			add("post_attention_norm.weight", e)
		} else {
			add("ffn_norm.weight", e)
		}
		add("ffn_gate_inp.weight", e, n)
		add("ffn_gate_exps.weight", e, f, n)
		add("ffn_up_exps.weight", e, f, n)
		add("ffn_down_exps.weight", f, e, n)
		if a.Arch == "gpt-oss" {
			add("ffn_gate_inp.bias", n)
			add("ffn_gate_exps.bias", f, n)
			add("ffn_up_exps.bias", f, n)
			add("ffn_down_exps.bias", e, n)
		}
	}
	ts = append(ts, tensorDef{"output_norm.weight", []int64{e}})
	if !m.Tied {
		ts = append(ts, tensorDef{"output.weight", []int64{e, v}})
	}
	return ts
}

// paramCount returns the number of weights, and false when it is too
// large to count in an int64.
func (m synth) paramCount() (int64, bool) {
	if m.Arch == "llama" || m.Arch == "" {
		return m.params(m.Tied)
	}
	var n float64
	var ni int64
	for _, t := range m.tensorDefs() {
		x := int64(1)
		xf := 1.0
		for _, d := range t.ne {
			x *= d
			xf *= float64(d)
		}
		n += xf
		ni += x
	}
	if n > 1<<62 {
		return 0, false
	}
	return ni, true
}

// archMetadata returns the {arch}.* hyperparameters.
func (m synth) archMetadata() []quantize.Entry {
	s, a := m.shape, m.archShape
	arch := a.ggufArch()
	key := func(k string, v any) quantize.Entry { return quantize.Entry{Key: arch + "." + k, Value: v} }
	es := []quantize.Entry{
		key("vocab_size", uint32(s.Vocab)),
		key("context_length", uint32(s.Ctx)),
		key("embedding_length", uint32(s.Embd)),
		key("block_count", uint32(s.Layers)),
	}
	if a.Arch == "mamba" || a.Arch == "mamba2" {
		if a.Arch == "mamba2" {
			es = append(es, key("ssm.group_count", uint32(a.Groups)))
		}
		// llama.cpp's converter writes these two as 0 for Mamba.
		return append(es,
			key("feed_forward_length", uint32(0)),
			key("attention.head_count", uint32(0)),
			key("ssm.conv_kernel", uint32(a.DConv)),
			key("ssm.inner_size", uint32(a.DInner)),
			key("ssm.state_size", uint32(a.DState)),
			key("ssm.time_step_rank", uint32(a.DtRank)),
			key("attention.layer_norm_rms_epsilon", m.Eps),
		)
	}
	hd := s.headDim()
	if a.Arch == "gpt-oss" {
		hd = a.HeadDim
	}
	es = append(es,
		key("feed_forward_length", uint32(s.FF)),
		key("attention.head_count", uint32(s.Heads)),
		key("attention.head_count_kv", uint32(s.KVHeads)),
		key("rope.dimension_count", uint32(hd)),
		key("rope.freq_base", m.RopeBase),
		key("attention.layer_norm_rms_epsilon", m.Eps),
	)
	if a.Arch == "mixtral" || a.Arch == "gpt-oss" {
		es = append(es, key("expert_count", uint32(a.Experts)), key("expert_used_count", uint32(a.ExpertsUsed)))
	}
	if a.Arch == "gpt-oss" {
		// gpt-oss's rope: YaRN, factor 32 over an original context of
		// 4096, as the released models.
		es = append(es,
			key("attention.key_length", uint32(hd)),
			key("attention.value_length", uint32(hd)),
			key("expert_feed_forward_length", uint32(s.FF)),
			key("attention.sliding_window", uint32(a.SWA)),
			key("rope.scaling.type", "yarn"),
			key("rope.scaling.factor", float32(32)),
			key("rope.scaling.original_context_length", uint32(4096)),
		)
	}
	return es
}

// fillRow fills one row of tensor d (row r, n elements) by its kind: the
// normal rows from their own seeded stream.
func (m synth) fillRow(kind fillKind, idx uint64, r int64, row []float32) {
	switch kind {
	case fillOnes:
		for j := range row {
			row[j] = 1
		}
	case fillZeros:
		clear(row)
	case fillNegA:
		for j := range row {
			row[j] = -float32(j + 1)
		}
	case fillDtBias:
		rng := rand.New(rand.NewPCG(m.Seed, idx<<40|uint64(r)))
		lo, hi := math.Log(1e-3), math.Log(1e-1)
		for j := range row {
			dt := math.Exp(lo + (hi-lo)*rng.Float64())
			row[j] = float32(dt + math.Log(-math.Expm1(-dt)))
		}
	default:
		std := 1 / math.Sqrt(float64(len(row)))
		rng := rand.New(rand.NewPCG(m.Seed, idx<<40|uint64(r)))
		for j := range row {
			row[j] = float32(std * rng.NormFloat64())
		}
	}
}
