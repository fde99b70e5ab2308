package quant

import (
	"encoding/binary"
	"math"
	"slices"
	"sync"
)

// IQ2_S quantization, as ggml's quantize_iq2_s: per 16 elements the
// magnitudes are fitted to the grid (IQ2SGrid, eight levels 0..2 an
// entry, searched as the odd values 1, 3, 5 though the table stores 8,
// 25, 43) at 19 trial scales, a group of 8 whose nearest levels are not a
// grid entry taking the best of its nearest grid entries, then the scale
// is refitted by least squares and coded in 4 bits against the
// super-block scale.

// iq2Grid is the search state ggml's iq2xs_init_impl builds for a grid of
// eight 2-bit levels an entry: each entry's levels and, for each level
// combination u (element i in bits 2i, 2i+1), its grid index, or for one
// not on the grid the grid entries nearest to it.
type iq2Grid struct {
	lv [][8]uint8
	// index[u] is the grid index of combination u, or -(o+1) where
	// neighbours[o] is the count of u's neighbours, which follow it.
	index      []int32
	neighbours []uint16
}

// iq2sSearch returns IQ2_S's search state, built on first use.
var iq2sSearch = sync.OnceValue(func() *iq2Grid { return newIQ2Grid(IQ2SGrid[:], iq2Level, 3, 1) })

// iq2Level reads a magnitude of the IQ2 grids (8, 25, 43) as its level.
func iq2Level(b uint8) uint8 { return (b - 8) / 17 }

// newIQ2Grid builds the search state of grid, whose bytes level reads as
// levels 0, 1, 2: each combination of levels below nlevels that is not
// on the grid gets the grid entries at its nwant smallest squared
// distances (all entries at each of those distances), ordered by distance
// and then by index, as ggml's sort of (distance, index) pairs orders
// them. Combinations with a level of nlevels or more get no list (ggml
// makes one): the quantizer never forms them.
func newIQ2Grid(grid []uint64, level func(uint8) uint8, nlevels, nwant int) *iq2Grid {
	g := &iq2Grid{lv: make([][8]uint8, len(grid)), index: make([]int32, 1<<16)}
	for i := range g.index {
		g.index[i] = -1
	}
	for i, e := range grid {
		u := 0
		for k := range 8 {
			g.lv[i][k] = level(uint8(e >> (8 * k)))
			u |= int(g.lv[i][k]) << (2 * k)
		}
		g.index[u] = int32(i)
	}
	d2s := make([]int, len(grid))
	var dists []int
	for u := range g.index {
		if g.index[u] >= 0 {
			continue
		}
		valid := true
		for k := range 8 {
			if u>>(2*k)&3 >= nlevels {
				valid = false
			}
		}
		if !valid {
			continue
		}
		dists = dists[:0]
		for j, lv := range g.lv {
			d2 := 0
			for k := range 8 {
				d := 2 * (int(lv[k]) - u>>(2*k)&3)
				d2 += d * d
			}
			d2s[j] = d2
			// Keep the nwant smallest distinct distances.
			if i, found := slices.BinarySearch(dists, d2); !found && (i < nwant) {
				dists = slices.Insert(dists, i, d2)
				if len(dists) > nwant {
					dists = dists[:nwant]
				}
			}
		}
		g.index[u] = -int32(len(g.neighbours) + 1)
		start := len(g.neighbours)
		g.neighbours = append(g.neighbours, 0)
		for _, d := range dists {
			for j, d2 := range d2s {
				if d2 == d {
					g.neighbours = append(g.neighbours, uint16(j))
				}
			}
		}
		g.neighbours[start] = uint16(len(g.neighbours) - start - 1)
	}
	return g
}

// bestNeighbour returns the neighbour of combination u (not on the grid)
// whose values 2l+1 times scale are nearest to xval in the weighted
// squared distance (the first on ties), and sets L to its levels; with
// NaN inputs (where ggml aborts) the first neighbour.
func (g *iq2Grid) bestNeighbour(u int, xval, w []float32, scale float32, L []uint8) int {
	list := g.neighbours[-g.index[u]-1:]
	n := int(list[0])
	best, gi := float32(math.MaxFloat32), int(list[1])
	for _, j := range list[1 : n+1] {
		var d2 float32
		for i, l := range g.lv[j] {
			diff := float32(scale*float32(2*int(l)+1)) - xval[i]
			d2 += float32(float32(w[i]*diff) * diff)
		}
		if d2 < best {
			best, gi = d2, int(j)
		}
	}
	copy(L[:8], g.lv[gi][:])
	return gi
}

