package model

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/quant"
)

// synth describes a small random model written as GGUF in memory: llama
// (with experts when nExpert > 0), gpt-oss or mamba. Keys and tensor
// names are written out here as llama.cpp names them, not taken from the
// package, so that a wrong name in the loader fails the tests.
type synth struct {
	arch                                             string // "" is llama
	nEmbd, nLayer, nHead, nHeadKV, nFF, nVocab, nCtx int
	// headDim > 0 writes attention.key_length/value_length (gpt-oss's
	// heads are not n_embd/n_head wide).
	headDim int
	// Experts (llama with expert_count, gpt-oss).
	nExpert, nExpertUsed int
	// gpt-oss's sliding window.
	nSWA int
	// Mamba's sizes (Mamba-2: dtRank heads in nGroups groups).
	dConv, dInner, dState, dtRank, nGroups int
	// keys overrides metadata: a nil value drops the key.
	keys map[string]any
	// shapes overrides tensor shapes; a nil shape drops the tensor.
	shapes map[string][]int64
	// extra tensors to add.
	extra []string
	tied  bool
	// typ is the element type of the matrices (f32 when zero).
	typ quant.Type
}

func defaultSynth() synth {
	return synth{nEmbd: 16, nLayer: 2, nHead: 4, nHeadKV: 2, nFF: 24, nVocab: 40, nCtx: 128}
}

// mixtralSynth is a llama model with 4 experts of which each token uses 2.
func mixtralSynth() synth {
	s := defaultSynth()
	s.nExpert, s.nExpertUsed = 4, 2
	return s
}

// gptOSSSynth is a gpt-oss model: heads of 8 (q 32 wide for n_embd 16),
// 4 experts of 12, 2 used, a window of 4 on the even layers, YaRN.
func gptOSSSynth() synth {
	return synth{arch: "gpt-oss", nEmbd: 16, nLayer: 2, nHead: 4, nHeadKV: 2, headDim: 8, nFF: 12, nVocab: 40, nCtx: 128,
		nExpert: 4, nExpertUsed: 2, nSWA: 4}
}

// mambaSynth is a Mamba model: d_inner 32, d_state 8, d_conv 4, dt_rank 4.
func mambaSynth() synth {
	return synth{arch: "mamba", nEmbd: 16, nLayer: 2, nVocab: 40, nCtx: 1 << 20, dConv: 4, dInner: 32, dState: 8, dtRank: 4, tied: true}
}

// mamba2Synth is a Mamba-2 model: d_inner 32 in 4 heads of 8, B and C in
// 2 groups of d_state 8, d_conv 4.
func mamba2Synth() synth {
	return synth{arch: "mamba2", nEmbd: 16, nLayer: 2, nVocab: 40, nCtx: 1 << 20, dConv: 4, dInner: 32, dState: 8, dtRank: 4, nGroups: 2, tied: true}
}

// tensorKind says how a synthetic tensor's values are drawn.
type synthKind int

const (
	sMatrix synthKind = iota // N(0, 0.3²)
	sNorm                    // 1 + N(0, 0.1²)
	sBias                    // N(0, 0.1²)
	sNegA                    // -(0.5 + |N(0, 1)|): Mamba's A = -exp(A_log)
)

type synthTensor struct {
	name string
	ne   []int64
	kind synthKind
	f32  bool // always f32 (norms, biases, sinks, Mamba's small tensors)
}

