package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ValueType is the type of a metadata value, numbered as GGUF numbers it
// (enum gguf_type).
type ValueType uint32

// The metadata value types.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7 // one byte, 0 or 1
	TypeString  ValueType = 8 // uint64 length and UTF-8 bytes, no terminator
	TypeArray   ValueType = 9 // uint32 element type, uint64 count, elements
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{
	TypeUint8:   "uint8",
	TypeInt8:    "int8",
	TypeUint16:  "uint16",
	TypeInt16:   "int16",
	TypeUint32:  "uint32",
	TypeInt32:   "int32",
	TypeFloat32: "float32",
	TypeBool:    "bool",
	TypeString:  "string",
	TypeArray:   "array",
	TypeUint64:  "uint64",
	TypeInt64:   "int64",
	TypeFloat64: "float64",
}

// Valid reports whether t is one of the thirteen GGUF value types.
func (t ValueType) Valid() bool { return uint64(t) < uint64(len(valueTypeNames)) }

// String returns the type's name ("uint32", "string", "array", ...), or
// "type(N)" for a number that is not a value type.
func (t ValueType) String() string {
	if t.Valid() {
		return valueTypeNames[t]
	}
	return "type(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// size returns the bytes of one value of a fixed-size type, or 0 for
// strings, arrays and invalid types.
func (t ValueType) size() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

func (t ValueType) isInteger() bool {
	switch t {
	case TypeUint8, TypeInt8, TypeUint16, TypeInt16, TypeUint32, TypeInt32, TypeUint64, TypeInt64:
		return true
	}
	return false
}

func (t ValueType) isSigned() bool {
	switch t {
	case TypeInt8, TypeInt16, TypeInt32, TypeInt64:
		return true
	}
	return false
}

// A Value is one metadata value: a scalar, a string, or an array whose
// elements all have type ElemType (arrays of arrays are allowed, each inner
// array with its own element type). Values are immutable; the zero Value is
// the uint8 0.
type Value struct {
	Type ValueType
	// ElemType is the type of an array's elements; unused for other types.
	ElemType ValueType

	// bits holds a fixed-size scalar: its little-endian bits, zero
	// extended (signed values are stored in two's complement of their
	// own width, so an int8 -1 is 0xff).
	bits uint64
	// payload holds a string scalar (string) or an array: []byte (the
	// little-endian elements of a fixed-size type), []string, or []Value
	// (arrays of arrays).
	payload any
}

// scalarValue returns a fixed-size scalar of type t from its raw bits.
func scalarValue(t ValueType, bits uint64) Value { return Value{Type: t, bits: bits} }

// Len returns the number of elements of an array, and 0 for other values.
func (v Value) Len() int {
	if v.Type != TypeArray {
		return 0
	}
	switch p := v.payload.(type) {
	case []byte:
		if s := v.ElemType.size(); s > 0 {
			return len(p) / s
		}
	case []string:
		return len(p)
	case []Value:
		return len(p)
	}
	return 0
}

// Index returns element i of an array as a Value of type ElemType. It
// panics if v is not an array or i is out of range, like a slice index.
func (v Value) Index(i int) Value {
	if v.Type != TypeArray {
		panic(fmt.Sprintf("gguf: Index of a %v value", v.Type))
	}
	switch p := v.payload.(type) {
	case []byte:
		s := v.ElemType.size()
		return scalarValue(v.ElemType, leBits(p[i*s:(i+1)*s]))
	case []string:
		return Value{Type: TypeString, payload: p[i]}
	case []Value:
		return p[i]
	}
	panic(fmt.Sprintf("gguf: index %d out of range [0:0]", i))
}

// leBits decodes a 1-, 2-, 4- or 8-byte little-endian number.
func leBits(b []byte) uint64 {
	switch len(b) {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

// Any returns the value as a Go value of the type Writer.Add takes for it:
// uint8 ... float64, bool or string for scalars, []uint8 ... []float64,
// []bool or []string for arrays of those, and []Value for arrays of
// arrays. Slices are fresh copies.
func (v Value) Any() any {
	switch v.Type {
	case TypeString:
		s, _ := v.payload.(string)
		return s
	case TypeArray:
		return v.anyArray()
	}
	return scalarAny(v.Type, v.bits)
}

func scalarAny(t ValueType, b uint64) any {
	switch t {
	case TypeUint8:
		return uint8(b)
	case TypeInt8:
		return int8(b)
	case TypeUint16:
		return uint16(b)
	case TypeInt16:
		return int16(b)
	case TypeUint32:
		return uint32(b)
	case TypeInt32:
		return int32(b)
	case TypeFloat32:
		return math.Float32frombits(uint32(b))
	case TypeBool:
		return b != 0
	case TypeUint64:
		return b
	case TypeInt64:
		return int64(b)
	case TypeFloat64:
		return math.Float64frombits(b)
	}
	return nil
}

func (v Value) anyArray() any {
	switch p := v.payload.(type) {
	case []string:
		return append([]string{}, p...)
	case []Value:
		return append([]Value{}, p...)
	case []byte:
		return decodeArray(v.ElemType, p)
	}
	return nil
}

// decodeArray returns the little-endian elements in raw as a slice of
// t's Go type.
func decodeArray(t ValueType, raw []byte) any {
	n := 0
	if s := t.size(); s > 0 {
		n = len(raw) / s
	}
	switch t {
	case TypeUint8:
		return append([]uint8{}, raw...)
	case TypeInt8:
		return decodeEach(n, func(i int) int8 { return int8(raw[i]) })
	case TypeBool:
		return decodeEach(n, func(i int) bool { return raw[i] != 0 })
	case TypeUint16:
		return decodeEach(n, func(i int) uint16 { return binary.LittleEndian.Uint16(raw[2*i:]) })
	case TypeInt16:
		return decodeEach(n, func(i int) int16 { return int16(binary.LittleEndian.Uint16(raw[2*i:])) })
	case TypeUint32:
		return decodeEach(n, func(i int) uint32 { return binary.LittleEndian.Uint32(raw[4*i:]) })
	case TypeInt32:
		return decodeEach(n, func(i int) int32 { return int32(binary.LittleEndian.Uint32(raw[4*i:])) })
	case TypeFloat32:
		return decodeEach(n, func(i int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])) })
	case TypeUint64:
		return decodeEach(n, func(i int) uint64 { return binary.LittleEndian.Uint64(raw[8*i:]) })
	case TypeInt64:
		return decodeEach(n, func(i int) int64 { return int64(binary.LittleEndian.Uint64(raw[8*i:])) })
	case TypeFloat64:
		return decodeEach(n, func(i int) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:])) })
	}
	return nil
}

