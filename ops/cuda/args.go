package cuda

import (
	"encoding/binary"
	"math"

	"github.com/kernbench/kernbench/ops"
)

// Kernel parameters are passed as their bytes, laid out as the kernel's C
// declaration lays them out (little-endian, natural alignment; structs by
// gpu.CStruct); the emulated driver checks each one's size against the
// kernel's signature.

func u64(v uint64) []byte  { return binary.LittleEndian.AppendUint64(nil, v) }
func i64(v int64) []byte   { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }
func i32(v int32) []byte   { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }
func f32(v float32) []byte { return binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)) }

// tensorArg is a kb_tensor (kernels/common.cuh): the element counts and
// byte strides of t's four dimensions, as gpu.CStruct's Tensor lays them
// out, in one allocation.
func tensorArg(t *ops.Tensor) []byte {
	b := make([]byte, 64)
	for i := range 4 {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(t.Ne[i]))
		binary.LittleEndian.PutUint64(b[32+8*i:], uint64(t.Nb[i]))
	}
	return b
}
