package cpu

import (
	"unsafe"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// mem returns the host bytes of t, from its first byte to the end of its
// extent. Compute has checked them with hostCheck.
func mem(t *ops.Tensor) []byte {
	b, err := t.HostBytes()
	if err != nil {
		panic("cpu: unchecked tensor: " + err.Error())
	}
	return b
}

// at returns the byte offset of element (i0, i1, i2, i3) of t; i0 must be
// a block boundary for block-quantized types.
func at(t *ops.Tensor, i0, i1, i2, i3 int64) int64 {
	return i0/t.Type.BlockSize()*t.Nb[0] + i1*t.Nb[1] + i2*t.Nb[2] + i3*t.Nb[3]
}

// f32s views n float32 values at byte offset off of b (simd.F32s). Host
// buffers are 64-byte aligned and f32 tensors have 4-byte aligned offsets
// and strides, which Compute relies on.
func f32s(b []byte, off int64, n int64) []float32 { return simd.F32s(b, off, n) }

// i32s views n int32 values at byte offset off of b.
func i32s(b []byte, off int64, n int64) []int32 {
	if n == 0 {
		return nil
	}
	_ = b[off+4*n-1]
	return unsafe.Slice((*int32)(unsafe.Pointer(&b[off])), n)
}

// u16s views n uint16 values at byte offset off of b (simd.U16s).
func u16s(b []byte, off int64, n int64) []uint16 { return simd.U16s(b, off, n) }

// u32View views u's values in pairs, as len(u)/2 uint32 values (the
// first of each pair in the low half).
func u32View(u []uint16) []uint32 {
	if len(u) < 2 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&u[0])), len(u)/2)
}

// f32At returns the float32 at byte offset off of b.
func f32At(b []byte, off int64) float32 {
	return *(*float32)(unsafe.Pointer(&b[off : off+4][0]))
}
