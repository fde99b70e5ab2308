package cpu

import "github.com/kernbench/kernbench/ops/cpu/internal/sgemm"

// The packed float path of MUL_MAT's gemm, for f32, f16 and bf16 weights
// and for the new block formats (gemmDeq: mxfp4, the IQ formats, tq1_0,
// tq2_0), at least sgemmMinN activation rows, in the manner of BLIS:
//
//   - The activation rows (converted to the weight type's vec-dot type:
//     f32, f16 or bf16 for the float weights, q8_0 or q8_K for gemmDeq,
//     as the dot path and ggml round them, then decoded back to float32)
//     are packed once per call into panels of sgemmNR columns,
//     float32, k-major: element i of column c of a panel at
//     16*i + c. Columns past n are zeros. The pack is shared by all
//     threads.
//   - The output is cut into blocks of at most SgemmRows weight rows
//     (tuned.go; evened out across the threads) by sgemmNC
//     columns (sgemmWideNC for f16 and bf16 weights, whose widening to
//     float32 is then done for four times as many columns at once), one
//     work item each. Within a block, k is walked in chunks
//     of sgemmKC: the block's weight rows are read in place (f32) or
//     widened once into a worker buffer (f16, bf16, and f32 blocks whose
//     row count is not a multiple of six, which are padded with zero
//     rows; gemmDeq decodes the chunk's whole blocks, sgemmKC being a
//     multiple of every block size, 32 or 256, with quant.DequantizeRow,
//     and uses sgemmWideNC too), then every 6-row group meets every 16-column panel chunk in
//     the micro-kernel, which adds its 6x16 tile to a worker's block of
//     float32 partial sums; a tier with a two-panel kernel (micro2: the
//     avx512 tier's 6x32) takes the panels in pairs, with the same sums.
//   - The micro-kernel broadcasts one weight element per row and loads
//     sixteen activation values per k, so twelve FMA accumulators need no
//     reduction across lanes; a panel chunk (16 KiB; 32 for a pair)
//     stays in L1 for every row group of the block while the block's
//     weight rows (rows x 1 KiB) stream from L2. The pack is larger than
//     L2, so a panel pair's chunks come from L3: micro2 prefetches the
//     next pair's while it computes.
//
// Each output is therefore summed over k by FMA (the generic tier's
// gemmDeq: multiply, then add) from zero within each chunk of sgemmKC
// elements, chunk sums added in order of k: the result
// depends neither on the thread count nor on which block or panel an
// output falls in, only on k.

// Blocking of the packed float path.
const (
	sgemmMR   = sgemm.MR // weight rows per micro-kernel call
	sgemmNR   = sgemm.NR // activation columns per panel
	sgemmKC   = 256      // k per chunk
	sgemmNC   = 128      // columns per block, a multiple of sgemmNR
	sgemmMinN = 16       // fewest activation rows that take the path
	// sgemmWideNC is the columns per block for weights widened to
	// float32: the widening, done once per block and k chunk, was a
	// tenth of an f16 product's time at 128 columns.
	sgemmWideNC = 512
)

// sgemmMicro adds to c[r*ldc + j] the sum over i < kc of a[r*lda + i] *
// b[16*i + j], for r < 6 and j < 16 (see sgemm.Twin).
type sgemmMicro func(kc int, a []float32, lda int, b []float32, c []float32, ldc int)

// sgemmMicro2 is sgemmMicro on two panels at once: b's and b[bstride:]'s,
// added to c's columns [0, 16) and [16, 32) (see sgemm.Twin2), bit for bit
// the tier's sgemmMicro on each. While it computes it prefetches
// sgemm.PfLines(kc) lines into L1, at pf[i*pfStep] (see
// sgemm.Micro2AVX512; pf may be nil).
type sgemmMicro2 func(kc int, a []float32, lda int, b []float32, bstride int, c []float32, ldc int, pf []byte, pfStep int)

