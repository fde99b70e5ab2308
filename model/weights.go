package model

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// Layer holds one block's weights, named as in GGUF ("blk.N.attn_norm"
// and so on). Shapes are ggml's: Ne[0] is a matrix's input width. Which
// fields an architecture uses is its layerTensors list; the others are
// nil.
type Layer struct {
	AttnNorm *ops.Tensor // [n_embd]
	Wq       *ops.Tensor // attn_q [n_embd, n_head*head_dim_k]
	Wk       *ops.Tensor // attn_k [n_embd, n_head_kv*head_dim_k]
	Wv       *ops.Tensor // attn_v [n_embd, n_head_kv*head_dim_v]
	Wo       *ops.Tensor // attn_output [n_head*head_dim_v, n_embd]
	// Attention biases (gpt-oss), nil when absent.
	Bq, Bk, Bv, Bo *ops.Tensor
	// Sinks (attn_sinks, f32 [n_head]) are per-head logits that join
	// every softmax of the head's attention (gpt-oss).
	Sinks *ops.Tensor

	// FFNNorm is ffn_norm (gpt-oss: post_attention_norm) [n_embd].
	FFNNorm *ops.Tensor
	// The dense SwiGLU feed-forward.
	FFNGate *ops.Tensor // [n_embd, n_ff]
	FFNUp   *ops.Tensor // [n_embd, n_ff]
	FFNDown *ops.Tensor // [n_ff, n_embd]

	// The mixture of experts: the router (ffn_gate_inp [n_embd,
	// n_expert]) and the experts stacked in dimension 2.
	FFNGateInp  *ops.Tensor
	FFNGateExps *ops.Tensor // [n_embd, n_ff_exp, n_expert]
	FFNUpExps   *ops.Tensor // [n_embd, n_ff_exp, n_expert]
	FFNDownExps *ops.Tensor // [n_ff_exp, n_embd, n_expert]
	// Their biases (gpt-oss), nil when absent.
	FFNGateInpB  *ops.Tensor // [n_expert]
	FFNGateExpsB *ops.Tensor // [n_ff_exp, n_expert]
	FFNUpExpsB   *ops.Tensor // [n_ff_exp, n_expert]
	FFNDownExpsB *ops.Tensor // [n_embd, n_expert]

	// Mamba's selective state-space block.
	SSMIn      *ops.Tensor // ssm_in [n_embd, 2*d_inner]: x and the gate z
	SSMConv1D  *ops.Tensor // ssm_conv1d [d_conv, d_inner], f32
	SSMConv1DB *ops.Tensor // ssm_conv1d.bias [d_inner]
	SSMX       *ops.Tensor // ssm_x [d_inner, dt_rank + 2*d_state]: dt, B and C
	SSMDt      *ops.Tensor // ssm_dt [dt_rank, d_inner]
	SSMDtB     *ops.Tensor // ssm_dt.bias [d_inner]
	SSMA       *ops.Tensor // ssm_a [d_state, d_inner], f32: A = -exp(A_log)
	SSMD       *ops.Tensor // ssm_d [d_inner]
	SSMOut     *ops.Tensor // ssm_out [d_inner, n_embd]
	// SSMNorm (Mamba-2) is the grouped RMS norm's weight
	// [d_inner/n_group, n_group].
	SSMNorm *ops.Tensor
}

// Weights are a model's tensors.
type Weights struct {
	TokEmbd    *ops.Tensor // token_embd [n_embd, n_vocab]
	OutputNorm *ops.Tensor // output_norm [n_embd]
	// Output is output [n_embd, n_vocab]; models without one tie it to
	// TokEmbd.
	Output *ops.Tensor
	// RopeFreqs (rope_freqs, [n_rot/2]) divides each pair's frequency
	// (Llama 3.1 style scaling); nil when absent.
	RopeFreqs *ops.Tensor
	Layers    []Layer
}

// tensorKind is what a tensor is used as, which decides the element
// types it may have.
type tensorKind int

const (
	kindMatrix tensorKind = iota // MUL_MAT/MUL_MAT_ID weights and GET_ROWS sources: any float or quantized type
	kindNorm                     // norm weights and biases added or multiplied (ADD/MUL's b): f32 or f16
	kindF32                      // read by ops that take only f32 (sinks, SSM_CONV's kernel, SSM_SCAN's A)
)

