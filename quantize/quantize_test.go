package quantize

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// maxErr returns the largest error a round trip through typ may make on
// block (32 consecutive elements of a row), from the format's definition:
// q8_0 rounds to steps of amax/127 (error half a step); q4_0 and q5_0 use
// steps of amax/8 and amax/16 with the code of +amax clamped, costing up to
// one step; each adds the f16 rounding of its scale.
func maxErr(typ quant.Type, block []float32) float64 {
	var amax float64
	for _, v := range block {
		amax = math.Max(amax, math.Abs(float64(v)))
	}
	switch typ {
	case quant.Q8_0:
		return amax/254 + amax/1024
	case quant.Q4_0:
		return amax/8 + amax/256
	case quant.Q5_0:
		return amax/16 + amax/256
	}
	return math.Inf(1)
}

// TestQuantizeRoundTrip quantizes the synthetic model and decodes every
// tensor of the result back: converted tensors must lie within their
// format's error bound of the source, copied ones must be the same bytes.
// It also checks the metadata: general.file_type replaced where it was,
// general.quantization_version added, everything else unchanged.
func TestQuantizeRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := openGGUF(t, writeSource(t, dir, ""))
	for _, name := range []string{"q8_0", "q4_0", "q5_0"} {
		t.Run(name, func(t *testing.T) {
			s := mustScheme(t, name)
			out := filepath.Join(dir, name+".gguf")
			var log bytes.Buffer
			sum, err := Quantize(src, out, Params{Scheme: s, Threads: 3}, &log)
			if err != nil {
				t.Fatal(err)
			}
			dst := openGGUF(t, out)
			if len(dst.Tensors) != len(src.Tensors) {
				t.Fatalf("%d tensors, want %d", len(dst.Tensors), len(src.Tensors))
			}
			for i, d := range sum.Decisions {
				ti := dst.Tensors[i]
				if ti.Name != d.Name || ti.Type != d.To || ti.Ne != src.Tensors[i].Ne {
					t.Errorf("tensor %d: %s %v %v, want %s %v %v", i, ti.Name, ti.Type, ti.Ne, d.Name, d.To, src.Tensors[i].Ne)
					continue
				}
				if !strings.Contains(log.String(), d.Name) {
					t.Errorf("log has no line for %s", d.Name)
				}
				if !d.Convert() {
					a, _ := src.TensorData(d.Name)
					b, _ := dst.TensorData(d.Name)
					if !bytes.Equal(a, b) {
						t.Errorf("%s: copied tensor's bytes differ", d.Name)
					}
					continue
				}
				want, got := decode(t, src, d.Name), decode(t, dst, d.Name)
				if d.To == quant.F16 {
					for j := range want {
						if e := math.Abs(float64(got[j] - want[j])); e > math.Abs(float64(want[j]))/2048+1e-7 {
							t.Fatalf("%s[%d]: %v -> f16 %v", d.Name, j, want[j], got[j])
						}
					}
					continue
				}
				if d.Chosen != s.Default && d.Chosen != quant.Q6_K {
					t.Errorf("%s: chose %v, neither the default nor the output rule's", d.Name, d.Chosen)
				}
				if d.To == quant.Q6_K {
					continue // the output rule's type: checked by the model tests
				}
				for j := 0; j < len(want); j += 32 {
					lim := maxErr(d.To, want[j:j+32])
					for k := j; k < j+32; k++ {
						if e := math.Abs(float64(got[k] - want[k])); e > lim {
							t.Fatalf("%s[%d]: %v -> %v %v, error %.3g > bound %.3g", d.Name, k, want[k], d.To, got[k], e, lim)
						}
					}
				}
			}
			// Norms stay f32, byte for byte.
			for _, n := range []string{"output_norm.weight", "blk.0.attn_norm.weight"} {
				if ti, _ := dst.TensorInfo(n); ti.Type != quant.F32 {
					t.Errorf("%s has type %v, want f32", n, ti.Type)
				}
			}
			// The row of 40 fits no legacy type: f16, said so.
			if ti, _ := dst.TensorInfo("blk.1.ffn_down.weight"); ti.Type != quant.F16 {
				t.Errorf("blk.1.ffn_down.weight has type %v, want the f16 fallback", ti.Type)
			}
			if !strings.Contains(log.String(), "FALLBACK from "+name+": rows of 40") {
				t.Errorf("log does not report the fallback of the 40-wide tensor:\n%s", log.String())
			}
			if got := u32(t, dst, KeyFileType); got != uint32(s.FileType) {
				t.Errorf("general.file_type = %d, want %d", got, s.FileType)
			}
			if got := u32(t, dst, KeyQuantizationVersion); got != QuantizationVersion {
				t.Errorf("general.quantization_version = %d, want %d", got, QuantizationVersion)
			}
			if len(dst.KV) != len(src.KV)+1 {
				t.Errorf("%d keys, want %d (the source's and the quantization version)", len(dst.KV), len(src.KV)+1)
			}
			for i, kv := range src.KV {
				if i >= len(dst.KV) || dst.KV[i].Key != kv.Key {
					t.Errorf("key %d is not %s: order changed", i, kv.Key)
					continue
				}
				if kv.Key != KeyFileType && !dst.KV[i].Value.Equal(kv.Value) {
					t.Errorf("key %s = %v, want %v", kv.Key, dst.KV[i].Value, kv.Value)
				}
			}
			// The totals add up.
			var in, outB int64
			for i := range src.Tensors {
				in += src.Tensors[i].Size
				outB += dst.Tensors[i].Size
			}
			if sum.BytesIn != in || sum.BytesOut != outB {
				t.Errorf("summary sizes %d -> %d, files have %d -> %d", sum.BytesIn, sum.BytesOut, in, outB)
			}
			st, err := os.Stat(out)
			if err != nil || st.Size() != sum.FileSize {
				t.Errorf("file size %v (%v), summary %d", st.Size(), err, sum.FileSize)
			}
		})
	}
}

