package quant

import (
	"encoding/binary"
	"math"
	"slices"
	"sync"
)

// IQ3_S and IQ3_XXS quantization, as ggml's quantize_iq3_s and
// quantize_iq3_xxs: per 32 elements the
// magnitudes are fitted to the grid (IQ3SGrid, four odd levels 1..15 an
// entry; IQ3XXSGrid's are searched as the same odd values, though it
// stores 4, 12, ..., 62) at 19 (31) trial scales, a group of 4 whose nearest levels are not a
// grid entry taking the best of its grid neighbours, then the scale is
// refitted by least squares and coded in 4 bits against the super-block
// scale.

// iq3Grid is the search state ggml's iq3xs_init_impl builds for a grid:
// each entry's four 3-bit levels l (the value searched with is 2l+1, the
// same for both grids: IQ3_S's table holds 2l+1, IQ3_XXS's 8l+4 with 62
// for level 7) and, for each of the 8^4 level combinations (element i in
// bits 3i..3i+2), its grid index, or for one not on the grid the grid
// entries nearest to it.
type iq3Grid struct {
	lv [][4]uint8
	// index[u] is the grid index of combination u, or -(o+1) where
	// neighbours[o] is the count of u's neighbours, which follow it.
	index      [4096]int32
	neighbours []uint16
}

// iq3sSearch and iq3xxsSearch return IQ3_S's and IQ3_XXS's search
// states, built on first use.
var (
	iq3sSearch = sync.OnceValue(func() *iq3Grid {
		return newIQ3Grid(IQ3SGrid[:], func(b uint8) uint8 { return (b - 1) / 2 }, 3)
	})
	iq3xxsSearch = sync.OnceValue(func() *iq3Grid {
		return newIQ3Grid(IQ3XXSGrid[:], func(b uint8) uint8 { return (b - 4) / 8 }, 2)
	})
)

// newIQ3Grid builds the search state of grid, whose bytes level reads as
// 3-bit levels: each combination not on the grid gets the grid entries at
// its nwant smallest squared distances (all entries at each of those
// distances), ordered by distance and then by index.
func newIQ3Grid(grid []uint32, level func(uint8) uint8, nwant int) *iq3Grid {
	g := &iq3Grid{lv: make([][4]uint8, len(grid))}
	for i := range g.index {
		g.index[i] = -1
	}
	for i, e := range grid {
		u := 0
		for k := range 4 {
			g.lv[i][k] = level(uint8(e >> (8 * k)))
			u |= int(g.lv[i][k]) << (3 * k)
		}
		g.index[u] = int32(i)
	}
	type cand struct{ d2, j int }
	dist := make([]cand, len(grid))
	for u := range g.index {
		if g.index[u] >= 0 {
			continue
		}
		for j, lv := range g.lv {
			d2 := 0
			for k := range 4 {
				d := 2 * (int(lv[k]) - u>>(3*k)&7)
				d2 += d * d
			}
			dist[j] = cand{d2, j}
		}
		slices.SortFunc(dist, func(a, b cand) int {
			if a.d2 != b.d2 {
				return a.d2 - b.d2
			}
			return a.j - b.j
		})
		g.index[u] = -int32(len(g.neighbours) + 1)
		start := len(g.neighbours)
		g.neighbours = append(g.neighbours, 0)
		d2, have := dist[0].d2, 1
		for _, c := range dist {
			if c.d2 > d2 {
				if have == nwant {
					break
				}
				d2 = c.d2
				have++
			}
			g.neighbours = append(g.neighbours, uint16(c.j))
		}
		g.neighbours[start] = uint16(len(g.neighbours) - start - 1)
	}
	return g
}

// levels sets L to the four levels (0..7) of grid entry i.
func (g *iq3Grid) levels(i int, L []uint8) {
	copy(L[:4], g.lv[i][:])
}

// bestNeighbour returns the neighbour of combination u (not on the grid)
// whose values 2l+1 times scale are nearest to xval in the weighted
// squared distance (the first on ties), and sets L to its levels. Where
// no distance compares below the float32 maximum (NaN inputs), ggml
// aborts; here the first neighbour is taken.
func (g *iq3Grid) bestNeighbour(u int, xval, w []float32, scale float32, L []uint8) int {
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
	g.levels(gi, L)
	return gi
}

// iq3Level returns the level (0..7) nearest to x at inverse scale id:
// nearest_int(0.5*(id*x - 1)) clamped.
func iq3Level(id, x float32) uint8 {
	return uint8(clampInt(nearestInt(float32(0.5*float32(float32(id*x)-1))), 0, 7))
}

