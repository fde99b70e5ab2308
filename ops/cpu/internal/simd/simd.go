// Package simd holds what the CPU backend's kernel packages share: the
// block sizes of the quantized formats, the binary16 table, and the lane
// arithmetic of the AVX2 kernels in Go (FMA32, the VPMADDUBSW/VPMADDWD
// lanes, the block loops' accumulators) from which their pure-Go twins
// are built.
package simd

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/kernbench/kernbench/quant"
)

// Block sizes in bytes of the 32-element formats and of the K formats.
const (
	BytesQ4_0 = 18
	BytesQ4_1 = 20
	BytesQ5_0 = 22
	BytesQ5_1 = 24
	BytesQ8_0 = 34
	BytesQ8_1 = 36

	BytesQ2_K = 84
	BytesQ3_K = 110
	BytesQ4_K = 144
	BytesQ5_K = 176
	BytesQ6_K = 210
	BytesQ8_K = 292
)

// HalfTable maps every binary16 bit pattern to its float32 value, as
// ggml's CPU backend does without F16C: a load instead of bit fiddling per
// element. Assembly loads it as a pointer (MOVQ ·halfTable(SB)) from a
// package variable of its own package set to this one.
var HalfTable = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = quant.FP16ToFP32(uint16(i))
	}
	return &t
}()

// HalfAt returns the binary16 value at byte offset off of b as float32.
func HalfAt(b []byte, off int) float32 {
	return HalfTable[binary.LittleEndian.Uint16(b[off:])]
}

// Float32At returns the little-endian float32 at byte offset off of b.
func Float32At(b []byte, off int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))
}

// BF16At returns the bfloat16 value at byte offset off of b as float32.
func BF16At(b []byte, off int) float32 {
	return math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[off:])) << 16)
}

// F32s views n float32 values at byte offset off of b.
func F32s(b []byte, off int64, n int64) []float32 {
	if n == 0 {
		return nil
	}
	_ = b[off+4*n-1]
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[off])), n)
}

// U16s views n uint16 values at byte offset off of b.
func U16s(b []byte, off int64, n int64) []uint16 {
	if n == 0 {
		return nil
	}
	_ = b[off+2*n-1]
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[off])), n)
}
