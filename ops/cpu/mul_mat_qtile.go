package cpu

import (
	"encoding/binary"

	"github.com/kernbench/kernbench/quant"
)

// Panel tiles of the quantized gemm path: q4_0, q5_0, q8_0 weights with
// packed q8_0 activation groups, q4_1 and q5_1 weights with packed q8_1
// groups. A tier may attach a qTile to a packed-group gemm kernel
// (gemmKernel.qtile); q8Block then computes eight weight rows by four activation
// rows per kernel call instead of one by four (MUL_MAT_ID keeps the quad
// kernel, with unbiased groups):
//
//   - The eight weight rows are repacked once per row block into a panel
//     with the rows in the vector lanes: per 32-element block, eight
//     vectors of 32 bytes, vector j holding elements 4j..4j+3 of row r in
//     bytes 4r..4r+3, as signed codes (q-8 for q4_0, q-16 for q5_0, the
//     codes of q8_0); then the rows' scales d_x as float32 and, for q4_0
//     and q5_0, the eight int32 corrections 128*sum(codes). A kernel
//     broadcasts four activation codes to every lane, so one multiply
//     serves eight rows and the block sums build up lane by lane without
//     horizontal reductions.
//   - For q4_0 and q5_0 the activation codes are packed biased (y+128,
//     unsigned), so VPMADDUBSW multiplies them with the signed weight
//     codes directly and its int16 pair sums can be accumulated over the
//     block (q4_0) or half of it (q5_0) before widening; the int32 sum
//     less the correction is exactly sum((q-8)*y). q8_0 codes keep the
//     sign trick on signed activation codes (VPSIGNB). q4_1 and q5_1
//     panels hold the unsigned codes q (and m_x where the corrections
//     go), multiplied with the signed codes as they are; per block and
//     output a second FMA adds m_x*s_y.
//   - Per block and output one FMA adds float32(isum) * (d_x*d_y) to the
//     output's accumulator, blocks in order: the outputs are exact block
//     sums accumulated as qgemm.Twin describes (not bit-equal to the dot
//     product, which keeps eight lanes per block).
//
// The panels live in the worker's scratch bytes after a small header
// that names the row block they hold (weight batch, first and end row).
// Repacking a panel costs about what the kernel spends on six to ten
// activation rows of it, yet the panel path measured faster from n = 4
// (q8_0: n = 8) on. The
// pool hands each worker contiguous runs of work items, and consecutive
// items of a run share their row block, so each panel is repacked about
// once per call. The header is cleared by the packing pass at the start
// of every call (packJob), so no panel survives into a call whose weights
// may have changed: nothing is cached across calls, the weights are never
// assumed immutable.

// qTile is the panel kernel of one weight type.
type qTile struct {
	// block is the size of a panel block in bytes, gblock that of a
	// packed group block (dot.PackQ8Block, or dot.PackQ81Block for q4_1 and
	// q5_1).
	block, gblock int64
	// minN is the fewest activation rows for which the panel path is
	// taken (below it the quad kernel was as fast).
	minN int64
	// biased tells that the kernel takes the activation codes biased by
	// 128 (packJob flips their top bits after packGroup).
	biased bool
	// repack writes blocks [0, nb) of the eight weight rows w[r*ld:]
	// into panel.
	repack func(panel, w []byte, ld, nb int64)
	// kernel accumulates into out[8c+r] the dot product of panel row r
	// with column c of the packed group grp over nb blocks, block by
	// block in one FMA chain per output: run over chunks of k with the
	// same out, it computes what one run over all of k does.
	kernel func(nb int, panel, grp []byte, out *[32]float32)
	// fromX8, when set, writes the panel of an x8 group (the weights'
	// repacked copy, mul_mat_x8.go): what repack writes for its rows.
	fromX8 func(panel, x8 []byte, nb int64)
}

// qTileKC is the number of blocks per k chunk of the panel path: a
// q4_0 panel chunk (10 KiB) and a packed group chunk (4.5 KiB) fit in L1
// together. (A variable so that benchmarks can compare chunk sizes.)
var qTileKC int64 = 32

// qPanelHeader is the size of the header before the panels in a worker's
// scratch bytes: a valid flag, the weight batch and the first and end
// row of the row block the panels hold, as int64.
const qPanelHeader = 64

// q8Block computes rows [i0, i1) by columns [c0, c1) (c0 a multiple of 4)
// of batch (i2, i3) with packed q8 groups: with the panel kernel when the
// gemm kernel has one, else one row at a time with the quad kernel.
func (j *gemmJob) q8Block(w int, i0, i1, c0, c1, i2, i3 int64) {
	if t := j.qTile(); t != nil {
		j.qTileBlock(w, t, i0, i1, c0, c1, i2, i3)
		return
	}
	mm := j.mm
	o := j.quadOut(w)
	nb := int(mm.k / quant.QK)
	batch := i2 + mm.b2*i3
	for g := c0 / 4; g < ceilDiv(c1, 4); g++ {
		grp := j.pack[(batch*j.groups+g)*j.groupBytes:][:j.groupBytes]
		nc := min(4, mm.n-4*g)
		for i := i0; i < i1; i++ {
			j.g.quad(nb, mm.weightRow(i, i2, i3), grp, 0, o)
			for c := range nc {
				mm.out[mm.outIndex(i, 4*g+c, i2, i3)] = o[c]
			}
		}
	}
}

// qTile returns the panel kernel the call uses, or nil.
func (j *gemmJob) qTile() *qTile {
	if t := j.g.qtile; t != nil && j.mm.n >= t.minN {
		return t
	}
	return nil
}

