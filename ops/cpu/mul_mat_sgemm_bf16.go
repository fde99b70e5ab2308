package cpu

import "github.com/kernbench/kernbench/ops/cpu/internal/sgemm"

// The bfloat16 pair path of the packed gemm: bf16 weights against
// activation rows rounded to bf16 (as the dot path and ggml round them),
// on a tier whose CPU has AVX-512 BF16 (gemmKernel.microBF16: VDPBF16PS,
// two products a lane per instruction). It is sgemm's blocking
// (mul_mat_sgemm.go) with these differences:
//
//   - The activation panels stay bfloat16, packed in pairs of k: a
//     panel's pair of k steps is one 64-byte line, each column's two
//     values side by side (sgemm.PairIndex). A batch's panels are padded
//     to an even count with zero columns, so every block takes its
//     panels in pairs.
//   - The weight rows are read in place as bfloat16, with no widening:
//     the micro-kernel broadcasts a row's pair of k to every lane. Only
//     a block whose row count is not a multiple of six (padded with
//     zero rows), or whose rows come from the x8 copy, copies its rows
//     into a worker buffer.
//   - Each output is the sum, within each chunk of sgemmKC, of VDPBF16PS
//     steps from zero (each pair's odd product added first, each
//     addition rounded, denormals flushed: sgemm.DotBF16Pair), the chunk
//     sums added in order of k. As in sgemm, the result depends only on
//     k, not on the threads or the blocking; it differs from the float
//     path's rounding, and the tests hold both to the float64
//     reference.

// sgemmMicroBF16 adds to c[r*ldc + j] the VDPBF16PS sums of bf16 weight
// row r of a (row stride lda) with column j of the pair-packed panels b
// and b[bstride:] (sgemm.MicroBF16AVX512, twin sgemm.TwinBF16), for
// r < 6 and j < 32; kc is even.
type sgemmMicroBF16 func(kc int, a []uint16, lda int, b []uint16, bstride int, c []float32, ldc int, pf []byte, pfStep int)

// sgemmBF16Job is one bfloat16 pair gemm call's work, kept in the
// backend.
type sgemmBF16Job struct {
	mm     *mulMatJob
	micro  sgemmMicroBF16
	sc     *scratch
	pack   []uint16 // activation panels: batch, panel, pair of k, column, pair element
	panels int64    // panels per batch, even
	grid   sgemmGrid
}

// sgemmBF16NC is the bfloat16 path's columns per block: the weight rows
// are read in place once per block, so wide blocks read them fewer
// times.
const sgemmBF16NC = 512

// sgemmBF16 computes the product described by mm (bf16 weights, bf16
// activation rows, k even) with the bfloat16 pair path.
func (b *Backend) sgemmBF16(g *gemmKernel, mm *mulMatJob) {
	j := &b.sgb
	*j = sgemmBF16Job{mm: mm, micro: g.microBF16, sc: &b.scratch}
	batches := mm.b2 * mm.b3
	j.panels = ceilDiv(mm.n, 2*sgemmNR) * 2
	count := batches * j.panels * mm.k * sgemmNR
	b.scratch.packF = growF32(b.scratch.packF, (count+1)/2)
	j.pack = u16s(sgemm.F32Bytes(b.scratch.packF), 0, count)
	p := &b.sgbp
	*p = sgemmBF16PackJob{sj: j}
	b.pool.run(int(batches*j.panels), 1, p)
	j.grid = b.sgemmGrid(mm, sgemmBF16NC)
	b.pool.run(j.grid.items(mm), 1, j)
}

func (j *sgemmBF16Job) do(w, lo, hi int) {
	for t := int64(lo); t < int64(hi); t++ {
		j.block(w, j.grid.cell(j.mm, t))
	}
}

