package cpu

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// kTileFunc is a K-format panel kernel (kTile.kernel).
type kTileFunc = func(nb int, panel, y []byte, ldy int, out *[32]float32)

// Panel tiles of the K-format gemm path: a tier may attach a kTile to a
// K-format gemm kernel (gemmKernel.ktile); MUL_MAT then computes eight weight rows
// by four q8_K activation rows per kernel call instead of one by four.
// The activation rows are read in place (no packing pass); the eight
// weight rows are repacked into a panel (package internal/qgemm, kq4.go,
// kq5.go and kq6.go, for the layouts) once per row block and call, kept in the
// worker's scratch behind the same header as the q8 panels (mul_mat_qtile.go),
// which gemm clears at the start of every call: nothing survives into a
// call whose weights may have changed.
type kTile struct {
	// block is the size of a panel super-block in bytes.
	block int64
	// minN is the fewest activation rows for which the panel path is
	// taken.
	minN int64
	// repack writes super-blocks [0, nb) of the eight weight rows
	// w[r*ld:] into panel.
	repack func(panel, w []byte, ld, nb int64)
	// kernel adds to out[8c+r] the dot product of panel row r with q8_K
	// row c at y[c*ldy:] over nb super-blocks, one super-block after
	// another: run over chunks of k with the same out, it computes what
	// one run over all of k does.
	kernel kTileFunc
}

// kTileKC is the number of super-blocks per k chunk of the K panel path:
// a q6_K panel chunk (11 KiB) and four activation rows' chunks (4.6 KiB)
// fit in L1 together.
const kTileKC = 4

// kTile returns the K panel kernel the call uses, or nil.
func (j *gemmJob) kTile() *kTile {
	if t := j.g.ktile; t != nil && j.mm.n >= t.minN {
		return t
	}
	return nil
}

// kTileBlock is kBlock with the panel kernel t. The rows go through
// panels of eight (rowPanels). A last group of fewer than four columns
// goes through the kernel whole where the activation rows carry padding
// rows past it (prepareActivations), its padding outputs dropped by
// storeTiles; else (rows read in place) it uses the dot product. In MoE
// prefill an expert meets about 32 tokens, and its one to three
// leftover columns by the dot product, which reads the weights again,
// were 10% of MUL_MAT_ID's time.
func (j *gemmJob) kTileBlock(w int, t *kTile, i0, i1, c0, c1, i2, i3 int64) {
	mm := j.mm
	nb := mm.k / quant.QKK
	c4 := c0 + (c1-c0)/4*4
	g0, g1 := c0/4, c4/4
	if c4 < c1 && j.kGroupFits(g1, nb, i2, i3) {
		g1, c4 = g1+1, c1
	}
	np := ceilDiv(i1-i0, 8)
	panels, accs := j.rowPanels(w, 2, t.repack, nil, t.block, nb, np*(g1-g0)*32, i0, i1, i2, i3)
	panelBytes := nb * t.block
	ldy := mm.acts.nb1
	for k0 := int64(0); k0 < nb; k0 += kTileKC {
		kl := min(kTileKC, nb-k0)
		for p := range np {
			panel := panels[p*panelBytes+k0*t.block:][:kl*t.block]
			for g := g0; g < g1; g++ {
				off := 4*g*ldy + i2*mm.acts.nb2 + i3*mm.acts.nb3 + k0*simd.BytesQ8_K
				y := mm.acts.mem[off : off+3*ldy+kl*simd.BytesQ8_K]
				tile := (p*(g1-g0) + g - g0) * 32
				t.kernel(int(kl), panel, y, int(ldy), (*[32]float32)(accs[tile:tile+32]))
			}
		}
	}
	j.storeTiles(accs, i0, i1, g0, g1, i2, i3)
	if c4 < c1 {
		mm.dotRange(i0, i1, c4, c1, i2, i3)
	}
}

// kGroupFits reports whether the four activation rows of column group g
// of batch (i2, i3), nb super-blocks each, lie within the activations'
// memory, padding rows included.
func (j *gemmJob) kGroupFits(g, nb, i2, i3 int64) bool {
	a := &j.mm.acts
	off := 4*g*a.nb1 + i2*a.nb2 + i3*a.nb3
	return off+3*a.nb1+nb*simd.BytesQ8_K <= int64(len(a.mem))
}
