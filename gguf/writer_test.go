package gguf

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

type kvCase struct {
	key      string
	v        any
	typ      ValueType
	elemType ValueType
}

// allValues has one entry per value type, arrays of each, nested arrays,
// empty arrays and edge values.
var allValues = []kvCase{
	{"u8", uint8(200), TypeUint8, 0},
	{"i8", int8(-100), TypeInt8, 0},
	{"u16", uint16(65535), TypeUint16, 0},
	{"i16", int16(-32768), TypeInt16, 0},
	{"u32", uint32(math.MaxUint32), TypeUint32, 0},
	{"i32", int32(-7), TypeInt32, 0},
	{"f32", float32(1e-5), TypeFloat32, 0},
	{"f32.nan", float32(math.NaN()), TypeFloat32, 0},
	{"bool.t", true, TypeBool, 0},
	{"bool.f", false, TypeBool, 0},
	{"str", "héllo\x00\nworld", TypeString, 0},
	{"str.empty", "", TypeString, 0},
	{"u64", uint64(math.MaxUint64), TypeUint64, 0},
	{"i64", int64(math.MinInt64), TypeInt64, 0},
	{"f64", math.Pi, TypeFloat64, 0},
	{"f64.inf", math.Inf(-1), TypeFloat64, 0},
	{"a.u8", []uint8{0, 1, 255}, TypeArray, TypeUint8},
	{"a.i8", []int8{-128, 0, 127}, TypeArray, TypeInt8},
	{"a.u16", []uint16{1, 65535}, TypeArray, TypeUint16},
	{"a.i16", []int16{-1, 2}, TypeArray, TypeInt16},
	{"a.u32", []uint32{1, 2, 3}, TypeArray, TypeUint32},
	{"a.i32", []int32{-1, 0, math.MaxInt32}, TypeArray, TypeInt32},
	{"a.f32", []float32{0.5, -2, float32(math.Inf(1))}, TypeArray, TypeFloat32},
	{"a.bool", []bool{true, false, true}, TypeArray, TypeBool},
	{"a.str", []string{"<unk>", "", "Ġ t"}, TypeArray, TypeString},
	{"a.u64", []uint64{math.MaxUint64}, TypeArray, TypeUint64},
	{"a.i64", []int64{math.MinInt64, 5}, TypeArray, TypeInt64},
	{"a.f64", []float64{1e300, math.Copysign(0, -1)}, TypeArray, TypeFloat64},
	{"a.empty", []float32{}, TypeArray, TypeFloat32},
	{"a.a.i32", [][]int32{{1, 2}, {}, {3}}, TypeArray, TypeArray},
	{"a.a.str", [][]string{{"a"}, {"b", "c"}}, TypeArray, TypeArray},
	{"a.a.a.f32", [][][]float32{{{1}, {2, 3}}, {}}, TypeArray, TypeArray},
	{"a.a.empty", [][]uint8{}, TypeArray, TypeArray},
}

// tensorCase is a tensor for round trips: packed bytes of the right size.
type tensorCase struct {
	name string
	typ  quant.Type
	ne   []int64
}

var allTensors = []tensorCase{
	{"f32", quant.F32, []int64{7, 3}},
	{"f16", quant.F16, []int64{5}},
	{"bf16", quant.BF16, []int64{4, 2, 2}},
	{"q4_0", quant.Q4_0, []int64{64, 3}},
	{"q8_0", quant.Q8_0, []int64{32, 1, 2, 2}},
	{"q4_k", quant.Q4_K, []int64{256, 2}},
	{"q6_k", quant.Q6_K, []int64{512}},
	{"i32", quant.I32, []int64{3}},
	{"mxfp4", quant.MXFP4, []int64{64, 2}},
	{"iq4_nl", quant.IQ4_NL, []int64{32, 3}},
	{"iq4_xs", quant.IQ4_XS, []int64{256, 2}},
	{"tq1_0", quant.TQ1_0, []int64{256}},
	{"tq2_0", quant.TQ2_0, []int64{512}},
	{"iq2_xxs", quant.IQ2_XXS, []int64{256, 2}},
	{"iq2_xs", quant.IQ2_XS, []int64{512}},
	{"iq2_s", quant.IQ2_S, []int64{256}},
	{"iq3_xxs", quant.IQ3_XXS, []int64{256, 3}},
	{"iq3_s", quant.IQ3_S, []int64{256}},
	{"iq1_s", quant.IQ1_S, []int64{256, 2}},
	{"iq1_m", quant.IQ1_M, []int64{256}},
}