// TestQuantizeThreads: the output does not depend on the thread count.
func TestQuantizeThreads(t *testing.T) {
	dir := t.TempDir()
	src := openGGUF(t, writeSource(t, dir, ""))
	var files [][]byte
	for _, n := range []int{1, 4} {
		out := filepath.Join(dir, "q.gguf")
		if _, err := Quantize(src, out, Params{Scheme: mustScheme(t, "q4_K_M"), Threads: n}, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("1 and 4 threads wrote different files")
	}
}

// TestQuantizeRequantize: a quantized source tensor is converted, counted
// and warned about.
func TestQuantizeRequantize(t *testing.T) {
	dir := t.TempDir()
	src := openGGUF(t, writeSource(t, dir, ""))
	var log bytes.Buffer
	sum, err := Quantize(src, filepath.Join(dir, "out.gguf"), Params{Scheme: mustScheme(t, "q4_0")}, &log)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Requantized != 1 {
		t.Errorf("%d requantized tensors, want 1 (blk.1.attn_k.weight)", sum.Requantized)
	}
	if !strings.Contains(log.String(), "warning: requantizing from q8_0") || !strings.Contains(log.String(), "were already quantized") {
		t.Errorf("no requantization warning:\n%s", log.String())
	}
	// To q8_0 the q8_0 tensor is copied, not requantized.
	sum, err = Quantize(src, filepath.Join(dir, "out8.gguf"), Params{Scheme: mustScheme(t, "q8_0")}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Requantized != 0 {
		t.Errorf("q8_0 -> q8_0: %d requantized tensors, want 0", sum.Requantized)
	}
}

// TestQuantizeNonFinite: a NaN is an error naming the tensor, and no
// output file (or temporary file) is left behind.
func TestQuantizeNonFinite(t *testing.T) {
	dir := t.TempDir()
	src := openGGUF(t, writeSource(t, dir, "blk.0.ffn_down.weight"))
	out := filepath.Join(dir, "out.gguf")
	_, err := Quantize(src, out, Params{Scheme: mustScheme(t, "q8_0")}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "blk.0.ffn_down.weight row") || !strings.Contains(err.Error(), "NaN") {
		t.Fatalf("error %v, want one naming blk.0.ffn_down.weight's row and the NaN", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left in the directory: %v", entries)
	}
}

// TestPlanBadOverride: an override that is no weight type is refused.
func TestPlanBadOverride(t *testing.T) {
	src := openGGUF(t, writeSource(t, t.TempDir(), ""))
	for _, p := range []Params{
		{Scheme: mustScheme(t, "q4_0"), OutputType: typePtr(quant.Q8_K)},
		{Scheme: mustScheme(t, "q4_0"), TokenEmbdType: typePtr(quant.I32)},
		{},
	} {
		if _, err := Plan(src, p); err == nil {
			t.Errorf("Plan(%+v) succeeded", p)
		}
	}
}

// TestModelOf reads the rule facts from a file.
func TestModelOf(t *testing.T) {
	src := openGGUF(t, writeSource(t, t.TempDir(), ""))
	m, err := ModelOf(src)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Model{NLayer: 2, GQA: 2, HasOutput: true}); m != want {
		t.Errorf("ModelOf = %+v, want %+v", m, want)
	}
}

// TestWriteFile writes tensors through the streaming writer and reads
// them back; a failing fill leaves nothing behind.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.gguf")
	specs := []TensorSpec{
		{"a", quant.F32, []int64{3, 2}},
		{"b", quant.Q8_0, []int64{64}},
		{"c", quant.F16, []int64{5, 1, 2}},
	}
	fill := func(i int, buf []byte) error {
		for j := range buf {
			buf[j] = byte(i*31 + j)
		}
		return nil
	}
	md := []Entry{{"general.architecture", "test"}, {"x.n", uint32(5)}}
	size, err := WriteFile(path, md, specs, fill)
	if err != nil {
		t.Fatal(err)
	}
	f := openGGUF(t, path)
	st, _ := os.Stat(path)
	if st.Size() != size {
		t.Errorf("WriteFile returned size %d, file has %d", size, st.Size())
	}
	if f.Arch() != "test" || u32(t, f, "x.n") != 5 {
		t.Errorf("metadata %v", f.KV)
	}
	for i, s := range specs {
		data, err := f.TensorData(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]byte, len(data))
		fill(i, want)
		if !bytes.Equal(data, want) {
			t.Errorf("tensor %s: data differs", s.Name)
		}
	}

	boom := errors.New("boom")
	_, err = WriteFile(filepath.Join(dir, "x.gguf"), md, specs, func(i int, buf []byte) error {
		if i == 2 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("fill error: got %v", err)
	}
	for _, bad := range [][]TensorSpec{
		{{"a", quant.Q4_0, []int64{20}}},
		{{"a", quant.F32, nil}},
		{{"a", quant.F32, []int64{2, 0}}},
		{{"a", quant.F32, []int64{1 << 40, 1 << 40}}},
	} {
		if _, err := WriteFile(filepath.Join(dir, "y.gguf"), md, bad, fill); err == nil {
			t.Errorf("WriteFile(%v) succeeded", bad)
		}
	}
	if _, err := WriteFile(filepath.Join(dir, "z.gguf"), []Entry{{"k", 1}}, specs, fill); err == nil {
		t.Error("WriteFile with a Go int value succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left behind: %v", entries)
	}
}

// TestConvertRowsBad: mismatched buffers are an error, not a panic.
func TestConvertRowsBad(t *testing.T) {
	if err := ConvertRows("x", quant.F32, quant.Q8_0, 32, make([]byte, 128), make([]byte, 33), 2); err == nil {
		t.Error("short destination accepted")
	}
	if err := ConvertRows("x", quant.F32, quant.Q8_0, 30, make([]byte, 120), make([]byte, 34), 2); err == nil {
		t.Error("row of 30 accepted for q8_0")
	}
}
