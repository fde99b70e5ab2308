package quant

import (
	"encoding/binary"
	"math"
)

// IQ1_M quantization, as ggml's quantize_iq1_m: as IQ1_S per 16 elements,
// with a shift sign per group of 8 (four sign pairs searched with every
// split), 3-bit scales per 16, and the super-block scale refitted by
// least squares over the coded values and spread over the scale words'
// top nibbles.

// groupMaxEpsIQ1M is the largest magnitude below which an IQ1_M sub-block
// of 16 is stored as zeros (ggml's GROUP_MAX_EPS_IQ1_M).
const groupMaxEpsIQ1M = 1e-7

// iq1MShift returns the values group k (0 or 1) of a 16-element IQ1_M
// sub-block uses under shift choice s (0: both +, 1: +, -, 2: -, +, 3:
// both -).
func iq1MShift(s, k int) *[3]float32 {
	if k == 0 && s < 2 || k == 1 && s%2 == 0 {
		return &iq1Values[0]
	}
	return &iq1Values[1]
}

// iq1MWeights sets w to the importance of the 16 elements xb: qw times
// sqrt(sigma² + x²), or x² without importance weights.
func iq1MWeights(w, xb, qw []float32, sigma2 float32) {
	for i, v := range xb {
		if qw != nil {
			w[i] = qw[i] * sqrt32(sigma2+float32(v*v))
		} else {
			w[i] = float32(v * v)
		}
	}
}