// tensorSpec is one tensor of a layer: its GGUF name, where it goes, its
// shape and kind, and whether the file may leave it out.
type tensorSpec struct {
	name     string
	dst      **ops.Tensor
	ne       []int
	kind     tensorKind
	optional bool
}

// layerTensors lists layer il's tensors for h's architecture, as
// llama.cpp's loader names and shapes them.
func (l *Layer) layerTensors(h Hparams, il int) []tensorSpec {
	a, _ := archOf(h.Arch)
	p := fmt.Sprintf("blk.%d.", il)
	var ts []tensorSpec
	add := func(name string, dst **ops.Tensor, kind tensorKind, optional bool, ne ...int) {
		ts = append(ts, tensorSpec{name: p + name, dst: dst, ne: ne, kind: kind, optional: optional})
	}
	e := h.NEmbd
	if a.mamba2 {
		// Mamba-2: in_proj gives z, x|B|C (through the conv) and dt;
		// A and D are one per head, as llama.cpp's shapes.
		di, nh, ng := h.SSMInner, h.SSMDtRank, h.SSMGroups
		c := h.SSMConvChannels()
		add("attn_norm.weight", &l.AttnNorm, kindNorm, false, e)
		add("ssm_in.weight", &l.SSMIn, kindMatrix, false, e, di+c+nh)
		add("ssm_conv1d.weight", &l.SSMConv1D, kindF32, false, h.SSMConv, c)
		add("ssm_conv1d.bias", &l.SSMConv1DB, kindNorm, false, c)
		add("ssm_dt.bias", &l.SSMDtB, kindNorm, false, nh)
		add("ssm_a", &l.SSMA, kindF32, false, 1, nh)
		add("ssm_d", &l.SSMD, kindNorm, false, 1, nh)
		add("ssm_norm.weight", &l.SSMNorm, kindNorm, false, di/ng, ng)
		add("ssm_out.weight", &l.SSMOut, kindMatrix, false, di, e)
		return ts
	}
	if a.family == familyMamba {
		di, ds := h.SSMInner, h.SSMState
		add("attn_norm.weight", &l.AttnNorm, kindNorm, false, e)
		add("ssm_in.weight", &l.SSMIn, kindMatrix, false, e, 2*di)
		add("ssm_conv1d.weight", &l.SSMConv1D, kindF32, false, h.SSMConv, di)
		add("ssm_conv1d.bias", &l.SSMConv1DB, kindNorm, false, di)
		add("ssm_x.weight", &l.SSMX, kindMatrix, false, di, h.SSMDtRank+2*ds)
		add("ssm_dt.weight", &l.SSMDt, kindMatrix, false, h.SSMDtRank, di)
		add("ssm_dt.bias", &l.SSMDtB, kindNorm, false, di)
		add("ssm_a", &l.SSMA, kindF32, false, ds, di)
		add("ssm_d", &l.SSMD, kindNorm, false, di)
		add("ssm_out.weight", &l.SSMOut, kindMatrix, false, di, e)
		return ts
	}
	q, kv, vv, o := h.NHead*h.HeadDimK, h.NEmbdKGQA(), h.NEmbdVGQA(), h.NHead*h.HeadDimV
	add("attn_norm.weight", &l.AttnNorm, kindNorm, false, e)
	add("attn_q.weight", &l.Wq, kindMatrix, false, e, q)
	add("attn_k.weight", &l.Wk, kindMatrix, false, e, kv)
	add("attn_v.weight", &l.Wv, kindMatrix, false, e, vv)
	add("attn_output.weight", &l.Wo, kindMatrix, false, o, e)
	if a.biases {
		add("attn_q.bias", &l.Bq, kindNorm, true, q)
		add("attn_k.bias", &l.Bk, kindNorm, true, kv)
		add("attn_v.bias", &l.Bv, kindNorm, true, vv)
		add("attn_output.bias", &l.Bo, kindNorm, true, e)
	}
	if a.sinks {
		add("attn_sinks.weight", &l.Sinks, kindF32, false, h.NHead)
	}
	add(a.ffnNorm+".weight", &l.FFNNorm, kindNorm, false, e)
	if h.NExpert == 0 {
		f := h.NFF
		add("ffn_gate.weight", &l.FFNGate, kindMatrix, false, e, f)
		add("ffn_up.weight", &l.FFNUp, kindMatrix, false, e, f)
		add("ffn_down.weight", &l.FFNDown, kindMatrix, false, f, e)
		return ts
	}
	n, f := h.NExpert, h.NFFExp
	add("ffn_gate_inp.weight", &l.FFNGateInp, kindMatrix, false, e, n)
	add("ffn_gate_exps.weight", &l.FFNGateExps, kindMatrix, false, e, f, n)
	add("ffn_up_exps.weight", &l.FFNUpExps, kindMatrix, false, e, f, n)
	add("ffn_down_exps.weight", &l.FFNDownExps, kindMatrix, false, f, e, n)
	if a.biases {
		add("ffn_gate_inp.bias", &l.FFNGateInpB, kindNorm, true, n)
		add("ffn_gate_exps.bias", &l.FFNGateExpsB, kindMatrix, true, f, n)
		add("ffn_up_exps.bias", &l.FFNUpExpsB, kindMatrix, true, f, n)
		add("ffn_down_exps.bias", &l.FFNDownExpsB, kindMatrix, true, e, n)
	}
	return ts
}

