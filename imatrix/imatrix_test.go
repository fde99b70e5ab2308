package imatrix

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// sample returns a matrix with a dense entry, an expert entry with one
// expert unused, and metadata.
func sample() *Matrix {
	return &Matrix{
		Entries: map[string]*Entry{
			"blk.0.attn_q.weight":      {Sums: []float32{1, 4, 9, 16}, Counts: []int64{2}},
			"blk.0.ffn_up_exps.weight": {Sums: []float32{2, 2, 0, 0, 6, 3}, Counts: []int64{2, 0, 3}},
		},
		Datasets:   []string{"wiki.test.raw"},
		ChunkCount: 1,
		ChunkSize:  2,
	}
}

func TestGGUFRoundTrip(t *testing.T) {
	m := sample()
	var b bytes.Buffer
	if err := m.WriteGGUF(&b); err != nil {
		t.Fatal(err)
	}
	got, err := Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("read back %+v, want %+v", got, m)
	}
	// llama-quantize's weights: sums over counts, 1 for an unused expert.
	for name, want := range map[string][]float32{
		"blk.0.attn_q.weight":      {0.5, 2, 4.5, 8},
		"blk.0.ffn_up_exps.weight": {1, 1, 1, 1, 2, 1},
	} {
		if w := got.Weights(name); !reflect.DeepEqual(w, want) {
			t.Errorf("Weights(%s) = %v, want %v", name, w, want)
		}
	}
	if w := got.Weights("output.weight"); w != nil {
		t.Errorf("Weights of a missing entry = %v, want nil", w)
	}
}

func TestLegacyRoundTrip(t *testing.T) {
	m := sample()
	m.Entries["blk.1.unused.weight"] = &Entry{Sums: []float32{5}, Counts: []int64{0}}
	var b bytes.Buffer
	if err := m.WriteLegacy(&b); err != nil {
		t.Fatal(err)
	}
	got, err := Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !got.Legacy || got.ChunkCount != 1 || !reflect.DeepEqual(got.Datasets, m.Datasets) {
		t.Errorf("metadata %+v", got)
	}
	if _, ok := got.Entries["blk.1.unused.weight"]; ok {
		t.Error("an entry with no rows was written")
	}
	// ncall = ceil(max count / chunk size): 1 and 2; values mean * ncall.
	want := map[string]*Entry{
		"blk.0.attn_q.weight":      {Sums: []float32{0.5, 2, 4.5, 8}, Counts: []int64{1}},
		"blk.0.ffn_up_exps.weight": {Sums: []float32{2, 2, 2, 2, 4, 2}, Counts: []int64{2}},
	}
	if !reflect.DeepEqual(got.Entries, want) {
		t.Errorf("entries %v, want %v", got.Entries, want)
	}
	// Weights divide by ncall: the same weights as from the GGUF file.
	if w, want := got.Weights("blk.0.ffn_up_exps.weight"), []float32{1, 1, 1, 1, 2, 1}; !reflect.DeepEqual(w, want) {
		t.Errorf("legacy weights %v, want %v", w, want)
	}
}

// legacyFile builds a legacy file from parts.
func legacyFile(parts ...any) []byte {
	var b bytes.Buffer
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			b.WriteString(v)
		default:
			binary.Write(&b, binary.LittleEndian, v)
		}
	}
	return b.Bytes()
}

