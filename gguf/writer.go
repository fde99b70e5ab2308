package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// maxNameLen is the longest tensor name ggml reads (GGML_MAX_NAME is 64
// bytes with the terminating NUL).
const maxNameLen = 63

// maxKeyLen is the longest key the GGUF specification allows.
const maxKeyLen = 1<<16 - 1

// A Writer builds a GGUF version 3 file: metadata with Add, tensors with
// AddTensor, then WriteTo or WriteFile. Tensors are laid out in the order
// they were added, each at the next multiple of the alignment, as ggml
// lays them out.
type Writer struct {
	kv      []KV
	keys    map[string]int
	align   int64
	tensors []writerTensor
	names   map[string]bool
}

type writerTensor struct {
	info TensorInfo
	data []byte
}

// NewWriter returns an empty Writer with the default alignment (32).
func NewWriter() *Writer {
	return &Writer{keys: map[string]int{}, names: map[string]bool{}, align: DefaultAlignment}
}

// SetAlignment sets the alignment of tensor data, a power of two from 1 to
// 2^31; WriteTo reports a bad one. An alignment other than 32 is recorded
// in the file as general.alignment (a uint32). Adding general.alignment
// with Add sets the alignment too.
func (w *Writer) SetAlignment(n int64) {
	w.align = n
	if i, ok := w.keys[KeyAlignment]; ok && n > 0 && n <= math.MaxUint32 {
		w.kv[i].Value = scalarValue(TypeUint32, uint64(n))
	}
}

// Add appends the metadata entry key = v. v is one of uint8, int8,
// uint16, int16, uint32, int32, uint64, int64, float32, float64, bool and
// string, a slice of one of those (an array), a slice of slices (an array
// of arrays, up to MaxArrayDepth deep), or a Value (from a File). Go's int
// and uint are refused, since GGUF has no type for them: convert to a
// sized type. Entries keep the order they were added in; adding a key
// twice is an error.
func (w *Writer) Add(key string, v any) error {
	if key == "" {
		return errors.New("gguf: Add: empty key")
	}
	if len(key) > maxKeyLen {
		return fmt.Errorf("gguf: Add: key of %d bytes is longer than %d", len(key), maxKeyLen)
	}
	if _, dup := w.keys[key]; dup {
		return fmt.Errorf("gguf: Add %q: duplicate key", key)
	}
	val, err := valueOf(v, 0)
	if err != nil {
		return fmt.Errorf("gguf: Add %q: %w", key, err)
	}
	if key == KeyAlignment {
		a := int64(val.bits)
		if val.Type != TypeUint32 || a == 0 || a&(a-1) != 0 {
			return fmt.Errorf("gguf: Add %q: the alignment must be a uint32 power of two, not the %s %v", key, val.TypeString(), val)
		}
		w.align = a
	}
	w.keys[key] = len(w.kv)
	w.kv = append(w.kv, KV{Key: key, Value: val})
	return nil
}