// checkTensor checks that t has storage and shape ne (trailing dimensions
// 1), and a type its kind accepts.
func checkTensor(name string, t *ops.Tensor, kind tensorKind, ne ...int) error {
	if t == nil {
		return fmt.Errorf("model: tensor %s is missing", name)
	}
	want := [ops.MaxDims]int64{1, 1, 1, 1}
	for i, n := range ne {
		want[i] = int64(n)
	}
	if t.Ne != want {
		return fmt.Errorf("model: tensor %s has shape %v, want %v", name, t.Ne, want)
	}
	if buf, _ := t.Storage(); buf == nil {
		return fmt.Errorf("model: tensor %s has no data", name)
	}
	switch kind {
	case kindNorm:
		if t.Type != quant.F32 && t.Type != quant.F16 {
			return fmt.Errorf("model: tensor %s has type %v; norm weights must be f32 or f16", name, t.Type)
		}
	case kindF32:
		if t.Type != quant.F32 {
			return fmt.Errorf("model: tensor %s has type %v, want f32", name, t.Type)
		}
	default:
		if !t.Type.IsFloat() && !t.Type.IsQuantized() {
			return fmt.Errorf("model: tensor %s has type %v, not a float or quantized type", name, t.Type)
		}
	}
	if !t.IsContiguous() {
		return fmt.Errorf("model: tensor %s is not contiguous", name)
	}
	return nil
}

// Validate checks every tensor against the hyperparameters.
func (w *Weights) Validate(h Hparams) error {
	if err := checkTensor("token_embd.weight", w.TokEmbd, kindMatrix, h.NEmbd, h.NVocab); err != nil {
		return err
	}
	if err := checkTensor("output_norm.weight", w.OutputNorm, kindNorm, h.NEmbd); err != nil {
		return err
	}
	if err := checkTensor("output.weight", w.Output, kindMatrix, h.NEmbd, h.NVocab); err != nil {
		return err
	}
	if w.RopeFreqs != nil {
		if h.Recurrent() {
			return fmt.Errorf("model: tensor rope_freqs.weight in a %s model, which has no rope", h.Arch)
		}
		if err := checkTensor("rope_freqs.weight", w.RopeFreqs, kindF32, h.NRot/2); err != nil {
			return err
		}
	}
	if len(w.Layers) != h.NLayer {
		return fmt.Errorf("model: %d layers of weights for block_count %d", len(w.Layers), h.NLayer)
	}
	for il := range w.Layers {
		for _, s := range w.Layers[il].layerTensors(h, il) {
			if s.optional && *s.dst == nil {
				continue
			}
			if err := checkTensor(s.name, *s.dst, s.kind, s.ne...); err != nil {
				return err
			}
		}
	}
	return nil
}
