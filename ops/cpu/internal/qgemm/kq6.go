package qgemm

import (
	"encoding/binary"
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// The q6_K panel kernel: eight q6_K weight rows by four q8_K activation
// rows per call, the activation rows read in place, as the q4_K kernel
// (kq4.go). A q6_K element is d*sc_g*(q-32), q a 6-bit code, sc_g a
// signed 8-bit scale per group of sixteen; with the q8_K block's sums of
// sixteen codes (bsums) the offset 32 comes out of the integer sum:
//
//	sum (q-32)*y*sc = sum_g sc_g*sum_{i in g} q_i*y_i - 32*sum_g sc_g*bsum_g
//
// The panel holds per super-block (PanelQ6_K bytes), for each sub-block
// s of 32 elements, 352 bytes:
//
//   - eight vectors of 32 code bytes, vector j holding elements
//     32s+4j..32s+4j+3 of row r in bytes 4r..4r+3, as the unsigned codes
//     q (0..63); vectors 0-3 are group 2s, vectors 4-7 group 2s+1;
//   - the rows' scales of group 2s as sixteen int16 (row r's in lanes 2r
//     and 2r+1), then those of group 2s+1;
//   - the rows' two scales as pairs (lanes 2r, 2r+1: sc_2s, sc_2s+1);
//
// then the rows' d as eight float32. VPMADDUBSW pairs (at most 16128 in
// magnitude) add in int16 two vectors at a time (32256), VPMADDWD with the
// group's scales widens them, and VPMADDWD of the scale pairs with the
// sub-block's two bsums gives the offset's sum. Per super-block and
// output one FMA takes the exact int32 total into float32:
//
//	o = fma(float32(isum - 32*bsum), d_x*d_y, o)
const (
	panelSubQ6_K = 352
	// PanelQ6_K is the size of one super-block of a q6_K panel.
	PanelQ6_K = 8*panelSubQ6_K + 32
)

// q6KCodes writes the 256 unsigned 6-bit codes of the q6_K block x into
// q, in element order.
func q6KCodes(x []byte, q *[quant.QKK]byte) {
	ql, qh := x[0:128], x[128:192]
	for h := range 2 {
		for l := range 32 {
			lo0, lo1, hi := ql[64*h+l], ql[64*h+l+32], qh[32*h+l]
			q[128*h+l] = lo0&15 | (hi&3)<<4
			q[128*h+l+32] = lo1&15 | (hi>>2&3)<<4
			q[128*h+l+64] = lo0>>4 | (hi>>4&3)<<4
			q[128*h+l+96] = lo1>>4 | (hi>>6&3)<<4
		}
	}
}

// RepackQ6_K writes super-blocks [0, nb) of the eight q6_K weight rows
// w[r*ld:] into panel (nb*PanelQ6_K bytes) in the layout above.
func RepackQ6_K(panel, w []byte, ld, nb int64) {
	var q [quant.QKK]byte
	for b := range nb {
		p := panel[b*PanelQ6_K : (b+1)*PanelQ6_K]
		for r := range 8 {
			x := w[int64(r)*ld+b*simd.BytesQ6_K:][:simd.BytesQ6_K]
			binary.LittleEndian.PutUint32(p[8*panelSubQ6_K+4*r:], math.Float32bits(quant.FP16ToFP32(binary.LittleEndian.Uint16(x[208:]))))
			q6KCodes(x, &q)
			sc := x[192:208]
			for s := range 8 {
				sp := p[s*panelSubQ6_K : (s+1)*panelSubQ6_K]
				sa, sb := uint16(int16(int8(sc[2*s]))), uint16(int16(int8(sc[2*s+1])))
				binary.LittleEndian.PutUint16(sp[256+4*r:], sa)
				binary.LittleEndian.PutUint16(sp[256+4*r+2:], sa)
				binary.LittleEndian.PutUint16(sp[288+4*r:], sb)
				binary.LittleEndian.PutUint16(sp[288+4*r+2:], sb)
				binary.LittleEndian.PutUint16(sp[320+4*r:], sa)
				binary.LittleEndian.PutUint16(sp[320+4*r+2:], sb)
				for j := range 8 {
					copy(sp[32*j+4*r:32*j+4*r+4], q[32*s+4*j:])
				}
			}
		}
	}
}

// TwinQ6_K adds to out[8c+r] the dot product of panel row r with
// q8_K activation row c (at y[c*ldy:]) over super-blocks [0, nb), in the
// arithmetic described above: it is, bit for bit, the AVX2 kernel.
func TwinQ6_K(nb int, panel, y []byte, ldy int, out *[32]float32) {
	for b := range nb {
		p := panel[b*PanelQ6_K : (b+1)*PanelQ6_K]
		for c := range 4 {
			yb := y[c*ldy+b*simd.BytesQ8_K:][:simd.BytesQ8_K]
			dy := math.Float32frombits(binary.LittleEndian.Uint32(yb))
			var isum, bsum [8]int32
			for s := range 8 {
				sp := p[s*panelSubQ6_K : (s+1)*panelSubQ6_K]
				for pair := range 4 {
					var acc [16]int16
					for j := 2 * pair; j < 2*pair+2; j++ {
						a := yb[4+32*s+4*j:][:4]
						for l := range 16 {
							acc[l] += maddubs(sp[32*j+2*l], a[2*(l%2)], sp[32*j+2*l+1], a[2*(l%2)+1])
						}
					}
					scales := sp[256+32*(pair/2):]
					for r := range 8 {
						sc := int32(int16(binary.LittleEndian.Uint16(scales[4*r:])))
						isum[r] += int32(acc[2*r])*sc + int32(acc[2*r+1])*sc
					}
				}
				bs0 := int32(int16(binary.LittleEndian.Uint16(yb[4+quant.QKK+4*s:])))
				bs1 := int32(int16(binary.LittleEndian.Uint16(yb[4+quant.QKK+4*s+2:])))
				for r := range 8 {
					sa := int32(int16(binary.LittleEndian.Uint16(sp[320+4*r:])))
					sb := int32(int16(binary.LittleEndian.Uint16(sp[320+4*r+2:])))
					bsum[r] += sa*bs0 + sb*bs1
				}
			}
			for r := range 8 {
				dx := math.Float32frombits(binary.LittleEndian.Uint32(p[8*panelSubQ6_K+4*r:]))
				out[8*c+r] = simd.FMA32(float32(isum[r]-32*bsum[r]), dx*dy, out[8*c+r])
			}
		}
	}
}
