package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"sort"
	"strconv"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

const (
	// Magic is the 4 bytes every GGUF file starts with.
	Magic = "GGUF"
	// Version is the version Writer writes.
	Version = 3
	// DefaultAlignment is the alignment of tensor data when a file has no
	// general.alignment key.
	DefaultAlignment = 32
	// KeyAlignment is the key that overrides DefaultAlignment (uint32, a
	// power of two).
	KeyAlignment = "general.alignment"
	// KeyArchitecture names the model architecture ("llama", "gpt2").
	KeyArchitecture = "general.architecture"
	// MaxArrayDepth is how deeply arrays may nest: an array of arrays of
	// strings has depth 2.
	MaxArrayDepth = 8
)

// Smallest encodings, used to bound counts by the bytes that remain
// before anything is allocated for them.
const (
	minKVBytes     = 8 + 4 + 1         // empty key, type, 1-byte value
	minTensorBytes = 8 + 4 + 8 + 4 + 8 // empty name, n_dims 1, ne[0], type, offset
	minStringBytes = 8                 // empty string
	minArrayBytes  = 4 + 8             // element type, count 0
)

// maxElements bounds a tensor's element count (2^56), far beyond any
// model yet small enough that sizes in bytes never overflow int64.
const maxElements = 1 << 56

// decoder reads little-endian fields from b, checking every read against
// the bytes that remain.
type decoder struct {
	b   []byte
	off int64
}

func (d *decoder) left() int64 { return int64(len(d.b)) - d.off }

// errAt returns a *FormatError at offset off.
func errAt(off int64, err error, format string, args ...any) *FormatError {
	return &FormatError{Offset: off, Msg: fmt.Sprintf(format, args...), Err: err}
}

// need checks that n bytes remain for a field of the given description.
func (d *decoder) need(n uint64, what string) error {
	if left := uint64(d.left()); n > left {
		return errAt(d.off, ErrTruncated, "%s needs %d bytes but only %d remain in the file", what, n, left)
	}
	return nil
}

func (d *decoder) u32(what string) (uint32, error) {
	if err := d.need(4, what); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v, nil
}

func (d *decoder) u64(what string) (uint64, error) {
	if err := d.need(8, what); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	return v, nil
}

// str reads a string: a uint64 length and that many bytes, copied.
func (d *decoder) str(what string) (string, error) {
	start := d.off
	if left := d.left(); left < 8 {
		return "", errAt(d.off, ErrTruncated, "%s length needs 8 bytes but only %d remain in the file", what, left)
	}
	n := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	if left := uint64(d.left()); n > left {
		return "", errAt(start, ErrTruncated, "%s length %d runs past the end of the file (%d bytes remain)", what, n, left)
	}
	s := string(d.b[d.off : d.off+int64(n)])
	d.off += int64(n)
	return s, nil
}

// Parse reads a GGUF file held in b. The File refers to b for its tensor
// data (File.Tensor and File.TensorData return views of it), so b must
// not change while they are in use; the metadata is copied.
func Parse(b []byte) (*File, error) {
	d := &decoder{b: b}
	f := &File{Alignment: DefaultAlignment, data: b}

	if err := d.need(4, "magic"); err != nil {
		return nil, within(err, "header")
	}
	if m := string(b[:4]); m != Magic {
		return nil, within(errAt(0, nil, "%q is not %q: not a GGUF file", m, Magic), "magic")
	}
	d.off = 4
	v, err := d.u32("version")
	if err != nil {
		return nil, within(err, "header")
	}
	if err := checkVersion(v); err != nil {
		return nil, err
	}
	f.Version = v

	nt, err := d.u64("tensor count")
	if err != nil {
		return nil, within(err, "header")
	}
	nkv, err := d.u64("KV count")
	if err != nil {
		return nil, within(err, "header")
	}
	// Every KV and every tensor info takes some bytes, so the counts
	// cannot exceed what the rest of the file could hold.
	left := uint64(d.left())
	if nkv > left/minKVBytes || nt > left/minTensorBytes || nkv*minKVBytes+nt*minTensorBytes > left {
		return nil, errAt(8, ErrTruncated, "header claims %d tensors and %d KV pairs, which need at least %s bytes, but the file has %d bytes after the header",
			nt, nkv, productSum(nkv, minKVBytes, nt, minTensorBytes), left)
	}

	if err := f.parseKVs(d, int(nkv)); err != nil {
		return nil, err
	}
	if err := f.parseTensorInfos(d, int(nt)); err != nil {
		return nil, err
	}
	f.DataOffset = alignUp(d.off, f.Alignment)
	if err := f.checkExtents(); err != nil {
		return nil, err
	}
	if len(f.Tensors) > 0 {
		// Weights: a backend may keep its own layout of them (the file's
		// bytes never change), and Open lets it drop the mapped pages.
		f.buf = ops.WrapHostBytesReadOnly(b[f.DataOffset:]).MarkWeights()
	}
	return f, nil
}