// tensors lists the model's tensors.
func (s synth) tensors() []synthTensor {
	e, v := int64(s.nEmbd), int64(s.nVocab)
	ts := []synthTensor{{"token_embd.weight", []int64{e, v}, sMatrix, false}, {"output_norm.weight", []int64{e}, sNorm, true}}
	if !s.tied {
		ts = append(ts, synthTensor{"output.weight", []int64{e, v}, sMatrix, false})
	}
	for il := range s.nLayer {
		p := fmt.Sprintf("blk.%d.", il)
		add := func(name string, kind synthKind, f32 bool, ne ...int64) {
			ts = append(ts, synthTensor{p + name, ne, kind, f32})
		}
		if s.arch == "mamba2" {
			di, ds, nh, ng := int64(s.dInner), int64(s.dState), int64(s.dtRank), int64(s.nGroups)
			c := di + 2*ng*ds
			add("attn_norm.weight", sNorm, true, e)
			add("ssm_in.weight", sMatrix, false, e, di+c+nh)
			add("ssm_conv1d.weight", sMatrix, true, int64(s.dConv), c)
			add("ssm_conv1d.bias", sBias, true, c)
			add("ssm_dt.bias", sBias, true, nh)
			add("ssm_a", sNegA, true, 1, nh)
			add("ssm_d", sNorm, true, 1, nh)
			add("ssm_norm.weight", sNorm, true, di/ng, ng)
			add("ssm_out.weight", sMatrix, false, di, e)
			continue
		}
		if s.arch == "mamba" {
			di, ds := int64(s.dInner), int64(s.dState)
			add("attn_norm.weight", sNorm, true, e)
			add("ssm_in.weight", sMatrix, false, e, 2*di)
			add("ssm_conv1d.weight", sMatrix, true, int64(s.dConv), di)
			add("ssm_conv1d.bias", sBias, true, di)
			add("ssm_x.weight", sMatrix, false, di, int64(s.dtRank)+2*ds)
			add("ssm_dt.weight", sMatrix, false, int64(s.dtRank), di)
			add("ssm_dt.bias", sBias, true, di)
			add("ssm_a", sNegA, true, ds, di)
			add("ssm_d", sNorm, true, di)
			add("ssm_out.weight", sMatrix, false, di, e)
			continue
		}
		hd := s.nEmbd / s.nHead
		if s.headDim > 0 {
			hd = s.headDim
		}
		q, kv := int64(hd*s.nHead), int64(hd*s.nHeadKV)
		add("attn_norm.weight", sNorm, true, e)
		add("attn_q.weight", sMatrix, false, e, q)
		add("attn_k.weight", sMatrix, false, e, kv)
		add("attn_v.weight", sMatrix, false, e, kv)
		add("attn_output.weight", sMatrix, false, q, e)
		if s.arch == "gpt-oss" {
			add("attn_q.bias", sBias, true, q)
			add("attn_k.bias", sBias, true, kv)
			add("attn_v.bias", sBias, true, kv)
			add("attn_output.bias", sBias, true, e)
			add("attn_sinks.weight", sMatrix, true, int64(s.nHead))
			add("post_attention_norm.weight", sNorm, true, e)
		} else {
			add("ffn_norm.weight", sNorm, true, e)
		}
		f, n := int64(s.nFF), int64(s.nExpert)
		if s.nExpert == 0 {
			add("ffn_gate.weight", sMatrix, false, e, f)
			add("ffn_up.weight", sMatrix, false, e, f)
			add("ffn_down.weight", sMatrix, false, f, e)
			continue
		}
		add("ffn_gate_inp.weight", sMatrix, true, e, n)
		add("ffn_gate_exps.weight", sMatrix, false, e, f, n)
		add("ffn_up_exps.weight", sMatrix, false, e, f, n)
		add("ffn_down_exps.weight", sMatrix, false, f, e, n)
		if s.arch == "gpt-oss" {
			add("ffn_gate_inp.bias", sBias, true, n)
			add("ffn_gate_exps.bias", sBias, true, f, n)
			add("ffn_up_exps.bias", sBias, true, f, n)
			add("ffn_down_exps.bias", sBias, true, e, n)
		}
	}
	return ts
}