// sgemmJob is one packed float gemm call's work, kept in the backend.
type sgemmJob struct {
	mm     *mulMatJob
	g      *gemmKernel
	sc     *scratch
	pack   []float32 // activation panels: batch, panel, k, column
	panels int64     // panels per batch
	grid   sgemmGrid
	// wNum/wDen is the weights' bytes per element: the type's block
	// bytes over its block size (4/1 for f32, 2/1 for f16 and bf16).
	wNum, wDen int64
	// actWiden widens the activation rows (f16, bf16) or decodes them
	// (q8_0, q8_K: gemmDeq); nil: float32 rows, read in place.
	actWiden func(src []byte, dst []float32)
}

// sgemm computes the product described by mm with the packed float path.
func (b *Backend) sgemm(g *gemmKernel, mm *mulMatJob) {
	if g.microBF16 != nil && mm.k%2 == 0 {
		b.sgemmBF16(g, mm)
		return
	}
	j := &b.sg
	// For gemmDeq whole blocks: k0 (a multiple of sgemmKC) and every
	// chunk's length are multiples of the block size.
	wt := mm.a.Type
	*j = sgemmJob{mm: mm, g: g, sc: &b.scratch, wNum: wt.TypeSize(), wDen: wt.BlockSize()}
	nc := int64(sgemmNC)
	if g.widen != nil {
		nc = sgemmWideNC
	}
	if g.kind != gemmDeq {
		j.actWiden = g.widen
	} else {
		j.actWiden = g.actDecode
	}
	batches := mm.b2 * mm.b3
	j.panels = ceilDiv(mm.n, sgemmNR)
	b.scratch.packF = growF32(b.scratch.packF, batches*j.panels*mm.k*sgemmNR)
	j.pack = b.scratch.packF
	p := &b.sgp
	*p = sgemmPackJob{sj: j}
	b.pool.run(int(batches*j.panels), 1, p)
	j.grid = b.sgemmGrid(mm, nc)
	b.pool.run(j.grid.items(mm), 1, j)
}

// sgemmGrid is a packed gemm call's work items: per batch, blocks of mc
// weight rows (sgemmBlockRows) by blocks of nc columns.
type sgemmGrid struct{ mc, nc, rowBlocks, colBlocks int64 }

// sgemmCell is one work item of an sgemmGrid: weight rows [i0, i1) by
// columns [c0, c1) of batch batch, which is (i2, i3).
type sgemmCell struct{ batch, i2, i3, i0, i1, c0, c1 int64 }

// sgemmGrid lays out mm's product in blocks of nc columns and of the
// weight rows sgemmBlockRows gives for the tuned cap and the threads.
func (b *Backend) sgemmGrid(mm *mulMatJob, nc int64) sgemmGrid {
	g := sgemmGrid{nc: nc, colBlocks: ceilDiv(mm.n, nc)}
	g.mc = sgemmBlockRows(mm.m, mm.b2*mm.b3*g.colBlocks, b.tuned.sgemmRows, b.pool.threads)
	g.rowBlocks = ceilDiv(mm.m, g.mc)
	return g
}

// items returns the grid's work item count.
func (g *sgemmGrid) items(mm *mulMatJob) int { return int(mm.b2 * mm.b3 * g.rowBlocks * g.colBlocks) }

// cell returns work item t: batch-major, then row blocks, then column
// blocks.
func (g *sgemmGrid) cell(mm *mulMatJob, t int64) sgemmCell {
	per := g.rowBlocks * g.colBlocks
	batch, blk := t/per, t%per
	i0, c0 := blk/g.colBlocks*g.mc, blk%g.colBlocks*g.nc
	return sgemmCell{batch: batch, i2: batch % mm.b2, i3: batch / mm.b2,
		i0: i0, i1: min(i0+g.mc, mm.m), c0: c0, c1: min(c0+g.nc, mm.n)}
}

