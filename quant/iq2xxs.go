package quant

import (
	"encoding/binary"
	"sync"
)

// IQ2_XXS quantization with importance weights, as ggml's
// quantize_iq2_xxs (which requires them: llama-quantize asks an
// importance matrix for IQ2_XXS).

// iq2XXSSearch returns IQ2_XXS's search state, built on first use.
var iq2XXSSearch = sync.OnceValue(func() *iq2Grid { return newIQ2Grid(IQ2XXSGrid[:], iq2Level, 3, 2) })

// quantizeIQ2_XXSWith quantizes a row to IQ2_XXS with importance weights
// qw (one per element of the row), as ggml's quantize_iq2_xxs: per 32
// elements a first scale from iq2QPScale, 13 trial scales around it
// fitting each group of 8 to the grid (or its best neighbour), every group
// then refitted at the best scale and the scale refitted; sign parity as
// IQ2_XS's.
func quantizeIQ2_XXSWith(x []float32, y []byte, qw []float32) {
	g := iq2XXSSearch()
	const kMaxQ = 3
	level := func(id, x float32) uint8 {
		return uint8(clampInt(nearestInt(float32(0.5*float32(float32(id*x)-1))), 0, kMaxQ-1))
	}
	for ibl := 0; ibl < len(x)/QKK; ibl++ {
		b := y[ibl*sizeIQ2_XXS : (ibl+1)*sizeIQ2_XXS]
		clear(b)
		var q2 [QKK / 16]uint32
		xbl := x[QKK*ibl : QKK*(ibl+1)]
		var sumx2 float32
		for _, v := range xbl {
			sumx2 += float32(v * v)
		}
		sigma2 := sumx2 / QKK

		var scales [QKK / 32]float32
		var maxScale float32
		for ib := range QKK / 32 {
			xb := xbl[32*ib : 32*ib+32]
			var weight, waux, xval [32]float32
			for i, v := range xb {
				weight[i] = qw[QKK*ibl+32*ib+i] * sqrt32(sigma2+float32(v*v))
				waux[i] = sqrt32(weight[i])
			}
			var blockSigns [4]uint32
			for k := range 4 {
				blockSigns[k] = uint32(paritySigns(xb[8*k:8*k+8], weight[8*k:8*k+8], xval[8*k:8*k+8]))
			}
			maxv := xval[0]
			for _, v := range xval[1:] {
				if !(maxv > v) {
					maxv = v
				}
			}
			if maxv < groupMaxEps {
				scales[ib] = 0
				continue
			}
			var L, Laux [32]uint8
			scale := makeQPQuants(kMaxQ+1, xval[:], L[:], weight[:]) // negative levels wrap in L as in ggml
			effMax := float32(scale * kMaxQ)
			if effMax <= 0 {
				scales[ib] = 0
				continue
			}
			var best float32
			for is := -6; is <= 6; is++ {
				id := float32(2*kMaxQ-1+float32(float32(is)*0.1)) / effMax
				thisScale := 1 / id
				for k := range 4 {
					u := 0
					for i := range 8 {
						Laux[8*k+i] = level(id, xval[8*k+i])
						u |= int(Laux[8*k+i]) << (2 * i)
					}
					if g.index[u] < 0 {
						g.bestNeighbour(u, xval[8*k:], waux[8*k:], thisScale, Laux[8*k:])
					}
				}
				var sumqx, sumq2 float32
				for i, w := range weight {
					q := float32(2*int(Laux[i]) + 1)
					sumqx += float32(float32(w*xval[i]) * q)
					sumq2 += float32(float32(w*q) * q)
				}
				if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
					scale = sumqx / sumq2
					best = float32(scale * sumqx)
					L = Laux
				}
			}
			if scale > 0 {
				id := 1 / scale
				for k := range 4 {
					u := 0
					for i := range 8 {
						u |= int(level(id, xval[8*k+i])) << (2 * i)
					}
					gi := int(g.index[u])
					if gi < 0 {
						gi = g.bestNeighbour(u, xval[8*k:], waux[8*k:], scale, L[8*k:])
					}
					copy(L[8*k:8*k+8], g.lv[gi][:])
				}
				var sumqx, sumq2 float32
				for i, w := range weight {
					q := float32(2*int(L[i]) + 1)
					sumqx += float32(float32(w*xval[i]) * q)
					sumq2 += float32(float32(w*q) * q)
				}
				if sumq2 > 0 {
					scale = sumqx / sumq2
				}
			}
			if scale < 0 {
				// Only negative importance weights get here.
				scale = -scale
				for k := range blockSigns {
					blockSigns[k] = ^blockSigns[k] & 127
				}
			}
			for k := range 4 {
				u := 0
				for i := range 8 {
					u |= int(L[8*k+i]) << (2 * i)
				}
				// L is a grid entry's levels unless the scale was NaN
				// (ggml aborts there): entry 0 then.
				gi := max(int(g.index[u&0xffff]), 0)
				q2[2*ib] |= uint32(gi) << (8 * k)
				q2[2*ib+1] |= blockSigns[k] << (7 * k)
			}
			scales[ib] = scale
			if !(maxScale > scale) {
				maxScale = scale
			}
		}
		if maxScale == 0 {
			continue
		}
		d := maxScale / 31
		putF16(b[0:2], d)
		id := 1 / d
		for ib := range QKK / 32 {
			l := clampInt(nearestInt(float32(0.5*float32(float32(id*scales[ib])-1))), 0, 15)
			q2[2*ib+1] |= uint32(l) << 28
		}
		for i, v := range q2 {
			binary.LittleEndian.PutUint32(b[2+4*i:], v)
		}
	}
}