// qTileBlock is q8Block with the panel kernel t. The rows go through
// panels of eight (rowPanels); the tiles' outputs go out by storeTiles.
func (j *gemmJob) qTileBlock(w int, t *qTile, i0, i1, c0, c1, i2, i3 int64) {
	mm := j.mm
	nb := mm.k / quant.QK
	g0, g1 := c0/4, ceilDiv(c1, 4)
	np := ceilDiv(i1-i0, 8)
	panels, accs := j.rowPanels(w, 1, t.repack, t.fromX8, t.block, nb, np*(g1-g0)*32, i0, i1, i2, i3)
	// Chunks of qTileKC blocks keep a panel chunk and the groups' chunks
	// in L1 while the kernel sweeps them; the accumulators of the
	// block's tiles wait in scratch between chunks.
	panelBytes := nb * t.block
	batch := i2 + mm.b2*i3
	for k0 := int64(0); k0 < nb; k0 += qTileKC {
		kl := min(qTileKC, nb-k0)
		for p := range np {
			panel := panels[p*panelBytes+k0*t.block:][:kl*t.block]
			for g := g0; g < g1; g++ {
				grp := j.pack[(batch*j.groups+g)*j.groupBytes+k0*t.gblock:][:kl*t.gblock]
				tile := (p*(g1-g0) + g - g0) * 32
				t.kernel(int(kl), panel, grp, (*[32]float32)(accs[tile:tile+32]))
			}
		}
	}
	j.storeTiles(accs, i0, i1, g0, g1, i2, i3)
}

// rowPanels returns the panels of weight rows [i0, i1) of batch (i2, i3),
// eight rows and nb blocks of block bytes each, in worker w's scratch,
// repacked by repack unless the scratch's header says it already holds
// them (tag names the kind of panel: 1 for the q8 panels, 2 for the K
// panels), and nacc cleared float32 accumulators. Where the weights have
// an x8 copy (mm.x8mem) and fromX8 is set, a whole group of eight rows
// is written from the copy instead, so the original is not read. A last group of fewer
// than eight rows is copied into scratch padded with zero rows (scale 0)
// and repacked as a whole panel, whose padding outputs storeTiles drops.
func (j *gemmJob) rowPanels(w int, tag int64, repack func(panel, w []byte, ld, nb int64), fromX8 func(panel, x8 []byte, nb int64), block, nb, nacc, i0, i1, i2, i3 int64) ([]byte, []float32) {
	mm := j.mm
	panelBytes := nb * block
	np := ceilDiv(i1-i0, 8)
	var padBytes int64
	if (i1-i0)%8 != 0 {
		padBytes = 8 * mm.aRow
	}
	wb := j.sc.worker(w, nacc, 0, qPanelHeader+np*panelBytes+padBytes)
	hdr := wb.bytes[:qPanelHeader]
	panels := wb.bytes[qPanelHeader : qPanelHeader+np*panelBytes]
	w2, w3 := i2/mm.r2, i3/mm.r3
	key := [5]int64{tag, w2, w3, i0, i1}
	if !qHeaderIs(hdr, &key) {
		ld := mm.a.Nb[1]
		for p := range np {
			r0 := i0 + 8*p
			panel := panels[p*panelBytes : (p+1)*panelBytes]
			if r0+8 <= i1 {
				off := at(mm.a, 0, r0, w2, w3)
				if mm.x8mem != nil && fromX8 != nil && r0%8 == 0 {
					fromX8(panel, mm.x8mem[off:off+8*mm.aRow], nb)
					continue
				}
				repack(panel, mm.aMem[off:off+7*ld+mm.aRow], ld, nb)
				continue
			}
			pad := wb.bytes[qPanelHeader+np*panelBytes:][:padBytes]
			clear(pad)
			for r := r0; r < i1; r++ {
				copy(pad[(r-r0)*mm.aRow:], mm.weightRow(r, i2, i3))
			}
			repack(panel, pad, mm.aRow, nb)
		}
		for f, v := range key {
			binary.LittleEndian.PutUint64(hdr[8*f:], uint64(v))
		}
	}
	accs := wb.f32[:nacc]
	clear(accs)
	return panels, accs
}

// storeTiles copies the 8x4 tiles in accs (panel p's tile of column
// group g at (p*(g1-g0) + g-g0)*32, column c's eight rows at 8c) to the
// outputs of rows [i0, i1) and column groups [g0, g1) of batch (i2, i3),
// dropping padding rows and columns past n.
func (j *gemmJob) storeTiles(accs []float32, i0, i1, g0, g1, i2, i3 int64) {
	mm := j.mm
	for p := range ceilDiv(i1-i0, 8) {
		r0 := i0 + 8*p
		rows := min(8, i1-r0)
		for g := g0; g < g1; g++ {
			tile := (p*(g1-g0) + g - g0) * 32
			for c := range min(4, mm.n-4*g) {
				o := mm.outIndex(r0, 4*g+c, i2, i3)
				copy(mm.out[o:o+rows], accs[tile+8*c:tile+8*c+rows])
			}
		}
	}
}

// qHeaderIs reports whether the panel header hdr holds key.
func qHeaderIs(hdr []byte, key *[5]int64) bool {
	for f, v := range key {
		if int64(binary.LittleEndian.Uint64(hdr[8*f:])) != v {
			return false
		}
	}
	return true
}

// qInvalidatePanels clears every worker's panel header, so that the
// next panel call repacks its weights.
func (s *scratch) qInvalidatePanels() {
	for w := range s.workers {
		// By capacity: another kernel may have resliced the buffer
		// shorter, and growBytes would hand the old header back.
		if b := s.workers[w].bytes; cap(b) >= qPanelHeader {
			clear(b[:qPanelHeader])
		}
	}
}
