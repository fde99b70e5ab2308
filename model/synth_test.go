package model

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/quant"
)

// synth describes a small random llama model written as GGUF in memory.
type synth struct {
	nEmbd, nLayer, nHead, nHeadKV, nFF, nVocab, nCtx int
	// keys overrides metadata: a nil value drops the key.
	keys map[string]any
	// shapes overrides tensor shapes; a nil shape drops the tensor.
	shapes map[string][]int64
	// extra tensors to add.
	extra []string
	tied  bool
}

func defaultSynth() synth {
	return synth{nEmbd: 16, nLayer: 2, nHead: 4, nHeadKV: 2, nFF: 24, nVocab: 40, nCtx: 128}
}

func f32Bytes(r *rand.Rand, n int64, scale float64) []byte {
	b := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(scale*r.NormFloat64())))
	}
	return b
}

// bytes returns the GGUF file.
func (s synth) bytes(t testing.TB) []byte {
	t.Helper()
	w := gguf.NewWriter()
	hd := s.nEmbd / s.nHead
	keys := []struct {
		k string
		v any
	}{
		{"general.architecture", "llama"},
		{"llama.context_length", uint32(s.nCtx)},
		{"llama.embedding_length", uint32(s.nEmbd)},
		{"llama.block_count", uint32(s.nLayer)},
		{"llama.feed_forward_length", uint32(s.nFF)},
		{"llama.attention.head_count", uint32(s.nHead)},
		{"llama.attention.head_count_kv", uint32(s.nHeadKV)},
		{"llama.rope.dimension_count", uint32(hd)},
		{"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
	}
	done := map[string]bool{}
	for _, kv := range keys {
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
	add := func(name string, ne ...int64) {
		if o, ok := s.shapes[name]; ok {
			if o == nil {
				return
			}
			ne = o
		}
		n := int64(1)
		for _, x := range ne {
			n *= x
		}
		scale := 0.3
		if len(ne) == 1 {
			scale = 0.1 // norms around 1
		}
		data := f32Bytes(r, n, scale)
		if len(ne) == 1 {
			for i := range n {
				v := math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
				binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(1+v))
			}
		}
		if err := w.AddTensor(name, quant.F32, ne, data); err != nil {
			t.Fatal(err)
		}
	}
	e, v, f := int64(s.nEmbd), int64(s.nVocab), int64(s.nFF)
	kv := int64(hd * s.nHeadKV)
	add("token_embd.weight", e, v)
	add("output_norm.weight", e)
	if !s.tied {
		add("output.weight", e, v)
	}
	for il := range s.nLayer {
		p := fmt.Sprintf("blk.%d.", il)
		add(p+"attn_norm.weight", e)
		add(p+"attn_q.weight", e, e)
		add(p+"attn_k.weight", e, kv)
		add(p+"attn_v.weight", e, kv)
		add(p+"attn_output.weight", e, e)
		add(p+"ffn_norm.weight", e)
		add(p+"ffn_gate.weight", e, f)
		add(p+"ffn_up.weight", e, f)
		add(p+"ffn_down.weight", f, e)
	}
	for _, name := range s.extra {
		add(name, e)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
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