// sgemmBlockRows returns the weight rows per block (a multiple of
// sgemmMR) for m rows when each row block makes others work items (column
// blocks times batches): at most maxRows (the tunable SgemmRows, rounded
// down to whole groups), enough blocks for about four items a thread, the
// rows evened out over the blocks, and, where up to threads-1 more blocks
// give it, an item count that is a multiple of the threads, so the last
// round of items keeps every thread busy.
func sgemmBlockRows(m, others, maxRows int64, threads int) int64 {
	groups := ceilDiv(m, sgemmMR)
	t := int64(max(threads, 1))
	// Blocks: as many as the cap needs, or as four items a thread need,
	// each then as tall as the groups evened out over them give.
	blocks := max(ceilDiv(groups, max(maxRows/sgemmMR, 1)), min(groups, ceilDiv(4*t, others)))
	for b := blocks; b < blocks+t && b <= groups; b++ {
		per := ceilDiv(groups, b)
		if others*ceilDiv(groups, per)%t == 0 {
			return per * sgemmMR
		}
	}
	return ceilDiv(groups, blocks) * sgemmMR
}

func (j *sgemmJob) do(w, lo, hi int) {
	for t := int64(lo); t < int64(hi); t++ {
		j.block(w, j.grid.cell(j.mm, t))
	}
}

// block computes one cell of the grid; its c0 is a multiple of sgemmNR.
func (j *sgemmJob) block(w int, cell sgemmCell) {
	mm := j.mm
	batch, i2, i3, i0, i1, c0, c1 := cell.batch, cell.i2, cell.i3, cell.i0, cell.i1, cell.c0, cell.c1
	rows := i1 - i0
	padRows := ceilDiv(rows, sgemmMR) * sgemmMR
	np := ceilDiv(c1-c0, sgemmNR)
	ldc := np * sgemmNR
	inPlace := j.g.widen == nil && padRows == rows
	var wbA int64
	if !inPlace {
		wbA = padRows * sgemmKC
	}
	var gatherBytes int64
	if mm.x8gather != nil {
		gatherBytes = 2 * sgemmKC
	}
	wb := j.sc.worker(w, wbA, padRows*ldc, gatherBytes)
	cb := wb.f32b[:padRows*ldc]
	clear(cb)
	first := at(mm.a, 0, i0, i2/mm.r2, i3/mm.r3)
	stride := mm.a.Nb[1]
	panel0 := batch*j.panels + c0/sgemmNR
	for k0 := int64(0); k0 < mm.k; k0 += sgemmKC {
		kl := min(sgemmKC, mm.k-k0)
		var ap []float32
		var lda int64
		if inPlace {
			lda = stride / 4
			ap = f32s(mm.aMem, first+4*k0, (rows-1)*lda+kl)
		} else {
			lda = kl
			ap = wb.f32[:padRows*kl]
			for r := range rows {
				off := first + r*stride + k0*j.wNum/j.wDen
				dst := ap[r*kl : (r+1)*kl]
				if mm.x8gather != nil {
					j.g.widen(mm.x8Row(wb.bytes, i0+r, i2, i3, k0, kl), dst)
				} else if j.g.widen != nil {
					j.g.widen(mm.aMem[off:off+kl*j.wNum/j.wDen], dst)
				} else {
					copy(dst, f32s(mm.aMem, off, kl))
				}
			}
			clear(ap[rows*kl:])
		}
		p := int64(0)
		if micro2 := j.g.micro2; micro2 != nil {
			// Pairs of panels (panel p+1 starts mm.k*sgemmNR floats
			// after panel p); an odd last panel takes micro. A pair's
			// chunks (2 x 16 KiB) serve every row group of the block
			// from L1, but arrive from L3 (the pack is larger than L2):
			// the first eight row groups prefetch the next pair's
			// chunks, a quarter of a chunk each.
			//
			// The other row groups' calls prefetch the weight rows
			// the next chunk widens (f16, bf16: a few hundred bytes of
			// each row, scattered a row stride apart, which the
			// hardware's prefetchers do not follow, so the widening
			// otherwise waits on DRAM): a column of lines down
			// PfLines(kl) rows a call, line by line along the rows;
			// from the x8 copy, a half group's chunk a call.
			pstride := mm.k * sgemmNR
			pfLen := int64(sgemm.PfLen(int(kl))) // floats of a pair's chunk one call prefetches
			col := j.widenAhead(k0+kl, rows, first, stride, int64(sgemm.PfLines(int(kl))))
			if mm.x8gather != nil {
				col = j.x8Ahead(k0+kl, i0, i1, i2, i3)
			}
			for ; p+1 < np; p += 2 {
				bp := j.pack[((panel0+p)*mm.k+k0)*sgemmNR:][:pstride+kl*sgemmNR]
				next := p + 2
				for ri, r := int64(0), int64(0); r < padRows; ri, r = ri+1, r+sgemmMR {
					var pf []byte
					step := 64
					if q := next + ri/4; ri < 8 && q < np {
						pf = sgemm.F32Bytes(j.pack[((panel0+q)*mm.k+k0)*sgemmNR+ri%4*pfLen:][:pfLen])
					} else if ri >= 8 {
						pf, step = col.next()
					}
					micro2(int(kl), ap[r*lda:], int(lda), bp, int(pstride), cb[r*ldc+p*sgemmNR:], int(ldc), pf, step)
				}
			}
		}
		for ; p < np; p++ {
			bp := j.pack[((panel0+p)*mm.k+k0)*sgemmNR:][:kl*sgemmNR]
			for r := int64(0); r < padRows; r += sgemmMR {
				j.g.micro(int(kl), ap[r*lda:], int(lda), bp, cb[r*ldc+p*sgemmNR:], int(ldc))
			}
		}
	}
	mm.storeBlock(&wb.rows, cb, ldc, cell)
}