func TestParseErrors(t *testing.T) {
	good := legacyFile(int32(1), int32(1), "a", int32(1), int32(2), []float32{1, 2})
	if _, err := Parse(good); err != nil {
		t.Fatalf("minimal legacy file: %v", err)
	}
	var ggufNoMeta bytes.Buffer
	{
		m := sample()
		m.WriteGGUF(&ggufNoMeta)
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "truncated at byte 0 reading the entry count"},
		{"no entries", legacyFile(int32(0)), "entry count 0: no data"},
		{"huge count", legacyFile(int32(1<<30), int32(0)), "cannot fit"},
		{"negative name length", legacyFile(int32(1), int32(-5), "abcdefghijklmnop"), "name of entry 1 of -5 bytes"},
		{"long name", legacyFile(int32(1), int32(100), "abcdefghijklmnop"), "name of entry 1 of 100 bytes"},
		{"no values", legacyFile(int32(1), int32(1), "a", int32(1), int32(0), "xxxx"), `entry "a" has 0 values`},
		{"too many values", legacyFile(int32(1), int32(1), "a", int32(1), int32(9), []float32{1}), "claims 9 values"},
		{"nan", legacyFile(int32(1), int32(1), "a", int32(1), int32(1), float32(math.NaN())), "is NaN"},
		{"duplicate", legacyFile(int32(2), int32(1), "a", int32(1), int32(1), float32(1), int32(1), "a", int32(1), int32(1), float32(1)), "a second entry"},
		{"short trailer", append(good[:len(good):len(good)], 1, 2), "truncated"},
		{"trailing bytes", append(legacyFile(int32(1), int32(1), "a", int32(1), int32(1), float32(1), int32(1), int32(1), "d"), 9), "unexpected bytes"},
		{"bad gguf", []byte("GGUF\x03\x00\x00\x00"), "GGUF imatrix"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.b)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse: %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestGGUFNeedsMetadata(t *testing.T) {
	m := sample()
	var b bytes.Buffer
	if err := m.WriteGGUF(&b); err != nil {
		t.Fatal(err)
	}
	// Rename the chunk_size key so it is missing (same length).
	raw := bytes.Replace(b.Bytes(), []byte(KeyChunkSize), []byte("imatrix.chunk_sizX"), 1)
	if _, err := Parse(raw); err == nil || !strings.Contains(err.Error(), "missing imatrix metadata") {
		t.Errorf("Parse without chunk_size: %v", err)
	}
	// A counts tensor renamed away leaves its sums unpaired.
	raw = bytes.Replace(b.Bytes(), []byte("blk.0.attn_q.weight.counts"), []byte("blk.0.attn_q.weight.countX"), 1)
	if _, err := Parse(raw); err == nil || !strings.Contains(err.Error(), `"blk.0.attn_q.weight" has .in_sum2 but not .counts`) {
		t.Errorf("Parse with unpaired sums: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	var g, l bytes.Buffer
	sample().WriteGGUF(&g)
	sample().WriteLegacy(&l)
	f.Add(g.Bytes())
	f.Add(l.Bytes())
	f.Add(legacyFile(int32(1), int32(1), "a", int32(1), int32(2), []float32{1, 2}))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			return
		}
		for _, name := range m.Names() {
			e := m.Entries[name]
			if len(e.Counts) == 0 || len(e.Sums)%len(e.Counts) != 0 {
				t.Fatalf("entry %q: %d sums, %d counts", name, len(e.Sums), len(e.Counts))
			}
			if w := m.Weights(name); len(w) != len(e.Sums) {
				t.Fatalf("entry %q: %d weights for %d sums", name, len(w), len(e.Sums))
			}
		}
		if !m.Legacy {
			var out bytes.Buffer
			if err := m.WriteGGUF(&out); err != nil {
				t.Fatalf("WriteGGUF of a parsed matrix: %v", err)
			}
			m2, err := Parse(out.Bytes())
			if err != nil || !reflect.DeepEqual(m2.Entries, m.Entries) {
				t.Fatalf("GGUF round trip: %v", err)
			}
		}
	})
}

// tensor returns an f32 tensor of shape ne holding v, or i32 ids.
func tensor(t *testing.T, name string, typ quant.Type, ne []int64, v any) *ops.Tensor {
	t.Helper()
	x, err := ops.NewTensor(name, typ, ne...)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, v)
	x.Buffer = ops.WrapHostBytes(b.Bytes())
	return x
}

func TestCollector(t *testing.T) {
	c := NewCollector(4)
	c.MinRows = 2
	// Dense: a [3, 2] weight, activations 3 columns x 4 rows.
	w := tensor(t, "blk.0.attn_q.weight", quant.F32, []int64{3, 2}, make([]float32, 6))
	x := tensor(t, "x", quant.F32, []int64{3, 4}, []float32{1, 2, 3, -1, 0, 1, 2, 2, 2, 0.5, 0, 0})
	mm, err := ops.MulMat(w, x)
	if err != nil {
		t.Fatal(err)
	}
	// Skipped: too few rows, and a weight outside the layers.
	x1 := tensor(t, "x1", quant.F32, []int64{3, 1}, []float32{9, 9, 9})
	mm1, _ := ops.MulMat(w, x1)
	wo := tensor(t, "output.weight", quant.F32, []int64{3, 2}, make([]float32, 6))
	mmo, _ := ops.MulMat(wo, x)
	// Experts: 3 experts of [2, 1], 2 used per token, 2 tokens, b1 = 1.
	we := tensor(t, "blk.0.ffn_up_exps.weight", quant.F32, []int64{2, 1, 3}, make([]float32, 6))
	xe := tensor(t, "xe", quant.F32, []int64{2, 1, 2}, []float32{1, 2, 3, 4})
	ids := tensor(t, "ids", quant.I32, []int64{2, 2}, []int32{0, 2, 2, 0})
	mid, err := ops.MulMatID(we, xe, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []*ops.Tensor{mm, mm1, mmo, mid, mm} {
		if err := c.Observe(n); err != nil {
			t.Fatal(err)
		}
	}
	m := c.Matrix()
	want := map[string]*Entry{
		// Two passes over x: column sums of squares 1+1+4+0.25 = 6.25, 4+0+4+0 = 8, 9+1+4+0 = 14.
		"blk.0.attn_q.weight": {Sums: []float32{12.5, 16, 28}, Counts: []int64{8}},
		// Token 0 (1,2) to experts 0 and 2, token 1 (3,4) to 2 and 0.
		"blk.0.ffn_up_exps.weight": {Sums: []float32{10, 20, 0, 0, 10, 20}, Counts: []int64{2, 0, 2}},
	}
	if !reflect.DeepEqual(m.Entries, want) {
		t.Errorf("entries %v, want %v", m.Entries, want)
	}
	if m.ChunkCount != 2 || m.ChunkSize != 4 {
		t.Errorf("chunk count %d size %d, want 2 and 4", m.ChunkCount, m.ChunkSize)
	}
	// A bad expert id is an error.
	bad := tensor(t, "ids", quant.I32, []int64{2, 2}, []int32{0, 3, 2, 0})
	midBad, _ := ops.MulMatID(we, xe, bad)
	if err := c.Observe(midBad); err == nil || !strings.Contains(err.Error(), "outside [0, 3)") {
		t.Errorf("bad id: %v", err)
	}
}