// valueOf converts a Go value to a Value; depth counts the arrays it is
// inside. Named types are taken by their underlying type.
func valueOf(v any, depth int) (Value, error) {
	switch x := v.(type) {
	case Value:
		if err := checkValue(x, depth); err != nil {
			return Value{}, err
		}
		return x, nil
	case []Value:
		return valuesOf(x, depth)
	case []uint8:
		return fixedArray(depth, TypeUint8, append([]byte{}, x...))
	case []float32:
		return fixedArray(depth, TypeFloat32, pack(x, 4, func(b []byte, f float32) []byte {
			return binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
		}))
	case []int32:
		return fixedArray(depth, TypeInt32, pack(x, 4, func(b []byte, i int32) []byte {
			return binary.LittleEndian.AppendUint32(b, uint32(i))
		}))
	case []uint32:
		return fixedArray(depth, TypeUint32, pack(x, 4, binary.LittleEndian.AppendUint32))
	case []uint64:
		return fixedArray(depth, TypeUint64, pack(x, 8, binary.LittleEndian.AppendUint64))
	}
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return Value{}, errors.New("nil value")
	}
	if t := goValueType(rv.Type()); t.size() > 0 {
		return scalarValue(t, scalarBits(rv)), nil
	}
	switch rv.Kind() {
	case reflect.String:
		return Value{Type: TypeString, payload: rv.String()}, nil
	case reflect.Int, reflect.Uint:
		return Value{}, fmt.Errorf("GGUF has no type for Go's %T: convert it to int32, int64, uint32 or uint64", v)
	case reflect.Slice:
	default:
		return Value{}, fmt.Errorf("GGUF has no type for %T", v)
	}
	if depth >= MaxArrayDepth {
		return Value{}, fmt.Errorf("arrays nest deeper than %d levels", MaxArrayDepth)
	}
	elem := rv.Type().Elem()
	n := rv.Len()
	if et := goValueType(elem); et.size() > 0 {
		raw := make([]byte, 0, n*et.size())
		for i := range n {
			raw = appendBits(raw, et, scalarBits(rv.Index(i)))
		}
		return Value{Type: TypeArray, ElemType: et, payload: raw}, nil
	}
	switch elem.Kind() {
	case reflect.String:
		strs := make([]string, n)
		for i := range strs {
			strs[i] = rv.Index(i).String()
		}
		return Value{Type: TypeArray, ElemType: TypeString, payload: strs}, nil
	case reflect.Slice:
		// A slice of slices: an array of arrays.
		if depth+1 >= MaxArrayDepth {
			return Value{}, fmt.Errorf("arrays nest deeper than %d levels", MaxArrayDepth)
		}
		vals := make([]Value, n)
		for i := range vals {
			e, err := valueOf(rv.Index(i).Interface(), depth+1)
			if err != nil {
				return Value{}, fmt.Errorf("element %d: %w", i, err)
			}
			vals[i] = e
		}
		return Value{Type: TypeArray, ElemType: TypeArray, payload: vals}, nil
	}
	return Value{}, fmt.Errorf("GGUF has no type for %T", v)
}

// fixedArray returns an array of a fixed-size type from its encoding.
func fixedArray(depth int, et ValueType, raw []byte) (Value, error) {
	if depth >= MaxArrayDepth {
		return Value{}, fmt.Errorf("arrays nest deeper than %d levels", MaxArrayDepth)
	}
	return Value{Type: TypeArray, ElemType: et, payload: raw}, nil
}

// pack encodes x with put, size bytes per element.
func pack[T any](x []T, size int, put func([]byte, T) []byte) []byte {
	b := make([]byte, 0, len(x)*size)
	for _, e := range x {
		b = put(b, e)
	}
	return b
}

// goValueType returns the GGUF type of a Go type of fixed size, or an
// invalid type for others (strings, slices, int, uint, ...).
func goValueType(t reflect.Type) ValueType {
	switch t.Kind() {
	case reflect.Uint8:
		return TypeUint8
	case reflect.Int8:
		return TypeInt8
	case reflect.Uint16:
		return TypeUint16
	case reflect.Int16:
		return TypeInt16
	case reflect.Uint32:
		return TypeUint32
	case reflect.Int32:
		return TypeInt32
	case reflect.Uint64:
		return TypeUint64
	case reflect.Int64:
		return TypeInt64
	case reflect.Float32:
		return TypeFloat32
	case reflect.Float64:
		return TypeFloat64
	case reflect.Bool:
		return TypeBool
	}
	return ValueType(math.MaxUint32)
}

// scalarBits returns the Value bits of a fixed-size scalar.
func scalarBits(rv reflect.Value) uint64 {
	switch rv.Kind() {
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return rv.Uint()
	case reflect.Int8:
		return uint64(uint8(rv.Int()))
	case reflect.Int16:
		return uint64(uint16(rv.Int()))
	case reflect.Int32:
		return uint64(uint32(rv.Int()))
	case reflect.Int64:
		return uint64(rv.Int())
	case reflect.Float32:
		return uint64(math.Float32bits(float32(rv.Float())))
	case reflect.Float64:
		return math.Float64bits(rv.Float())
	case reflect.Bool:
		if rv.Bool() {
			return 1
		}
	}
	return 0
}

