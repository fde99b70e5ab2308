package dot

import (
	"encoding/binary"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// Dot products of the codebook formats (block layouts in quant/layout.go,
// grids in quant/iqtables_*.go) with q8_K activations: IQ2_XXS, IQ2_XS,
// IQ2_S, IQ3_XXS, IQ3_S, IQ1_S and IQ1_M. Each group of 8 (or 4) weights
// is a grid entry of small unsigned magnitudes (signed ones for IQ1),
// multiplied into the int8 activations with its signs and summed as
// integers; sub-block scale codes weight the integer sums, and each
// super-block's sum is scaled once in float32, as ggml's generic
// ggml_vec_dot_iq*_q8_K functions do (the final constant factor 1/8 or
// 1/4 of the IQ2 and IQ3_XXS scales applied to the row's total).

// Block sizes in bytes of the formats in this file.
const (
	bytesIQ2_XXS = 66
	bytesIQ2_XS  = 74
	bytesIQ2_S   = 82
	bytesIQ3_XXS = 98
	bytesIQ3_S   = 110
	bytesIQ1_S   = 50
	bytesIQ1_M   = 56
)

// grid8Dot returns sum(g_i * s_i * y_i) over the eight magnitudes g of a
// grid entry, s_i = -1 where bit i of signs is set, and the int8
// activations y.
func grid8Dot(entry uint64, signs uint8, y []byte) int32 {
	var s int32
	for i := range 8 {
		p := int32(uint8(entry>>(8*i))) * int32(int8(y[i]))
		if signs>>i&1 != 0 {
			p = -p
		}
		s += p
	}
	return s
}

// grid4Dot is grid8Dot for a 4-byte entry, with signs in bits 0..3.
func grid4Dot(entry uint32, signs uint8, y []byte) int32 {
	var s int32
	for i := range 4 {
		p := int32(uint8(entry>>(8*i))) * int32(int8(y[i]))
		if signs>>i&1 != 0 {
			p = -p
		}
		s += p
	}
	return s
}

// IQ2_XXS dots an iq2_xxs row with a q8_K row: per sub-block
// (2*ls + 1) * sum(g*s*y), per super-block times d_x*d_y, the row's
// total times 1/8.
func IQ2_XXS(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QKK {
		bx := x[ib*bytesIQ2_XXS : (ib+1)*bytesIQ2_XXS]
		yd, q8, _ := q8KBlock(y[ib*simd.BytesQ8_K : (ib+1)*simd.BytesQ8_K])
		d := float32(simd.HalfAt(bx, 0) * yd)
		var bsum int32
		for j := range 8 {
			q := bx[2+8*j:]
			w := binary.LittleEndian.Uint32(q[4:])
			var s int32
			for l := range 4 {
				s += grid8Dot(quant.IQ2XXSGrid[q[l]], quant.KSignsIQ2XS[w>>(7*l)&127], q8[32*j+8*l:])
			}
			bsum += s * int32(2*(w>>28)+1)
		}
		sum += float32(d * float32(bsum))
	}
	return float32(0.125 * sum)
}

// IQ2_XS dots an iq2_xs row with a q8_K row, as IQ2_XXS with two scale
// codes per sub-block.
func IQ2_XS(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QKK {
		bx := x[ib*bytesIQ2_XS : (ib+1)*bytesIQ2_XS]
		yd, q8, _ := q8KBlock(y[ib*simd.BytesQ8_K : (ib+1)*simd.BytesQ8_K])
		d := float32(simd.HalfAt(bx, 0) * yd)
		var bsum int32
		for j := range 8 {
			sc := bx[66+j]
			var s [2]int32
			for l := range 4 {
				q := binary.LittleEndian.Uint16(bx[2+8*j+2*l:])
				s[l/2] += grid8Dot(quant.IQ2XSGrid[q&511], quant.KSignsIQ2XS[q>>9], q8[32*j+8*l:])
			}
			bsum += s[0]*int32(2*(sc&15)+1) + s[1]*int32(2*(sc>>4)+1)
		}
		sum += float32(d * float32(bsum))
	}
	return float32(0.125 * sum)
}

// IQ2_S dots an iq2_s row with a q8_K row: 10-bit grid indices and full
// sign bytes, scaled as IQ2_XS.
func IQ2_S(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QKK {
		bx := x[ib*bytesIQ2_S : (ib+1)*bytesIQ2_S]
		yd, q8, _ := q8KBlock(y[ib*simd.BytesQ8_K : (ib+1)*simd.BytesQ8_K])
		d := float32(simd.HalfAt(bx, 0) * yd)
		qs, signs, qh, scales := bx[2:34], bx[34:66], bx[66:74], bx[74:82]
		var bsum int32
		for j := range 8 {
			var s [2]int32
			for l := range 4 {
				idx := int(qs[4*j+l]) | int(qh[j])>>(2*l)&3<<8
				s[l/2] += grid8Dot(quant.IQ2SGrid[idx], signs[4*j+l], q8[32*j+8*l:])
			}
			sc := scales[j]
			bsum += int32(2*(sc&15)+1)*s[0] + int32(2*(sc>>4)+1)*s[1]
		}
		sum += float32(d * float32(bsum))
	}
	return float32(0.125 * sum)
}

// IQ3_XXS dots an iq3_xxs row with a q8_K row: groups of 4 from the grid,
// 7-bit sign codes per 8, per sub-block (2*ls + 1), the row's total
// times 1/4.
func IQ3_XXS(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QKK {
		bx := x[ib*bytesIQ3_XXS : (ib+1)*bytesIQ3_XXS]
		yd, q8, _ := q8KBlock(y[ib*simd.BytesQ8_K : (ib+1)*simd.BytesQ8_K])
		d := float32(simd.HalfAt(bx, 0) * yd)
		qs := bx[2:66]
		var bsum int32
		for j := range 8 {
			w := binary.LittleEndian.Uint32(bx[66+4*j:])
			var s int32
			for l := range 4 {
				signs := quant.KSignsIQ2XS[w>>(7*l)&127]
				e := 32*j + 8*l
				s += grid4Dot(quant.IQ3XXSGrid[qs[e/4]], signs, q8[e:])
				s += grid4Dot(quant.IQ3XXSGrid[qs[e/4+1]], signs>>4, q8[e+4:])
			}
			bsum += s * int32(2*(w>>28)+1)
		}
		sum += float32(d * float32(bsum))
	}
	return float32(0.25 * sum)
}

// IQ3_S dots an iq3_s row with a q8_K row: 9-bit grid indices of groups
// of 4, sign bytes per 8, (2*ls + 1) per sub-block.
func IQ3_S(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QKK {
		bx := x[ib*bytesIQ3_S : (ib+1)*bytesIQ3_S]
		yd, q8, _ := q8KBlock(y[ib*simd.BytesQ8_K : (ib+1)*simd.BytesQ8_K])
		d := float32(simd.HalfAt(bx, 0) * yd)
		qs, qh, signs, scales := bx[2:66], bx[66:74], bx[74:106], bx[106:110]
		var bsum int32
		for j := range 8 {
			var s int32
			for k := range 8 {
				idx := int(qs[8*j+k]) | int(qh[j])>>k&1<<8
				s += grid4Dot(quant.IQ3SGrid[idx], signs[4*j+k/2]>>(4*(k%2)), q8[32*j+4*k:])
			}
			bsum += s * int32(2*(scales[j/2]>>(4*(j%2))&15)+1)
		}
		sum += float32(d * float32(bsum))
	}
	return sum
}

// iq1Dot returns sum(g_i * y_i) over the eight int8 values of IQ1SGrid
// entry idx.
func iq1Dot(idx int, y []byte) int32 {
	entry := quant.IQ1SGrid[idx]
	var s int32
	for i := range 8 {
		s += int32(int8(entry>>(8*i))) * int32(int8(y[i]))
	}
	return s
}

// IQ1_S dots an iq1_s row with a q8_K row: the grid part sum(g*y) and the
// shift part delta*sum(y) (from the q8_K block's sums of 16) are summed
// as integers, weighted by (2*ls + 1), and joined per super-block as
// d_x*d_y*(grid + sum_delta/8).
func IQ1_S(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QKK {
		bx := x[ib*bytesIQ1_S : (ib+1)*bytesIQ1_S]
		yd, q8, sums := q8KBlock(y[ib*simd.BytesQ8_K : (ib+1)*simd.BytesQ8_K])
		qs := bx[2:34]
		var sumi, sumi1 int32
		for j := range 8 {
			h := int(binary.LittleEndian.Uint16(bx[34+2*j:]))
			ls := int32(2*(h>>12&7) + 1)
			var lsum int32
			for l := range 4 {
				lsum += iq1Dot(int(qs[4*j+l])|(h>>(3*l)&7)<<8, q8[32*j+8*l:])
			}
			delta := int32(1)
			if h&0x8000 != 0 {
				delta = -1
			}
			sumi += ls * lsum
			sumi1 += ls * delta * (bsum(sums, 2*j) + bsum(sums, 2*j+1))
		}
		d := float32(simd.HalfAt(bx, 0) * yd)
		sum += float32(d * float32(float32(sumi)+float32(0.125*float32(sumi1))))
	}
	return sum
}

// IQ1_M dots an iq1_m row with a q8_K row: as IQ1_S with a scale code per
// two groups of 8, a shift sign per group (its activations' sum taken
// here, not from the q8_K sums) and the super-block scale assembled from
// the scale words' top nibbles.
func IQ1_M(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QKK {
		bx := x[ib*bytesIQ1_M : (ib+1)*bytesIQ1_M]
		yd, q8, _ := q8KBlock(y[ib*simd.BytesQ8_K : (ib+1)*simd.BytesQ8_K])
		qs, qh := bx[0:32], bx[32:48]
		var sumi1, sumi2 int32
		for j := range 8 {
			var s1, s2 [2]int32
			for l := range 4 {
				h := int(qh[2*j+l/2]) >> (4 * (l % 2))
				yl := q8[32*j+8*l : 32*j+8*l+8]
				var ysum int32
				for _, v := range yl {
					ysum += int32(int8(v))
				}
				if h&8 != 0 {
					ysum = -ysum
				}
				s1[l/2] += iq1Dot(int(qs[4*j+l])|(h&7)<<8, yl)
				s2[l/2] += ysum
			}
			sc := int32(binary.LittleEndian.Uint16(bx[48+2*(j/2):]) >> (6 * (j % 2)))
			ls1, ls2 := 2*(sc&7)+1, 2*(sc>>3&7)+1
			sumi1 += s1[0]*ls1 + s1[1]*ls2
			sumi2 += s2[0]*ls1 + s2[1]*ls2
		}
		d := float32(quant.FP16ToFP32(quant.IQ1MScale(bx)) * yd)
		sum += float32(d * float32(float32(sumi1)+float32(0.125*float32(sumi2))))
	}
	return sum
}
