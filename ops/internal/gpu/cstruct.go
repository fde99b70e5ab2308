package gpu

import (
	"encoding/binary"
	"math"

	"github.com/kernbench/kernbench/ops"
)

// A CStruct builds the bytes of a struct a kernel takes by value (CUDA) or
// in a constant buffer (Metal), with C's layout, which CUDA and MSL both
// follow for a struct of scalars: little-endian, each field at a multiple
// of its size, the whole padded to its largest field. The methods append
// a field each, in the order of the struct's declaration, and return the
// struct so calls chain.
type CStruct struct {
	b     []byte
	align int
}

func (s *CStruct) field(size int) {
	if s.b == nil {
		s.b = make([]byte, 0, 128) // most structs: one allocation
	}
	for len(s.b)%size != 0 {
		s.b = append(s.b, 0)
	}
	s.align = max(s.align, size)
}

// I64 appends an int64 (long, i64).
func (s *CStruct) I64(v int64) *CStruct {
	s.field(8)
	s.b = binary.LittleEndian.AppendUint64(s.b, uint64(v))
	return s
}

// I32 appends an int32 (int).
func (s *CStruct) I32(v int32) *CStruct {
	s.field(4)
	s.b = binary.LittleEndian.AppendUint32(s.b, uint32(v))
	return s
}

// F32 appends a float.
func (s *CStruct) F32(v float32) *CStruct {
	s.field(4)
	s.b = binary.LittleEndian.AppendUint32(s.b, math.Float32bits(v))
	return s
}

// Tensor appends a kb_tensor (kernels' common header): the element counts
// and byte strides of t's four dimensions.
func (s *CStruct) Tensor(t *ops.Tensor) *CStruct {
	for _, n := range t.Ne {
		s.I64(n)
	}
	for _, n := range t.Nb {
		s.I64(n)
	}
	return s
}

// Bytes returns the struct's bytes, padded; an empty struct is four zero
// bytes (Metal binds no empty buffer).
func (s *CStruct) Bytes() []byte {
	for s.align > 0 && len(s.b)%s.align != 0 {
		s.b = append(s.b, 0)
	}
	if len(s.b) == 0 {
		return []byte{0, 0, 0, 0}
	}
	return s.b
}
