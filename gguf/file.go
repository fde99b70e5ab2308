package gguf

import (
	"fmt"
	"math"
	"os"
	"unsafe"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// A File is a parsed GGUF file: its metadata, its tensor descriptions and
// (until Close) its bytes. Its methods may be called from several
// goroutines at once, except Close.
type File struct {
	// Version is the file's GGUF version, 2 or 3.
	Version uint32
	// Alignment is the alignment of tensor data: general.alignment, or 32.
	Alignment int64
	// KV holds the metadata in file order.
	KV []KV
	// Tensors describes the tensors in file order.
	Tensors []TensorInfo
	// DataOffset is the file offset of the tensor data section: the first
	// multiple of Alignment after the tensor infos. In a file without
	// tensors it may lie past the end of the file.
	DataOffset int64

	data        []byte          // the whole file
	unmap       func() error    // releases data; nil when not mapped
	buf         *ops.HostBuffer // the data section, for tensors
	kvIndex     map[string]int
	tensorIndex map[string]int
}

// A KV is one metadata entry.
type KV struct {
	Key   string
	Value Value
}

// TensorInfo describes one tensor of a file.
type TensorInfo struct {
	Name string
	Type quant.Type
	// Ne is the shape, Ne[0] innermost; dimensions past NDims are 1.
	Ne [ops.MaxDims]int64
	// NDims is the number of dimensions the file gives, 1 to 4.
	NDims int
	// Offset is the start of the tensor's data relative to
	// File.DataOffset.
	Offset int64
	// Size is the tensor's data size in bytes (packed rows).
	Size int64
}

// Open maps the GGUF file at path into memory read-only and parses it.
// The tensor data stays in the mapping: Close releases it.
func Open(path string) (*File, error) {
	osf, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer osf.Close()
	st, err := osf.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("gguf: %s is not a regular file", path)
	}
	size := st.Size()
	if size == 0 {
		_, err := Parse(nil)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if uint64(size) > math.MaxInt {
		return nil, fmt.Errorf("gguf: %s: %d bytes is too large to map", path, size)
	}
	data, unmap, err := mapFile(osf, int(size))
	if err != nil {
		return nil, fmt.Errorf("gguf: map %s: %w", path, err)
	}
	f, err := Parse(data)
	if err != nil {
		unmap()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.unmap = unmap
	if f.buf != nil && dropPages != nil {
		f.buf.SetRelease(dropPages)
	}
	return f, nil
}

// Close releases the file's memory mapping. Tensors and byte slices
// obtained from the file must not be used afterwards (for a mapped file,
// reading them faults); the metadata stays valid. Closing twice is a
// no-op.
func (f *File) Close() error {
	unmap := f.unmap
	f.data, f.buf, f.unmap = nil, nil, nil
	if unmap != nil {
		if err := unmap(); err != nil {
			return fmt.Errorf("gguf: unmap: %w", err)
		}
	}
	return nil
}

// Get returns the value of key.
func (f *File) Get(key string) (Value, bool) {
	i, ok := f.kvIndex[key]
	if !ok {
		return Value{}, false
	}
	return f.KV[i].Value, true
}

// lookup returns the value of key, or an error wrapping ErrKeyNotFound.
func (f *File) lookup(key string) (Value, error) {
	v, ok := f.Get(key)
	if !ok {
		return Value{}, fmt.Errorf("gguf: key %q: %w", key, ErrKeyNotFound)
	}
	return v, nil
}

func typeErr(key string, v Value, want string) error {
	return fmt.Errorf("gguf: key %q: %w: it holds a %s, not %s", key, ErrKeyType, v.TypeString(), want)
}

// String returns the string value of key.
func (f *File) String(key string) (string, error) {
	v, err := f.lookup(key)
	if err != nil {
		return "", err
	}
	if v.Type != TypeString {
		return "", typeErr(key, v, "a string")
	}
	s, _ := v.payload.(string)
	return s, nil
}

// Uint returns the value of key, which must be an unsigned integer or a
// non-negative signed one.
func (f *File) Uint(key string) (uint64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	if !v.Type.isInteger() {
		return 0, typeErr(key, v, "an integer")
	}
	x, ok := v.asUint()
	if !ok {
		return 0, fmt.Errorf("gguf: key %q: %w: it holds the %v %v, which is negative", key, ErrKeyType, v.Type, v)
	}
	return x, nil
}

// Int returns the value of key, which must be an integer of any type
// whose value fits in an int64.
func (f *File) Int(key string) (int64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	if !v.Type.isInteger() {
		return 0, typeErr(key, v, "an integer")
	}
	x, ok := v.asInt()
	if !ok {
		return 0, fmt.Errorf("gguf: key %q: %w: it holds the %v %v, which overflows int64", key, ErrKeyType, v.Type, v)
	}
	return x, nil
}

// Float returns the value of key, which must be a float32, a float64 or
// an integer.
func (f *File) Float(key string) (float64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	x, ok := v.asFloat()
	if !ok {
		return 0, typeErr(key, v, "a number")
	}
	return x, nil
}

// Bool returns the boolean value of key.
func (f *File) Bool(key string) (bool, error) {
	v, err := f.lookup(key)
	if err != nil {
		return false, err
	}
	if v.Type != TypeBool {
		return false, typeErr(key, v, "a bool")
	}
	return v.bits != 0, nil
}

// array returns key's value, which must be an array whose element type
// satisfies ok.
func (f *File) array(key, want string, ok func(ValueType) bool) (Value, error) {
	v, err := f.lookup(key)
	if err != nil {
		return Value{}, err
	}
	if v.Type != TypeArray || !ok(v.ElemType) {
		return Value{}, typeErr(key, v, want)
	}
	return v, nil
}

// Strings returns the array of strings stored at key, as a new slice.
func (f *File) Strings(key string) ([]string, error) {
	v, err := f.array(key, "an array of strings", func(t ValueType) bool { return t == TypeString })
	if err != nil {
		return nil, err
	}
	s, _ := v.payload.([]string)
	return append([]string{}, s...), nil
}

// Float32s returns the array stored at key as float32s. Arrays of float32
// are returned exactly; arrays of float64 and of integers are converted,
// rounding to the nearest float32.
func (f *File) Float32s(key string) ([]float32, error) {
	v, err := f.array(key, "an array of numbers", func(t ValueType) bool {
		return t == TypeFloat32 || t == TypeFloat64 || t.isInteger()
	})
	if err != nil {
		return nil, err
	}
	if v.ElemType == TypeFloat32 {
		return decodeArray(TypeFloat32, v.payload.([]byte)).([]float32), nil
	}
	out := make([]float32, v.Len())
	for i := range out {
		x, _ := v.Index(i).asFloat()
		out[i] = float32(x)
	}
	return out, nil
}

// Int32s returns the array of integers stored at key as int32s. Arrays of
// int32 are returned exactly; other integer arrays are converted, and an
// element outside the int32 range is an error.
func (f *File) Int32s(key string) ([]int32, error) {
	v, err := f.array(key, "an array of integers", ValueType.isInteger)
	if err != nil {
		return nil, err
	}
	if v.ElemType == TypeInt32 {
		return decodeArray(TypeInt32, v.payload.([]byte)).([]int32), nil
	}
	out := make([]int32, v.Len())
	for i := range out {
		e := v.Index(i)
		x, ok := e.asInt()
		if !ok || x < math.MinInt32 || x > math.MaxInt32 {
			return nil, fmt.Errorf("gguf: key %q: %w: element %d (%v %v) does not fit in an int32", key, ErrKeyType, i, e.Type, e)
		}
		out[i] = int32(x)
	}
	return out, nil
}

// Arch returns general.architecture, or "" when the file has none.
func (f *File) Arch() string {
	s, _ := f.String(KeyArchitecture)
	return s
}

// TensorInfo returns the description of the tensor called name.
func (f *File) TensorInfo(name string) (TensorInfo, bool) {
	i, ok := f.tensorIndex[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Tensors[i], true
}

// TensorData returns the bytes of the tensor called name: a slice of the
// file's memory, not a copy. For a file from Open it is read-only, and it
// is valid until Close.
func (f *File) TensorData(name string) ([]byte, error) {
	ti, ok := f.TensorInfo(name)
	if !ok {
		return nil, fmt.Errorf("gguf: no tensor named %q", name)
	}
	if f.buf == nil {
		return nil, fmt.Errorf("gguf: tensor %q: %w", name, ErrClosed)
	}
	b := f.buf.Bytes()
	return b[ti.Offset : ti.Offset+ti.Size : ti.Offset+ti.Size], nil
}

// Tensor returns the tensor called name as a contiguous leaf ops.Tensor
// over the file's memory, without copying: its Buffer is the data section
// (ops.WrapHostBytesReadOnly; every tensor of the file shares it) and its
// Offset the tensor's offset in that section. The buffer refuses writes
// (for a file from Open the mapping is read-only, and writing would fault),
// and the memory is valid until Close.
//
// Tensor fails if the data is not aligned to its element type (the
// largest power of two, up to 4, that divides the block size in bytes), as
// kernels read elements in place; files with the default alignment of 32
// always are.
func (f *File) Tensor(name string) (*ops.Tensor, error) {
	ti, ok := f.TensorInfo(name)
	if !ok {
		return nil, fmt.Errorf("gguf: no tensor named %q", name)
	}
	if f.buf == nil {
		return nil, fmt.Errorf("gguf: tensor %q: %w", name, ErrClosed)
	}
	if ti.Size > 0 {
		addr := uintptr(unsafe.Pointer(&f.buf.Bytes()[ti.Offset]))
		if a := elemAlign(ti.Type); addr%a != 0 {
			return nil, fmt.Errorf("gguf: tensor %q: data at file offset %d is not %d-byte aligned in memory, as %v elements need",
				name, f.DataOffset+ti.Offset, a, ti.Type)
		}
	}
	return &ops.Tensor{
		Name:   ti.Name,
		Type:   ti.Type,
		Ne:     ti.Ne,
		Nb:     ops.ContiguousStrides(ti.Type, ti.Ne),
		Buffer: f.buf,
		Offset: ti.Offset,
	}, nil
}

// elemAlign returns the largest power of two, at most 4, that divides the
// size in bytes of one block of t.
func elemAlign(t quant.Type) uintptr {
	s := t.TypeSize()
	switch {
	case s%4 == 0:
		return 4
	case s%2 == 0:
		return 2
	}
	return 1
}