// metadata returns the model's keys in order.
func (s synth) metadata() []struct {
	k string
	v any
} {
	arch := s.arch
	if arch == "" {
		arch = "llama"
	}
	type kv = struct {
		k string
		v any
	}
	keys := []kv{
		{"general.architecture", arch},
		{arch + ".context_length", uint32(s.nCtx)},
		{arch + ".embedding_length", uint32(s.nEmbd)},
		{arch + ".block_count", uint32(s.nLayer)},
	}
	if arch == "mamba" || arch == "mamba2" {
		keys = append(keys,
			kv{arch + ".feed_forward_length", uint32(0)},
			kv{arch + ".attention.head_count", uint32(0)},
			kv{arch + ".ssm.conv_kernel", uint32(s.dConv)},
			kv{arch + ".ssm.inner_size", uint32(s.dInner)},
			kv{arch + ".ssm.state_size", uint32(s.dState)},
			kv{arch + ".ssm.time_step_rank", uint32(s.dtRank)},
			kv{arch + ".attention.layer_norm_rms_epsilon", float32(1e-5)},
		)
		if arch == "mamba2" {
			keys = append(keys, kv{"mamba2.ssm.group_count", uint32(s.nGroups)})
		}
		return keys
	}
	hd := s.nEmbd / s.nHead
	if s.headDim > 0 {
		hd = s.headDim
	}
	keys = append(keys,
		kv{arch + ".feed_forward_length", uint32(s.nFF)},
		kv{arch + ".attention.head_count", uint32(s.nHead)},
		kv{arch + ".attention.head_count_kv", uint32(s.nHeadKV)},
		kv{arch + ".rope.dimension_count", uint32(hd)},
		kv{arch + ".attention.layer_norm_rms_epsilon", float32(1e-5)},
	)
	if s.headDim > 0 {
		keys = append(keys, kv{arch + ".attention.key_length", uint32(hd)}, kv{arch + ".attention.value_length", uint32(hd)})
	}
	if s.nExpert > 0 {
		keys = append(keys, kv{arch + ".expert_count", uint32(s.nExpert)}, kv{arch + ".expert_used_count", uint32(s.nExpertUsed)})
	}
	if arch == "gpt-oss" {
		keys = append(keys,
			kv{"gpt-oss.expert_feed_forward_length", uint32(s.nFF)},
			kv{"gpt-oss.attention.sliding_window", uint32(s.nSWA)},
			kv{"gpt-oss.rope.freq_base", float32(150000)},
			kv{"gpt-oss.rope.scaling.type", "yarn"},
			kv{"gpt-oss.rope.scaling.factor", float32(4)},
			kv{"gpt-oss.rope.scaling.original_context_length", uint32(32)},
		)
	}
	return keys
}

// bytes returns the GGUF file.
func (s synth) bytes(t testing.TB) []byte {
	t.Helper()
	w := gguf.NewWriter()
	done := map[string]bool{}
	for _, kv := range s.metadata() {
		v := kv.v
		if o, ok := s.keys[kv.k]; ok {
			v = o
		}
		done[kv.k] = true
		if v == nil {
			continue
		}
		if err := w.Add(kv.k, v); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range s.keys {
		if !done[k] && v != nil {
			if err := w.Add(k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	ts := s.tensors()
	for _, name := range s.extra {
		ts = append(ts, synthTensor{name, []int64{int64(s.nEmbd)}, sNorm, true})
	}
	for _, st := range ts {
		ne := st.ne
		if o, ok := s.shapes[st.name]; ok {
			if o == nil {
				continue
			}
			ne = o
		}
		n := int64(1)
		for _, x := range ne {
			n *= x
		}
		vals := make([]float32, n)
		for i := range vals {
			g := r.NormFloat64()
			switch st.kind {
			case sMatrix:
				vals[i] = float32(0.3 * g)
			case sNorm:
				vals[i] = float32(1 + 0.1*g)
			case sBias:
				vals[i] = float32(0.1 * g)
			case sNegA:
				vals[i] = float32(-(0.5 + math.Abs(g)))
			}
		}
		typ := quant.F32
		if s.typ != 0 && !st.f32 && ne[0]%s.typ.BlockSize() == 0 {
			typ = s.typ
		}
		data, err := encodeRows(typ, vals, ne[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensor(st.name, typ, ne, data); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// encodeRows encodes vals, rows of n, in typ.
func encodeRows(typ quant.Type, vals []float32, n int64) ([]byte, error) {
	rs, err := typ.RowSize(n)
	if err != nil {
		return nil, err
	}
	rows := int64(len(vals)) / n
	out := make([]byte, rows*rs)
	for r := range rows {
		if err := quant.QuantizeRow(typ, vals[r*n:(r+1)*n], out[r*rs:(r+1)*rs]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// model parses the synthetic file and returns its model or the error.
func (s synth) model(t testing.TB) (*Model, error) {
	t.Helper()
	f, err := gguf.Parse(s.bytes(t))
	if err != nil {
		t.Fatal(err)
	}
	return FromGGUF(f)
}

// mustModel is model, failing the test on an error.
func (s synth) mustModel(t testing.TB) *Model {
	t.Helper()
	m, err := s.model(t)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
