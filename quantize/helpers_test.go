package quantize

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/kernbench/kernbench/gguf"
	shared "github.com/kernbench/kernbench/internal/shareddata"
	"github.com/kernbench/kernbench/quant"
)

// testdata returns the path of a file in shared/testdata, found by walking
// up from the working directory, or skips the test when it is absent.
func testdata(t testing.TB, name string) string {
	t.Helper()
	return shared.Path(t, name)
}

// srcTensor is a tensor of a synthetic source file.
type srcTensor struct {
	name string
	typ  quant.Type
	ne   []int64
}

// srcTensors is a small llama-shaped model: rows of 64 and 96 (which fit
// the legacy types), 40 (which fits none) and 256 (which fits K types),
// an f16 and a q8_0 tensor.
var srcTensors = []srcTensor{
	{"token_embd.weight", quant.F32, []int64{64, 40}},
	{"output_norm.weight", quant.F32, []int64{64}},
	{"output.weight", quant.F32, []int64{64, 40}},
	{"blk.0.attn_norm.weight", quant.F32, []int64{64}},
	{"blk.0.attn_v.weight", quant.F32, []int64{64, 32}},
	{"blk.0.ffn_down.weight", quant.F32, []int64{96, 64}},
	{"blk.0.ffn_up.weight", quant.F32, []int64{256, 8}},
	{"blk.1.ffn_down.weight", quant.F32, []int64{40, 64}},
	{"blk.1.attn_q.weight", quant.F16, []int64{64, 64}},
	{"blk.1.attn_k.weight", quant.Q8_0, []int64{64, 32}},
}

// srcValues returns n seeded values: normal, with an occasional outlier
// as trained weights have.
func srcValues(r *rand.Rand, n int64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(0.05 * r.NormFloat64())
		if r.IntN(97) == 0 {
			v[i] *= 12
		}
	}
	return v
}

// encode returns v as type t.
func encode(t testing.TB, typ quant.Type, ne0 int64, v []float32) []byte {
	t.Helper()
	rs, err := typ.RowSize(ne0)
	if err != nil {
		t.Fatal(err)
	}
	rows := int64(len(v)) / ne0
	b := make([]byte, rs*rows)
	for r := range rows {
		if err := quant.QuantizeRow(typ, v[r*ne0:(r+1)*ne0], b[r*rs:(r+1)*rs]); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// writeSource writes the synthetic model to dir and returns its path.
// poison, when set, puts a NaN into that tensor.
func writeSource(t testing.TB, dir, poison string) string {
	t.Helper()
	w := gguf.NewWriter()
	for _, kv := range []struct {
		k string
		v any
	}{
		{"general.architecture", "llama"},
		{"general.name", "synthetic source"},
		{"general.file_type", uint32(0)},
		{"llama.block_count", uint32(2)},
		{"llama.attention.head_count", uint32(4)},
		{"llama.attention.head_count_kv", uint32(2)},
		{"tokenizer.ggml.tokens", []string{"a", "b", "c"}},
		{"tokenizer.ggml.scores", []float32{0, -1, -2}},
	} {
		if err := w.Add(kv.k, kv.v); err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(7, 11))
	for _, st := range srcTensors {
		n := int64(1)
		for _, x := range st.ne {
			n *= x
		}
		v := srcValues(r, n)
		if len(st.ne) == 1 {
			for i := range v {
				v[i] += 1
			}
		}
		if st.name == poison {
			v[n/2+3] = float32(math.NaN())
		}
		if err := w.AddTensor(st.name, st.typ, st.ne, encode(t, st.typ, st.ne[0], v)); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "src.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// openGGUF opens path, closing it when the test ends.
func openGGUF(t testing.TB, path string) *gguf.File {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// decode returns a tensor of f as float32s.
func decode(t testing.TB, f *gguf.File, name string) []float32 {
	t.Helper()
	ti, ok := f.TensorInfo(name)
	if !ok {
		t.Fatalf("no tensor %s", name)
	}
	data, err := f.TensorData(name)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(1)
	for _, x := range ti.Ne {
		n *= x
	}
	out := make([]float32, n)
	rs, err := ti.Type.RowSize(ti.Ne[0])
	if err != nil {
		t.Fatal(err)
	}
	for r := range n / ti.Ne[0] {
		if err := quant.DequantizeRow(ti.Type, data[r*rs:(r+1)*rs], out[r*ti.Ne[0]:(r+1)*ti.Ne[0]]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// u32 reads a uint32 key.
func u32(t testing.TB, f *gguf.File, key string) uint32 {
	t.Helper()
	v, ok := f.Get(key)
	if !ok || v.Type != gguf.TypeUint32 {
		t.Fatalf("key %s: %v (present %v), want a uint32", key, v, ok)
	}
	return v.Any().(uint32)
}
