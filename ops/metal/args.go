package metal

import (
	"encoding/binary"
	"math"

	"github.com/kernbench/kernbench/ops"
)

// Kernel arguments are a struct each kernel declares (kernels/*.metal)
// and takes as `constant Args& args [[buffer(0)]]`; the host writes its
// bytes with cstruct, in the order and with the types of the struct's
// fields, and binds them with setBytes. MSL lays a struct of scalars out
// as C does (each field at a multiple of its size, the whole padded to
// its largest field).

// cstruct builds a struct's bytes with C's layout.
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

func (s *cstruct) i64(v int64) *cstruct {
	s.field(8)
	s.b = binary.LittleEndian.AppendUint64(s.b, uint64(v))
	return s
}

func (s *cstruct) i32(v int32) *cstruct {
	s.field(4)
	s.b = binary.LittleEndian.AppendUint32(s.b, uint32(v))
	return s
}

func (s *cstruct) f32(v float32) *cstruct {
	s.field(4)
	s.b = binary.LittleEndian.AppendUint32(s.b, math.Float32bits(v))
	return s
}

// tensor appends a kb_tensor (kernels/common.h): the element counts and
// byte strides of t's four dimensions.
func (s *cstruct) tensor(t *ops.Tensor) *cstruct {
	for _, n := range t.Ne {
		s.i64(n)
	}
	for _, n := range t.Nb {
		s.i64(n)
	}
	return s
}

func (s *cstruct) bytes() []byte {
	for s.align > 0 && len(s.b)%s.align != 0 {
		s.b = append(s.b, 0)
	}
	if len(s.b) == 0 {
		return []byte{0, 0, 0, 0}
	}
	return s.b
}

func b32(v bool) int32 {
	if v {
		return 1
	}
	return 0
}
