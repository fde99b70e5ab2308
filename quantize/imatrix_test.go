package quantize

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/kernbench/kernbench/imatrix"
	"github.com/kernbench/kernbench/quant"
)

// TestQuantizeImatrix: with an importance matrix, a tensor that has an
// entry is quantized row by row with its weights (the bytes
// quant.QuantizeRowWeighted gives, not QuantizeRow's), a tensor without
// one as without a matrix, and the file records the matrix as
// llama-quantize does.
func TestQuantizeImatrix(t *testing.T) {
	dir := t.TempDir()
	src := writeSource(t, dir, "")
	in := openGGUF(t, src)
	w := make([]float32, 256)
	for i := range w {
		w[i] = float32(i%7) + 0.25
	}
	m := &imatrix.Matrix{
		Entries:    map[string]*imatrix.Entry{"blk.0.ffn_up.weight": {Sums: w, Counts: []int64{1}}},
		Datasets:   []string{"wiki.test.raw"},
		ChunkCount: 3,
		ChunkSize:  512,
	}
	p := Params{Scheme: mustScheme(t, "q4_K_S"), Imatrix: m, ImatrixFile: "some/imatrix.gguf", Pure: true}
	out := filepath.Join(dir, "out.gguf")
	if _, err := Quantize(in, out, p, nil); err != nil {
		t.Fatal(err)
	}
	f := openGGUF(t, out)
	got, err := f.TensorData("blk.0.ffn_up.weight")
	if err != nil {
		t.Fatal(err)
	}
	x := decode(t, in, "blk.0.ffn_up.weight")
	rs, _ := quant.Q4_K.RowSize(256)
	want, plain := make([]byte, 8*rs), make([]byte, 8*rs)
	for r := range 8 {
		if err := quant.QuantizeRowWeighted(quant.Q4_K, x[256*r:256*(r+1)], want[r*int(rs):(r+1)*int(rs)], w); err != nil {
			t.Fatal(err)
		}
		quant.QuantizeRow(quant.Q4_K, x[256*r:256*(r+1)], plain[r*int(rs):(r+1)*int(rs)])
	}
	if !bytes.Equal(got, want) {
		t.Error("blk.0.ffn_up.weight is not the weighted quantization of its rows")
	}
	if bytes.Equal(want, plain) {
		t.Error("the weighted and plain quantizations agree: the test cannot tell them apart")
	}
	if s, _ := f.String(KeyImatrixFile); s != "some/imatrix.gguf" {
		t.Errorf("%s = %q", KeyImatrixFile, s)
	}
	if s, _ := f.String(KeyImatrixDataset); s != "wiki.test.raw" {
		t.Errorf("%s = %q", KeyImatrixDataset, s)
	}
	if n := u32(t, f, KeyImatrixEntries); n != 1 {
		t.Errorf("%s = %d", KeyImatrixEntries, n)
	}
	if n := u32(t, f, KeyImatrixChunks); n != 3 {
		t.Errorf("%s = %d", KeyImatrixChunks, n)
	}
}
