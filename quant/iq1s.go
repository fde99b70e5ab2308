package quant

import (
	"encoding/binary"
	"math"
	"sync"
)

// IQ1_S quantization with importance weights, as ggml's quantize_iq1_s
// (which requires them: llama-quantize asks an importance matrix for
// IQ1_S): per 32 elements the values -1, 0, 1 (shifted by ±1/8) are
// assigned by an exhaustive search over the two boundaries that split the
// sorted elements into three runs, the groups of 8 are moved to the grid
// (IQ1SGrid) where they fall off it, and the scale is coded in 3 bits
// against the super-block scale.

// iq1Search returns the IQ1 grid's search state (levels -1, 0, 1 stored
// as 0, 1, 2), built on first use.
var iq1Search = sync.OnceValue(func() *iq2Grid {
	return newIQ2Grid(IQ1SGrid[:], func(b uint8) uint8 { return uint8(int8(b) + 1) }, 3, 3)
})

// groupMaxEpsIQ1S is the largest magnitude below which an IQ1_S sub-block
// is stored as zeros (ggml's GROUP_MAX_EPS_IQ1_S).
const groupMaxEpsIQ1S = 1e-12

// iq1Values are the values of levels 0, 1, 2 with the positive and the
// negative shift.
var iq1Values = [2][3]float32{
	{-1 + iq1Delta, iq1Delta, 1 + iq1Delta},
	{-1 - iq1Delta, -iq1Delta, 1 - iq1Delta},
}

// sortPairs orders the elements of xb by value as glibc's qsort (a
// top-down merge sort, the left element first on ties, for arrays this
// small) orders ggml's (value, index) pairs by value alone, and returns
// the indices in that order. NaN compares equal to everything, as in
// ggml's comparator.
func sortPairs(xb []float32, idx, tmp []int) {
	for i := range idx {
		idx[i] = i
	}
	var msort func(b, t []int)
	msort = func(b, t []int) {
		n := len(b)
		if n <= 1 {
			return
		}
		n1 := n / 2
		msort(b[:n1], t)
		msort(b[n1:], t)
		l, r := b[:n1], b[n1:]
		out := t[:0]
		for len(l) > 0 && len(r) > 0 {
			// cmp(l, r) <= 0: l < r, or neither l > r.
			if !(xb[l[0]] > xb[r[0]]) {
				out = append(out, l[0])
				l = l[1:]
			} else {
				out = append(out, r[0])
				r = r[1:]
			}
		}
		out = append(out, l...)
		copy(b, out)
	}
	msort(idx, tmp)
}

// iq1BestNeighbour returns the neighbour of level combination u (not on
// the grid) nearest to xb at scale with values xx, and sets L to its
// levels; with NaN inputs (where ggml reads past its arrays and aborts)
// the first neighbour.
func (g *iq2Grid) iq1BestNeighbour(u int, xb, w []float32, scale float32, xx *[3]float32, L []uint8) int {
	list := g.neighbours[-g.index[u]-1:]
	n := int(list[0])
	best, gi := float32(math.MaxFloat32), int(list[1])
	for _, j := range list[1 : n+1] {
		var d2 float32
		for i, l := range g.lv[j] {
			diff := float32(scale*xx[l]) - xb[i]
			d2 += float32(float32(w[i]*diff) * diff)
		}
		if d2 < best {
			best, gi = d2, int(j)
		}
	}
	copy(L[:8], g.lv[gi][:])
	return gi
}

