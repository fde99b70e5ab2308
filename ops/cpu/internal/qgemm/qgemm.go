// Package qgemm holds the panel kernels of the quantized gemm path: eight
// weight rows of q4_0, q5_0, q8_0, q4_1 or q5_1 repacked into a panel with
// the rows in the vector lanes (RepackQ4_0 .. RepackQ8_0 in Go, the
// *AVX2 forms in assembly, equal byte for byte), multiplied by a packed
// group of four activation rows, 8x4 outputs per call (Q4_0AVX2 ..
// Q5_1AVX2, qgemm_amd64.s), with the kernels' twin (Twin) and BiasGroup,
// which biases a packed q8 group's codes for the q4_0/q5_0 kernels. The
// panel layout is described at package cpu's qTile, which drives them.
//
// It also holds the K-format panel kernels (kq4.go, kq5.go, kq6.go):
// eight q4_K, q5_K or q6_K weight rows repacked with their sub-block
// scales (RepackQ4_K, RepackQ5_K, RepackQ6_K), times four q8_K activation
// rows read in place (Q4_KAVX2, Q5_KAVX2, Q6_KAVX2, kpanel_amd64.s; twins
// TwinQ4_K, TwinQ5_K, TwinQ6_K), driven by package cpu's kTile.
//
// Both have VNNI forms for the vnni tier (Q4_0VNNI .. Q5_1VNNI,
// qgemm_vnni_amd64.s; Q4_KVNNI, Q5_KVNNI, Q6_KVNNI, kpanel_vnni_amd64.s):
// the same panels and outputs bit for bit, VPDPBUSD on zmm registers.
package qgemm