// storeBlock copies a cell's sums cb (its rows by its columns, row r's
// at cb[r*ldc:]) to the outputs, each column's rows contiguous there:
// sixteen rows at a time through the tier's transpose (rows, a
// worker's, holds their views), the last rows%16 one by one.
func (mm *mulMatJob) storeBlock(rows *[16][]uint32, cb []float32, ldc int64, cell sgemmCell) {
	i0, n, c0, c1, i2, i3 := cell.i0, cell.i1-cell.i0, cell.c0, cell.c1, cell.i2, cell.i3
	cols := c1 - c0
	r0 := int64(0)
	for ; r0+16 <= n; r0 += 16 {
		for r := range rows {
			rows[r] = sgemm.F32AsU32(cb[(r0+int64(r))*ldc:][:cols])
		}
		o := mm.outIndex(i0+r0, c0, i2, i3)
		mm.transpose(sgemm.F32AsU32(mm.out[o:o+(cols-1)*mm.m+16]), int(mm.m), rows, int(cols))
	}
	if r0 == n {
		return
	}
	for c := c0; c < c1; c++ {
		o := mm.outIndex(i0, c, i2, i3)
		out := mm.out[o+r0 : o+n]
		src := cb[r0*ldc+c-c0:]
		for r := range out {
			out[r] = src[int64(r)*ldc]
		}
	}
}

// sgemmPackJob packs the activation panels of an sgemmJob, one panel per
// item.
type sgemmPackJob struct{ sj *sgemmJob }