func tensorBytes(t testing.TB, i int, tc tensorCase) []byte {
	t.Helper()
	rows := int64(1)
	for _, n := range tc.ne[1:] {
		rows *= n
	}
	rs, err := tc.typ.RowSize(tc.ne[0])
	if err != nil {
		t.Fatal(err)
	}
	return randBytes(uint64(i), int(rs*rows))
}

func buildAll(t testing.TB, align int64) (*Writer, [][]byte) {
	t.Helper()
	w := NewWriter()
	if align != 0 {
		w.SetAlignment(align)
	}
	for _, kv := range allValues {
		if err := w.Add(kv.key, kv.v); err != nil {
			t.Fatalf("Add %s: %v", kv.key, err)
		}
	}
	var datas [][]byte
	for i, tc := range allTensors {
		data := tensorBytes(t, i, tc)
		datas = append(datas, data)
		if err := w.AddTensor(tc.name, tc.typ, tc.ne, data); err != nil {
			t.Fatalf("AddTensor %s: %v", tc.name, err)
		}
	}
	return w, datas
}

// valueEqual compares what Any returns with what was added, looking
// through nested arrays.
func valueEqual(v Value, want any) bool {
	if v.Type == TypeArray && v.ElemType == TypeArray {
		rv := reflect.ValueOf(want)
		if rv.Kind() != reflect.Slice || rv.Len() != v.Len() {
			return false
		}
		for i := range v.Len() {
			if !valueEqual(v.Index(i), rv.Index(i).Interface()) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(floatBits(v.Any()), floatBits(want))
}

// floatBits returns floats and float slices as their bits, so that a
// comparison tells -0 from +0 and matches a NaN's payload; other values
// come back as they are.
func floatBits(v any) any {
	switch x := v.(type) {
	case float32:
		return math.Float32bits(x)
	case float64:
		return math.Float64bits(x)
	case []float32:
		b := make([]uint32, len(x))
		for i, f := range x {
			b[i] = math.Float32bits(f)
		}
		return b
	case []float64:
		b := make([]uint64, len(x))
		for i, f := range x {
			b[i] = math.Float64bits(f)
		}
		return b
	}
	return v
}

func TestRoundTrip(t *testing.T) {
	for _, align := range []int64{0, 1, 8, 64, 4096} {
		w, datas := buildAll(t, align)
		var buf bytes.Buffer
		n, err := w.WriteTo(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if n != int64(buf.Len()) {
			t.Errorf("align %d: WriteTo returned %d, wrote %d", align, n, buf.Len())
		}
		f, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("align %d: %v", align, err)
		}
		wantAlign := align
		if align == 0 {
			wantAlign = 32
		}
		if f.Version != 3 || f.Alignment != wantAlign {
			t.Errorf("align %d: version %d alignment %d", align, f.Version, f.Alignment)
		}
		wantKVs := len(allValues)
		if wantAlign != 32 {
			wantKVs++
			if a, err := f.Uint(KeyAlignment); err != nil || int64(a) != wantAlign {
				t.Errorf("align %d: general.alignment = %d, %v", align, a, err)
			}
		}
		if len(f.KV) != wantKVs {
			t.Fatalf("align %d: %d KV, want %d", align, len(f.KV), wantKVs)
		}
		for i, kv := range allValues {
			got := f.KV[i]
			if got.Key != kv.key || got.Value.Type != kv.typ || got.Value.Type == TypeArray && got.Value.ElemType != kv.elemType {
				t.Errorf("KV %d: %s %v (%v), want %s %v (%v)", i, got.Key, got.Value.Type, got.Value.ElemType, kv.key, kv.typ, kv.elemType)
				continue
			}
			if !valueEqual(got.Value, kv.v) {
				t.Errorf("KV %s: read %v, wrote %v", kv.key, got.Value, kv.v)
			}
		}
		if len(f.Tensors) != len(allTensors) {
			t.Fatalf("%d tensors", len(f.Tensors))
		}
		for i, tc := range allTensors {
			ti := f.Tensors[i]
			if ti.Name != tc.name || ti.Type != tc.typ || ti.NDims != len(tc.ne) || !reflect.DeepEqual(ti.Ne[:ti.NDims], tc.ne) {
				t.Errorf("tensor %d: %+v, want %+v", i, ti, tc)
			}
			if ti.Offset%wantAlign != 0 || (f.DataOffset+ti.Offset)%wantAlign != 0 {
				t.Errorf("align %d: tensor %s at %d+%d is not aligned", align, tc.name, f.DataOffset, ti.Offset)
			}
			data, err := f.TensorData(tc.name)
			if err != nil || !bytes.Equal(data, datas[i]) {
				t.Errorf("tensor %s: data differs (%v)", tc.name, err)
			}
		}
		if int64(buf.Len())%wantAlign != 0 {
			t.Errorf("align %d: file of %d bytes does not end aligned", align, buf.Len())
		}
	}
}

// TestWriteFileOpen goes through the disk and the memory mapping.
func TestWriteFileOpen(t *testing.T) {
	w, datas := buildAll(t, 0)
	path := filepath.Join(t.TempDir(), "all.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range allTensors {
		tt, err := f.Tensor(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := tt.HostBytes()
		if err != nil || !bytes.Equal(b, datas[i]) {
			t.Errorf("tensor %s: bytes differ (%v)", tc.name, err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := f.TensorData("f32"); !errors.Is(err, ErrClosed) {
		t.Errorf("TensorData after Close: %v, want ErrClosed", err)
	}
	if _, err := f.Tensor("f32"); !errors.Is(err, ErrClosed) {
		t.Errorf("Tensor after Close: %v, want ErrClosed", err)
	}
	if s, err := f.String("str"); err != nil || s != "héllo\x00\nworld" {
		t.Errorf("metadata after Close: %q, %v", s, err)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("WriteFile left %d files behind", len(ents))
	}
}

func TestWriterErrors(t *testing.T) {
	type myInt int
	var deepSlices any = []uint8{1}
	for range MaxArrayDepth {
		deepSlices = reflect.Append(reflect.MakeSlice(reflect.SliceOf(reflect.TypeOf(deepSlices)), 0, 1), reflect.ValueOf(deepSlices)).Interface()
	}
	addCases := []struct {
		key  string
		v    any
		want string
	}{
		{"int", 5, "int32, int64"},
		{"uint", uint(5), "int32, int64"},
		{"named int", myInt(5), "int32, int64"},
		{"map", map[string]int{}, "no type for map"},
		{"struct", struct{}{}, "no type"},
		{"nil", nil, "nil value"},
		{"ints", []int{1}, "no type for []int"},
		{"anys", []any{1}, "no type"},
		{"deep", deepSlices, "nest deeper"},
		{"", "x", "empty key"},
		{KeyAlignment, int32(64), "uint32 power of two"},
		{KeyAlignment, uint32(48), "uint32 power of two"},
		{"mixed", []Value{scalarValue(TypeUint8, 1), {Type: TypeString, payload: "x"}}, "share one type"},
		{"empty values", []Value{}, "no element type"},
	}
	for _, c := range addCases {
		w := NewWriter()
		err := w.Add(c.key, c.v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Add(%q, %T): %v, want an error containing %q", c.key, c.v, err, c.want)
		}
	}
	w := NewWriter()
	if err := w.Add("k", uint8(1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Add("k", uint8(2)); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate key: %v", err)
	}
	// Named types go by their underlying type.
	if err := w.Add("file_type", quant.Q4_K); err != nil {
		t.Errorf("Add of a named uint32: %v", err)
	}

	f32 := make([]byte, 16)
	tensorCases := []struct {
		name string
		typ  quant.Type
		ne   []int64
		data []byte
		want string
		is   error
	}{
		{"ok", quant.F32, []int64{4}, f32, "", nil},
		{"ok", quant.F32, []int64{4}, f32, "duplicate", nil},
		{"", quant.F32, []int64{4}, f32, "empty name", nil},
		{strings.Repeat("x", 64), quant.F32, []int64{4}, f32, "longer than the 63", nil},
		{"short", quant.F32, []int64{5}, f32, "want 20", nil},
		{"long", quant.F32, []int64{2, 1}, f32, "want 8", nil},
		{"block", quant.Q4_0, []int64{31}, make([]byte, 18), "block size", quant.ErrRowLength},
		{"dims0", quant.F32, nil, nil, "1 to 4", nil},
		{"dims5", quant.F32, []int64{1, 1, 1, 1, 4}, f32, "1 to 4", nil},
		{"zero", quant.F32, []int64{0}, nil, "positive", nil},
		{"neg", quant.F32, []int64{4, -1}, nil, "positive", nil},
		{"huge", quant.F32, []int64{1 << 40, 1 << 40}, nil, "element count", nil},
		{"type", quant.Type(27), []int64{4}, f32, "invalid type", nil},
	}
	for _, c := range tensorCases {
		err := w.AddTensor(c.name, c.typ, c.ne, c.data)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("AddTensor(%q): %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("AddTensor(%q, %v, %v): %v, want an error containing %q", c.name, c.typ, c.ne, err, c.want)
		case c.is != nil && !errors.Is(err, c.is):
			t.Errorf("AddTensor(%q): %v does not wrap %v", c.name, err, c.is)
		}
	}
	for _, a := range []int64{0, -32, 3, 48, 1 << 32} {
		w.SetAlignment(a)
		if _, err := w.WriteTo(&bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "power of two") {
			t.Errorf("alignment %d: %v", a, err)
		}
	}
}

// TestWriterAlignmentKey checks that SetAlignment and an added
// general.alignment agree, whichever comes last.
func TestWriterAlignmentKey(t *testing.T) {
	w := NewWriter()
	if err := w.Add(KeyAlignment, uint32(16)); err != nil {
		t.Fatal(err)
	}
	if err := w.AddTensor("t", quant.F32, []int64{3}, make([]byte, 12)); err != nil {
		t.Fatal(err)
	}
	check := func(want int64) {
		t.Helper()
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		f, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if f.Alignment != want || len(f.KV) != 1 || f.DataOffset%want != 0 || int64(buf.Len())%want != 0 {
			t.Errorf("alignment %d with %d KV, data at %d, %d bytes; want alignment %d, 1 KV", f.Alignment, len(f.KV), f.DataOffset, buf.Len(), want)
		}
	}
	check(16)
	w.SetAlignment(128)
	check(128)
}

// failWriter fails after n bytes.
type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

func TestWriteToError(t *testing.T) {
	w, _ := buildAll(t, 0)
	var buf bytes.Buffer
	total, err := w.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 100, int(total) - 1} {
		got, err := w.WriteTo(&failWriter{n: n})
		if err == nil || !strings.Contains(err.Error(), "disk full") || got != int64(n) {
			t.Errorf("failing after %d bytes: wrote %d, %v", n, got, err)
		}
	}
	if err := w.WriteFile(filepath.Join(t.TempDir(), "no", "such", "dir.gguf")); err == nil {
		t.Error("WriteFile into a missing directory succeeded")
	}
}