// valuesOf returns the array whose elements are vals, which must all have
// one type.
func valuesOf(vals []Value, depth int) (Value, error) {
	if depth >= MaxArrayDepth {
		return Value{}, fmt.Errorf("arrays nest deeper than %d levels", MaxArrayDepth)
	}
	if len(vals) == 0 {
		return Value{}, errors.New("an empty []Value has no element type")
	}
	et := vals[0].Type
	for i, e := range vals {
		if e.Type != et {
			return Value{}, fmt.Errorf("element %d has type %v, element 0 %v: array elements share one type", i, e.Type, et)
		}
		if err := checkValue(e, depth+1); err != nil {
			return Value{}, fmt.Errorf("element %d: %w", i, err)
		}
	}
	switch et {
	case TypeArray:
		return Value{Type: TypeArray, ElemType: TypeArray, payload: append([]Value{}, vals...)}, nil
	case TypeString:
		strs := make([]string, len(vals))
		for i, e := range vals {
			strs[i], _ = e.payload.(string)
		}
		return Value{Type: TypeArray, ElemType: TypeString, payload: strs}, nil
	}
	raw := make([]byte, 0, len(vals)*et.size())
	for _, e := range vals {
		raw = appendBits(raw, et, e.bits)
	}
	return Value{Type: TypeArray, ElemType: et, payload: raw}, nil
}

// checkValue checks that a Value is well formed at the given depth: a
// valid type with a payload that matches it.
func checkValue(v Value, depth int) error {
	switch v.Type {
	case TypeString:
		if _, ok := v.payload.(string); !ok {
			return errors.New("malformed string Value")
		}
		return nil
	case TypeArray:
		if depth >= MaxArrayDepth {
			return fmt.Errorf("arrays nest deeper than %d levels", MaxArrayDepth)
		}
		if v.ElemType == TypeArray && depth+1 >= MaxArrayDepth {
			return fmt.Errorf("arrays nest deeper than %d levels", MaxArrayDepth)
		}
		switch p := v.payload.(type) {
		case []string:
			if v.ElemType == TypeString {
				return nil
			}
		case []Value:
			if v.ElemType != TypeArray {
				break
			}
			for i, e := range p {
				if e.Type != TypeArray {
					return fmt.Errorf("element %d of an array of arrays is a %v", i, e.Type)
				}
				if err := checkValue(e, depth+1); err != nil {
					return fmt.Errorf("element %d: %w", i, err)
				}
			}
			return nil
		case []byte:
			if s := v.ElemType.size(); s > 0 && len(p)%s == 0 {
				return nil
			}
		}
		return fmt.Errorf("malformed array Value of %v", v.ElemType)
	}
	if !v.Type.Valid() {
		return fmt.Errorf("invalid value type %d", uint32(v.Type))
	}
	return nil
}

// appendBits appends the little-endian encoding of a fixed-size value.
func appendBits(b []byte, t ValueType, bits uint64) []byte {
	switch t.size() {
	case 1:
		return append(b, byte(bits))
	case 2:
		return binary.LittleEndian.AppendUint16(b, uint16(bits))
	case 4:
		return binary.LittleEndian.AppendUint32(b, uint32(bits))
	}
	return binary.LittleEndian.AppendUint64(b, bits)
}

// AddTensor appends a tensor of type t and shape ne (1 to 4 sizes,
// innermost first, each positive) whose packed bytes are data. It checks
// that the row length is a multiple of t's block size (the error wraps
// quant.ErrRowLength) and that len(data) is the row size times the number
// of rows. The Writer keeps data, not a copy, until WriteTo: it must not
// change before then.
func (w *Writer) AddTensor(name string, t quant.Type, ne []int64, data []byte) error {
	if name == "" {
		return errors.New("gguf: AddTensor: empty name")
	}
	if len(name) > maxNameLen {
		return fmt.Errorf("gguf: AddTensor %q: name of %d bytes is longer than the %d ggml allows", name, len(name), maxNameLen)
	}
	if w.names[name] {
		return fmt.Errorf("gguf: AddTensor %q: duplicate tensor name", name)
	}
	if !t.Valid() {
		return fmt.Errorf("gguf: AddTensor %q: invalid type %v", name, t)
	}
	if len(ne) < 1 || len(ne) > ops.MaxDims {
		return fmt.Errorf("gguf: AddTensor %q: %d dimensions; a tensor has 1 to %d", name, len(ne), ops.MaxDims)
	}
	info := TensorInfo{Name: name, Type: t, Ne: [ops.MaxDims]int64{1, 1, 1, 1}, NDims: len(ne)}
	elems := int64(1)
	for i, n := range ne {
		if n < 1 || n > maxElements || elems > maxElements/n {
			return fmt.Errorf("gguf: AddTensor %q: shape %v: ne[%d] must be positive and the element count at most %d", name, ne, i, int64(maxElements))
		}
		elems *= n
		info.Ne[i] = n
	}
	rowSize, err := t.RowSize(info.Ne[0])
	if err != nil {
		return fmt.Errorf("gguf: AddTensor %q: shape %v: %w", name, ne, err)
	}
	info.Size = rowSize * info.Ne[1] * info.Ne[2] * info.Ne[3]
	if int64(len(data)) != info.Size {
		return fmt.Errorf("gguf: AddTensor %q: %v %v has %d bytes of data, want %d", name, t, ne, len(data), info.Size)
	}
	w.names[name] = true
	w.tensors = append(w.tensors, writerTensor{info: info, data: data})
	return nil
}

