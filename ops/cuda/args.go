package cuda

import (
	"encoding/binary"
	"math"

	"github.com/kernbench/kernbench/ops"
)

// Kernel parameters are passed as their bytes, laid out as the kernel's C
// declaration lays them out (little-endian, natural alignment); the
// emulated driver checks each one's size against the kernel's signature.

func u64(v uint64) []byte  { return binary.LittleEndian.AppendUint64(nil, v) }
func i64(v int64) []byte   { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }
func i32(v int32) []byte   { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }
func f32(v float32) []byte { return binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)) }

// tensorArg is a kb_tensor (kernels/common.cuh): the element counts and
// byte strides of t's four dimensions.
func tensorArg(t *ops.Tensor) []byte {
	var s cstruct
	for _, n := range t.Ne {
		s.i64(n)
	}
	for _, n := range t.Nb {
		s.i64(n)
	}
	return s.bytes()
}

// cstruct builds a struct passed by value, with C's layout: each field at
// a multiple of its size, the whole padded to its largest field.
type cstruct struct {
	b     []byte
	align int
}

func (s *cstruct) field(size int) {
	for len(s.b)%size != 0 {
		s.b = append(s.b, 0)
	}
	s.align = max(s.align, size)
}

func (s *cstruct) i64(v int64) {
	s.field(8)
	s.b = binary.LittleEndian.AppendUint64(s.b, uint64(v))
}

func (s *cstruct) i32(v int32) {
	s.field(4)
	s.b = binary.LittleEndian.AppendUint32(s.b, uint32(v))
}

func (s *cstruct) f32(v float32) {
	s.field(4)
	s.b = binary.LittleEndian.AppendUint32(s.b, math.Float32bits(v))
}

func (s *cstruct) bytes() []byte {
	for s.align > 0 && len(s.b)%s.align != 0 {
		s.b = append(s.b, 0)
	}
	if len(s.b) == 0 {
		return []byte{0}
	}
	return s.b
}
