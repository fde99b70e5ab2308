package gguf

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// allocBound is the most Parse may allocate for an input of n bytes.
func allocBound(n int) uint64 { return 16*uint64(n) + 64<<10 }

// allocated returns the bytes allocated while calling fn.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestParseAllocations feeds Parse the inputs that make it allocate most
// per input byte (many empty strings, empty arrays, tiny KVs and tiny
// tensors) and checks the allocation stays within allocBound.
func TestParseAllocations(t *testing.T) {
	const n = 20000
	manyStrings := (&builder{}).header(3, 0, 1)
	manyStrings.str("k", "k").u32("t", uint32(TypeArray)).u32("e", uint32(TypeString)).u64("n", n).zeros(8 * n)

	oneByteStrings := (&builder{}).header(3, 0, 1)
	oneByteStrings.str("k", "k").u32("t", uint32(TypeArray)).u32("e", uint32(TypeString)).u64("n", n)
	for range n {
		oneByteStrings.str("s", "x")
	}

	manyArrays := (&builder{}).header(3, 0, 1)
	manyArrays.str("k", "k").u32("t", uint32(TypeArray)).u32("e", uint32(TypeArray)).u64("n", n)
	for range n {
		manyArrays.u32("e", uint32(TypeUint8)).u64("n", 0)
	}

	manyKVs := (&builder{}).header(3, 0, n)
	for i := range n {
		manyKVs.str("k", string([]byte{byte(i), byte(i >> 8)})).u32("t", uint32(TypeUint8)).u8("v", 1)
	}

	// Alignment 1 and 1-byte i8 tensors with 1-byte names.
	manyTensors := (&builder{}).header(3, n, 1)
	manyTensors.str("k", KeyAlignment).u32("t", uint32(TypeUint32)).u32("v", 1)
	for i := range n {
		manyTensors.tensor(string([]byte{byte(i), byte(i >> 8)}), uint32(quant.I8), uint64(i), 1)
	}
	manyTensors.zeros(n)

	for name, b := range map[string][]byte{
		"empty strings": manyStrings.b, "1-byte strings": oneByteStrings.b, "empty arrays": manyArrays.b,
		"1-byte KVs": manyKVs.b, "1-byte tensors": manyTensors.b,
	} {
		var err error
		got := allocated(func() { _, err = Parse(b) })
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s: %d input bytes, %d allocated (%.1f per byte)", name, len(b), got, float64(got)/float64(len(b)))
		if got > allocBound(len(b)) {
			t.Errorf("%s: %d input bytes allocated %d, over the bound %d", name, len(b), got, allocBound(len(b)))
		}
	}
}

