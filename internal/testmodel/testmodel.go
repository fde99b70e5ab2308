// Package testmodel writes small synthetic models of each architecture the
// runner knows (llama, Mixtral-style llama with experts, gpt-oss, mamba,
// mamba2) as
// GGUF files for the commands' tests: random f32 weights, llama.cpp's keys
// and tensor names, and the vocabulary of a real model's file (so that
// text tokenizes as it would with that model). The weights are noise; the
// files load and run. Poisoned copies a shared model (package shareddata)
// with one weight replaced, such as by a NaN.
package testmodel

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/tokenizer"
)

// Archs are the architectures Write takes: "mixtral" is written as llama
// with experts, as llama.cpp writes Mixtral.
var Archs = []string{"llama", "mixtral", "gpt-oss", "mamba", "mamba2"}

// Write writes a 2-layer model of arch (one of Archs, or any other name,
// which is written as a llama model under that general.architecture, for
// tests of its refusal) to path, with the vocabulary of the GGUF file at
// vocabPath.
func Write(path, arch, vocabPath string) error {
	vf, err := gguf.Open(vocabPath)
	if err != nil {
		return err
	}
	v, err := tokenizer.VocabFromGGUF(vf)
	vf.Close()
	if err != nil {
		return err
	}
	w := gguf.NewWriter()
	name := arch
	if arch == "mixtral" {
		name = "llama"
	}
	const (
		embd, layers, heads, kvHeads, ff, experts, used = 32, 2, 4, 2, 48, 4, 2
		dInner, dState, dConv, dtRank, groups           = 64, 8, 4, 4, 2
		headDim, window                                 = 16, 8
	)
	nv := len(v.Tokens)
	keys := []struct {
		k string
		v any
	}{
		{"general.architecture", name},
		{"general.name", "kernbench test " + arch},
		{name + ".context_length", uint32(4096)},
		{name + ".embedding_length", uint32(embd)},
		{name + ".block_count", uint32(layers)},
		{name + ".attention.layer_norm_rms_epsilon", float32(1e-5)},
	}
	add := func(k string, val any) {
		keys = append(keys, struct {
			k string
			v any
		}{k, val})
	}
	hd := embd / heads
	switch arch {
	case "mamba", "mamba2":
		add(name+".feed_forward_length", uint32(0))
		add(name+".attention.head_count", uint32(0))
		add(name+".ssm.conv_kernel", uint32(dConv))
		add(name+".ssm.inner_size", uint32(dInner))
		add(name+".ssm.state_size", uint32(dState))
		add(name+".ssm.time_step_rank", uint32(dtRank))
		if arch == "mamba2" {
			add("mamba2.ssm.group_count", uint32(groups))
		}
	default:
		if arch == "gpt-oss" {
			hd = headDim
			add("gpt-oss.attention.key_length", uint32(hd))
			add("gpt-oss.attention.value_length", uint32(hd))
			add("gpt-oss.expert_feed_forward_length", uint32(ff))
			add("gpt-oss.attention.sliding_window", uint32(window))
			add("gpt-oss.rope.scaling.type", "yarn")
			add("gpt-oss.rope.scaling.factor", float32(32))
			add("gpt-oss.rope.scaling.original_context_length", uint32(4096))
		}
		add(name+".feed_forward_length", uint32(ff))
		add(name+".attention.head_count", uint32(heads))
		add(name+".attention.head_count_kv", uint32(kvHeads))
		add(name+".rope.dimension_count", uint32(hd))
		if arch == "mixtral" || arch == "gpt-oss" {
			add(name+".expert_count", uint32(experts))
			add(name+".expert_used_count", uint32(used))
		}
	}
	types := make([]int32, len(v.Types))
	for i, t := range v.Types {
		types[i] = int32(t)
	}
	add(tokenizer.KeyModel, v.Model)
	add(tokenizer.KeyPre, v.Pre)
	add(tokenizer.KeyTokens, v.Tokens)
	add(tokenizer.KeyScores, v.Scores)
	add(tokenizer.KeyTokenType, types)
	add(tokenizer.KeyBOS, uint32(v.BOS))
	add(tokenizer.KeyEOS, uint32(v.EOS))
	add(tokenizer.KeyUNK, uint32(v.UNK))
	add(tokenizer.KeyAddBOS, v.AddBOS)
	add(tokenizer.KeyAddEOS, v.AddEOS)
	add(tokenizer.KeyAddSpacePrefix, v.AddSpacePrefix)
	for _, kv := range keys {
		if err := w.Add(kv.k, kv.v); err != nil {
			return err
		}
	}

	r := rand.New(rand.NewPCG(7, uint64(len(arch))))
	tensor := func(name string, fill func(i, n int) float32, ne ...int64) error {
		n := int64(1)
		for _, x := range ne {
			n *= x
		}
		data := make([]byte, 4*n)
		for i := range n {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(fill(int(i), int(ne[0]))))
		}
		return w.AddTensor(name, quant.F32, ne, data)
	}
	normal := func(_, nIn int) float32 { return float32(r.NormFloat64() / math.Sqrt(float64(nIn))) }
	ones := func(int, int) float32 { return 1 }
	zeros := func(int, int) float32 { return 0 }
	small := func(int, int) float32 { return float32(0.1 * r.NormFloat64()) }
	negA := func(i, n int) float32 { return -float32(i%n + 1) }
	dtB := func(int, int) float32 { return -4 }

	e, nvt := int64(embd), int64(nv)
	type def struct {
		name string
		fill func(i, n int) float32
		ne   []int64
	}
	defs := []def{{"token_embd.weight", normal, []int64{e, nvt}}, {"output_norm.weight", ones, []int64{e}}, {"output.weight", normal, []int64{e, nvt}}}
	for il := range layers {
		p := fmt.Sprintf("blk.%d.", il)
		d := func(n string, f func(i, n int) float32, ne ...int64) { defs = append(defs, def{p + n, f, ne}) }
		if arch == "mamba2" {
			c := int64(dInner + 2*groups*dState)
			d("attn_norm.weight", ones, e)
			d("ssm_in.weight", normal, e, dInner+c+dtRank)
			d("ssm_conv1d.weight", normal, dConv, c)
			d("ssm_conv1d.bias", zeros, c)
			d("ssm_dt.bias", dtB, dtRank)
			d("ssm_a", negA, 1, dtRank)
			d("ssm_d", ones, 1, dtRank)
			d("ssm_norm.weight", ones, dInner/groups, groups)
			d("ssm_out.weight", normal, dInner, e)
			continue
		}
		if arch == "mamba" {
			d("attn_norm.weight", ones, e)
			d("ssm_in.weight", normal, e, 2*dInner)
			d("ssm_conv1d.weight", normal, dConv, dInner)
			d("ssm_conv1d.bias", zeros, dInner)
			d("ssm_x.weight", normal, dInner, dtRank+2*dState)
			d("ssm_dt.weight", normal, dtRank, dInner)
			d("ssm_dt.bias", dtB, dInner)
			d("ssm_a", negA, dState, dInner)
			d("ssm_d", ones, dInner)
			d("ssm_out.weight", normal, dInner, e)
			continue
		}
		q, kv := int64(hd*heads), int64(hd*kvHeads)
		d("attn_norm.weight", ones, e)
		d("attn_q.weight", normal, e, q)
		d("attn_k.weight", normal, e, kv)
		d("attn_v.weight", normal, e, kv)
		d("attn_output.weight", normal, q, e)
		if arch == "gpt-oss" {
			d("attn_q.bias", small, q)
			d("attn_k.bias", small, kv)
			d("attn_v.bias", small, kv)
			d("attn_output.bias", small, e)
			d("attn_sinks.weight", small, heads)
			d("post_attention_norm.weight", ones, e)
		} else {
			d("ffn_norm.weight", ones, e)
		}
		if arch != "mixtral" && arch != "gpt-oss" {
			d("ffn_gate.weight", normal, e, ff)
			d("ffn_up.weight", normal, e, ff)
			d("ffn_down.weight", normal, ff, e)
			continue
		}
		d("ffn_gate_inp.weight", normal, e, experts)
		d("ffn_gate_exps.weight", normal, e, ff, experts)
		d("ffn_up_exps.weight", normal, e, ff, experts)
		d("ffn_down_exps.weight", normal, ff, e, experts)
		if arch == "gpt-oss" {
			d("ffn_gate_inp.bias", small, experts)
			d("ffn_gate_exps.bias", small, ff, experts)
			d("ffn_up_exps.bias", small, ff, experts)
			d("ffn_down_exps.bias", small, e, experts)
		}
	}
	for _, d := range defs {
		if err := tensor(d.name, d.fill, d.ne...); err != nil {
			return err
		}
	}
	return w.WriteFile(path)
}
