package model

import (
	"fmt"
	"math"

	"github.com/kernbench/kernbench/graphs"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// ubatchGraph is the graph of one micro-batch with its input tensors (to
// be allocated and written before computing) and its logits (nil when no
// token of the micro-batch wants them).
type ubatchGraph struct {
	g      *graphs.Graph
	tokens *ops.Tensor // i32 [n_tokens]
	pos    *ops.Tensor // i32 [n_tokens]
	mask   *ops.Tensor // [n_kv, pad(n_tokens, maskPad)], f16 for flash attention, else f32
	outIDs *ops.Tensor // i32 [n_outputs], nil when every token wants logits or none does
	logits *ops.Tensor // f32 [n_vocab, n_outputs]
}

// builder creates nodes, keeping the first error so that graph code reads
// as a straight sequence of ops, and places each in its layer and block
// (g.SetScope) for dumps and traces.
type builder struct {
	err   error
	g     *graphs.Graph
	block string // "input", "attn", "ffn" or "output"
}

// node returns a function that names the node a constructor returns (as
// llama.cpp's callbacks: "name-layer", or "name" for layer < 0) and
// records the constructor's error.
func (b *builder) node(name string, il int) func(x *ops.Tensor, err error) *ops.Tensor {
	return func(x *ops.Tensor, err error) *ops.Tensor { return b.named(name, il, x, err) }
}

func (b *builder) named(name string, il int, x *ops.Tensor, err error) *ops.Tensor {
	if err != nil {
		if b.err == nil {
			if il >= 0 {
				name = fmt.Sprintf("%s-%d", name, il)
			}
			b.err = fmt.Errorf("building %s: %w", name, err)
		}
		return nil
	}
	if il >= 0 {
		name = fmt.Sprintf("%s-%d", name, il)
	}
	if b.g != nil {
		b.g.SetScope(x, il, b.block)
	}
	return x.SetName(name)
}

// build returns the graph of micro-batch u, whose cells start at cell head,
// attending to cells [0, nKV).
func (c *Context) build(u ubatch, head, nKV int) (*ubatchGraph, error) {
	h := c.m.Hparams
	w := &c.m.Weights
	nt := int64(len(u.tokens))
	nOut := int64(len(u.out))
	ug := &ubatchGraph{g: &graphs.Graph{}}
	b := builder{g: ug.g, block: "input"}

	maskType := quant.F32
	if c.p.FlashAttn {
		maskType = quant.F16
	}
	ug.tokens = b.node("inp_tokens", -1)(ops.NewTensor("", quant.I32, nt))
	ug.pos = b.node("inp_pos", -1)(ops.NewTensor("", quant.I32, nt))
	ug.mask = b.node("kq_mask", -1)(ops.NewTensor("", maskType, int64(nKV), (nt+maskPad-1)/maskPad*maskPad))
	if nOut > 0 && nOut < nt {
		ug.outIDs = b.node("inp_out_ids", -1)(ops.NewTensor("", quant.I32, nOut))
	}
	if b.err != nil {
		return nil, b.err
	}

	rope := ops.RopeParams{
		NDims: h.NRot, Mode: ops.RopeNormal, NCtxOrig: h.RopeNCtxOrig,
		FreqBase: h.RopeFreqBase, FreqScale: h.RopeFreqScale, ExtFactor: h.RopeExtFactor,
		AttnFactor: h.RopeAttnFactor, BetaFast: h.RopeBetaFast, BetaSlow: h.RopeBetaSlow,
	}
	scale := float32(1 / math.Sqrt(float64(h.HeadDimK)))
	hdK, hdV := int64(h.HeadDimK), int64(h.HeadDimV)
	nHead, nHeadKV := int64(h.NHead), int64(h.NHeadKV)
	rowK, err := c.p.KVType.RowSize(hdK)
	if err != nil {
		return nil, err
	}
	rowV, err := c.p.KVType.RowSize(hdV)
	if err != nil {
		return nil, err
	}
	es := c.p.KVType.TypeSize() // element size of the f16/f32 transposed V

	var stores []*ops.Tensor
	inpL := b.node("inp_embd", -1)(ops.GetRows(w.TokEmbd, ug.tokens))
	for il, l := range w.Layers {
		b.block = "attn"
		ug.g.SetScope(c.k[il], il, b.block)
		ug.g.SetScope(c.v[il], il, b.block)
		inpSA := inpL
		cur := b.node("attn_norm", il)(ops.RMSNorm(inpL, h.RMSEps))
		cur = b.node("attn_norm_w", il)(ops.Mul(cur, l.AttnNorm))

		q := b.node("Qcur", il)(ops.MulMat(l.Wq, cur))
		k := b.node("Kcur", il)(ops.MulMat(l.Wk, cur))
		v := b.node("Vcur", il)(ops.MulMat(l.Wv, cur))
		q = b.node("Qcur_heads", il)(ops.Reshape(q, hdK, nHead, nt))
		k = b.node("Kcur_heads", il)(ops.Reshape(k, hdK, nHeadKV, nt))
		q = b.node("Qcur_rope", il)(ops.Rope(q, ug.pos, w.RopeFreqs, rope))
		k = b.node("Kcur_rope", il)(ops.Rope(k, ug.pos, w.RopeFreqs, rope))
		if b.err != nil {
			return nil, b.err
		}

		// Store K and V of the micro-batch in cells [head, head+nt).
		kc, vc := c.k[il], c.v[il]
		kSlot := b.node("k_cache_view", il)(ops.View(kc, []int64{kc.Ne[0], nt}, []int64{0, kc.Nb[1]}, int64(head)*kc.Nb[1]))
		kStore := b.node("k_store", il)(ops.Cpy(k, kSlot))
		var vStore *ops.Tensor
		if c.p.FlashAttn {
			vSlot := b.node("v_cache_view", il)(ops.View(vc, []int64{vc.Ne[0], nt}, []int64{0, vc.Nb[1]}, int64(head)*vc.Nb[1]))
			vStore = b.node("v_store", il)(ops.Cpy(v, vSlot))
		} else {
			// V is stored transposed: cache row j holds element j of
			// every cell's value vector.
			vSlot := b.node("v_cache_view", il)(ops.View(vc, []int64{nt, vc.Ne[1]}, []int64{0, vc.Nb[1]}, int64(head)*es))
			vt := b.node("Vcur_t", il)(ops.Transpose(v))
			vStore = b.node("v_store", il)(ops.Cpy(vt, vSlot))
		}
		stores = append(stores, kStore, vStore)

		// Views of the cells the attention reads.
		kView := b.node("k", il)(ops.View(kc, []int64{hdK, int64(nKV), nHeadKV}, []int64{0, kc.Nb[1], rowK}, 0))
		var vView *ops.Tensor
		if c.p.FlashAttn {
			vView = b.node("v", il)(ops.View(vc, []int64{hdV, int64(nKV), nHeadKV}, []int64{0, vc.Nb[1], rowV}, 0))
		} else {
			vView = b.node("v", il)(ops.View(vc, []int64{int64(nKV), hdV, nHeadKV}, []int64{0, vc.Nb[1], vc.Nb[1] * hdV}, 0))
		}
		qp := b.node("q", il)(ops.Permute(q, 0, 2, 1, 3)) // [hdK, nt, nHead]
		if b.err != nil {
			return nil, b.err
		}

		if c.p.FlashAttn {
			fa := b.node("fattn", il)(ops.FlashAttnExt(qp, kView, vView, ug.mask, nil, ops.FlashAttnParams{Scale: scale}))
			if b.err != nil {
				return nil, b.err
			}
			if err := ug.g.After(fa, kStore, vStore); err != nil {
				return nil, err
			}
			cur = b.node("kqv_out", il)(ops.Reshape(fa, hdV*nHead, nt))
		} else {
			kq := b.node("kq", il)(ops.MulMat(kView, qp)) // [nKV, nt, nHead]
			if b.err != nil {
				return nil, b.err
			}
			if err := ug.g.After(kq, kStore); err != nil {
				return nil, err
			}
			kq = b.node("kq_soft_max", il)(ops.SoftMax(kq, ug.mask, nil, ops.SoftMaxParams{Scale: scale}))
			kqv := b.node("kqv", il)(ops.MulMat(vView, kq)) // [hdV, nt, nHead]
			if b.err != nil {
				return nil, b.err
			}
			if err := ug.g.After(kqv, vStore); err != nil {
				return nil, err
			}
			kqv = b.node("kqv_merged", il)(ops.Permute(kqv, 0, 2, 1, 3))
			kqv = b.node("kqv_merged_cont", il)(ops.Cont(kqv))
			cur = b.node("kqv_out", il)(ops.Reshape(kqv, hdV*nHead, nt))
		}

		last := il == len(w.Layers)-1
		if last && nOut == 0 {
			// Nothing reads this layer's output: the stores are all
			// the micro-batch needs from it.
			break
		}
		if last && ug.outIDs != nil {
			cur = b.node("kqv_out_rows", il)(ops.GetRows(cur, ug.outIDs))
			inpSA = b.node("inp_sa_rows", il)(ops.GetRows(inpSA, ug.outIDs))
		}
		cur = b.node("attn_out", il)(ops.MulMat(l.Wo, cur))
		ffnInp := b.node("ffn_inp", il)(ops.Add(cur, inpSA))

		b.block = "ffn"
		cur = b.node("ffn_norm", il)(ops.RMSNorm(ffnInp, h.RMSEps))
		cur = b.node("ffn_norm_w", il)(ops.Mul(cur, l.FFNNorm))
		gate := b.node("ffn_gate", il)(ops.MulMat(l.FFNGate, cur))
		up := b.node("ffn_up", il)(ops.MulMat(l.FFNUp, cur))
		cur = b.node("ffn_swiglu", il)(ops.SwiGLU(gate, up, false))
		cur = b.node("ffn_out", il)(ops.MulMat(l.FFNDown, cur))
		inpL = b.node("l_out", il)(ops.Add(cur, ffnInp))
	}
	if b.err != nil {
		return nil, b.err
	}
	outs := stores
	b.block = "output"
	if nOut > 0 {
		cur := b.node("result_norm", -1)(ops.RMSNorm(inpL, h.RMSEps))
		cur = b.node("result_norm_w", -1)(ops.Mul(cur, w.OutputNorm))
		ug.logits = b.node("result_output", -1)(ops.MulMat(w.Output, cur))
		if b.err != nil {
			return nil, b.err
		}
		outs = append(outs, ug.logits)
	}
	if err := ug.g.Expand(outs...); err != nil {
		return nil, err
	}
	return ug, nil
}