// miniModel is a small valid file made from stories260K's metadata, a
// few tokens and two tensors, as a realistic fuzz seed.
func miniModel(t testing.TB) []byte {
	raw, err := os.ReadFile(testFile(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter()
	for _, kv := range f.KV {
		v := kv.Value
		switch kv.Key {
		case "tokenizer.ggml.tokens":
			s, _ := f.Strings(kv.Key)
			err = w.Add(kv.Key, s[:8])
		case "tokenizer.ggml.scores":
			s, _ := f.Float32s(kv.Key)
			err = w.Add(kv.Key, s[:8])
		case "tokenizer.ggml.token_type":
			s, _ := f.Int32s(kv.Key)
			err = w.Add(kv.Key, s[:8])
		default:
			err = w.Add(kv.Key, v)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	norm, _ := f.TensorData("output_norm.weight")
	if err := w.AddTensor("output_norm.weight", quant.F32, []int64{64}, norm); err != nil {
		t.Fatal(err)
	}
	if err := w.AddTensor("blk.0.attn_q.weight", quant.F16, []int64{8, 2}, make([]byte, 32)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func FuzzParse(f *testing.F) {
	f.Add(miniModel(f))
	for _, name := range []string{"stories260K.gguf", "llama-2-tiny-random.gguf", "ggml-vocab-gpt-2.gguf", "tinyllamas-stories-260k-f32.ggufv1.gguf"} {
		raw, err := os.ReadFile(testFile(f, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw[:1024])
		f.Add(raw[:4096])
	}
	w, _ := buildAll(f, 0)
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	for _, b := range smallFiles() {
		f.Add(b.b)
	}
	for _, c := range corruptCases() {
		f.Add(c.b)
	}

	f.Fuzz(func(t *testing.T, b []byte) {
		var file *File
		var err error
		if got := allocated(func() { file, err = Parse(b) }); got > allocBound(len(b)) {
			t.Fatalf("Parse of %d bytes allocated %d, over the bound %d", len(b), got, allocBound(len(b)))
		}
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "gguf: ") {
				t.Fatalf("error %v (%T) is not a *FormatError", err, err)
			}
			return
		}
		checkInvariants(t, file, b)
		checkRewrite(t, file)
	})
}

// checkInvariants checks what Parse promises of a file it accepts.
func checkInvariants(t *testing.T, f *File, b []byte) {
	t.Helper()
	if f.Version != 2 && f.Version != 3 {
		t.Fatalf("version %d", f.Version)
	}
	if a := f.Alignment; a < 1 || a&(a-1) != 0 || f.DataOffset%a != 0 || f.DataOffset < 24 {
		t.Fatalf("alignment %d, data at %d", a, f.DataOffset)
	}
	for i, kv := range f.KV {
		if v, ok := f.Get(kv.Key); !ok || !v.Equal(kv.Value) {
			t.Fatalf("KV %d %q: Get disagrees", i, kv.Key)
		}
		_ = kv.Value.String()
	}
	type span struct{ start, end int64 }
	var spans []span
	for i, ti := range f.Tensors {
		if got, ok := f.TensorInfo(ti.Name); !ok || got != ti {
			t.Fatalf("tensor %d %q: TensorInfo disagrees", i, ti.Name)
		}
		if ti.NDims < 1 || ti.NDims > 4 || !ti.Type.Valid() {
			t.Fatalf("tensor %d: %+v", i, ti)
		}
		rows := int64(1)
		for j, n := range ti.Ne {
			if n < 1 || j >= ti.NDims && n != 1 {
				t.Fatalf("tensor %d: shape %v with %d dims", i, ti.Ne, ti.NDims)
			}
			if j > 0 {
				rows *= n
			}
		}
		rs, err := ti.Type.RowSize(ti.Ne[0])
		if err != nil || ti.Size != rs*rows || ti.Offset%f.Alignment != 0 {
			t.Fatalf("tensor %d: %+v (row size %d, %v)", i, ti, rs, err)
		}
		start := f.DataOffset + ti.Offset
		if start < 0 || start+ti.Size > int64(len(b)) {
			t.Fatalf("tensor %d: [%d, %d) outside %d bytes", i, start, start+ti.Size, len(b))
		}
		spans = append(spans, span{start, start + ti.Size})
		data, err := f.TensorData(ti.Name)
		if err != nil || !bytes.Equal(data, b[start:start+ti.Size]) {
			t.Fatalf("tensor %d: TensorData wrong (%v)", i, err)
		}
		if tt, err := f.Tensor(ti.Name); err == nil {
			if hb, err := tt.HostBytes(); err != nil || !bytes.Equal(hb, data) {
				t.Fatalf("tensor %d: Tensor bytes wrong (%v)", i, err)
			}
		} else if !strings.Contains(err.Error(), "aligned") {
			t.Fatalf("tensor %d: %v", i, err)
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return int(a.start - b.start) })
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			t.Fatalf("tensors overlap: %v", spans)
		}
	}
	if err := Dump(io.Discard, f); err != nil {
		t.Fatal(err)
	}
}

// checkRewrite writes f's metadata and tensors through a Writer and
// checks that they read back the same, unless the Writer refuses them for
// a reason the reader tolerates (an empty key, a long tensor name).
func checkRewrite(t *testing.T, f *File) {
	t.Helper()
	w := NewWriter()
	w.SetAlignment(f.Alignment)
	for _, kv := range f.KV {
		if err := w.Add(kv.Key, kv.Value); err != nil {
			if kv.Key == "" || len(kv.Key) > maxKeyLen {
				return
			}
			t.Fatalf("Add %q of a value the reader accepted: %v", kv.Key, err)
		}
	}
	for _, ti := range f.Tensors {
		data, _ := f.TensorData(ti.Name)
		if err := w.AddTensor(ti.Name, ti.Type, ti.Ne[:ti.NDims], data); err != nil {
			if ti.Name == "" || len(ti.Name) > maxNameLen {
				return
			}
			t.Fatalf("AddTensor %q of a tensor the reader accepted: %v", ti.Name, err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	g, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("rewritten file does not parse: %v", err)
	}
	if g.Alignment != f.Alignment || len(g.KV) != len(f.KV) || len(g.Tensors) != len(f.Tensors) {
		t.Fatalf("rewritten: alignment %d, %d KV, %d tensors; want %d, %d, %d",
			g.Alignment, len(g.KV), len(g.Tensors), f.Alignment, len(f.KV), len(f.Tensors))
	}
	for i, kv := range f.KV {
		if g.KV[i].Key != kv.Key || !g.KV[i].Value.Equal(kv.Value) {
			t.Fatalf("KV %d: rewrote %q = %v, read %q = %v", i, kv.Key, kv.Value, g.KV[i].Key, g.KV[i].Value)
		}
	}
	for i, ti := range f.Tensors {
		gi := g.Tensors[i]
		a, _ := f.TensorData(ti.Name)
		b, _ := g.TensorData(ti.Name)
		if gi.Name != ti.Name || gi.Type != ti.Type || gi.Ne != ti.Ne || gi.NDims != ti.NDims || !bytes.Equal(a, b) {
			t.Fatalf("tensor %d: rewrote %+v, read %+v", i, ti, gi)
		}
	}
}
