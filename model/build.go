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
	pos    *ops.Tensor // i32 [n_tokens] (attention models)
	// masks holds each KV store's mask: [n_kv, pad(n_tokens per group,
	// maskPad), 1, groups], f16 for flash attention, else f32.
	masks  []*ops.Tensor
	outIDs *ops.Tensor // i32 [n_outputs], nil when every token wants logits or none does
	logits *ops.Tensor // f32 [n_vocab, n_outputs]
	// Recurrent models: the state cell (sequence id) of each group, and
	// the leaves the graph writes before it reads them (the inputs of
	// SSM_CONV: each layer's past conv inputs followed by the new ones),
	// allocated with the inputs.
	seqIDs  *ops.Tensor // i32 [groups]
	scratch []*ops.Tensor
	// cellViews are the views into the cache that the micro-batch's K
	// and V are stored through; a reused graph moves them to the cells
	// of the next micro-batch (see Context.reuse).
	cellViews []cellView
}

// A cellView is a view of a cache tensor starting at the first cell of
// run r of group g's cells in store si (in stream s): its offset is
// (s*size + cell) * stride.
type cellView struct {
	t        *ops.Tensor
	si, g, r int
	stream   int64
	stride   int64
}

// builder creates nodes, keeping the first error so that graph code reads
// as a straight sequence of ops, and places each in its layer and block
// (g.SetScope) for dumps and traces.
type builder struct {
	err   error
	g     *graphs.Graph
	block string // "input", "attn", "attn_swa", "ffn", "ffn_moe", "ssm" or "output"
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

// after declares that t follows deps (graphs.Graph.After), recording the
// first error.
func (b *builder) after(t *ops.Tensor, deps ...*ops.Tensor) {
	if b.err != nil || t == nil {
		return
	}
	for _, d := range deps {
		if d == nil {
			return
		}
	}
	if err := b.g.After(t, deps...); err != nil {
		b.err = err
	}
}

// addOpt returns x + bias, or x when bias is nil.
func (b *builder) addOpt(name string, il int, x, bias *ops.Tensor) *ops.Tensor {
	if bias == nil || x == nil {
		return x
	}
	return b.node(name, il)(ops.Add(x, bias))
}

// build returns the graph of micro-batch u, by the model's family.
func (c *Context) build(u ubatch) (*ubatchGraph, error) {
	nt := int64(len(u.tokens))
	nOut := int64(len(u.out))
	ug := &ubatchGraph{g: &graphs.Graph{}}
	b := &builder{g: ug.g, block: "input"}
	ug.tokens = b.node("inp_tokens", -1)(ops.NewTensor("", quant.I32, nt))
	if nOut > 0 && nOut < nt {
		ug.outIDs = b.node("inp_out_ids", -1)(ops.NewTensor("", quant.I32, nOut))
	}
	if b.err != nil {
		return nil, b.err
	}
	var outs []*ops.Tensor
	var cur *ops.Tensor
	if c.rs != nil {
		outs, cur = c.buildMamba(b, ug, u)
	} else {
		outs, cur = c.buildTransformer(b, ug, u)
	}
	if b.err != nil {
		return nil, b.err
	}
	w := &c.m.Weights
	b.block = "output"
	if nOut > 0 {
		cur = b.node("result_norm", -1)(ops.RMSNorm(cur, c.m.Hparams.RMSEps))
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

// runs splits a group's cells into runs of consecutive cells: each run is
// (first token within the group, first cell, length).
func runs(cells []int) [][3]int {
	var out [][3]int
	for i, c := range cells {
		if n := len(out); n > 0 && out[n-1][1]+out[n-1][2] == c {
			out[n-1][2]++
			continue
		}
		out = append(out, [3]int{i, c, 1})
	}
	return out
}

// buildTransformer adds the layers of an attention model (llama, gpt-oss)
// and returns the cache stores (outputs that nothing reads) and the last
// layer's output (nil when no token wants logits).
func (c *Context) buildTransformer(b *builder, ug *ubatchGraph, u ubatch) ([]*ops.Tensor, *ops.Tensor) {
	h := c.m.Hparams
	w := &c.m.Weights
	nt := int64(len(u.tokens))
	nOut := int64(len(u.out))
	ns := int64(u.groups)
	ntg := nt / ns
	maskType := quant.F32
	if c.p.FlashAttn {
		maskType = quant.F16
	}
	ug.pos = b.node("inp_pos", -1)(ops.NewTensor("", quant.I32, nt))
	for _, st := range c.kv.stores {
		name := "kq_mask"
		if st.swa {
			name = "kq_mask_swa"
		}
		ug.masks = append(ug.masks, b.node(name, -1)(ops.NewTensor("", maskType, int64(st.nKV), (ntg+maskPad-1)/maskPad*maskPad, 1, ns)))
	}
	if b.err != nil {
		return nil, nil
	}

	rope := ops.RopeParams{
		NDims: h.NRot, Mode: h.RopeMode, NCtxOrig: h.RopeNCtxOrig,
		FreqBase: h.RopeFreqBase, FreqScale: h.RopeFreqScale, ExtFactor: h.RopeExtFactor,
		AttnFactor: h.RopeAttnFactor, BetaFast: h.RopeBetaFast, BetaSlow: h.RopeBetaSlow,
	}
	scale := float32(1 / math.Sqrt(float64(h.HeadDimK)))
	hdK, hdV := int64(h.HeadDimK), int64(h.HeadDimV)
	nHead, nHeadKV := int64(h.NHead), int64(h.NHeadKV)
	rowK, err := c.p.KVType.RowSize(hdK)
	if err != nil {
		b.err = err
		return nil, nil
	}
	rowV, err := c.p.KVType.RowSize(hdV)
	if err != nil {
		b.err = err
		return nil, nil
	}

	var stores []*ops.Tensor
	inpL := b.node("inp_embd", -1)(ops.GetRows(w.TokEmbd, ug.tokens))
	for il, l := range w.Layers {
		si := c.kv.layer[il]
		st := c.kv.stores[si]
		b.block = "attn"
		if st.swa {
			b.block = "attn_swa"
		}
		kc, vc := st.k[il], st.v[il]
		ug.g.SetScope(kc, il, b.block)
		ug.g.SetScope(vc, il, b.block)
		inpSA := inpL
		cur := b.node("attn_norm", il)(ops.RMSNorm(inpL, h.RMSEps))
		cur = b.node("attn_norm_w", il)(ops.Mul(cur, l.AttnNorm))

		q := b.node("Qcur", il)(ops.MulMat(l.Wq, cur))
		k := b.node("Kcur", il)(ops.MulMat(l.Wk, cur))
		v := b.node("Vcur", il)(ops.MulMat(l.Wv, cur))
		q = b.addOpt("Qcur_b", il, q, l.Bq)
		k = b.addOpt("Kcur_b", il, k, l.Bk)
		v = b.addOpt("Vcur_b", il, v, l.Bv)
		q = b.node("Qcur_heads", il)(ops.Reshape(q, hdK, nHead, nt))
		k = b.node("Kcur_heads", il)(ops.Reshape(k, hdK, nHeadKV, nt))
		q = b.node("Qcur_rope", il)(ops.Rope(q, ug.pos, w.RopeFreqs, rope))
		k = b.node("Kcur_rope", il)(ops.Rope(k, ug.pos, w.RopeFreqs, rope))
		if b.err != nil {
			return nil, nil
		}

		// Store K and V of each group's tokens in its stream's cells,
		// a CPY per run of consecutive cells.
		var kStores, vStores []*ops.Tensor
		kRows := b.node("Kcur_rows", il)(ops.Reshape(k, kc.Ne[0], nt))
		for g := range ns {
			s := int64(c.streamOfGroup(u, int(g)))
			rs := runs(st.where[g])
			for ri, r := range rs {
				t0, cell, n := int64(r[0])+g*ntg, s*int64(st.size)+int64(r[1]), int64(r[2])
				sfx := ""
				if ns > 1 || len(rs) > 1 {
					sfx = fmt.Sprintf("_s%d_%d", s, ri)
				}
				src := k
				if ns > 1 || len(rs) > 1 {
					src = b.node("k_rows"+sfx, il)(ops.View(kRows, []int64{kc.Ne[0], n}, []int64{0, kRows.Nb[1]}, t0*kRows.Nb[1]))
				}
				kSlot := b.node("k_cache_view"+sfx, il)(ops.View(kc, []int64{kc.Ne[0], n}, []int64{0, kc.Nb[1]}, cell*kc.Nb[1]))
				ug.cellView(kSlot, si, int(g), ri, s*int64(st.size), kc.Nb[1])
				kStores = append(kStores, b.node("k_store"+sfx, il)(ops.Cpy(src, kSlot)))
				var vStore *ops.Tensor
				if !st.vTrans {
					vsrc := v
					if ns > 1 || len(rs) > 1 {
						vsrc = b.node("v_rows"+sfx, il)(ops.View(v, []int64{vc.Ne[0], n}, []int64{0, v.Nb[1]}, t0*v.Nb[1]))
					}
					vSlot := b.node("v_cache_view"+sfx, il)(ops.View(vc, []int64{vc.Ne[0], n}, []int64{0, vc.Nb[1]}, cell*vc.Nb[1]))
					ug.cellView(vSlot, si, int(g), ri, s*int64(st.size), vc.Nb[1])
					vStore = b.node("v_store"+sfx, il)(ops.Cpy(vsrc, vSlot))
				} else {
					// V is stored transposed: cache row j holds element j
					// of every cell's value vector.
					es := vc.Nb[0]
					vSlot := b.node("v_cache_view"+sfx, il)(ops.View(vc, []int64{n, vc.Ne[1]}, []int64{0, vc.Nb[1]}, cell*es))
					ug.cellView(vSlot, si, int(g), ri, s*int64(st.size), es)
					var vt *ops.Tensor
					if ns > 1 || len(rs) > 1 {
						vt = b.node("Vcur_t"+sfx, il)(ops.View(v, []int64{n, v.Ne[0]}, []int64{v.Nb[1], v.Nb[0]}, t0*v.Nb[1]))
					} else {
						vt = b.node("Vcur_t", il)(ops.Transpose(v))
					}
					vStore = b.node("v_store"+sfx, il)(ops.Cpy(vt, vSlot))
				}
				vStores = append(vStores, vStore)
			}
		}
		stores = append(stores, kStores...)
		stores = append(stores, vStores...)

		// Views of the cells the attention reads, per stream.
		nKV := int64(st.nKV)
		s0 := int64(c.streamOfGroup(u, 0))
		strK := int64(st.size) * kc.Nb[1]
		kView := b.node("k", il)(ops.View(kc, []int64{hdK, nKV, nHeadKV, ns}, []int64{0, kc.Nb[1], rowK, strK}, s0*strK))
		var vView *ops.Tensor
		if !st.vTrans {
			strV := int64(st.size) * vc.Nb[1]
			vView = b.node("v", il)(ops.View(vc, []int64{hdV, nKV, nHeadKV, ns}, []int64{0, vc.Nb[1], rowV, strV}, s0*strV))
		} else {
			strV := int64(st.size) * vc.Nb[0]
			vView = b.node("v", il)(ops.View(vc, []int64{nKV, hdV, nHeadKV, ns}, []int64{0, vc.Nb[1], vc.Nb[1] * hdV, strV}, s0*strV))
		}
		qg := q
		if ns > 1 {
			qg = b.node("Qcur_groups", il)(ops.Reshape(q, hdK, nHead, ntg, ns))
		}
		qp := b.node("q", il)(ops.Permute(qg, 0, 2, 1, 3)) // [hdK, ntg, nHead, ns]
		if b.err != nil {
			return nil, nil
		}
		mask := ug.masks[si]
		if c.p.FlashAttn {
			fa := b.node("fattn", il)(ops.FlashAttnExt(qp, kView, vView, mask, l.Sinks, ops.FlashAttnParams{Scale: scale}))
			b.after(fa, append(append([]*ops.Tensor(nil), kStores...), vStores...)...)
			cur = b.node("kqv_out", il)(ops.Reshape(fa, hdV*nHead, nt))
		} else {
			kq := b.node("kq", il)(ops.MulMat(kView, qp)) // [nKV, ntg, nHead, ns]
			b.after(kq, kStores...)
			kq = b.node("kq_soft_max", il)(ops.SoftMax(kq, mask, l.Sinks, ops.SoftMaxParams{Scale: scale}))
			kqv := b.node("kqv", il)(ops.MulMat(vView, kq)) // [hdV, ntg, nHead, ns]
			b.after(kqv, vStores...)
			kqv = b.node("kqv_merged", il)(ops.Permute(kqv, 0, 2, 1, 3))
			kqv = b.node("kqv_merged_cont", il)(ops.Cont(kqv))
			cur = b.node("kqv_out", il)(ops.Reshape(kqv, hdV*nHead, nt))
		}
		if b.err != nil {
			return nil, nil
		}

		last := il == len(w.Layers)-1
		if last && nOut == 0 {
			// Nothing reads this layer's output: the stores are all
			// the micro-batch needs from it.
			return stores, nil
		}
		if last && ug.outIDs != nil {
			cur = b.node("kqv_out_rows", il)(ops.GetRows(cur, ug.outIDs))
			inpSA = b.node("inp_sa_rows", il)(ops.GetRows(inpSA, ug.outIDs))
		}
		cur = b.node("attn_out", il)(ops.MulMat(l.Wo, cur))
		cur = b.addOpt("attn_out_b", il, cur, l.Bo)
		ffnInp := b.node("ffn_inp", il)(ops.Add(cur, inpSA))

		b.block = "ffn"
		cur = b.node("ffn_norm", il)(ops.RMSNorm(ffnInp, h.RMSEps))
		cur = b.node("ffn_norm_w", il)(ops.Mul(cur, l.FFNNorm))
		if h.NExpert > 0 {
			b.block = "ffn_moe"
			cur = c.moe(b, il, &l, cur)
		} else {
			gate := b.node("ffn_gate", il)(ops.MulMat(l.FFNGate, cur))
			up := b.node("ffn_up", il)(ops.MulMat(l.FFNUp, cur))
			cur = b.node("ffn_swiglu", il)(ops.SwiGLU(gate, up, false))
			cur = b.node("ffn_out", il)(ops.MulMat(l.FFNDown, cur))
		}
		inpL = b.node("l_out", il)(ops.Add(cur, ffnInp))
	}
	return stores, inpL
}

// cellView records a view into the cache at a group's run of cells (nil
// views, from a failed constructor, are left out: the build fails).
func (ug *ubatchGraph) cellView(t *ops.Tensor, si, g, r int, streamBase, stride int64) {
	if t != nil {
		ug.cellViews = append(ug.cellViews, cellView{t: t, si: si, g: g, r: r, stream: streamBase, stride: stride})
	}
}

// streamOfGroup returns the cache stream of group g of u.
func (c *Context) streamOfGroup(u ubatch, g int) int {
	if u.groupSeq == nil {
		return 0
	}
	return c.kv.streamOf(u.groupSeq[g])
}

// moe adds a mixture-of-experts feed-forward (llama.cpp's build_moe_ffn)
// on cur [n_embd, n_t]: router logits (plus their bias), the top
// n_expert_used experts per token by ARGSORT, their weights (the softmax
// of the chosen logits when normalized, which equals the softmax over all
// experts renormalized over the chosen ones, else the chosen entries of
// the softmax over all), gate and up by MUL_MAT_ID over the chosen
// experts (plus their biases), SwiGLU (gpt-oss: clamped), down by
// MUL_MAT_ID, the weighted sum over the chosen experts.
func (c *Context) moe(b *builder, il int, l *Layer, cur *ops.Tensor) *ops.Tensor {
	h := c.m.Hparams
	a, _ := archOf(h.Arch)
	if cur == nil {
		return nil
	}
	nt := cur.Ne[1]
	nE, nU := int64(h.NExpert), int64(h.NExpertUsed)
	logits := b.node("ffn_moe_logits", il)(ops.MulMat(l.FFNGateInp, cur)) // [n_expert, n_t]
	logits = b.addOpt("ffn_moe_logits_b", il, logits, l.FFNGateInpB)
	sorted := b.node("ffn_moe_argsort", il)(ops.Argsort(logits, ops.SortDesc))
	if b.err != nil {
		return nil
	}
	top := b.node("ffn_moe_topk_view", il)(ops.View(sorted, []int64{nU, nt}, []int64{0, sorted.Nb[1]}, 0))
	sel := b.node("ffn_moe_topk", il)(ops.Cont(top)) // i32 [n_used, n_t]
	var wts *ops.Tensor
	if h.ExpertWeightsNorm {
		l3 := b.node("ffn_moe_logits_3d", il)(ops.Reshape(logits, 1, nE, nt))
		wts = b.node("ffn_moe_weights_logits", il)(ops.GetRows(l3, sel)) // [1, n_used, n_t]
		wts = b.node("ffn_moe_weights_2d", il)(ops.Reshape(wts, nU, nt))
		wts = b.node("ffn_moe_weights_norm", il)(ops.SoftMax(wts, nil, nil, ops.SoftMaxParams{Scale: 1}))
	} else {
		probs := b.node("ffn_moe_probs", il)(ops.SoftMax(logits, nil, nil, ops.SoftMaxParams{Scale: 1}))
		p3 := b.node("ffn_moe_probs_3d", il)(ops.Reshape(probs, 1, nE, nt))
		wts = b.node("ffn_moe_weights", il)(ops.GetRows(p3, sel))
	}
	if h.ExpertWeightsScale != 0 && h.ExpertWeightsScale != 1 {
		wts = b.node("ffn_moe_weights_scaled", il)(ops.Scale(wts, h.ExpertWeightsScale, 0))
	}
	if wts != nil {
		wts = b.node("ffn_moe_weights_3d", il)(ops.Reshape(wts, 1, nU, nt))
	}
	x := b.node("ffn_moe_inp", il)(ops.Reshape(cur, cur.Ne[0], 1, nt))
	// Per-expert biases are gathered rows: bias[:, sel[e, t]] for each
	// chosen (e, t).
	selFlat := b.node("ffn_moe_topk_flat", il)(ops.Reshape(sel, nU*nt))
	expBias := func(name string, y, bias *ops.Tensor) *ops.Tensor {
		if bias == nil || y == nil {
			return y
		}
		r := b.node(name+"_rows", il)(ops.GetRows(bias, selFlat))
		r = b.node(name+"_rows_3d", il)(ops.Reshape(r, y.Ne[0], nU, nt))
		return b.node(name+"_b", il)(ops.Add(y, r))
	}
	gate := b.node("ffn_moe_gate", il)(ops.MulMatID(l.FFNGateExps, x, sel)) // [n_ff_exp, n_used, n_t]
	gate = expBias("ffn_moe_gate", gate, l.FFNGateExpsB)
	up := b.node("ffn_moe_up", il)(ops.MulMatID(l.FFNUpExps, x, sel))
	up = expBias("ffn_moe_up", up, l.FFNUpExpsB)
	var act *ops.Tensor
	if a.oaiSwiGLU {
		act = b.node("ffn_moe_swiglu_oai", il)(ops.SwiGLUOAI(gate, up, oaiSwiGLUAlpha, oaiSwiGLULimit))
	} else {
		act = b.node("ffn_moe_swiglu", il)(ops.SwiGLU(gate, up, false))
	}
	down := b.node("ffn_moe_down", il)(ops.MulMatID(l.FFNDownExps, act, sel)) // [n_embd, n_used, n_t]
	down = expBias("ffn_moe_down", down, l.FFNDownExpsB)
	down = b.node("ffn_moe_weighted", il)(ops.Mul(down, wts))
	if b.err != nil {
		return nil
	}
	out := b.node("ffn_moe_out_0", il)(ops.View(down, []int64{down.Ne[0], nt}, []int64{0, down.Nb[2]}, 0))
	for e := int64(1); e < nU; e++ {
		ve := b.node(fmt.Sprintf("ffn_moe_expert_%d", e), il)(ops.View(down, []int64{down.Ne[0], nt}, []int64{0, down.Nb[2]}, e*down.Nb[1]))
		out = b.node(fmt.Sprintf("ffn_moe_out_%d", e), il)(ops.Add(out, ve))
	}
	if nU == 1 {
		out = b.node("ffn_moe_out", il)(ops.Cont(out))
	}
	return out
}

// buildMamba adds the layers of a Mamba model (llama.cpp's build_mamba
// and build_mamba2) and returns the state stores and the last layer's
// output. Per layer: RMS_NORM and in_proj; the causal conv over each
// sequence's past d_conv-1 inputs and the new ones (SSM_CONV, then the
// bias and SiLU); SSM_SCAN from each sequence's state; y + x*D, times
// SiLU(z); out_proj; the residual. Mamba-1 takes x and z from in_proj,
// convolves x, and x_proj and dt_proj give dt, B and C per channel.
// Mamba-2 takes z, x|B|C and dt per head from in_proj, convolves x|B|C,
// has a scalar A and D per head, B and C per group, and normalizes y per
// group before out_proj. The micro-batch's tokens come in groups of equal
// length, one per sequence; the conv and SSM states of each sequence are
// read from and written back to its cell.
func (c *Context) buildMamba(b *builder, ug *ubatchGraph, u ubatch) ([]*ops.Tensor, *ops.Tensor) {
	h := c.m.Hparams
	w := &c.m.Weights
	v2 := h.SSMGroups > 0
	nt := int64(len(u.tokens))
	nOut := int64(len(u.out))
	ns := int64(u.groups)
	ntg := nt / ns
	di, ds, dc := int64(h.SSMInner), int64(h.SSMState), int64(h.SSMConv)
	ch := int64(h.SSMConvChannels())
	ug.seqIDs = b.node("inp_s_seq", -1)(ops.NewTensor("", quant.I32, ns))
	if b.err != nil {
		return nil, nil
	}
	var stores []*ops.Tensor
	inpL := b.node("inp_embd", -1)(ops.GetRows(w.TokEmbd, ug.tokens))
	for il, l := range w.Layers {
		b.block = "ssm"
		convC, ssmC := c.rs.conv[il], c.rs.ssm[il]
		ug.g.SetScope(convC, il, b.block)
		ug.g.SetScope(ssmC, il, b.block)
		cur := b.node("attn_norm", il)(ops.RMSNorm(inpL, h.RMSEps))
		cur = b.node("attn_norm_w", il)(ops.Mul(cur, l.AttnNorm))
		proj := b.node("ssm_in", il)(ops.MulMat(l.SSMIn, cur)) // Mamba-1 [x z], Mamba-2 [z xBC dt]
		if b.err != nil {
			return nil, nil
		}
		view3 := func(name string, n, off int64) *ops.Tensor {
			return b.node(name, il)(ops.View(proj, []int64{n, ntg, ns}, []int64{0, proj.Nb[1], proj.Nb[1] * ntg}, off*4))
		}
		var xIn, z *ops.Tensor
		if v2 {
			z, xIn = view3("ssm_z", di, 0), view3("ssm_xbc_in", ch, di)
		} else {
			xIn, z = view3("ssm_x_in", di, 0), view3("ssm_z", di, di)
		}

		// SSM_CONV reads, per channel, the d_conv-1 inputs before the
		// micro-batch (the conv state) followed by the new ones: a
		// scratch tensor filled by CPYs, whose last d_conv-1 columns
		// are the next conv state.
		sx := b.node("ssm_conv_in", il)(ops.NewTensor("", quant.F32, dc-1+ntg, ch, ns))
		if b.err != nil {
			return nil, nil
		}
		ug.scratch = append(ug.scratch, sx)
		var ins []*ops.Tensor
		for g := range ns {
			if dc == 1 {
				break
			}
			seq := int64(u.groupSeq[g])
			st := b.node(fmt.Sprintf("conv_state_%d", g), il)(ops.View(convC, []int64{dc - 1, ch}, []int64{0, (dc - 1) * 4}, seq*convC.Nb[1]))
			dst := b.node(fmt.Sprintf("ssm_conv_in_state_%d", g), il)(ops.View(sx, []int64{dc - 1, ch}, []int64{0, sx.Nb[1]}, g*sx.Nb[2]))
			ins = append(ins, b.node(fmt.Sprintf("conv_state_load_%d", g), il)(ops.Cpy(st, dst)))
		}
		xt := b.node("ssm_x_t", il)(ops.Permute(xIn, 1, 0, 2, 3)) // [n_tg, channels, n_s]
		xDst := b.node("ssm_conv_in_x", il)(ops.View(sx, []int64{ntg, ch, ns}, []int64{0, sx.Nb[1], sx.Nb[2]}, (dc-1)*4))
		xStore := b.node("ssm_conv_in_store", il)(ops.Cpy(xt, xDst))
		conv := b.node("ssm_conv", il)(ops.SSMConv(sx, l.SSMConv1D)) // [channels, n_tg, n_s]
		b.after(conv, append(ins, xStore)...)
		for g := range ns {
			if dc == 1 {
				break
			}
			seq := int64(u.groupSeq[g])
			src := b.node(fmt.Sprintf("ssm_conv_in_tail_%d", g), il)(ops.View(sx, []int64{dc - 1, ch}, []int64{0, sx.Nb[1]}, g*sx.Nb[2]+ntg*4))
			dst := b.node(fmt.Sprintf("conv_state_view_%d", g), il)(ops.View(convC, []int64{dc - 1, ch}, []int64{0, (dc - 1) * 4}, seq*convC.Nb[1]))
			save := b.node(fmt.Sprintf("conv_state_store_%d", g), il)(ops.Cpy(src, dst))
			b.after(save, append(ins, xStore)...)
			stores = append(stores, save)
		}
		xc := b.node("ssm_conv_b", il)(ops.Add(conv, l.SSMConv1DB))
		xc = b.node("ssm_conv_silu", il)(ops.Silu(xc))
		if b.err != nil {
			return nil, nil
		}

		var s, xs, dt, bm, cm, xd *ops.Tensor
		if v2 {
			nh, ng := int64(h.SSMDtRank), int64(h.SSMGroups)
			hd := di / nh
			xs = b.node("ssm_x", il)(ops.View(xc, []int64{hd, nh, ntg, ns}, []int64{0, hd * 4, xc.Nb[1], xc.Nb[2]}, 0))
			bm = b.node("ssm_B", il)(ops.View(xc, []int64{ds, ng, ntg, ns}, []int64{0, ds * 4, xc.Nb[1], xc.Nb[2]}, di*4))
			cm = b.node("ssm_C", il)(ops.View(xc, []int64{ds, ng, ntg, ns}, []int64{0, ds * 4, xc.Nb[1], xc.Nb[2]}, (di+ng*ds)*4))
			dt = view3("ssm_dt_in", nh, di+ch)
			dt = b.node("ssm_dt_b", il)(ops.Add(dt, l.SSMDtB)) // [n_head, n_tg, n_s]
			s = b.node("ssm_states", il)(ops.Reshape(ssmC, ds, hd, nh, ssmC.Ne[1]))
			xd = b.node("ssm_xD", il)(ops.Mul(xs, l.SSMD))
			xd = b.node("ssm_xD_3d", il)(ops.Reshape(xd, di, ntg, ns))
		} else {
			dtr := int64(h.SSMDtRank)
			xdb := b.node("ssm_xdb", il)(ops.MulMat(l.SSMX, xc)) // [dt_rank + 2*d_state, n_tg, n_s]
			if b.err != nil {
				return nil, nil
			}
			dt = b.node("ssm_dt_in", il)(ops.View(xdb, []int64{dtr, ntg, ns}, []int64{0, xdb.Nb[1], xdb.Nb[2]}, 0))
			bm = b.node("ssm_B", il)(ops.View(xdb, []int64{ds, 1, ntg, ns}, []int64{0, xdb.Nb[1], xdb.Nb[1], xdb.Nb[2]}, dtr*4))
			cm = b.node("ssm_C", il)(ops.View(xdb, []int64{ds, 1, ntg, ns}, []int64{0, xdb.Nb[1], xdb.Nb[1], xdb.Nb[2]}, (dtr+ds)*4))
			dt = b.node("ssm_dt", il)(ops.MulMat(l.SSMDt, dt)) // [d_inner, n_tg, n_s]
			dt = b.node("ssm_dt_b", il)(ops.Add(dt, l.SSMDtB))
			s = b.node("ssm_states", il)(ops.Reshape(ssmC, ds, 1, di, ssmC.Ne[1]))
			xs = b.node("ssm_x", il)(ops.Reshape(xc, 1, di, ntg, ns))
			xd = b.node("ssm_xD", il)(ops.Mul(xc, l.SSMD))
		}
		y := b.node("ssm_scan", il)(ops.SSMScan(s, xs, dt, l.SSMA, bm, cm, ug.seqIDs))
		if b.err != nil {
			return nil, nil
		}
		for g := range ns {
			seq := int64(u.groupSeq[g])
			src := b.node(fmt.Sprintf("ssm_scan_state_%d", g), il)(ops.View(y, []int64{ds * di}, []int64{0}, (xs.NumElements()+g*ds*di)*4))
			dst := b.node(fmt.Sprintf("ssm_state_view_%d", g), il)(ops.View(ssmC, []int64{ds * di}, []int64{0}, seq*ssmC.Nb[1]))
			stores = append(stores, b.node(fmt.Sprintf("ssm_state_store_%d", g), il)(ops.Cpy(src, dst)))
		}
		yv := b.node("ssm_y", il)(ops.View(y, []int64{di, ntg, ns}, []int64{0, di * 4, di * 4 * ntg}, 0))
		yv = b.node("ssm_y_xD", il)(ops.Add(yv, xd))
		zs := b.node("ssm_z_silu", il)(ops.Silu(z))
		yv = b.node("ssm_y_gated", il)(ops.Mul(yv, zs))
		if v2 {
			ng := int64(h.SSMGroups)
			yv = b.node("ssm_y_groups", il)(ops.Reshape(yv, di/ng, ng, ntg, ns))
			yv = b.node("ssm_norm", il)(ops.RMSNorm(yv, h.RMSEps))
			yv = b.node("ssm_norm_w", il)(ops.Mul(yv, l.SSMNorm))
			yv = b.node("ssm_y_3d", il)(ops.Reshape(yv, di, ntg, ns))
		}
		out := b.node("ssm_out", il)(ops.MulMat(l.SSMOut, yv)) // [n_embd, n_tg, n_s]
		out = b.node("ssm_out_2d", il)(ops.Reshape(out, int64(h.NEmbd), nt))
		if il == len(w.Layers)-1 {
			if nOut == 0 {
				return stores, nil
			}
			if ug.outIDs != nil {
				out = b.node("ssm_out_rows", il)(ops.GetRows(out, ug.outIDs))
				inpL = b.node("inp_rows", il)(ops.GetRows(inpL, ug.outIDs))
			}
		}
		inpL = b.node("l_out", il)(ops.Add(out, inpL))
	}
	return stores, inpL
}
