package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/kernbench/kernbench/quant"
)

// wantKV is a metadata entry a real file must hold.
type wantKV struct {
	key  string
	want any // uint64 (via Uint), float64 (via Float, exact), string, bool
}

func checkKVs(t *testing.T, f *File, kvs []wantKV) {
	t.Helper()
	for _, kv := range kvs {
		var got any
		var err error
		switch kv.want.(type) {
		case uint64:
			got, err = f.Uint(kv.key)
		case float64:
			got, err = f.Float(kv.key)
		case string:
			got, err = f.String(kv.key)
		case bool:
			got, err = f.Bool(kv.key)
		default:
			t.Fatalf("bad want type %T", kv.want)
		}
		if err != nil {
			t.Errorf("%s: %v", kv.key, err)
		} else if got != kv.want {
			t.Errorf("%s = %v, want %v", kv.key, got, kv.want)
		}
	}
}

// checkTensorsAgainstFile checks each tensor's extent, its data against
// an independent read of the file, and that Tensor is a zero-copy view of
// the same bytes TensorData returns.
func checkTensorsAgainstFile(t *testing.T, f *File, raw []byte) {
	t.Helper()
	if len(f.Tensors) > 0 && f.DataOffset%f.Alignment != 0 {
		t.Errorf("DataOffset %d not a multiple of the alignment %d", f.DataOffset, f.Alignment)
	}
	end := int64(0)
	for i, ti := range f.Tensors {
		if ti.Offset%f.Alignment != 0 {
			t.Errorf("tensor %d %s: offset %d not aligned", i, ti.Name, ti.Offset)
		}
		if ti.Offset < end {
			t.Errorf("tensor %d %s: offset %d before the end %d of the previous one", i, ti.Name, ti.Offset, end)
		}
		end = ti.Offset + ti.Size
		rowSize, _ := ti.Type.RowSize(ti.Ne[0])
		if want := rowSize * ti.Ne[1] * ti.Ne[2] * ti.Ne[3]; ti.Size != want {
			t.Errorf("tensor %s: Size %d, want %d", ti.Name, ti.Size, want)
		}
		data, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		start := f.DataOffset + ti.Offset
		if !bytes.Equal(data, raw[start:start+ti.Size]) {
			t.Errorf("tensor %s: data differs from file bytes [%d, %d)", ti.Name, start, start+ti.Size)
		}
		tt, err := f.Tensor(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		if tt.Name != ti.Name || tt.Type != ti.Type || tt.Ne != ti.Ne || !tt.IsContiguous() || tt.Op != 0 || tt.Offset != ti.Offset {
			t.Errorf("tensor %s: got %v (offset %d), want a contiguous leaf %v %v at %d", ti.Name, tt, tt.Offset, ti.Type, ti.Ne, ti.Offset)
		}
		hb, err := tt.HostBytes()
		if err != nil {
			t.Fatal(err)
		}
		if len(hb) != len(data) || unsafe.SliceData(hb) != unsafe.SliceData(data) {
			t.Errorf("tensor %s: Tensor's bytes are not the mapped bytes TensorData returns", ti.Name)
		}
	}
}

// llamaShapes returns the shapes of every tensor of a LLaMA model with
// the given embedding width, feed-forward width, K/V width (n_head_kv
// times head size), vocabulary and layer count, as ggml stores them:
// ne[0] is the input dimension.
func llamaShapes(embd, ff, kv, vocab int64, layers int) map[string][4]int64 {
	m := map[string][4]int64{
		"token_embd.weight":  {embd, vocab, 1, 1},
		"output.weight":      {embd, vocab, 1, 1},
		"output_norm.weight": {embd, 1, 1, 1},
	}
	for l := range layers {
		for name, ne := range map[string][4]int64{
			"attn_q": {embd, embd, 1, 1}, "attn_k": {embd, kv, 1, 1}, "attn_v": {embd, kv, 1, 1},
			"attn_output": {embd, embd, 1, 1}, "attn_norm": {embd, 1, 1, 1}, "ffn_norm": {embd, 1, 1, 1},
			"ffn_gate": {embd, ff, 1, 1}, "ffn_up": {embd, ff, 1, 1}, "ffn_down": {ff, embd, 1, 1},
		} {
			m[fmt.Sprintf("blk.%d.%s.weight", l, name)] = ne
		}
	}
	return m
}

func TestRealFiles(t *testing.T) {
	stories := []wantKV{
		{"general.architecture", "llama"},
		{"tokenizer.ggml.model", "llama"},
		{"llama.embedding_length", uint64(64)},
		{"llama.block_count", uint64(5)},
		{"llama.attention.head_count", uint64(8)},
		{"llama.attention.head_count_kv", uint64(4)},
		{"llama.feed_forward_length", uint64(172)},
		{"llama.rope.dimension_count", uint64(8)},
		{"llama.context_length", uint64(2048)},
		{"llama.attention.layer_norm_rms_epsilon", float64(float32(1e-5))},
		{"tokenizer.ggml.bos_token_id", uint64(1)},
		{"tokenizer.ggml.eos_token_id", uint64(2)},
		{"tokenizer.ggml.unknown_token_id", uint64(0)},
	}
	tests := []struct {
		file       string
		tensors    int
		kvs        int
		vocab      int
		kv         []wantKV
		types      map[quant.Type]int
		shapes     map[string][4]int64
		extraCheck func(t *testing.T, f *File)
	}{
		{
			file: "stories260K.gguf", tensors: 48, kvs: 19, vocab: 512, kv: stories,
			types:  map[quant.Type]int{quant.F32: 48},
			shapes: llamaShapes(64, 172, 32, 512, 5),
			extraCheck: func(t *testing.T, f *File) {
				// The norm weights of a trained model are finite and
				// not all zero; reading them through the tensor checks
				// the F32 bytes decode as sensible numbers.
				tt, err := f.Tensor("output_norm.weight")
				if err != nil {
					t.Fatal(err)
				}
				b, _ := tt.HostBytes()
				x := make([]float32, 64)
				if err := quant.DequantizeRow(quant.F32, b, x); err != nil {
					t.Fatal(err)
				}
				nonzero := 0
				for _, v := range x {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || math.Abs(float64(v)) > 100 {
						t.Fatalf("output_norm holds %v", v)
					}
					if v != 0 {
						nonzero++
					}
				}
				if nonzero < 60 {
					t.Errorf("output_norm has only %d non-zero weights", nonzero)
				}
			},
		},
		{
			file: "stories260K-wide.gguf", tensors: 48, kvs: 20, vocab: 512,
			kv: []wantKV{
				{"general.architecture", "llama"},
				{"llama.embedding_length", uint64(256)},
				{"llama.feed_forward_length", uint64(256)},
				{"llama.rope.dimension_count", uint64(32)},
				{"llama.attention.head_count", uint64(8)},
				{"llama.attention.head_count_kv", uint64(4)},
				{"llama.rope.freq_base", float64(float32(1e16))},
				{"llama.attention.layer_norm_rms_epsilon", float64(float32(1e-5) / 4)},
			},
			types:  map[quant.Type]int{quant.F32: 48},
			shapes: llamaShapes(256, 256, 128, 512, 5),
		},
		{
			file: "llama-2-tiny-random.gguf", tensors: 12, kvs: 18, vocab: 32000,
			kv: []wantKV{
				{"general.architecture", "llama"},
				{"general.name", "LLaMA v2"},
				{"llama.embedding_length", uint64(8)},
				{"llama.block_count", uint64(1)},
				{"llama.attention.head_count", uint64(2)},
				{"llama.attention.head_count_kv", uint64(2)},
				{"llama.feed_forward_length", uint64(32)},
				{"llama.rope.dimension_count", uint64(4)},
				{"llama.context_length", uint64(4096)},
				{"general.file_type", uint64(1)},
			},
			types:  map[quant.Type]int{quant.F16: 9, quant.F32: 3},
			shapes: map[string][4]int64{"token_embd.weight": {8, 32000, 1, 1}, "blk.0.attn_q.weight": {8, 8, 1, 1}},
		},
		{
			file: "ggml-vocab-llama-spm.gguf", kvs: 22, vocab: 32000,
			kv: []wantKV{
				{"general.architecture", "llama"},
				{"tokenizer.ggml.model", "llama"},
				{"tokenizer.ggml.pre", "default"},
				{"tokenizer.ggml.add_bos_token", true},
				{"tokenizer.ggml.add_eos_token", false},
				{"tokenizer.ggml.bos_token_id", uint64(1)},
			},
		},
		{
			file: "ggml-vocab-gpt-2.gguf", kvs: 16, vocab: 50257,
			kv: []wantKV{
				{"general.architecture", "gpt2"},
				{"tokenizer.ggml.model", "gpt2"},
				{"tokenizer.ggml.pre", "gpt-2"},
				{"tokenizer.ggml.bos_token_id", uint64(50256)},
				{"tokenizer.ggml.eos_token_id", uint64(50256)},
			},
			extraCheck: func(t *testing.T, f *File) {
				merges, err := f.Strings("tokenizer.ggml.merges")
				if err != nil {
					t.Fatal(err)
				}
				if len(merges) != 50000 || merges[0] != "Ġ t" {
					t.Errorf("merges: %d, first %q; want 50000, first \"Ġ t\"", len(merges), merges[0])
				}
				for i, m := range merges {
					if strings.Count(m, " ") != 1 {
						t.Fatalf("merge %d %q is not two tokens", i, m)
					}
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			path := testFile(t, tc.file)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Version != 3 || f.Alignment != 32 || len(f.Tensors) != tc.tensors || len(f.KV) != tc.kvs {
				t.Errorf("v%d, alignment %d, %d tensors, %d KV; want v3, 32, %d, %d",
					f.Version, f.Alignment, len(f.Tensors), len(f.KV), tc.tensors, tc.kvs)
			}
			checkKVs(t, f, tc.kv)
			tokens, err := f.Strings("tokenizer.ggml.tokens")
			if err != nil {
				t.Fatal(err)
			}
			if len(tokens) != tc.vocab {
				t.Errorf("%d tokens, want %d", len(tokens), tc.vocab)
			}
			if _, ok := f.Get("tokenizer.ggml.scores"); ok {
				scores, err := f.Float32s("tokenizer.ggml.scores")
				if err != nil || len(scores) != tc.vocab {
					t.Errorf("scores: %d, %v; want %d", len(scores), err, tc.vocab)
				}
			}
			types, err := f.Int32s("tokenizer.ggml.token_type")
			if err != nil || len(types) != tc.vocab {
				t.Errorf("token_type: %d, %v; want %d", len(types), err, tc.vocab)
			}
			for i, tt := range types {
				if tt < 1 || tt > 6 {
					t.Fatalf("token %d (%q) has type %d, outside llama's 1..6", i, tokens[i], tt)
				}
			}
			if tc.types != nil {
				got := map[quant.Type]int{}
				for _, ti := range f.Tensors {
					got[ti.Type]++
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.types) {
					t.Errorf("tensor types %v, want %v", got, tc.types)
				}
			}
			for name, ne := range tc.shapes {
				ti, ok := f.TensorInfo(name)
				if !ok {
					t.Errorf("no tensor %s", name)
				} else if ti.Ne != ne {
					t.Errorf("%s: shape %v, want %v", name, ti.Ne, ne)
				}
			}
			checkTensorsAgainstFile(t, f, raw)
			if tc.extraCheck != nil {
				tc.extraCheck(t, f)
			}
		})
	}
}

// TestStoriesTensorNames checks stories260K's tensor set: the three
// global tensors and nine per layer for five layers, in a file whose data
// fills the file exactly.
func TestStoriesTensorNames(t *testing.T) {
	f, err := Open(testFile(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]bool{"token_embd.weight": true, "output_norm.weight": true, "output.weight": true}
	for l := range 5 {
		for _, n := range []string{"attn_q", "attn_k", "attn_v", "attn_output", "attn_norm", "ffn_gate", "ffn_up", "ffn_down", "ffn_norm"} {
			want[fmt.Sprintf("blk.%d.%s.weight", l, n)] = true
		}
	}
	if len(f.Tensors) != len(want) {
		t.Errorf("%d tensors, want %d", len(f.Tensors), len(want))
	}
	for _, ti := range f.Tensors {
		if !want[ti.Name] {
			t.Errorf("unexpected tensor %s", ti.Name)
		}
	}
	last := f.Tensors[len(f.Tensors)-1]
	if end := f.DataOffset + alignUp(last.Offset+last.Size, 32); end != 1185376 {
		t.Errorf("data ends at %d, want the file size 1185376", end)
	}
}

func TestRefuseVersion1(t *testing.T) {
	_, err := Open(testFile(t, "tinyllamas-stories-260k-f32.ggufv1.gguf"))
	if err == nil {
		t.Fatal("opened a GGUF v1 file")
	}
	if !errors.Is(err, ErrVersion) {
		t.Errorf("error %v does not wrap ErrVersion", err)
	}
	for _, s := range []string{"version 1", "2 and 3"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

// TestRewriteRealFiles writes every real v3 file's metadata and tensors
// back through the Writer and expects the original bytes: ggml lays out
// files the way Writer does, so this checks the writer's encoding of every
// field, and that the tensor bytes come through unchanged.
func TestRewriteRealFiles(t *testing.T) {
	for _, name := range []string{"stories260K.gguf", "llama-2-tiny-random.gguf", "ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"} {
		t.Run(name, func(t *testing.T) {
			path := testFile(t, name)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			w := NewWriter()
			for _, kv := range f.KV {
				if err := w.Add(kv.Key, kv.Value); err != nil {
					t.Fatal(err)
				}
			}
			for _, ti := range f.Tensors {
				data, err := f.TensorData(ti.Name)
				if err != nil {
					t.Fatal(err)
				}
				if err := w.AddTensor(ti.Name, ti.Type, ti.Ne[:ti.NDims], data); err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			n, err := w.WriteTo(&out)
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(out.Len()) {
				t.Errorf("WriteTo returned %d, wrote %d", n, out.Len())
			}
			g, err := Parse(out.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			for _, ti := range f.Tensors {
				a, _ := f.TensorData(ti.Name)
				b, err := g.TensorData(ti.Name)
				if err != nil || !bytes.Equal(a, b) {
					t.Fatalf("tensor %s: bytes differ after rewriting (%v)", ti.Name, err)
				}
			}
			if !bytes.Equal(out.Bytes(), raw) {
				i := 0
				for i < min(out.Len(), len(raw)) && out.Bytes()[i] == raw[i] {
					i++
				}
				t.Errorf("rewritten file (%d bytes) differs from the original (%d bytes) from byte %d", out.Len(), len(raw), i)
			}
		})
	}
}