func decodeEach[T any](n int, f func(int) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// Equal reports whether v and u have the same type and contents. Floats
// compare by their bits, so a NaN equals the same NaN.
func (v Value) Equal(u Value) bool {
	if v.Type != u.Type {
		return false
	}
	switch v.Type {
	case TypeString:
		return v.payload == u.payload
	case TypeArray:
		if v.ElemType != u.ElemType || v.Len() != u.Len() {
			return false
		}
		switch p := v.payload.(type) {
		case []byte:
			q, _ := u.payload.([]byte)
			return string(p) == string(q)
		case []string:
			q, _ := u.payload.([]string)
			for i := range p {
				if p[i] != q[i] {
					return false
				}
			}
			return true
		case []Value:
			q, _ := u.payload.([]Value)
			for i := range p {
				if !p[i].Equal(q[i]) {
					return false
				}
			}
			return true
		}
		return v.Len() == 0
	}
	return v.bits == u.bits
}

// asUint returns an integer scalar as a uint64; ok is false for other
// types and for negative values.
func (v Value) asUint() (x uint64, ok bool) {
	if !v.Type.isInteger() {
		return 0, false
	}
	if v.Type.isSigned() {
		i, _ := v.asInt()
		return uint64(i), i >= 0
	}
	return v.bits, true
}

// asInt returns an integer scalar as an int64; ok is false for other
// types and for uint64 values above math.MaxInt64.
func (v Value) asInt() (x int64, ok bool) {
	switch v.Type {
	case TypeInt8:
		return int64(int8(v.bits)), true
	case TypeInt16:
		return int64(int16(v.bits)), true
	case TypeInt32:
		return int64(int32(v.bits)), true
	case TypeInt64:
		return int64(v.bits), true
	case TypeUint8, TypeUint16, TypeUint32, TypeUint64:
		return int64(v.bits), v.bits <= math.MaxInt64
	}
	return 0, false
}

// asFloat returns a float or integer scalar as a float64.
func (v Value) asFloat() (float64, bool) {
	switch v.Type {
	case TypeFloat32:
		return float64(math.Float32frombits(uint32(v.bits))), true
	case TypeFloat64:
		return math.Float64frombits(v.bits), true
	}
	if v.Type.isSigned() {
		i, _ := v.asInt()
		return float64(i), true
	}
	if v.Type.isInteger() {
		return float64(v.bits), true
	}
	return 0, false
}

// maxShown is how many array elements String prints before eliding the
// rest.
const maxShown = 8

// String returns the value in a printable form: numbers in Go syntax,
// strings quoted, arrays as their first few elements and a count of the
// rest, e.g. ["<unk>" "<s>" "</s>" ... (512 in all)].
func (v Value) String() string {
	var b strings.Builder
	v.format(&b, 0)
	return b.String()
}

// maxElemString is the longest string element String prints in full
// inside an array.
const maxElemString = 40

func (v Value) format(b *strings.Builder, depth int) {
	switch v.Type {
	case TypeString:
		s, _ := v.payload.(string)
		if depth > 0 && len(s) > maxElemString {
			b.WriteString(strconv.Quote(prefix(s, maxElemString)))
			b.WriteString("...")
			return
		}
		b.WriteString(strconv.Quote(s))
	case TypeArray:
		n := v.Len()
		b.WriteByte('[')
		for i := 0; i < n && i < maxShown; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			v.Index(i).format(b, depth+1)
		}
		if n > maxShown {
			fmt.Fprintf(b, " ... (%d in all)", n)
		}
		b.WriteByte(']')
	case TypeFloat32:
		b.WriteString(strconv.FormatFloat(float64(math.Float32frombits(uint32(v.bits))), 'g', -1, 32))
	case TypeFloat64:
		b.WriteString(strconv.FormatFloat(math.Float64frombits(v.bits), 'g', -1, 64))
	default:
		fmt.Fprint(b, scalarAny(v.Type, v.bits))
	}
}

// TypeString returns the value's type as Dump prints it: the scalar type,
// or "[]" and the element type for arrays ("[]string").
func (v Value) TypeString() string {
	if v.Type == TypeArray {
		return "[]" + v.ElemType.String()
	}
	return v.Type.String()
}

// prefix returns the longest prefix of s of at most n bytes that does not
// split a UTF-8 sequence.
func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	k := n
	for k > 0 && k > n-utf8.UTFMax && !utf8.RuneStart(s[k]) {
		k--
	}
	if !utf8.RuneStart(s[k]) {
		k = n // not UTF-8 here anyway
	}
	return s[:k]
}