func (p *sgemmPackJob) do(w, lo, hi int) {
	j := p.sj
	mm := j.mm
	k := mm.k
	// Each panel is packed sgemmPackKC elements of k at a time: its
	// sixteen rows' pieces widened (or decoded, or copied) into a
	// worker buffer in L1, then transposed into 64-byte lines of k
	// (a column at a time, the pack's lines would each be written
	// sixteen times, a line a float, from L2).
	wb := j.sc.worker(w, sgemmNR*sgemmPackKC, 0, 0)
	buf := wb.f32[:sgemmNR*sgemmPackKC]
	pieces := &wb.rows
	for c := range pieces {
		pieces[c] = sgemm.F32AsU32(buf[c*sgemmPackKC : (c+1)*sgemmPackKC])
	}
	rowBytes := mm.acts.rowBytes
	for item := int64(lo); item < int64(hi); item++ {
		batch, pn := item/j.panels, item%j.panels
		i2, i3 := batch%mm.b2, batch/mm.b2
		dst := j.pack[item*k*sgemmNR:][:k*sgemmNR]
		for i0 := int64(0); i0 < k; i0 += sgemmPackKC {
			kl := min(sgemmPackKC, k-i0)
			// i0 and kl are whole blocks of the activations' type, so
			// a row's bytes split exactly.
			b0, b1 := rowBytes*i0/k, rowBytes*(i0+kl)/k
			for c := range int64(sgemmNR) {
				piece := buf[c*sgemmPackKC : c*sgemmPackKC+kl]
				col := pn*sgemmNR + c
				if col >= mm.n {
					clear(piece)
					continue
				}
				row := mm.acts.row(col, i2, i3)
				if j.actWiden != nil {
					j.actWiden(row[b0:b1], piece)
				} else {
					copy(piece, f32s(row, 4*i0, kl))
				}
			}
			mm.transpose(sgemm.F32AsU32(dst[i0*sgemmNR:(i0+kl)*sgemmNR]), sgemmNR, pieces, int(kl))
		}
	}
}

// sgemmPackKC is how many elements of k the activation packing takes at
// a time: a multiple of every block size (32, 256) of the activations'
// types, so that a piece of a row is whole blocks.
const sgemmPackKC = 256

// sgemmUsable reports whether the packed float path takes a product of n
// activation rows with kernel g.
func sgemmUsable(g *gemmKernel, n int64) bool {
	return g.micro != nil && n >= sgemmMinN
}

// x8Row returns elements [k0, k0+kl) of weight row i (of the matrix of
// batch (i2, i3)) as 2-byte values, from the weights' x8 copy: gathered
// into buf for a row of a whole group of eight, in place for the plain
// tail rows (k0 and kl multiples of 16).
func (mm *mulMatJob) x8Row(buf []byte, i, i2, i3, k0, kl int64) []byte {
	mat := at(mm.a, 0, 0, i2/mm.r2, i3/mm.r3)
	if i >= mm.m/8*8 {
		off := mat + i*mm.aRow + 2*k0
		return mm.x8mem[off : off+2*kl]
	}
	group := mm.x8mem[mat+i/8*8*mm.aRow:][:8*mm.aRow]
	mm.x8gather(buf[:2*kl], group, int(mm.k/16), int(i%8), int(k0/16), int(kl/16))
	return buf[:2*kl]
}

// sgemmMicroGo is the generic tier's micro-kernel: sgemm.Twin's sums with
// a float32 multiply and add per term in place of the fused operation
// (which simd.FMA32 emulates in software, several times slower), so its
// outputs round differently from the AVX2 tier's; the tests hold both to
// the float64 reference. Two rows by four columns at a time, eight
// accumulators, fit the registers (a 16-wide accumulator array per row
// lived in memory and ran at about a third of the speed).
func sgemmMicroGo(kc int, a []float32, lda int, b []float32, c []float32, ldc int) {
	b = b[:sgemmNR*kc]
	for r := 0; r < sgemmMR; r += 2 {
		a0 := a[r*lda : r*lda+kc]
		a1 := a[(r+1)*lda : (r+1)*lda+kc]
		for h := 0; h < sgemmNR; h += 4 {
			var s00, s01, s02, s03, s10, s11, s12, s13 float32
			for i, x0 := range a0 {
				x1 := a1[i]
				bi := b[sgemmNR*i+h : sgemmNR*i+h+4 : sgemmNR*i+h+4]
				b0, b1, b2, b3 := bi[0], bi[1], bi[2], bi[3]
				s00 += x0 * b0
				s01 += x0 * b1
				s02 += x0 * b2
				s03 += x0 * b3
				s10 += x1 * b0
				s11 += x1 * b1
				s12 += x1 * b2
				s13 += x1 * b3
			}
			c0 := c[r*ldc+h : r*ldc+h+4 : r*ldc+h+4]
			c1 := c[(r+1)*ldc+h : (r+1)*ldc+h+4 : (r+1)*ldc+h+4]
			c0[0] += s00
			c0[1] += s01
			c0[2] += s02
			c0[3] += s03
			c1[0] += s10
			c1[1] += s11
			c1[2] += s12
			c1[3] += s13
		}
	}
}