// WriteTo writes the file to out and returns the number of bytes written.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	align := w.align
	if align < 1 || align > math.MaxUint32 || align&(align-1) != 0 {
		return 0, fmt.Errorf("gguf: WriteTo: alignment %d is not a power of two from 1 to 2^31", align)
	}
	kv := w.kv
	if _, ok := w.keys[KeyAlignment]; !ok && align != DefaultAlignment {
		kv = append(kv[:len(kv):len(kv)], KV{Key: KeyAlignment, Value: scalarValue(TypeUint32, uint64(align))})
	}
	cw := &countingWriter{w: out}
	bw := bufio.NewWriterSize(cw, 1<<16)
	e := &encoder{w: bw}

	e.bytes([]byte(Magic))
	e.u32(Version)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(kv)))
	for _, p := range kv {
		e.str(p.Key)
		e.u32(uint32(p.Value.Type))
		e.value(p.Value)
	}
	off := int64(0)
	for _, t := range w.tensors {
		e.str(t.info.Name)
		e.u32(uint32(t.info.NDims))
		for _, n := range t.info.Ne[:t.info.NDims] {
			e.u64(uint64(n))
		}
		e.u32(uint32(t.info.Type))
		e.u64(uint64(off))
		off = alignUp(off+t.info.Size, align)
	}
	// Files without tensors end after the tensor infos, as ggml's do.
	if len(w.tensors) > 0 {
		e.pad(align)
		for _, t := range w.tensors {
			e.bytes(t.data)
			e.pad(align)
		}
	}
	if e.err == nil {
		e.err = bw.Flush()
	}
	if e.err != nil {
		return cw.n, fmt.Errorf("gguf: write: %w", e.err)
	}
	return cw.n, nil
}

// WriteFile writes the file to path, through a temporary file in the same
// directory that is renamed into place, so that path never holds half a
// file.
func (w *Writer) WriteFile(path string) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := w.WriteTo(tmp); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	return nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// encoder writes little-endian fields, remembering the first error and
// the number of bytes written.
type encoder struct {
	w   *bufio.Writer
	n   int64
	err error
	tmp [8]byte
}

func (e *encoder) bytes(b []byte) {
	if e.err != nil {
		return
	}
	var n int
	n, e.err = e.w.Write(b)
	e.n += int64(n)
}

func (e *encoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.tmp[:], v)
	e.bytes(e.tmp[:4])
}

func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.tmp[:], v)
	e.bytes(e.tmp[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	if e.err == nil {
		var n int
		n, e.err = e.w.WriteString(s)
		e.n += int64(n)
	}
}

// pad writes zeros up to the next multiple of align.
func (e *encoder) pad(align int64) {
	var zeros [256]byte
	for k := alignUp(e.n, align) - e.n; k > 0 && e.err == nil; {
		c := min(k, int64(len(zeros)))
		e.bytes(zeros[:c])
		k -= c
	}
}

// value writes a value's encoding, without its type.
func (e *encoder) value(v Value) {
	switch v.Type {
	case TypeString:
		s, _ := v.payload.(string)
		e.str(s)
	case TypeArray:
		e.u32(uint32(v.ElemType))
		e.u64(uint64(v.Len()))
		switch p := v.payload.(type) {
		case []byte:
			e.bytes(p)
		case []string:
			for _, s := range p {
				e.str(s)
			}
		case []Value:
			for _, x := range p {
				e.value(x)
			}
		}
	default:
		binary.LittleEndian.PutUint64(e.tmp[:], v.bits)
		e.bytes(e.tmp[:v.Type.size()])
	}
}