// checkVersion accepts versions 2 and 3.
func checkVersion(v uint32) error {
	switch {
	case v == 2 || v == 3:
		return nil
	case v == 1:
		return errAt(4, ErrVersion, "GGUF version 1 is not supported (it stores 32-bit counts and lengths); only versions 2 and 3 are")
	case v != 0 && v&0xffff == 0:
		return errAt(4, ErrVersion, "version reads as %#x: the file looks big-endian, and only little-endian GGUF files are supported", v)
	}
	return errAt(4, ErrVersion, "GGUF version %d is not supported; only versions 2 and 3 are", v)
}

func (f *File) parseKVs(d *decoder, n int) error {
	f.KV = make([]KV, 0, n)
	f.kvIndex = make(map[string]int, n)
	alignOff := int64(0)
	for i := range n {
		start := d.off
		key, err := d.str("key")
		if err != nil {
			return within(err, fmt.Sprintf("KV %d", i))
		}
		// name is built only for an error message.
		name := func() string { return fmt.Sprintf("KV %d (%q)", i, key) }
		if j, dup := f.kvIndex[key]; dup {
			return within(errAt(start, nil, "duplicate key (first at KV %d)", j), name())
		}
		typeOff := d.off
		t, err := d.u32("value type")
		if err != nil {
			return within(err, name())
		}
		if !ValueType(t).Valid() {
			return within(errAt(typeOff, nil, "unknown value type %d", t), name())
		}
		if key == KeyAlignment {
			alignOff = d.off
		}
		val, err := d.value(ValueType(t), 0)
		if err != nil {
			return within(err, name())
		}
		f.kvIndex[key] = len(f.KV)
		f.KV = append(f.KV, KV{Key: key, Value: val})
	}
	if i, ok := f.kvIndex[KeyAlignment]; ok {
		field := fmt.Sprintf("KV %d (%q)", i, KeyAlignment)
		v := f.KV[i].Value
		if v.Type != TypeUint32 {
			return within(errAt(alignOff, nil, "the alignment has type %v; it must be uint32", v.TypeString()), field)
		}
		a := int64(v.bits)
		if a == 0 || a&(a-1) != 0 {
			return within(errAt(alignOff, nil, "the alignment is %d; it must be a power of two", a), field)
		}
		f.Alignment = a
	}
	return nil
}

// value reads a value of type t; depth counts the arrays it is inside.
func (d *decoder) value(t ValueType, depth int) (Value, error) {
	start := d.off
	switch t {
	case TypeString:
		s, err := d.str("string")
		if err != nil {
			return Value{}, err
		}
		return Value{Type: TypeString, payload: s}, nil
	case TypeArray:
		if depth >= MaxArrayDepth {
			return Value{}, errAt(start, nil, "arrays nest deeper than %d levels", MaxArrayDepth)
		}
		return d.array(depth + 1)
	}
	size := t.size()
	if size == 0 {
		return Value{}, errAt(start, nil, "unknown value type %d", uint32(t))
	}
	if err := d.need(uint64(size), t.String()+" value"); err != nil {
		return Value{}, err
	}
	bits := leBits(d.b[d.off : d.off+int64(size)])
	if t == TypeBool && bits > 1 {
		return Value{}, errAt(start, nil, "bool value is %d; it must be 0 or 1", bits)
	}
	d.off += int64(size)
	return scalarValue(t, bits), nil
}