// widenAhead returns the columns of lines a block's micro-kernel calls
// prefetch for the chunk at k0 that the block widens next: for weights
// that are widened from their plain rows (not the x8 copy's, gathered
// run by run), rows of the block in bands of lines rows each, and in
// each band the chunk's lines one after another. Nothing when there is
// no next chunk or nothing to widen.
func (j *sgemmJob) widenAhead(k0, rows, first, stride, lines int64) widenColumns {
	mm := j.mm
	if j.g.widen == nil || j.g.kind == gemmDeq || mm.x8gather != nil || k0 >= mm.k || lines <= 0 || rows < lines {
		return widenColumns{}
	}
	kl := min(sgemmKC, mm.k-k0)
	start := first + k0*j.wNum/j.wDen
	return widenColumns{
		mem: mm.aMem, start: start, stride: stride, lines: lines,
		perBand: ceilDiv(kl*j.wNum/j.wDen, 64), bands: rows / lines,
	}
}

// x8Ahead is widenAhead for f16/bf16 weights widened from their x8 copy
// (mm.x8gather), weight rows [i0, i1) of batch (i2, i3): there a half
// group's (four rows') chunk of kl elements is one run of 8*kl bytes,
// the half groups 4*aRow bytes apart, and each call prefetches one
// half group's run, every 32 bytes (sgemm.PfLines(kl) lines: each line
// twice). The plain tail rows past the last whole group are left out.
func (j *sgemmJob) x8Ahead(k0, i0, i1, i2, i3 int64) widenColumns {
	mm := j.mm
	g0, g1 := i0/8, min(ceilDiv(i1, 8), mm.m/8)
	if k0 >= mm.k || g1 <= g0 {
		return widenColumns{}
	}
	kl := min(sgemmKC, mm.k-k0)
	mat := at(mm.a, 0, 0, i2/mm.r2, i3/mm.r3)
	return widenColumns{
		mem: mm.x8mem, start: mat + 8*g0*mm.aRow + 8*k0, stride: 4 * mm.aRow,
		run: 8 * kl, bands: 2 * (g1 - g0),
	}
}

// widenColumns hands out the columns widenAhead describes (or the runs
// x8Ahead describes), one per call of next.
type widenColumns struct {
	mem                   []byte
	start, stride, lines  int64
	perBand, bands, taken int64
	// run, when set, makes each band one run of run bytes at
	// start + band*stride, prefetched every 32 bytes (x8Ahead).
	run int64
}

// next returns the next column's bytes, from its first line to past its
// last line's first byte, and the prefetch step down it (the row
// stride); or nil when all are taken.
func (c *widenColumns) next() ([]byte, int) {
	if c.run > 0 {
		if c.taken >= c.bands {
			return nil, 0
		}
		off := c.start + c.taken*c.stride
		c.taken++
		if off < 0 || off+c.run > int64(len(c.mem)) {
			return nil, 0
		}
		return c.mem[off : off+c.run], 32
	}
	if c.taken >= c.bands*c.perBand {
		return nil, 0
	}
	band, line := c.taken/c.perBand, c.taken%c.perBand
	c.taken++
	off := c.start + band*c.lines*c.stride + 64*line
	end := off + (c.lines-1)*c.stride + 1
	if off < 0 || end > int64(len(c.mem)) {
		return nil, 0
	}
	return c.mem[off:end], int(c.stride)
}
