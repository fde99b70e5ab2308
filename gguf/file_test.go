package gguf

import (
	"bytes"
	"errors"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/kernbench/kernbench/quant"
)

func getterFile(t *testing.T) *File {
	t.Helper()
	w := NewWriter()
	for _, kv := range []struct {
		k string
		v any
	}{
		{"u8", uint8(7)}, {"i32.pos", int32(12)}, {"i32.neg", int32(-3)}, {"u64.max", uint64(math.MaxUint64)},
		{"i64.min", int64(math.MinInt64)}, {"f32", float32(0.25)}, {"f64", 1e100}, {"b", true}, {"s", "llama"},
		{"general.architecture", "mamba"},
		{"a.str", []string{"a", "b"}}, {"a.f32", []float32{1.5, -2}}, {"a.f64", []float64{0.1, 1e300}},
		{"a.i32", []int32{-1, 5}}, {"a.u8", []uint8{0, 255}}, {"a.i64.big", []int64{1, 1 << 40}},
		{"a.u32.big", []uint32{math.MaxUint32}}, {"a.bool", []bool{true}}, {"a.a", [][]int32{{1}}},
	} {
		if err := w.Add(kv.k, kv.v); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestGetters(t *testing.T) {
	f := getterFile(t)
	call := func(get, key string) (any, error) {
		switch get {
		case "String":
			return f.String(key)
		case "Uint":
			return f.Uint(key)
		case "Int":
			return f.Int(key)
		case "Float":
			return f.Float(key)
		case "Bool":
			return f.Bool(key)
		case "Strings":
			return f.Strings(key)
		case "Float32s":
			return f.Float32s(key)
		case "Int32s":
			return f.Int32s(key)
		}
		panic(get)
	}
	tests := []struct {
		get, key string
		want     any
		err      error  // wrapped error when failing
		msg      string // substring of the error
	}{
		{"String", "s", "llama", nil, ""},
		{"String", "u8", nil, ErrKeyType, `key "u8": key has another type: it holds a uint8, not a string`},
		{"String", "missing", nil, ErrKeyNotFound, `key "missing": key not found`},
		{"Uint", "u8", uint64(7), nil, ""},
		{"Uint", "i32.pos", uint64(12), nil, ""},
		{"Uint", "u64.max", uint64(math.MaxUint64), nil, ""},
		{"Uint", "i32.neg", nil, ErrKeyType, "the int32 -3, which is negative"},
		{"Uint", "f32", nil, ErrKeyType, "it holds a float32, not an integer"},
		{"Uint", "a.i32", nil, ErrKeyType, "it holds a []int32"},
		{"Int", "i32.neg", int64(-3), nil, ""},
		{"Int", "i64.min", int64(math.MinInt64), nil, ""},
		{"Int", "u8", int64(7), nil, ""},
		{"Int", "u64.max", nil, ErrKeyType, "overflows int64"},
		{"Int", "b", nil, ErrKeyType, "it holds a bool"},
		{"Float", "f32", 0.25, nil, ""},
		{"Float", "f64", 1e100, nil, ""},
		{"Float", "i32.neg", -3.0, nil, ""},
		{"Float", "s", nil, ErrKeyType, "not a number"},
		{"Bool", "b", true, nil, ""},
		{"Bool", "u8", nil, ErrKeyType, "not a bool"},
		{"Strings", "a.str", []string{"a", "b"}, nil, ""},
		{"Strings", "s", nil, ErrKeyType, "not an array of strings"},
		{"Strings", "a.f32", nil, ErrKeyType, "it holds a []float32"},
		{"Float32s", "a.f32", []float32{1.5, -2}, nil, ""},
		{"Float32s", "a.f64", []float32{0.1, float32(math.Inf(1))}, nil, ""},
		{"Float32s", "a.i32", []float32{-1, 5}, nil, ""},
		{"Float32s", "a.str", nil, ErrKeyType, "not an array of numbers"},
		{"Float32s", "a.bool", nil, ErrKeyType, "[]bool"},
		{"Int32s", "a.i32", []int32{-1, 5}, nil, ""},
		{"Int32s", "a.u8", []int32{0, 255}, nil, ""},
		{"Int32s", "a.i64.big", nil, ErrKeyType, "element 1 (int64 1099511627776) does not fit in an int32"},
		{"Int32s", "a.u32.big", nil, ErrKeyType, "element 0 (uint32 4294967295)"},
		{"Int32s", "a.f32", nil, ErrKeyType, "not an array of integers"},
		{"Int32s", "a.a", nil, ErrKeyType, "[]array"},
		{"Int32s", "missing", nil, ErrKeyNotFound, "key not found"},
	}
	for _, tc := range tests {
		got, err := call(tc.get, tc.key)
		if tc.err != nil {
			if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%s(%q): %v, want %v containing %q", tc.get, tc.key, err, tc.err, tc.msg)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s(%q) = %#v, %v; want %#v", tc.get, tc.key, got, err, tc.want)
		}
	}
	if f.Arch() != "mamba" {
		t.Errorf("Arch() = %q", f.Arch())
	}
	if v, ok := f.Get("a.a"); !ok || v.Len() != 1 || v.Index(0).Len() != 1 || v.Index(0).Index(0).Any() != int32(1) {
		t.Errorf("Get(a.a) = %v, %v", v, ok)
	}
	// Slices returned are copies: changing one changes nothing inside.
	s, _ := f.Strings("a.str")
	s[0] = "changed"
	x, _ := f.Float32s("a.f32")
	x[0] = 99
	if s2, _ := f.Strings("a.str"); s2[0] != "a" {
		t.Error("Strings returned the file's own slice")
	}
	if x2, _ := f.Float32s("a.f32"); x2[0] != 1.5 {
		t.Error("Float32s returned the file's own slice")
	}
}

func TestValueString(t *testing.T) {
	tokens := make([]string, 512)
	for i := range tokens {
		tokens[i] = strings.Repeat("t", i)
	}
	w := NewWriter()
	vals := []struct {
		v    any
		want string
	}{
		{uint8(7), "7"},
		{int16(-2), "-2"},
		{float32(1e-5), "1e-05"},
		{1e16, "1e+16"},
		{true, "true"},
		{"a\"b\n", `"a\"b\n"`},
		{[]int32{1, -2}, "[1 -2]"},
		{tokens, `["" "t" "tt" "ttt" "tttt" "ttttt" "tttttt" "ttttttt" ... (512 in all)]`},
		{[]string{strings.Repeat("x", 50)}, `["` + strings.Repeat("x", 40) + `"...]`},
		{[]string{"x" + strings.Repeat("é", 30)}, `["x` + strings.Repeat("é", 19) + `"...]`},
		{[][]uint8{{1}, {2, 3}}, "[[1] [2 3]]"},
		{[]float32{}, "[]"},
	}
	for i, c := range vals {
		if err := w.Add(string(rune('a'+i)), c.v); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range vals {
		if got := f.KV[i].Value.String(); got != c.want {
			t.Errorf("%v: String() = %s, want %s", c.v, got, c.want)
		}
	}
}

// TestTensorZeroCopy parses a buffer, writes into it, and sees the change
// through the tensor: the tensor is a view, not a copy.
func TestTensorZeroCopy(t *testing.T) {
	w := NewWriter()
	data := make([]byte, 4*6)
	if err := w.AddTensor("x", quant.F32, []int64{3, 2}, data); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	f, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	tt, err := f.Tensor("x")
	if err != nil {
		t.Fatal(err)
	}
	if tt.Nb != [4]int64{4, 12, 24, 24} || tt.Offset != 0 || tt.Buffer.Size() != int64(len(b))-f.DataOffset {
		t.Errorf("tensor %v nb %v offset %d buffer %d bytes", tt, tt.Nb, tt.Offset, tt.Buffer.Size())
	}
	copy(b[f.DataOffset+4:], []byte{0, 0, 0x80, 0x3f}) // 1.0f as element 1
	got := make([]byte, 4)
	if _, err := tt.Buffer.ReadAt(got, tt.Offset+4); err != nil || !bytes.Equal(got, []byte{0, 0, 0x80, 0x3f}) {
		t.Errorf("tensor does not see the file's bytes: %v %v", got, err)
	}
	if _, err := f.Tensor("y"); err == nil || !strings.Contains(err.Error(), `no tensor named "y"`) {
		t.Errorf("Tensor(y): %v", err)
	}
	if _, err := f.TensorData("y"); err == nil {
		t.Error("TensorData(y) succeeded")
	}

	// The same file one byte off its alignment: the F32 data cannot be
	// read in place, which Tensor reports, while TensorData still works.
	shifted := make([]byte, len(b)+8)
	base := 4 - int(uintptr(unsafe.Pointer(&shifted[0]))%4) + 1
	mis := shifted[base : base+len(b)]
	copy(mis, b)
	g, err := Parse(mis)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Tensor("x"); err == nil || !strings.Contains(err.Error(), "not 4-byte aligned") {
		t.Errorf("misaligned Tensor: %v", err)
	}
	if d, err := g.TensorData("x"); err != nil || len(d) != 24 {
		t.Errorf("misaligned TensorData: %d bytes, %v", len(d), err)
	}
}

func TestDump(t *testing.T) {
	f, err := Open(testFile(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if err := Dump(&buf, f); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	// Header, blank, KV heading, 19 KVs, blank, tensor heading, 48 tensors.
	if len(lines) != 1+2+19+2+48 {
		t.Errorf("%d lines, want %d:\n%s", len(lines), 1+2+19+2+48, out)
	}
	fields := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, want := range []string{
		"GGUF v3: 19 KV, 48 tensors, alignment 32, data at offset 14176",
		`general.architecture string "llama"`,
		`tokenizer.ggml.tokens []string ["<unk>" "<s>" "</s>" "<0x00>" "<0x01>" "<0x02>" "<0x03>" "<0x04>" ... (512 in all)]`,
		"llama.attention.layer_norm_rms_epsilon float32 1e-05",
		"tokenizer.ggml.seperator_token_id uint32 4294967295",
		"0 token_embd.weight f32 [64 512] 0 131072",
		"1 output_norm.weight f32 [64] 131072 256",
	} {
		found := false
		for _, l := range lines {
			found = found || fields(l) == want
		}
		if !found {
			t.Errorf("no line %q in\n%s", want, out)
		}
	}
}

func TestDumpAwkwardNames(t *testing.T) {
	w := NewWriter()
	if err := w.Add("tab\tkey", strings.Repeat("long ", 40)); err != nil {
		t.Fatal(err)
	}
	if err := w.AddTensor("new\nline", quant.F32, []int64{1}, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Dump(&out, f); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{`"tab\tkey"`, `"new\nline"`, "... (200 bytes)"} {
		if !strings.Contains(s, want) {
			t.Errorf("dump lacks %s:\n%s", want, s)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	empty := dir + "/empty.gguf"
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	junk := dir + "/junk.gguf"
	if err := os.WriteFile(junk, []byte("PK\x03\x04 not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{dir + "/missing.gguf", "no such file"},
		{dir, "not a regular file"},
		{empty, "empty.gguf: gguf: header at offset 0: magic needs 4 bytes"},
		{junk, `junk.gguf: gguf: magic at offset 0: "PK\x03\x04" is not "GGUF"`},
	} {
		if _, err := Open(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%s): %v, want an error containing %q", c.path, err, c.want)
		}
	}
}

// TestValuesOf rebuilds arrays element by element from Values, as a tool
// that filters an array of a file would.
func TestValuesOf(t *testing.T) {
	f := getterFile(t)
	w := NewWriter()
	for _, key := range []string{"a.str", "a.i32", "a.bool", "a.a", "a.i64.big"} {
		v, _ := f.Get(key)
		elems := make([]Value, v.Len())
		for i := range elems {
			elems[i] = v.Index(i)
		}
		if err := w.Add(key, elems); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	g, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range g.KV {
		v, _ := f.Get(kv.Key)
		if !kv.Value.Equal(v) {
			t.Errorf("%s: rebuilt %v, want %v", kv.Key, kv.Value, v)
		}
	}
	// Small signed types widen correctly.
	h := NewWriter()
	for _, kv := range []struct {
		k string
		v any
	}{{"i8", int8(-5)}, {"i16", int16(-300)}, {"u16", uint16(40000)}} {
		if err := h.Add(kv.k, kv.v); err != nil {
			t.Fatal(err)
		}
	}
	buf.Reset()
	if _, err := h.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if g, err = Parse(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int64{"i8": -5, "i16": -300, "u16": 40000} {
		if got, err := g.Int(key); err != nil || got != want {
			t.Errorf("Int(%s) = %d, %v; want %d", key, got, err, want)
		}
		if f, err := g.Float(key); err != nil || f != float64(want) {
			t.Errorf("Float(%s) = %v, %v; want %d", key, f, err, want)
		}
	}
}