// groupMaxEpsIQ2S is the largest magnitude below which an IQ2_S
// sub-block of 16 is stored as zeros (ggml's GROUP_MAX_EPS_IQ2_S).
const groupMaxEpsIQ2S = 1e-8

// quantizeIQ2_S is ggml's quantize_row_iq2_s_ref: quantize_iq2_s without
// importance weights.
func quantizeIQ2_S(x []float32, y []byte) {
	quantizeIQ2_SWith(x, y, nil)
}

// quantizeIQ2_SWith quantizes a row to IQ2_S with importance weights qw
// (nil, or one per element of the row), as ggml's quantize_iq2_s. Without
// weights an element weighs sigma²/4 + x², sigma² twice the super-block's
// mean square.
func quantizeIQ2_SWith(x []float32, y []byte, qw []float32) {
	g := iq2sSearch()
	for ibl := 0; ibl < len(x)/QKK; ibl++ {
		b := y[ibl*sizeIQ2_S : (ibl+1)*sizeIQ2_S]
		clear(b)
		qs, signs, qh, scaleCodes := b[2:34], b[34:66], b[66:74], b[74:82]
		xbl := x[QKK*ibl : QKK*(ibl+1)]
		var sumx2 float32
		for _, v := range xbl {
			sumx2 += float32(v * v)
		}
		sigma2 := float32(2*sumx2) / QKK

		var scales [QKK / 16]float32
		var maxScale float32
		for ib := range QKK / 16 {
			xb := xbl[16*ib : 16*ib+16]
			var weight, waux, xval [16]float32
			var blockSigns [2]uint8
			for i, v := range xb {
				if qw != nil {
					weight[i] = qw[QKK*ibl+16*ib+i] * sqrt32(sigma2+float32(v*v))
				} else {
					weight[i] = float32(0.25*sigma2) + float32(v*v)
				}
				waux[i] = sqrt32(weight[i])
			}
			for k := range 2 {
				var s uint8
				for i := range 8 {
					if v := xb[8*k+i]; v >= 0 {
						xval[8*k+i] = v
					} else {
						xval[8*k+i] = -v
						s |= 1 << i
					}
				}
				blockSigns[k] = s
			}
			maxv := xval[0]
			for _, v := range xval[1:] {
				if !(maxv > v) {
					maxv = v
				}
			}
			if maxv < groupMaxEpsIQ2S {
				scales[ib] = 0
				continue
			}
			L, scale := g.fit16(&xval, &weight, &waux, maxv)
			if scale < 0 {
				// Only negative importance weights get here.
				scale = -scale
				blockSigns[0], blockSigns[1] = ^blockSigns[0], ^blockSigns[1]
			}
			for k := range 2 {
				u := 0
				for i := range 8 {
					u |= int(L[8*k+i]) << (2 * i)
				}
				// Every L here is a grid entry's levels (or all zeros,
				// entry 0).
				gi := max(int(g.index[u]), 0)
				i8 := 2*ib + k
				qs[i8] = uint8(gi)
				qh[i8/4] |= uint8(gi>>8) << (2 * (i8 % 4))
				signs[i8] = blockSigns[k]
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
		putF16(b[0:2], float32(d*0.9875))
		id := 1 / d
		for ib := range QKK / 16 {
			l := clampInt(nearestInt(float32(0.5*float32(float32(id*scales[ib])-1))), 0, 15)
			scaleCodes[ib/2] |= uint8(l) << (4 * (ib % 2))
		}
	}
}

// fit16 fits 16 magnitudes xval (largest maxv > 0) with weights weight
// (waux their square roots) to two grid entries and one scale, as the
// IQ2_S and IQ2_XS quantizers do: 19 trial scales (levels
// nearest_int((id*x - 1)/2) in 0..2, a group off the grid replaced by its
// best neighbour at that scale), the best by weighted least squares, then
// groups still off the grid refitted at that scale and the scale refitted.
// Every group of L is a grid entry's levels, or all zeros.
func (g *iq2Grid) fit16(xval, weight, waux *[16]float32, maxv float32) (L [16]uint8, scale float32) {
	const kMaxQ = 3
	level := func(id, x float32) uint8 {
		return uint8(clampInt(nearestInt(float32(0.5*float32(float32(id*x)-1))), 0, kMaxQ-1))
	}
	var Laux [16]uint8
	onGrid, onGridAux := [2]bool{true, true}, [2]bool{}
	var best float32
	scale = maxv / (2*kMaxQ - 1)
	for is := -9; is <= 9; is++ {
		id := float32(2*kMaxQ-1+float32(float32(is)*0.1)) / maxv
		thisScale := 1 / id
		for k := range 2 {
			u := 0
			for i := range 8 {
				Laux[8*k+i] = level(id, xval[8*k+i])
				u |= int(Laux[8*k+i]) << (2 * i)
			}
			onGridAux[k] = g.index[u] >= 0
			if !onGridAux[k] {
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
			L, onGrid = Laux, onGridAux
		}
	}
	if (!onGrid[0] || !onGrid[1]) && scale > 0 {
		id := 1 / scale
		for k := range 2 {
			if onGrid[k] {
				continue
			}
			u := 0
			for i := range 8 {
				l := level(id, xval[8*k+i])
				u |= int(l) << (2 * i)
				L[8*k+i] = l
			}
			if g.index[u] < 0 {
				g.bestNeighbour(u, xval[8*k:], waux[8*k:], scale, L[8*k:])
			}
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
	return L, scale
}

// iq2XSSearch returns IQ2_XS's search state, built on first use.
var iq2XSSearch = sync.OnceValue(func() *iq2Grid { return newIQ2Grid(IQ2XSGrid[:], iq2Level, 3, 2) })

// quantizeIQ2_XSWith quantizes a row to IQ2_XS with importance weights qw
// (one per element of the row), as ggml's quantize_iq2_xs, which
// requires them (llama-quantize asks an importance matrix for IQ2_XS).
// An element weighs qw*sqrt(sigma² + x²), sigma² the super-block's mean
// square; signs are coded seven to a group of 8 with even parity, as
// IQ3_XXS's.
func quantizeIQ2_XSWith(x []float32, y []byte, qw []float32) {
	g := iq2XSSearch()
	for ibl := 0; ibl < len(x)/QKK; ibl++ {
		b := y[ibl*sizeIQ2_XS : (ibl+1)*sizeIQ2_XS]
		clear(b)
		var q2 [QKK / 8]uint16
		xbl := x[QKK*ibl : QKK*(ibl+1)]
		var sumx2 float32
		for _, v := range xbl {
			sumx2 += float32(v * v)
		}
		sigma2 := sumx2 / QKK

		var scales [QKK / 16]float32
		var maxScale float32
		for ib := range QKK / 16 {
			xb := xbl[16*ib : 16*ib+16]
			var weight, waux, xval [16]float32
			for i, v := range xb {
				weight[i] = qw[QKK*ibl+16*ib+i] * sqrt32(sigma2+float32(v*v))
				waux[i] = sqrt32(weight[i])
			}
			var blockSigns [2]uint16
			for k := range 2 {
				blockSigns[k] = uint16(paritySigns(xb[8*k:8*k+8], weight[8*k:8*k+8], xval[8*k:8*k+8]))
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
			L, scale := g.fit16(&xval, &weight, &waux, maxv)
			if scale < 0 {
				// Only negative importance weights get here.
				scale = -scale
				blockSigns[0], blockSigns[1] = ^blockSigns[0]&127, ^blockSigns[1]&127
			}
			for k := range 2 {
				u := 0
				for i := range 8 {
					u |= int(L[8*k+i]) << (2 * i)
				}
				q2[2*ib+k] = uint16(max(int(g.index[u]), 0)) | blockSigns[k]<<9
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
		for ib := range QKK / 16 {
			l := clampInt(nearestInt(float32(0.5*float32(float32(id*scales[ib])-1))), 0, 15)
			b[66+ib/2] |= uint8(l) << (4 * (ib % 2))
		}
		for i, v := range q2 {
			binary.LittleEndian.PutUint16(b[2+2*i:], v)
		}
	}
}

// paritySigns sets xval to the magnitudes of the 8 elements xb and
// returns their 7-bit sign code: where an odd number are negative, the one
// of least weight*x² (the first on ties) is fitted with the opposite sign
// (its xval negative), so that the signs have the even parity the code
// implies.
func paritySigns(xb, weight, xval []float32) uint8 {
	var s uint8
	nflip := 0
	for i, v := range xb[:8] {
		if v >= 0 {
			xval[i] = v
		} else {
			xval[i] = -v
			nflip++
			s |= 1 << i
		}
	}
	if nflip%2 != 0 {
		imin := 0
		minv := float32(float32(weight[0]*xb[0]) * xb[0])
		for i := 1; i < 8; i++ {
			if ax := float32(float32(weight[i]*xb[i]) * xb[i]); ax < minv {
				minv, imin = ax, i
			}
		}
		xval[imin] = -xval[imin]
		s ^= 1 << imin
	}
	return s & 127
}
