package model

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// Layer holds one transformer block's weights, named as in GGUF
// ("blk.N.attn_norm" and so on). Shapes are ggml's: Ne[0] is a matrix's
// input width.
type Layer struct {
	AttnNorm *ops.Tensor // [n_embd]
	Wq       *ops.Tensor // attn_q [n_embd, n_head*head_dim_k]
	Wk       *ops.Tensor // attn_k [n_embd, n_head_kv*head_dim_k]
	Wv       *ops.Tensor // attn_v [n_embd, n_head_kv*head_dim_v]
	Wo       *ops.Tensor // attn_output [n_head*head_dim_v, n_embd]
	FFNNorm  *ops.Tensor // [n_embd]
	FFNGate  *ops.Tensor // [n_embd, n_ff]
	FFNUp    *ops.Tensor // [n_embd, n_ff]
	FFNDown  *ops.Tensor // [n_ff, n_embd]
}

// Weights are a LLaMA model's tensors.
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

// fields returns the GGUF names of layer il's tensors in Layer's
// field order, with pointers to the fields.
func (l *Layer) fields(il int) []struct {
	name string
	t    **ops.Tensor
} {
	p := fmt.Sprintf("blk.%d.", il)
	return []struct {
		name string
		t    **ops.Tensor
	}{
		{p + "attn_norm.weight", &l.AttnNorm},
		{p + "attn_q.weight", &l.Wq},
		{p + "attn_k.weight", &l.Wk},
		{p + "attn_v.weight", &l.Wv},
		{p + "attn_output.weight", &l.Wo},
		{p + "ffn_norm.weight", &l.FFNNorm},
		{p + "ffn_gate.weight", &l.FFNGate},
		{p + "ffn_up.weight", &l.FFNUp},
		{p + "ffn_down.weight", &l.FFNDown},
	}
}

// checkTensor checks that t exists, has storage and shape ne (trailing
// dimensions 1), and a type the ops that read it accept.
func checkTensor(name string, t *ops.Tensor, norm bool, ne ...int) error {
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
	if norm {
		if t.Type != quant.F32 && t.Type != quant.F16 {
			return fmt.Errorf("model: tensor %s has type %v; norm weights must be f32 or f16", name, t.Type)
		}
	} else if !t.Type.IsFloat() && !t.Type.IsQuantized() {
		return fmt.Errorf("model: tensor %s has type %v, not a float or quantized type", name, t.Type)
	}
	if !t.IsContiguous() {
		return fmt.Errorf("model: tensor %s is not contiguous", name)
	}
	return nil
}

// Validate checks every tensor against the hyperparameters.
func (w *Weights) Validate(h Hparams) error {
	if err := checkTensor("token_embd.weight", w.TokEmbd, false, h.NEmbd, h.NVocab); err != nil {
		return err
	}
	if err := checkTensor("output_norm.weight", w.OutputNorm, true, h.NEmbd); err != nil {
		return err
	}
	if err := checkTensor("output.weight", w.Output, false, h.NEmbd, h.NVocab); err != nil {
		return err
	}
	if w.RopeFreqs != nil {
		if err := checkTensor("rope_freqs.weight", w.RopeFreqs, true, h.NRot/2); err != nil {
			return err
		}
		if w.RopeFreqs.Type != quant.F32 {
			return fmt.Errorf("model: tensor rope_freqs.weight has type %v, want f32", w.RopeFreqs.Type)
		}
	}
	if len(w.Layers) != h.NLayer {
		return fmt.Errorf("model: %d layers of weights for block_count %d", len(w.Layers), h.NLayer)
	}
	q, kv, vv := h.NHead*h.HeadDimK, h.NEmbdKGQA(), h.NEmbdVGQA()
	for il := range w.Layers {
		l := &w.Layers[il]
		f := l.fields(il)
		shapes := [][]int{
			{h.NEmbd}, {h.NEmbd, q}, {h.NEmbd, kv}, {h.NEmbd, vv}, {h.NHead * h.HeadDimV, h.NEmbd},
			{h.NEmbd}, {h.NEmbd, h.NFF}, {h.NEmbd, h.NFF}, {h.NFF, h.NEmbd},
		}
		for i, fd := range f {
			norm := i == 0 || i == 5
			if err := checkTensor(fd.name, *fd.t, norm, shapes[i]...); err != nil {
				return err
			}
		}
	}
	return nil
}
