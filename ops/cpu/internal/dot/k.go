package dot

import (
	"encoding/binary"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// Dot products of the 256-element K formats with q8_K activations (block
// layouts in quant/layout.go). Within a super-block the codes are
// multiplied and summed as integers per sub-block, each sub-block sum is
// weighted by its integer scale, and the super-block total is scaled by
// d_x*d_y in float32, as ggml's generic ggml_vec_dot_qN_K_q8_K functions
// do. Formats with a per-sub-block minimum (q2_K, q4_K, q5_K) subtract it
// through the activation's bsums (sums of 16 codes), so the min term costs
// one multiply per 16 elements. The explicit float32 conversions keep
// the compiler from fusing a multiply into the following add or subtract
// (it may with GOAMD64=v3), so the results do not depend on the build and
// the AVX2 kernels, which round every operation, equal these bit for bit.

// q8KBlock splits a q8_K block into its scale, codes and the bytes of its
// 16 sums (read with bsum).
func q8KBlock(b []byte) (d float32, qs, sums []byte) {
	return simd.Float32At(b, 0), b[4:260], b[260:292]
}

// bsum returns sum j (of codes 16j..16j+15) of a q8_K block.
func bsum(sums []byte, j int) int32 {
	return int32(int16(binary.LittleEndian.Uint16(sums[2*j:])))
}

// Q2_K dots a q2_K row with a q8_K row.
func Q2_K(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QKK {
		bx := x[ib*simd.BytesQ2_K : (ib+1)*simd.BytesQ2_K]
		yd, q8, sums := q8KBlock(y[ib*simd.BytesQ8_K : (ib+1)*simd.BytesQ8_K])
		sc, qs := bx[0:16], bx[16:80]
		var mins int32
		for j := range 16 {
			mins += bsum(sums, j) * int32(sc[j]>>4)
		}
		var isum int32
		for h := range 2 {
			q2 := qs[32*h : 32*h+32]
			for g := range 4 {
				shift := uint(2 * g)
				e0 := 128*h + 32*g
				for half := range 2 {
					var s int32
					for l := 16 * half; l < 16*half+16; l++ {
						s += int32((q2[l]>>shift)&3) * int32(int8(q8[e0+l]))
					}
					isum += s * int32(sc[8*h+2*g+half]&15)
				}
			}
		}
		dall := yd * simd.HalfAt(bx, 80)
		dmin := yd * simd.HalfAt(bx, 82)
		sum += float32(dall*float32(isum)) - float32(dmin*float32(mins))
	}
	return sum
}

// q3KScale returns the signed 6-bit scale of sub-block j of a q3_K block
// from its 12 packed scale bytes.
func q3KScale(s []byte, j int) int32 {
	var low byte
	if j < 8 {
		low = s[j] & 15
	} else {
		low = s[j-8] >> 4
	}
	high := (s[8+j%4] >> (2 * uint(j/4))) & 3
	return int32(low|high<<4) - 32
}

// Q3_K dots a q3_K row with a q8_K row.
func Q3_K(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QKK {
		bx := x[ib*simd.BytesQ3_K : (ib+1)*simd.BytesQ3_K]
		yd, q8, _ := q8KBlock(y[ib*simd.BytesQ8_K : (ib+1)*simd.BytesQ8_K])
		hm, qs, scales := bx[0:32], bx[32:96], bx[96:108]
		var isum int32
		for h := range 2 {
			q3 := qs[32*h : 32*h+32]
			for g := range 4 {
				shift := uint(2 * g)
				bit := byte(1) << uint(4*h+g)
				e0 := 128*h + 32*g
				for half := range 2 {
					var s int32
					for l := 16 * half; l < 16*half+16; l++ {
						q := int32((q3[l] >> shift) & 3)
						if hm[l]&bit == 0 {
							q -= 4
						}
						s += q * int32(int8(q8[e0+l]))
					}
					isum += s * q3KScale(scales, 8*h+2*g+half)
				}
			}
		}
		sum += float32(simd.HalfAt(bx, 108) * yd * float32(isum))
	}
	return sum
}

// kScaleMin returns the 6-bit scale and min codes of sub-block j (0..7)
// of a q4_K or q5_K block from its 12 packed scale bytes.
func kScaleMin(s []byte, j int) (sc, m int32) {
	if j < 4 {
		return int32(s[j] & 63), int32(s[j+4] & 63)
	}
	return int32(s[j+4]&15 | (s[j-4]>>6)<<4), int32(s[j+4]>>4 | (s[j]>>6)<<4)
}

// Q4_K dots a q4_K row with a q8_K row.
func Q4_K(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QKK {
		bx := x[ib*simd.BytesQ4_K : (ib+1)*simd.BytesQ4_K]
		yd, q8, sums := q8KBlock(y[ib*simd.BytesQ8_K : (ib+1)*simd.BytesQ8_K])
		scales, qs := bx[4:16], bx[16:144]
		var isum, mins int32
		for j := range 8 {
			sc, m := kScaleMin(scales, j)
			mins += (bsum(sums, 2*j) + bsum(sums, 2*j+1)) * m
			q4 := qs[32*(j/2) : 32*(j/2)+32]
			shift := uint(4 * (j % 2))
			yq := q8[32*j : 32*j+32]
			var s int32
			for l, q := range q4 {
				s += int32((q>>shift)&15) * int32(int8(yq[l]))
			}
			isum += s * sc
		}
		sum += float32(simd.HalfAt(bx, 0)*yd*float32(isum)) - float32(simd.HalfAt(bx, 2)*yd*float32(mins))
	}
	return sum
}

// Q5_K dots a q5_K row with a q8_K row.
func Q5_K(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QKK {
		bx := x[ib*simd.BytesQ5_K : (ib+1)*simd.BytesQ5_K]
		yd, q8, sums := q8KBlock(y[ib*simd.BytesQ8_K : (ib+1)*simd.BytesQ8_K])
		scales, qh, qs := bx[4:16], bx[16:48], bx[48:176]
		var isum, mins int32
		for j := range 8 {
			sc, m := kScaleMin(scales, j)
			mins += (bsum(sums, 2*j) + bsum(sums, 2*j+1)) * m
			q4 := qs[32*(j/2) : 32*(j/2)+32]
			shift := uint(4 * (j % 2))
			bit := byte(1) << uint(j)
			yq := q8[32*j : 32*j+32]
			var s int32
			for l, q := range q4 {
				v := int32((q >> shift) & 15)
				if qh[l]&bit != 0 {
					v += 16
				}
				s += v * int32(int8(yq[l]))
			}
			isum += s * sc
		}
		sum += float32(simd.HalfAt(bx, 0)*yd*float32(isum)) - float32(simd.HalfAt(bx, 2)*yd*float32(mins))
	}
	return sum
}

// Q6_K dots a q6_K row with a q8_K row.
func Q6_K(n int, x, y []byte) float32 {
	var sum float32
	for ib := range n / quant.QKK {
		bx := x[ib*simd.BytesQ6_K : (ib+1)*simd.BytesQ6_K]
		yd, q8, _ := q8KBlock(y[ib*simd.BytesQ8_K : (ib+1)*simd.BytesQ8_K])
		ql, qh, scales := bx[0:128], bx[128:192], bx[192:208]
		var isum int32
		for h := range 2 {
			for g := range 4 {
				low := ql[64*h+32*(g%2) : 64*h+32*(g%2)+32]
				high := qh[32*h : 32*h+32]
				lshift := uint(4 * (g / 2))
				hshift := uint(2 * g)
				e0 := 128*h + 32*g
				for half := range 2 {
					var s int32
					for l := 16 * half; l < 16*half+16; l++ {
						q := int32((low[l]>>lshift)&15|((high[l]>>hshift)&3)<<4) - 32
						s += q * int32(int8(q8[e0+l]))
					}
					isum += s * int32(int8(scales[(e0+16*half)/16]))
				}
			}
		}
		sum += float32(simd.HalfAt(bx, 208) * yd * float32(isum))
	}
	return sum
}

// Q8_K dots a q8_K weight row with a float32 activation row.
// ggml has no dot product for q8_K weights (q8_K is its activation format
// for the K types), so each super-block is dequantized on the fly:
// d * sum(q*y), summed in float32.
func Q8_K(n int, x, y []byte) float32 {
	ys := simd.F32s(y, 0, int64(n))
	var sum float32
	for ib := range n / quant.QKK {
		bx := x[ib*simd.BytesQ8_K : (ib+1)*simd.BytesQ8_K]
		qx, yb := bx[4:260], ys[ib*quant.QKK:(ib+1)*quant.QKK]
		var s float32
		for j, q := range qx {
			s += float32(int8(q)) * yb[j]
		}
		sum += simd.Float32At(bx, 0) * s
	}
	return sum
}
