package dot

import (
	"encoding/binary"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// Twins of the AVX2 codebook kernels of iqgrid_amd64.go: each builds the
// 32 signed grid values of a sub-block as its assembly does and hands
// them to gdotTwin, the lane model of the shared GDOT macro.

// gdotTwin is GDOT of iqgrid_amd64.h: the 32 int8 values g take the
// signs of the q8_K codes y (VPSIGNB) and multiply |y| read unsigned
// (VPMADDUBSW), each int16 pair saturated, the pairs of elements 0..15
// times lo and those of 16..31 times hi (VPMADDWD), all summed.
func gdotTwin(g *[32]int8, y []byte, lo, hi int32) int32 {
	ys := simd.Codes8(y[:32])
	var s int32
	for p := range 16 {
		var pair int32
		for k := 2 * p; k < 2*p+2; k++ {
			a := int32(uint8(psignb(ys[k], ys[k])))
			pair += a * int32(psignb(g[k], ys[k]))
		}
		sc := lo
		if p >= 8 {
			sc = hi
		}
		s += simd.Sat16(pair) * sc
	}
	return s
}

// signBytes sets g[8l+i] to -g[8l+i] (wrapping) where bit i of byte l of
// signs is set.
func signBytes(g *[32]int8, signs uint32) {
	for e := range g {
		if signs>>(8*(e/8)+e%8)&1 != 0 {
			g[e] = -g[e]
		}
	}
}

// iq3xxsSumsTwin is the twin of iq3xxsSumsAVX2.
func iq3xxsSumsTwin(x, y []byte, out []int32) {
	for b := range out {
		bx, q8 := x[b*bytesIQ3_XXS:], y[b*simd.BytesQ8_K+4:]
		var s int32
		for j := range 8 {
			w := binary.LittleEndian.Uint32(bx[66+4*j:])
			var g [32]int8
			for k := range 8 {
				e := quant.IQ3XXSGrid[bx[2+8*j+k]]
				for i := range 4 {
					g[4*k+i] = int8(uint8(e >> (8 * i)))
				}
			}
			var signs uint32
			for l := range 4 {
				signs |= uint32(quant.KSignsIQ2XS[w>>(7*l)&127]) << (8 * l)
			}
			signBytes(&g, signs)
			sc := int32(2*(w>>28) + 1)
			s += gdotTwin(&g, q8[32*j:], sc, sc)
		}
		out[b] = s
	}
}

// iq3sSumsTwin is the twin of iq3sSumsAVX2.
func iq3sSumsTwin(x, y []byte, out []int32) {
	for b := range out {
		bx, q8 := x[b*bytesIQ3_S:], y[b*simd.BytesQ8_K+4:]
		qs, qh, signs, scales := bx[2:66], bx[66:74], bx[74:106], bx[106:110]
		var s int32
		for j := range 8 {
			var g [32]int8
			for k := range 8 {
				e := quant.IQ3SGrid[int(qs[8*j+k])|int(qh[j])>>k&1<<8]
				for i := range 4 {
					g[4*k+i] = int8(uint8(e >> (8 * i)))
				}
			}
			signBytes(&g, binary.LittleEndian.Uint32(signs[4*j:]))
			sc := int32(2*(scales[j/2]>>(4*(j%2))&15) + 1)
			s += gdotTwin(&g, q8[32*j:], sc, sc)
		}
		out[b] = s
	}
}

// iq2xsSumsTwin is the twin of iq2xsSumsAVX2.
func iq2xsSumsTwin(x, y []byte, out []int32) {
	for b := range out {
		bx, q8 := x[b*bytesIQ2_XS:], y[b*simd.BytesQ8_K+4:]
		var s int32
		for j := range 8 {
			var g [32]int8
			var signs uint32
			for l := range 4 {
				q := binary.LittleEndian.Uint16(bx[2+8*j+2*l:])
				e := quant.IQ2XSGrid[q&511]
				for i := range 8 {
					g[8*l+i] = int8(uint8(e >> (8 * i)))
				}
				signs |= uint32(quant.KSignsIQ2XS[q>>9]) << (8 * l)
			}
			signBytes(&g, signs)
			sc := bx[66+j]
			s += gdotTwin(&g, q8[32*j:], int32(2*(sc&15)+1), int32(2*(sc>>4)+1))
		}
		out[b] = s
	}
}

// iq2sSumsTwin is the twin of iq2sSumsAVX2.
func iq2sSumsTwin(x, y []byte, out []int32) {
	for b := range out {
		bx, q8 := x[b*bytesIQ2_S:], y[b*simd.BytesQ8_K+4:]
		qs, signs, qh, scales := bx[2:34], bx[34:66], bx[66:74], bx[74:82]
		var s int32
		for j := range 8 {
			var g [32]int8
			for l := range 4 {
				e := quant.IQ2SGrid[int(qs[4*j+l])|int(qh[j])>>(2*l)&3<<8]
				for i := range 8 {
					g[8*l+i] = int8(uint8(e >> (8 * i)))
				}
			}
			signBytes(&g, binary.LittleEndian.Uint32(signs[4*j:]))
			sc := scales[j]
			s += gdotTwin(&g, q8[32*j:], int32(2*(sc&15)+1), int32(2*(sc>>4)+1))
		}
		out[b] = s
	}
}

// iq1sSumsTwin is the twin of iq1sSumsAVX2.
func iq1sSumsTwin(x, y []byte, out []int32) {
	for b := range out[:len(out)/2] {
		bx, q8 := x[b*bytesIQ1_S:], y[b*simd.BytesQ8_K+4:]
		sums := y[b*simd.BytesQ8_K+260:]
		var grid, shift int32
		for j := range 8 {
			h := int(binary.LittleEndian.Uint16(bx[34+2*j:]))
			var g [32]int8
			for l := range 4 {
				e := quant.IQ1SGrid[int(bx[2+4*j+l])|(h>>(3*l)&7)<<8]
				for i := range 8 {
					g[8*l+i] = int8(uint8(e >> (8 * i)))
				}
			}
			ls := int32(2*(h>>12&7) + 1)
			grid += gdotTwin(&g, q8[32*j:], ls, ls)
			v := ls * (bsum(sums, 2*j) + bsum(sums, 2*j+1))
			if h&0x8000 != 0 {
				v = -v
			}
			shift += v
		}
		out[2*b], out[2*b+1] = grid, shift
	}
}

// iq1mSumsTwin is the twin of iq1mSumsAVX2: the shift part is the delta
// vector (-1 or +1 per group of 8) through gdotTwin, as the assembly
// does it.
func iq1mSumsTwin(x, y []byte, out []int32) {
	for b := range out[:len(out)/2] {
		bx, q8 := x[b*bytesIQ1_M:], y[b*simd.BytesQ8_K+4:]
		var grid, shift int32
		for j := range 8 {
			h := int(binary.LittleEndian.Uint16(bx[32+2*j:]))
			var g, delta [32]int8
			for l := range 4 {
				nib := h >> (4 * l)
				e := quant.IQ1SGrid[int(bx[4*j+l])|(nib&7)<<8]
				for i := range 8 {
					g[8*l+i] = int8(uint8(e >> (8 * i)))
					delta[8*l+i] = 1
					if nib&8 != 0 {
						delta[8*l+i] = -1
					}
				}
			}
			sc := int32(binary.LittleEndian.Uint16(bx[48+2*(j/2):]) >> (6 * (j % 2)))
			lo, hi := 2*(sc&7)+1, 2*(sc>>3&7)+1
			grid += gdotTwin(&g, q8[32*j:], lo, hi)
			shift += gdotTwin(&delta, q8[32*j:], lo, hi)
		}
		out[2*b], out[2*b+1] = grid, shift
	}
}