// iq1Split finds ggml's best three-run split of the 32 (or 16) elements
// xb with weights w, sorted into order idx: the runs take levels 0, 1, 2
// in order, with the values of iq1Values[0] (shift +1) or [1] (shift -1),
// and the split and shift maximizing sumqx²/sumq2 win (the first found on
// ties). It returns the levels, scale and shift (0: none found).
func iq1Split(xb, w []float32, idx []int, L []uint8, maxv float32) (scale float32, shift int) {
	n := len(xb)
	var sumx, sumw [33]float32
	for j, i := range idx {
		sumx[j+1] = sumx[j] + float32(w[i]*xb[i])
		sumw[j+1] = sumw[j] + w[i]
	}
	best := float32(-math.MaxFloat32)
	scale = maxv
	b1, b2 := -1, -1
	for i1 := 0; i1 <= n; i1++ {
		for i2 := i1; i2 <= n; i2++ {
			for s, xp := range iq1Values {
				sumqx := float32(float32(float32(float32(sumx[i1]-sumx[0])*xp[0])+float32(float32(sumx[i2]-sumx[i1])*xp[1])) + float32(float32(sumx[n]-sumx[i2])*xp[2]))
				sumq2 := float32(float32(float32(float32(float32(sumw[i1]-sumw[0])*xp[0])*xp[0])+float32(float32(float32(sumw[i2]-sumw[i1])*xp[1])*xp[1])) + float32(float32(float32(sumw[n]-sumw[i2])*xp[2])*xp[2]))
				if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
					scale = sumqx / sumq2
					best = float32(scale * sumqx)
					b1, b2, shift = i1, i2, 1-2*s
				}
			}
		}
	}
	if b1 < 0 || b2 < 0 || shift == 0 {
		return 0, 0
	}
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
	return scale, shift
}

// quantizeIQ1_SWith quantizes a row to IQ1_S with importance weights qw
// (one per element of the row), as ggml's quantize_iq1_s.
func quantizeIQ1_SWith(x []float32, y []byte, qw []float32) {
	g := iq1Search()
	for ibl := 0; ibl < len(x)/QKK; ibl++ {
		b := y[ibl*sizeIQ1_S : (ibl+1)*sizeIQ1_S]
		clear(b)
		qs := b[2:34]
		var qh [QKK / 32]uint16
		xbl := x[QKK*ibl : QKK*(ibl+1)]
		var sumx2 float32
		for _, v := range xbl {
			sumx2 += float32(v * v)
		}
		sigma2 := float32(2*sumx2) / QKK

		var scales [QKK / 32]float32
		var shifts [QKK / 32]int
		var maxScale float32
		var idx, tmp [32]int
		for ib := range QKK / 32 {
			xb := xbl[32*ib : 32*ib+32]
			var weight [32]float32
			for i, v := range xb {
				weight[i] = qw[QKK*ibl+32*ib+i] * sqrt32(sigma2+float32(v*v))
			}
			maxv := abs32(xb[0])
			for _, v := range xb[1:] {
				if a := abs32(v); !(maxv > a) {
					maxv = a
				}
			}
			shifts[ib] = 1
			if maxv < groupMaxEpsIQ1S {
				continue
			}
			sortPairs(xb, idx[:], tmp[:])
			var L [32]uint8
			scale, shift := iq1Split(xb, weight[:], idx[:], L[:], maxv)
			if shift == 0 {
				continue
			}
			if scale < 0 {
				for j := range L {
					L[j] = 2 - L[j]
				}
				scale, shift = -scale, -shift
			}
			xx := &iq1Values[0]
			if shift < 0 {
				xx = &iq1Values[1]
			}
			var index [4]int
			onGrid := true
			for k := range 4 {
				u := 0
				for j := range 8 {
					u |= int(L[8*k+j]) << (2 * j)
				}
				index[k] = int(g.index[u])
				if index[k] < 0 {
					onGrid = false
					index[k] = g.iq1BestNeighbour(u, xb[8*k:], weight[8*k:], scale, xx, L[8*k:])
				}
			}
			if !onGrid {
				var sumqx, sumq2 float32
				for k := range 4 {
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
			var h uint16
			for k := range 4 {
				qs[4*ib+k] = uint8(index[k])
				h |= uint16(index[k]>>8) << (3 * k)
			}
			qh[ib] = h
			scales[ib], shifts[ib] = scale, shift
			if !(maxScale > scale) {
				maxScale = scale
			}
		}
		if maxScale != 0 {
			d := maxScale / 15
			putF16(b[0:2], float32(d*1.125))
			id := 1 / d
			for ib := range QKK / 32 {
				l := clampInt(nearestInt(float32(0.5*float32(float32(id*scales[ib])-1))), 0, 7)
				if shifts[ib] == -1 {
					l |= 8
				}
				qh[ib] |= uint16(l) << 12
			}
		}
		for ib, h := range qh {
			binary.LittleEndian.PutUint16(b[34+2*ib:], h)
		}
	}
}