// quantizeIQ3_S is ggml's quantize_row_iq3_s_ref: quantize_iq3_s without
// importance weights.
func quantizeIQ3_S(x []float32, y []byte) {
	quantizeIQ3_SWith(x, y, nil)
}

// quantizeIQ3_SWith quantizes a row to IQ3_S with importance weights qw
// (nil, or one per element of the row), as ggml's quantize_iq3_s.
//
// A 32-element sub-block that is all zeros is skipped as ggml skips it:
// its scale code is 0 and, since ggml then does not advance its code and
// sign positions, the next sub-block's codes and signs take its place
// (the block's last such slots stay zero). Such a row does not decode to
// zeros there; ggml's files hold the same bytes.
func quantizeIQ3_SWith(x []float32, y []byte, qw []float32) {
	g := iq3sSearch()
	const kMaxQ = 8
	for ibl := 0; ibl < len(x)/QKK; ibl++ {
		b := y[ibl*sizeIQ3_S : (ibl+1)*sizeIQ3_S]
		clear(b)
		qs, qh, signs, scaleCodes := b[2:66], b[66:74], b[74:106], b[106:110]
		qsOff, signsOff := 0, 0
		xbl := x[QKK*ibl : QKK*(ibl+1)]
		var sumx2 float32
		for _, v := range xbl {
			sumx2 += float32(v * v)
		}
		sigma2 := float32(2*sumx2) / QKK

		var scales [QKK / 32]float32
		var maxScale float32
		for ib := range QKK / 32 {
			xb := xbl[32*ib : 32*ib+32]
			var weight, waux, xval [32]float32
			var L, Laux [32]uint8
			var onGrid, onGridAux [8]bool
			var blockSigns [4]uint8
			for i, v := range xb {
				if qw != nil {
					weight[i] = qw[QKK*ibl+32*ib+i] * sqrt32(sigma2+float32(v*v))
				} else {
					weight[i] = float32(v * v)
				}
				waux[i] = sqrt32(weight[i])
			}
			for k := range 4 {
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
			if maxv == 0 {
				scales[ib] = 0
				continue
			}
			var best float32
			scale := maxv / (2*kMaxQ - 1)
			for is := -9; is <= 9; is++ {
				id := float32(2*kMaxQ-1+float32(float32(is)*0.2)) / maxv
				thisScale := 1 / id
				for k := range 8 {
					u := 0
					for i := range 4 {
						Laux[4*k+i] = iq3Level(id, xval[4*k+i])
						u |= int(Laux[4*k+i]) << (3 * i)
					}
					onGridAux[k] = g.index[u] >= 0
					if !onGridAux[k] {
						g.bestNeighbour(u, xval[4*k:], waux[4*k:], thisScale, Laux[4*k:])
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
			if slices.Contains(onGrid[:], false) && scale > 0 {
				id := 1 / scale
				for k := range 8 {
					u := 0
					for i := range 4 {
						u |= int(iq3Level(id, xval[4*k+i])) << (3 * i)
					}
					gi := int(g.index[u])
					if gi < 0 {
						gi = g.bestNeighbour(u, xval[4*k:], waux[4*k:], scale, L[4*k:])
					}
					g.levels(gi, L[4*k:])
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
					blockSigns[k] = ^blockSigns[k]
				}
			}
			for k := range 8 {
				u := 0
				for i := range 4 {
					u |= int(L[4*k+i]) << (3 * i)
				}
				// Every L here is a grid entry's levels (or all zeros,
				// entry 0).
				gi := max(int(g.index[u]), 0)
				qs[qsOff+k] = uint8(gi)
				qh[(8*ib+k)/8] |= uint8(gi>>8) << ((8*ib + k) % 8)
			}
			qsOff += 8
			copy(signs[signsOff:], blockSigns[:])
			signsOff += 4
			scales[ib] = scale
			if !(maxScale > scale) {
				maxScale = scale
			}
		}
		if maxScale == 0 {
			continue
		}
		d := maxScale / 31
		putF16(b[0:2], float32(d*1.033))
		id := 1 / d
		for ib := 0; ib < QKK/32; ib += 2 {
			l1 := clampInt(nearestInt(float32(0.5*float32(float32(id*scales[ib])-1))), 0, 15)
			l2 := clampInt(nearestInt(float32(0.5*float32(float32(id*scales[ib+1])-1))), 0, 15)
			scaleCodes[ib/2] = uint8(l1 | l2<<4)
		}
	}
}

// groupMaxEpsIQ3XXS is the largest magnitude below which an IQ3_XXS
// sub-block is stored as zeros (ggml's GROUP_MAX_EPS_IQ3_XXS).
const groupMaxEpsIQ3XXS = 1e-8

// quantizeIQ3_XXS is ggml's quantize_row_iq3_xxs_ref: quantize_iq3_xxs
// without importance weights.
func quantizeIQ3_XXS(x []float32, y []byte) {
	quantizeIQ3_XXSWith(x, y, nil)
}

// quantizeIQ3_XXSWith quantizes a row to IQ3_XXS with importance weights
// qw (nil, or one per element of the row), as ggml's quantize_iq3_xxs.
// Signs are coded seven to a group of 8 with even parity (paritySigns).
func quantizeIQ3_XXSWith(x []float32, y []byte, qw []float32) {
	g := iq3xxsSearch()
	const kMaxQ = 8
	for ibl := 0; ibl < len(x)/QKK; ibl++ {
		b := y[ibl*sizeIQ3_XXS : (ibl+1)*sizeIQ3_XXS]
		clear(b)
		qs := b[2:66]
		var words [QKK / 32]uint32
		xbl := x[QKK*ibl : QKK*(ibl+1)]
		var sumx2 float32
		for _, v := range xbl {
			sumx2 += float32(v * v)
		}
		sigma2 := float32(2*sumx2) / QKK

		var scales [QKK / 32]float32
		var maxScale float32
		for ib := range QKK / 32 {
			xb := xbl[32*ib : 32*ib+32]
			var weight, waux, xval [32]float32
			var L, Laux [32]uint8
			var onGrid, onGridAux [8]bool
			var blockSigns [4]uint32
			for i, v := range xb {
				if qw != nil {
					weight[i] = qw[QKK*ibl+32*ib+i] * sqrt32(sigma2+float32(v*v))
				} else {
					weight[i] = float32(v * v)
				}
				waux[i] = sqrt32(weight[i])
			}
			for k := range 4 {
				blockSigns[k] = uint32(paritySigns(xb[8*k:8*k+8], weight[8*k:8*k+8], xval[8*k:8*k+8]))
			}
			maxv := xval[0]
			for _, v := range xval[1:] {
				if !(maxv > v) {
					maxv = v
				}
			}
			if maxv < groupMaxEpsIQ3XXS {
				scales[ib] = 0
				continue
			}
			var best float32
			scale := maxv / (2*kMaxQ - 1)
			for k := range onGrid {
				onGrid[k] = true
			}
			for is := -15; is <= 15; is++ {
				id := float32(2*kMaxQ-1+float32(float32(is)*0.2)) / maxv
				thisScale := 1 / id
				for k := range 8 {
					u := 0
					for i := range 4 {
						Laux[4*k+i] = iq3Level(id, xval[4*k+i])
						u |= int(Laux[4*k+i]) << (3 * i)
					}
					onGridAux[k] = g.index[u] >= 0
					if !onGridAux[k] {
						g.bestNeighbour(u, xval[4*k:], waux[4*k:], thisScale, Laux[4*k:])
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
			if slices.Contains(onGrid[:], false) && scale > 0 {
				id := 1 / scale
				for k := range 8 {
					if onGrid[k] {
						continue
					}
					u := 0
					for i := range 4 {
						u |= int(iq3Level(id, xval[4*k+i])) << (3 * i)
					}
					gi := int(g.index[u])
					if gi < 0 {
						gi = g.bestNeighbour(u, xval[4*k:], waux[4*k:], scale, L[4*k:])
					}
					g.levels(gi, L[4*k:])
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
			for k := range 8 {
				u := 0
				for i := range 4 {
					u |= int(L[4*k+i]) << (3 * i)
				}
				qs[8*ib+k] = uint8(max(int(g.index[u]), 0))
			}
			words[ib] = blockSigns[0] | blockSigns[1]<<7 | blockSigns[2]<<14 | blockSigns[3]<<21
			scales[ib] = scale
			if !(maxScale > scale) {
				maxScale = scale
			}
		}
		if maxScale == 0 {
			continue
		}
		d := maxScale / 31
		putF16(b[0:2], float32(d*1.0125))
		id := 1 / d
		for ib := range QKK / 32 {
			l := clampInt(nearestInt(float32(0.5*float32(float32(id*scales[ib])-1))), 0, 15)
			binary.LittleEndian.PutUint32(b[66+4*ib:], words[ib]|uint32(l)<<28)
		}
	}
}
