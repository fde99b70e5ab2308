package cpu

import (
	"encoding/binary"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// Panel tiles of the K-format gemm path: a tier may attach a kTile to a
// K-format gemm kernel (gemmKernel.ktile); MUL_MAT then computes eight weight rows
// by four q8_K activation rows per kernel call instead of one by four.
// The activation rows are read in place (no packing pass); the eight
// weight rows are repacked into a panel (package internal/qgemm, kq4.go,
// kq5.go and kq6.go, for the layouts) once per row block and call, kept in the
// worker's scratch behind the same header as the q8 panels (qgemm.go),
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
	kernel func(nb int, panel, y []byte, ldy int, out *[32]float32)
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
// panels of eight (a last group of fewer rows is copied into scratch
// padded with zero rows, whose outputs are dropped); a last group of
// fewer than four columns uses the dot product.
func (j *gemmJob) kTileBlock(w int, t *kTile, i0, i1, c0, c1, i2, i3 int64) {
	mm := j.mm
	nb := mm.k / quant.QKK
	panelBytes := nb * t.block
	np := ceilDiv(i1-i0, 8)
	var padBytes int64
	if (i1-i0)%8 != 0 {
		padBytes = 8 * mm.aRow
	}
	c4 := c0 + (c1-c0)/4*4
	g0, g1 := c0/4, c4/4
	wb := j.sc.worker(w, np*(g1-g0)*32, 0, qPanelHeader+np*panelBytes+padBytes)
	hdr := wb.bytes[:qPanelHeader]
	panels := wb.bytes[qPanelHeader : qPanelHeader+np*panelBytes]
	w2, w3 := i2/mm.r2, i3/mm.r3
	key := [5]int64{2, w2, w3, i0, i1}
	if !qHeaderIs(hdr, &key) {
		ld := mm.a.Nb[1]
		for p := range np {
			r0 := i0 + 8*p
			panel := panels[p*panelBytes : (p+1)*panelBytes]
			if r0+8 <= i1 {
				off := at(mm.a, 0, r0, w2, w3)
				t.repack(panel, mm.aMem[off:off+7*ld+mm.aRow], ld, nb)
				continue
			}
			pad := wb.bytes[qPanelHeader+np*panelBytes:][:padBytes]
			clear(pad)
			for r := r0; r < i1; r++ {
				copy(pad[(r-r0)*mm.aRow:], mm.weightRow(r, i2, i3))
			}
			t.repack(panel, pad, mm.aRow, nb)
		}
		for f, v := range key {
			binary.LittleEndian.PutUint64(hdr[8*f:], uint64(v))
		}
	}
	ldy := mm.acts.nb1
	accs := wb.f32[:np*(g1-g0)*32]
	clear(accs)
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
	for p := range np {
		r0 := i0 + 8*p
		rows := min(8, i1-r0)
		for g := g0; g < g1; g++ {
			tile := (p*(g1-g0) + g - g0) * 32
			for c := range int64(4) {
				o := mm.outIndex(r0, 4*g+c, i2, i3)
				copy(mm.out[o:o+rows], accs[tile+8*c:tile+8*c+rows])
			}
		}
	}
	mm.dotRange(i0, i1, c4, c1, i2, i3)
}
