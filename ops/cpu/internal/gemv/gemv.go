// Package gemv holds the four-row kernels of MUL_MAT with one to three
// activation rows: four weight rows against one activation row per call,
// for the legacy and K types, IQ4_NL and MXFP4 (gemv_table_amd64.s),
// IQ4_XS (gemv_iq4xs_amd64.s) and the float types on the avx2 tier
// (gemv_*_amd64.s), with their pure-Go twins (twin.go; the K formats' and
// IQ4_XS's twins are the generic dot products and twins of internal/dot) and the side-data kernel of q4_0 (SideQ4_0AVX2
// with Q4_0Prep), which prepares what depends on the activation row alone
// once per call, and the x8 kernels (x8.go, x8k.go): eight rows
// interleaved per block, for q4_0, q8_0, q6_K and q4_K weights repacked
// once. The backend's avx2 table (package cpu) installs them.
package gemv

import (
	"encoding/binary"
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// A Func sets out[r] to the dot product of nb blocks of weight row
// x + r*ldx (r < 4) with the activation row y, whose block scales dy
// holds widened to float32 (the q8_0 activation rows of the 32-element
// formats; for a side kernel, dy is the side data). For weight types whose
// activation rows carry their scales (q8_1, q8_K) or have none (f16, bf16,
// f32), dy is nil and, for the float types, nb counts runs of F16Run
// elements.
type Func func(nb int, x []byte, ldx int, y []byte, dy []float32, out *[4]float32)

// F16Run is the run of elements the float four-row kernels take per step.
const F16Run = 16

// SideSlots is the float32 slots per block of a side kernel's data: eight int32 lanes (as their bits; the four of a row twice,
// one set per vector half) and the widened d_y, 36 bytes.
const SideSlots = 9

// Q4_0Prep writes sideQ4_0x4AVX2's side data of the q8_0 row y (nb
// blocks) into side: per block the lanes 8*(y_4l + .. + y_4l+3 +
// y_16+4l + .. + y_16+4l+3), which the kernel takes out of its unsigned
// nibble products, and d_y (an activation row is prepared once per call,
// not once per four weight rows).
func Q4_0Prep(y []byte, nb int, side []float32) {
	for ib := range nb {
		by, s := y[ib*simd.BytesQ8_0:][:simd.BytesQ8_0], side[ib*SideSlots:][:SideSlots]
		// Lanes 0-1 and 2-3, eight codes a word (four a lane) from
		// each half of the block.
		c0, c1 := laneSums(binary.LittleEndian.Uint64(by[2:]), binary.LittleEndian.Uint64(by[18:]))
		c2, c3 := laneSums(binary.LittleEndian.Uint64(by[10:]), binary.LittleEndian.Uint64(by[26:]))
		s[0] = math.Float32frombits(uint32(8 * c0))
		s[1] = math.Float32frombits(uint32(8 * c1))
		s[2] = math.Float32frombits(uint32(8 * c2))
		s[3] = math.Float32frombits(uint32(8 * c3))
		s[4], s[5], s[6], s[7] = s[0], s[1], s[2], s[3]
		s[8] = simd.HalfAt(by, 0)
	}
}

// laneSums returns the sums of the signed bytes 0-3 of a and b together,
// and of bytes 4-7 of a and b, exactly: each byte biased by 128 (its sign
// bit flipped) is unsigned, so the biased bytes add without carries
// between fields (pairs in 16-bit fields, at most 4*255; lanes in 32-bit
// ones), and each sum of eight loses 8*128 again.
func laneSums(a, b uint64) (lo, hi int32) {
	const sign, m8, m16 = 0x8080808080808080, 0x00ff00ff00ff00ff, 0x0000ffff0000ffff
	a ^= sign
	b ^= sign
	t := a&m8 + (a>>8)&m8 + b&m8 + (b>>8)&m8
	u := t&m16 + (t>>16)&m16
	return int32(uint32(u)) - 1024, int32(u>>32) - 1024
}