import (
	"encoding/binary"
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// Panel block sizes: 256 code bytes, eight float32 scales and, for q4_0
// and q5_0, eight int32 corrections (for q4_1 and q5_1 the eight m_x as
// float32).
const (
	panelD      = 256
	panelCorr   = 288
	PanelBlock  = 320 // q4_0, q5_0, q4_1, q5_1 (m_x at panelCorr)
	PanelBlock8 = 288 // q8_0
)

// panelPut writes row r's scale d (as float32) and, when corr, its
// correction 128*sum of its signed codes into panel block pb.
func panelPut(pb []byte, r int, d float32, sum int32, corr bool) {
	binary.LittleEndian.PutUint32(pb[panelD+4*r:], math.Float32bits(d))
	if corr {
		binary.LittleEndian.PutUint32(pb[panelCorr+4*r:], uint32(128*sum))
	}
}

// Bytes of every lane: SWAR constants of the nibble repacking.
const (
	lanes0f = 0x0f0f0f0f0f0f0f0f
	lanes80 = 0x8080808080808080
	lanes01 = 0x0101010101010101
)

// subBias subtracts b (< 128) from each byte of x (each < 128 + b), as
// signed bytes: the bytes go through 0x80+x-b, which never borrows.
func subBias(x, b uint64) uint64 {
	return ((x | lanes80) - b*lanes01) ^ lanes80
}

// byteSum returns the sum of the eight bytes of x (each small enough
// that the sum stays below 256).
func byteSum(x uint64) int32 {
	return int32((x * lanes01) >> 56)
}

// RepackQ4_0 writes a q4_0 panel (see qTile): codes q-8.
func RepackQ4_0(panel, w []byte, ld, nb int64) {
	for b := range nb {
		pb := panel[b*PanelBlock : (b+1)*PanelBlock]
		for r := range 8 {
			row := w[int64(r)*ld:]
			bx := row[b*simd.BytesQ4_0 : (b+1)*simd.BytesQ4_0]
			l0 := binary.LittleEndian.Uint64(bx[2:])
			l1 := binary.LittleEndian.Uint64(bx[10:])
			// Elements 0-7, 8-15 (low nibbles), 16-23, 24-31.
			v := [4]uint64{l0 & lanes0f, l1 & lanes0f, l0 >> 4 & lanes0f, l1 >> 4 & lanes0f}
			sum := byteSum(v[0]) + byteSum(v[1]) + byteSum(v[2]) + byteSum(v[3]) - 8*32
			for h, x := range v {
				x = subBias(x, 8)
				binary.LittleEndian.PutUint32(pb[64*h+4*r:], uint32(x))
				binary.LittleEndian.PutUint32(pb[64*h+32+4*r:], uint32(x>>32))
			}
			panelPut(pb, r, simd.HalfAt(bx, 0), sum, true)
		}
	}
}

// RepackQ5_0 writes a q5_0 panel (see qTile): codes q-16, q with its
// fifth bit from qh.
func RepackQ5_0(panel, w []byte, ld, nb int64) {
	for b := range nb {
		pb := panel[b*PanelBlock : (b+1)*PanelBlock]
		for r := range 8 {
			row := w[int64(r)*ld:]
			bx := row[b*simd.BytesQ5_0 : (b+1)*simd.BytesQ5_0]
			qh := binary.LittleEndian.Uint32(bx[2:])
			l0 := binary.LittleEndian.Uint64(bx[6:])
			l1 := binary.LittleEndian.Uint64(bx[14:])
			v := [4]uint64{l0 & lanes0f, l1 & lanes0f, l0 >> 4 & lanes0f, l1 >> 4 & lanes0f}
			var sum int32
			for h, x := range v {
				// Bit 4 of element 8h+e is bit 8h+e of qh.
				x |= spread[uint8(qh>>(8*h))] << 4
				sum += byteSum(x)
				x = subBias(x, 16)
				binary.LittleEndian.PutUint32(pb[64*h+4*r:], uint32(x))
				binary.LittleEndian.PutUint32(pb[64*h+32+4*r:], uint32(x>>32))
			}
			sum -= 16 * 32
			panelPut(pb, r, simd.HalfAt(bx, 0), sum, true)
		}
	}
}

// RepackQ4_1 writes a q4_1 panel (see qTile): the codes q, d_x and m_x.
func RepackQ4_1(panel, w []byte, ld, nb int64) {
	for b := range nb {
		pb := panel[b*PanelBlock : (b+1)*PanelBlock]
		for r := range 8 {
			row := w[int64(r)*ld:]
			bx := row[b*simd.BytesQ4_1 : (b+1)*simd.BytesQ4_1]
			l0 := binary.LittleEndian.Uint64(bx[4:])
			l1 := binary.LittleEndian.Uint64(bx[12:])
			v := [4]uint64{l0 & lanes0f, l1 & lanes0f, l0 >> 4 & lanes0f, l1 >> 4 & lanes0f}
			for h, x := range v {
				binary.LittleEndian.PutUint32(pb[64*h+4*r:], uint32(x))
				binary.LittleEndian.PutUint32(pb[64*h+32+4*r:], uint32(x>>32))
			}
			panelPut(pb, r, simd.HalfAt(bx, 0), 0, false)
			binary.LittleEndian.PutUint32(pb[panelCorr+4*r:], math.Float32bits(simd.HalfAt(bx, 2)))
		}
	}
}

// RepackQ5_1 writes a q5_1 panel (see qTile): the codes q with their
// fifth bit, d_x and m_x.
func RepackQ5_1(panel, w []byte, ld, nb int64) {
	for b := range nb {
		pb := panel[b*PanelBlock : (b+1)*PanelBlock]
		for r := range 8 {
			row := w[int64(r)*ld:]
			bx := row[b*simd.BytesQ5_1 : (b+1)*simd.BytesQ5_1]
			qh := binary.LittleEndian.Uint32(bx[4:])
			l0 := binary.LittleEndian.Uint64(bx[8:])
			l1 := binary.LittleEndian.Uint64(bx[16:])
			v := [4]uint64{l0 & lanes0f, l1 & lanes0f, l0 >> 4 & lanes0f, l1 >> 4 & lanes0f}
			for h, x := range v {
				x |= spread[uint8(qh>>(8*h))] << 4
				binary.LittleEndian.PutUint32(pb[64*h+4*r:], uint32(x))
				binary.LittleEndian.PutUint32(pb[64*h+32+4*r:], uint32(x>>32))
			}
			panelPut(pb, r, simd.HalfAt(bx, 0), 0, false)
			binary.LittleEndian.PutUint32(pb[panelCorr+4*r:], math.Float32bits(simd.HalfAt(bx, 2)))
		}
	}
}

// spread maps a byte m to the uint64 whose byte i is bit i of m.
var spread = func() (t [256]uint64) {
	for m := range t {
		for i := range 8 {
			t[m] |= uint64(m>>i&1) << (8 * i)
		}
	}
	return t
}()

// RepackQ8_0 writes a q8_0 panel (see qTile): the codes as they are.
func RepackQ8_0(panel, w []byte, ld, nb int64) {
	for b := range nb {
		pb := panel[b*PanelBlock8 : (b+1)*PanelBlock8]
		for r := range 8 {
			row := w[int64(r)*ld:]
			bx := row[b*simd.BytesQ8_0 : (b+1)*simd.BytesQ8_0]
			for v := range 8 {
				binary.LittleEndian.PutUint32(pb[32*v+4*r:], binary.LittleEndian.Uint32(bx[2+4*v:]))
			}
			panelPut(pb, r, simd.HalfAt(bx, 0), 0, false)
		}
	}
}

// BiasGroup adds 128 (modulo 256) to the activation codes of the nb
// blocks of a packed q8 group, turning signed codes y into the unsigned
// y+128 the biased kernels multiply.
func BiasGroup(grp []byte, nb int64) {
	for b := range nb {
		codes := grp[b*dot.PackQ8Block+16 : (b+1)*dot.PackQ8Block]
		for i := 0; i < len(codes); i += 8 {
			x := binary.LittleEndian.Uint64(codes[i:])
			binary.LittleEndian.PutUint64(codes[i:], x^lanes80)
		}
	}
}