// block computes one cell of the grid; its c0 is a multiple of
// 2*sgemmNR.
func (j *sgemmBF16Job) block(w int, cell sgemmCell) {
	mm := j.mm
	batch, i2, i3, i0, c0, c1 := cell.batch, cell.i2, cell.i3, cell.i0, cell.c0, cell.c1
	rows := cell.i1 - i0
	padRows := ceilDiv(rows, sgemmMR) * sgemmMR
	np := ceilDiv(c1-c0, 2*sgemmNR) * 2
	ldc := np * sgemmNR
	inPlace := padRows == rows && mm.x8gather == nil
	var wbA int64
	if !inPlace {
		wbA = (padRows*sgemmKC + 1) / 2 // bf16 values, in float32 words
	}
	wb := j.sc.worker(w, wbA, padRows*ldc, 0)
	cb := wb.f32b[:padRows*ldc]
	clear(cb)
	first := at(mm.a, 0, i0, i2/mm.r2, i3/mm.r3)
	stride := mm.a.Nb[1]
	panel0 := batch*j.panels + c0/sgemmNR
	pstride := mm.k * sgemmNR
	for k0 := int64(0); k0 < mm.k; k0 += sgemmKC {
		kl := min(sgemmKC, mm.k-k0)
		var ap []uint16
		var lda int64
		if inPlace {
			lda = stride / 2
			ap = u16s(mm.aMem, first+2*k0, (rows-1)*lda+kl)
		} else {
			lda = kl
			ap = u16s(sgemm.F32Bytes(wb.f32), 0, padRows*kl)
			for r := range rows {
				dst := ap[r*kl : (r+1)*kl]
				var src []uint16
				if mm.x8gather != nil {
					// A row of a whole group is gathered straight
					// into dst; a plain tail row comes back in place.
					src = u16s(mm.x8Row(sgemm.U16Bytes(dst), i0+r, i2, i3, k0, kl), 0, kl)
				} else {
					src = u16s(mm.aMem, first+r*stride+2*k0, kl)
				}
				if &src[0] != &dst[0] {
					copy(dst, src)
				}
			}
			clear(ap[rows*kl:])
		}
		// Panels in pairs. A pair's chunks (2 x 8 KiB) serve every row
		// group of the block from L1; the first eight row groups
		// prefetch the next pair's, a quarter of a panel's chunk each.
		pfLen := int64(sgemm.PfLinesBF16(int(kl))) * 2 * sgemmNR // bf16 values of a panel's chunk one call prefetches
		for p := int64(0); p < np; p += 2 {
			bp := j.pack[((panel0+p)*mm.k+k0)*sgemmNR:][:pstride+kl*sgemmNR]
			next := p + 2
			for ri, r := int64(0), int64(0); r < padRows; ri, r = ri+1, r+sgemmMR {
				var pf []byte
				if q := next + ri/4; ri < 8 && q < np {
					pf = sgemm.U16Bytes(j.pack[((panel0+q)*mm.k+k0)*sgemmNR+ri%4*pfLen:][:pfLen])
				}
				j.micro(int(kl), ap[r*lda:], int(lda), bp, int(pstride), cb[r*ldc+p*sgemmNR:], int(ldc), pf, 64)
			}
		}
	}
	mm.storeBlock(&wb.rows, cb, ldc, cell)
}

// sgemmBF16PackJob packs the activation panels of an sgemmBF16Job, one
// panel per item.
type sgemmBF16PackJob struct{ sj *sgemmBF16Job }

func (p *sgemmBF16PackJob) do(w, lo, hi int) {
	j := p.sj
	mm := j.mm
	k := mm.k
	pairs := k / 2
	// Columns past n read a row of zeros.
	wb := j.sc.worker(w, pairs, 0, 0)
	zeros := sgemm.F32AsU32(wb.f32[:pairs])
	clear(zeros)
	cols := &wb.rows
	for item := int64(lo); item < int64(hi); item++ {
		batch, pn := item/j.panels, item%j.panels
		i2, i3 := batch%mm.b2, batch/mm.b2
		for c := range int64(sgemmNR) {
			cols[c] = zeros
			if col := pn*sgemmNR + c; col < mm.n {
				cols[c] = u32View(u16s(mm.acts.row(col, i2, i3), 0, k))
			}
		}
		// The rows read as runs of pairs of k; a line is a pair of k
		// of the sixteen columns.
		mm.transpose(u32View(j.pack[item*k*sgemmNR:][:k*sgemmNR]), sgemmNR, cols, int(pairs))
	}
}