// array reads an array's element type, count and elements; depth is its
// own nesting level (1 for an array that is not inside another).
func (d *decoder) array(depth int) (Value, error) {
	start := d.off
	et, err := d.u32("array element type")
	if err != nil {
		return Value{}, err
	}
	elem := ValueType(et)
	if !elem.Valid() {
		return Value{}, errAt(start, nil, "unknown array element type %d", et)
	}
	countOff := d.off
	n, err := d.u64("array count")
	if err != nil {
		return Value{}, err
	}
	left := uint64(d.left())
	v := Value{Type: TypeArray, ElemType: elem}
	switch elem {
	case TypeString:
		if n > left/minStringBytes {
			return Value{}, errAt(countOff, ErrTruncated, "array of %d strings needs at least %s bytes but only %d remain", n, product(n, minStringBytes), left)
		}
		strs := make([]string, n)
		for i := range strs {
			if strs[i], err = d.str("string"); err != nil {
				return Value{}, within(err, "element "+strconv.Itoa(i))
			}
		}
		v.payload = strs
	case TypeArray:
		if depth >= MaxArrayDepth {
			return Value{}, errAt(start, nil, "arrays nest deeper than %d levels", MaxArrayDepth)
		}
		if n > left/minArrayBytes {
			return Value{}, errAt(countOff, ErrTruncated, "array of %d arrays needs at least %s bytes but only %d remain", n, product(n, minArrayBytes), left)
		}
		vals := make([]Value, n)
		for i := range vals {
			if vals[i], err = d.array(depth + 1); err != nil {
				return Value{}, within(err, "element "+strconv.Itoa(i))
			}
		}
		v.payload = vals
	default:
		size := uint64(elem.size())
		if n > left/size {
			return Value{}, errAt(countOff, ErrTruncated, "array of %d %v needs %s bytes but only %d remain", n, elem, product(n, size), left)
		}
		raw := d.b[d.off : d.off+int64(n*size)]
		if elem == TypeBool {
			for i, c := range raw {
				if c > 1 {
					return Value{}, errAt(d.off+int64(i), nil, "element %d: bool value is %d; it must be 0 or 1", i, c)
				}
			}
		}
		v.payload = append([]byte{}, raw...)
		d.off += int64(n * size)
	}
	return v, nil
}

func (f *File) parseTensorInfos(d *decoder, n int) error {
	f.Tensors = make([]TensorInfo, 0, n)
	f.tensorIndex = make(map[string]int, n)
	for i := range n {
		start := d.off
		name, err := d.str("name")
		if err != nil {
			return within(err, fmt.Sprintf("tensor %d", i))
		}
		label := func() string { return fmt.Sprintf("tensor %d (%q)", i, name) }
		if j, dup := f.tensorIndex[name]; dup {
			return within(errAt(start, nil, "duplicate tensor name (first at tensor %d)", j), label())
		}
		ti, err := f.tensorInfo(d, name)
		if err != nil {
			return within(err, label())
		}
		f.tensorIndex[name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, ti)
	}
	return nil
}

var neNames = [ops.MaxDims]string{"ne[0]", "ne[1]", "ne[2]", "ne[3]"}

// tensorInfo reads the fields of a tensor info after its name.
func (f *File) tensorInfo(d *decoder, name string) (TensorInfo, error) {
	ti := TensorInfo{Name: name, Ne: [4]int64{1, 1, 1, 1}}
	dimsOff := d.off
	nd, err := d.u32("n_dims")
	if err != nil {
		return ti, err
	}
	if nd < 1 || nd > ops.MaxDims {
		return ti, errAt(dimsOff, nil, "n_dims is %d; it must be 1 to %d", nd, ops.MaxDims)
	}
	ti.NDims = int(nd)
	elems := uint64(1)
	for j := range ti.NDims {
		neOff := d.off
		ne, err := d.u64(neNames[j])
		if err != nil {
			return ti, err
		}
		if ne == 0 || ne > maxElements {
			return ti, errAt(neOff, nil, "ne[%d] is %d; it must be 1 to %d", j, ne, uint64(maxElements))
		}
		ti.Ne[j] = int64(ne)
		hi, lo := bits.Mul64(elems, ne)
		if hi != 0 || lo > maxElements {
			return ti, errAt(neOff, nil, "shape %v has more than %d elements", ti.Ne[:j+1], uint64(maxElements))
		}
		elems = lo
	}
	typeOff := d.off
	tt, err := d.u32("type")
	if err != nil {
		return ti, err
	}
	ti.Type = quant.Type(tt)
	if !ti.Type.Valid() {
		return ti, errAt(typeOff, nil, "unsupported tensor type %s", ggmlTypeName(tt))
	}
	rowSize, err := ti.Type.RowSize(ti.Ne[0])
	if err != nil {
		return ti, errAt(dimsOff, err, "shape %v: %v", ti.Ne[:ti.NDims], err)
	}
	// rowSize <= ne[0]*typeSize and the element count is at most 2^56,
	// so the size fits in int64.
	ti.Size = rowSize * (ti.Ne[1] * ti.Ne[2] * ti.Ne[3])
	offOff := d.off
	off, err := d.u64("offset")
	if err != nil {
		return ti, err
	}
	if off > math.MaxInt64 {
		return ti, errAt(offOff, nil, "data offset %d is out of range", off)
	}
	ti.Offset = int64(off)
	if ti.Offset%f.Alignment != 0 {
		return ti, errAt(offOff, nil, "data offset %d is not a multiple of the alignment %d", off, f.Alignment)
	}
	return ti, nil
}

