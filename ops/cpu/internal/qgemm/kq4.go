package qgemm

import (
	"encoding/binary"
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// The q4_K panel kernel: eight q4_K weight rows by four q8_K activation
// rows per call, the activation rows read in place.
//
// The eight weight rows are repacked once per row block (RepackQ4_K)
// into a panel with the rows in the vector lanes. Per super-block of 256
// elements, PanelQ4_K bytes: for each sub-block s of 32 elements, 320
// bytes:
//
//   - eight vectors of 32 code bytes, vector j holding elements
//     32s+4j..32s+4j+3 of row r in bytes 4r..4r+3, as the unsigned 4-bit
//     codes q (0..15);
//   - the rows' 6-bit scales as sixteen int16, row r's in lanes 2r and
//     2r+1;
//   - the rows' 6-bit mins, likewise;
//
// then the rows' d and dmin as eight float32 each.
//
// Per sub-block and activation column, VPMADDUBSW of vector j with four
// activation codes broadcast to every lane gives each row two int16 sums
// of two products (at most 2*15*128 = 3840 in magnitude); eight of them
// add in int16 without overflow (30720), and VPMADDWD with the scales
// turns the pair into sc*sum(q*y) as int32. The mins meet the q8_K
// block's sums of sixteen codes (bsums) the same way: VPMADDWD of the
// mins with the two bsums of the sub-block broadcast. Per super-block and
// output two FMAs take the exact int32 sums into float32:
//
//	o = fma(float32(isum), d_x*d_y, o)
//	o = fma(-float32(msum), dmin_x*d_y, o)
//
// which is the q4_K dot product's arithmetic per super-block (not bit
// for bit the dot product's, which rounds its two terms apart).
const (
	panelSubQ4_K = 320
	// PanelQ4_K is the size of one super-block of a q4_K panel.
	PanelQ4_K = 8*panelSubQ4_K + 64
)

// RepackQ4_K writes super-blocks [0, nb) of the eight q4_K weight rows
// w[r*ld:] into panel (nb*PanelQ4_K bytes) in the layout above.
func RepackQ4_K(panel, w []byte, ld, nb int64) {
	repackQ45K(panel, w, ld, nb, simd.BytesQ4_K)
}

// repackQ45K is RepackQ4_K and RepackQ5_K, for blocks of xs bytes: a
// q5_K block has its high bits (qh, 32 bytes) between the scales and the
// nibbles, and they add 16 to a code whose bit s of qh[e] is set.
func repackQ45K(panel, w []byte, ld, nb, xs int64) {
	for b := range nb {
		p := panel[b*PanelQ4_K : (b+1)*PanelQ4_K]
		for r := range int64(8) {
			x := w[r*ld+b*xs:][:xs]
			binary.LittleEndian.PutUint32(p[8*panelSubQ4_K+4*r:], math.Float32bits(quant.FP16ToFP32(binary.LittleEndian.Uint16(x[0:]))))
			binary.LittleEndian.PutUint32(p[8*panelSubQ4_K+32+4*r:], math.Float32bits(quant.FP16ToFP32(binary.LittleEndian.Uint16(x[2:]))))
			scales, qs := x[4:16], x[xs-128:]
			var qh []byte
			if xs == simd.BytesQ5_K {
				qh = x[16:48]
			}
			for s := range 8 {
				sc, m := scaleMinK4(scales, s)
				sp := p[s*panelSubQ4_K : (s+1)*panelSubQ4_K]
				binary.LittleEndian.PutUint16(sp[256+4*r:], uint16(sc))
				binary.LittleEndian.PutUint16(sp[256+4*r+2:], uint16(sc))
				binary.LittleEndian.PutUint16(sp[288+4*r:], uint16(m))
				binary.LittleEndian.PutUint16(sp[288+4*r+2:], uint16(m))
				// Eight codes at a time: bytes e..e+7 of the sub-block's
				// nibbles, shifted and masked (and, for q5_K, their bit s
				// of qh moved to bit 4), are elements e..e+7, which go to
				// vectors e/4 and e/4+1 at row r.
				src := qs[32*(s/2) : 32*(s/2)+32]
				shift := 4 * uint(s%2)
				for e := 0; e < 32; e += 8 {
					v := (binary.LittleEndian.Uint64(src[e:]) >> shift) & 0x0f0f0f0f0f0f0f0f
					if qh != nil {
						v |= (binary.LittleEndian.Uint64(qh[e:]) >> uint(s) & 0x0101010101010101) << 4
					}
					binary.LittleEndian.PutUint32(sp[8*e+4*int(r):], uint32(v))
					binary.LittleEndian.PutUint32(sp[8*e+32+4*int(r):], uint32(v>>32))
				}
			}
		}
	}
}

// scaleMinK4 returns the 6-bit scale and min of sub-block j (0..7) from
// the 12 packed scale bytes of a q4_K block.
func scaleMinK4(s []byte, j int) (sc, m uint8) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&15 | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

// TwinQ4_K adds to out[8c+r] the dot product of panel row r with q8_K
// activation row c (at y[c*ldy:]) over super-blocks [0, nb), in the
// arithmetic described above: it is, bit for bit, the AVX2 kernel.
func TwinQ4_K(nb int, panel, y []byte, ldy int, out *[32]float32) {
	twinQ45K(nb, panel, y, ldy, out, 8)
}

// twinQ45K is the twin of the q4_K and q5_K kernels, whose int16 sums run
// over run vectors of a sub-block (8 and 4) before VPMADDWD widens them.
func twinQ45K(nb int, panel, y []byte, ldy int, out *[32]float32, run int) {
	for b := range nb {
		p := panel[b*PanelQ4_K : (b+1)*PanelQ4_K]
		for c := range 4 {
			yb := y[c*ldy+b*simd.BytesQ8_K:][:simd.BytesQ8_K]
			dy := math.Float32frombits(binary.LittleEndian.Uint32(yb))
			var isum, msum [8]int32
			for s := range 8 {
				sp := p[s*panelSubQ4_K : (s+1)*panelSubQ4_K]
				for j0 := 0; j0 < 8; j0 += run {
					var acc [16]int16
					for j := j0; j < j0+run; j++ {
						a := yb[4+32*s+4*j:][:4]
						for l := range 16 {
							acc[l] += maddubs(sp[32*j+2*l], a[2*(l%2)], sp[32*j+2*l+1], a[2*(l%2)+1])
						}
					}
					for r := range 8 {
						sc := int32(int16(binary.LittleEndian.Uint16(sp[256+4*r:])))
						isum[r] += int32(acc[2*r])*sc + int32(acc[2*r+1])*sc
					}
				}
				bs0 := int32(int16(binary.LittleEndian.Uint16(yb[4+quant.QKK+4*s:])))
				bs1 := int32(int16(binary.LittleEndian.Uint16(yb[4+quant.QKK+4*s+2:])))
				for r := range 8 {
					m := int32(int16(binary.LittleEndian.Uint16(sp[288+4*r:])))
					msum[r] += m*bs0 + m*bs1
				}
			}
			for r := range 8 {
				dx := math.Float32frombits(binary.LittleEndian.Uint32(p[8*panelSubQ4_K+4*r:]))
				dmin := math.Float32frombits(binary.LittleEndian.Uint32(p[8*panelSubQ4_K+32+4*r:]))
				o := out[8*c+r]
				o = simd.FMA32(float32(isum[r]), dx*dy, o)
				o = simd.FMA32(-float32(msum[r]), dmin*dy, o)
				out[8*c+r] = o
			}
		}
	}
}

// maddubs is one int16 lane of VPMADDUBSW: the unsigned bytes u0, u1
// times the signed bytes s0, s1, summed with signed saturation.
func maddubs(u0, s0, u1, s1 byte) int16 {
	return int16(simd.Sat16(int32(u0)*int32(int8(s0)) + int32(u1)*int32(int8(s1))))
}