// quantizeIQ1_MWith quantizes a row to IQ1_M with importance weights qw
// (nil, or one per element of the row), as ggml's quantize_iq1_m
// (llama-quantize asks an importance matrix for IQ1_M; ggml's function
// takes none too, weighing an element by x², and has no reference
// quantize_row_iq1_m_ref, so QuantizeRow does not take IQ1_M).
func quantizeIQ1_MWith(x []float32, y []byte, qw []float32) {
	g := iq1Search()
	for ibl := 0; ibl < len(x)/QKK; ibl++ {
		b := y[ibl*sizeIQ1_M : (ibl+1)*sizeIQ1_M]
		clear(b)
		qs, qh := b[0:32], b[32:48]
		xbl := x[QKK*ibl : QKK*(ibl+1)]
		var sumx2 float32
		for _, v := range xbl {
			sumx2 += float32(v * v)
		}
		sigma2 := float32(2*sumx2) / QKK
		var qwb []float32
		if qw != nil {
			qwb = qw[QKK*ibl : QKK*(ibl+1)]
		}

		var scales [QKK / 16]float32
		var shifts [QKK / 16]int
		var maxScale float32
		var idx, tmp [16]int
		for ib := range QKK / 16 {
			xb := xbl[16*ib : 16*ib+16]
			var weight [16]float32
			var qwi []float32
			if qwb != nil {
				qwi = qwb[16*ib : 16*ib+16]
			}
			iq1MWeights(weight[:], xb, qwi, sigma2)
			maxv := abs32(xb[0])
			for _, v := range xb[1:] {
				if a := abs32(v); !(maxv > a) {
					maxv = a
				}
			}
			if maxv < groupMaxEpsIQ1M {
				continue
			}
			sortPairs(xb, idx[:], tmp[:])
			best := float32(-math.MaxFloat32)
			scale := maxv
			b1, b2, bestK := -1, -1, -1
			for i1 := 0; i1 <= 16; i1++ {
				for i2 := i1; i2 <= 16; i2++ {
					var sumqx, sumq2 [4]float32
					for j, i := range idx {
						run := 2
						if j < i1 {
							run = 0
						} else if j < i2 {
							run = 1
						}
						w, v := weight[i], xb[i]
						p, m := iq1Values[0][run], iq1Values[1][run]
						qxp, qxm := float32(float32(w*p)*v), float32(float32(w*m)*v)
						q2p, q2m := float32(float32(w*p)*p), float32(float32(w*m)*m)
						if i < 8 {
							sumqx[0] += qxp
							sumqx[1] += qxp
							sumqx[2] += qxm
							sumqx[3] += qxm
							sumq2[0] += q2p
							sumq2[1] += q2p
							sumq2[2] += q2m
							sumq2[3] += q2m
						} else {
							sumqx[0] += qxp
							sumqx[2] += qxp
							sumqx[1] += qxm
							sumqx[3] += qxm
							sumq2[0] += q2p
							sumq2[2] += q2p
							sumq2[1] += q2m
							sumq2[3] += q2m
						}
					}
					for k := range 4 {
						if sumq2[k] > 0 && float32(sumqx[k]*sumqx[k]) > float32(best*sumq2[k]) {
							scale = sumqx[k] / sumq2[k]
							best = float32(scale * sumqx[k])
							b1, b2, bestK = i1, i2, k
						}
					}
				}
			}
			if b1 < 0 || b2 < 0 || bestK < 0 {
				continue
			}
			var L [16]uint8
			for j, i := range idx {
				switch {
				case j < b1:
					L[i] = 0
				case j < b2:
					L[i] = 1
				default:
					L[i] = 2
				}
			}
			if scale < 0 {
				for j := range L {
					L[j] = 2 - L[j]
				}
				scale, bestK = -scale, 3-bestK
			}
			var index [2]int
			onGrid := true
			for k := range 2 {
				u := 0
				for j := range 8 {
					u |= int(L[8*k+j]) << (2 * j)
				}
				index[k] = int(g.index[u])
				if index[k] < 0 {
					onGrid = false
					index[k] = g.iq1BestNeighbour(u, xb[8*k:], weight[8*k:], scale, iq1MShift(bestK, k), L[8*k:])
				}
			}
			if !onGrid {
				var sumqx, sumq2 float32
				for k := range 2 {
					xx := iq1MShift(bestK, k)
					for j, l := range g.lv[index[k]] {
						w, q := weight[8*k+j], xx[l]
						sumqx += float32(float32(w*q) * xb[8*k+j])
						sumq2 += float32(float32(w*q) * q)
					}
				}
				if sumqx > 0 && sumq2 > 0 {
					scale = sumqx / sumq2
				}
			}
			qs[2*ib] = uint8(index[0])
			qs[2*ib+1] = uint8(index[1])
			qh[ib] = uint8(index[0]>>8 | index[1]>>8<<4)
			scales[ib], shifts[ib] = scale, bestK
			if !(maxScale > scale) {
				maxScale = scale
			}
		}
		if maxScale == 0 {
			continue
		}
		var sc [4]uint16
		d := maxScale / 15
		id := 1 / d
		masks := [4]uint8{0x00, 0x80, 0x08, 0x88}
		var sumqx, sumq2 float32
		for ib := range QKK / 16 {
			l := clampInt(nearestInt(float32(0.5*float32(float32(id*scales[ib])-1))), 0, 7)
			sc[ib/4] |= uint16(l) << (3 * (ib % 4))
			qh[ib] |= masks[shifts[ib]]
			xb := xbl[16*ib : 16*ib+16]
			var weight [16]float32
			var qwi []float32
			if qwb != nil {
				qwi = qwb[16*ib : 16*ib+16]
			}
			iq1MWeights(weight[:], xb, qwi, sigma2)
			for k := range 2 {
				xx := iq1MShift(shifts[ib], k)
				gi := int(qs[2*ib+k]) + (int(qh[ib])<<(8-4*k))&0x700
				for j, lv := range g.lv[gi] {
					w, q := weight[8*k+j], float32(xx[lv]*float32(2*l+1))
					sumqx += float32(float32(w*q) * xb[8*k+j])
					sumq2 += float32(float32(w*q) * q)
				}
			}
		}
		if sumq2 > 0 {
			d = sumqx / sumq2
		}
		h := FP32ToFP16(float32(d * 1.1125))
		for j := range 4 {
			sc[j] |= h >> (4 * j) & 15 << 12
			binary.LittleEndian.PutUint16(b[48+2*j:], sc[j])
		}
	}
}