// checkExtents checks that every tensor's data lies inside the file and
// that no two tensors share bytes.
func (f *File) checkExtents() error {
	size := int64(len(f.data))
	for i, ti := range f.Tensors {
		if ti.Offset > size-f.DataOffset || ti.Size > size-f.DataOffset-ti.Offset {
			start := satAdd(f.DataOffset, ti.Offset)
			return &FormatError{
				Offset: start,
				Field:  fmt.Sprintf("tensor %d (%q) data", i, ti.Name),
				Msg:    fmt.Sprintf("[%d, %d) runs past the end of the file (%d bytes)", start, satAdd(start, ti.Size), size),
				Err:    ErrTruncated,
			}
		}
	}
	order := make([]int, len(f.Tensors))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return f.Tensors[order[a]].Offset < f.Tensors[order[b]].Offset })
	for k := 1; k < len(order); k++ {
		p, q := f.Tensors[order[k-1]], f.Tensors[order[k]]
		if q.Offset < p.Offset+p.Size {
			return &FormatError{
				Offset: f.DataOffset + q.Offset,
				Field:  fmt.Sprintf("tensor %d (%q) data", order[k], q.Name),
				Msg: fmt.Sprintf("[%d, %d) overlaps tensor %d (%q) at [%d, %d)",
					f.DataOffset+q.Offset, f.DataOffset+q.Offset+q.Size,
					order[k-1], p.Name, f.DataOffset+p.Offset, f.DataOffset+p.Offset+p.Size),
			}
		}
	}
	return nil
}

// alignUp rounds off up to a multiple of align (a power of two).
func alignUp(off, align int64) int64 { return (off + align - 1) &^ (align - 1) }

// product formats a*b in decimal, exactly, for error messages.
func product(a, b uint64) string {
	return new(big.Int).Mul(new(big.Int).SetUint64(a), new(big.Int).SetUint64(b)).String()
}

// productSum formats a*b+c*d in decimal, exactly, for error messages.
func productSum(a, b, c, d uint64) string {
	x := new(big.Int).Mul(new(big.Int).SetUint64(a), new(big.Int).SetUint64(b))
	y := new(big.Int).Mul(new(big.Int).SetUint64(c), new(big.Int).SetUint64(d))
	return x.Add(x, y).String()
}

// satAdd returns a+b, or MaxInt64 when it overflows.
func satAdd(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// ggmlNames names the ggml types that quant does not implement, so that
// errors about them say which format the file uses.
var ggmlNames = map[uint32]string{
	4: "q4_2, removed from ggml", 5: "q4_3, removed from ggml",
	16: "iq2_xxs", 17: "iq2_xs", 18: "iq3_xxs", 19: "iq1_s", 20: "iq4_nl",
	21: "iq3_s", 22: "iq2_s", 23: "iq4_xs", 27: "i64", 28: "f64", 29: "iq1_m",
	31: "q4_0_4_4, removed from GGUF", 32: "q4_0_4_8, removed from GGUF", 33: "q4_0_8_8, removed from GGUF",
	34: "tq1_0", 35: "tq2_0",
	36: "iq4_nl_4_4, removed from GGUF", 37: "iq4_nl_4_8, removed from GGUF", 38: "iq4_nl_8_8, removed from GGUF",
	39: "mxfp4", 40: "nvfp4", 41: "q1_0", 42: "q2_0",
}

// ggmlTypeName describes a tensor type number quant does not know.
func ggmlTypeName(t uint32) string {
	if name, ok := ggmlNames[t]; ok {
		return fmt.Sprintf("%d (ggml's %s)", t, name)
	}
	return fmt.Sprintf("%d (unknown)", t)
}
