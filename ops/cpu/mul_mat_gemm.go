package cpu

import (
	"maps"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/qgemm"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// The gemm path of MUL_MAT, for several activation rows. The output is cut
// into blocks of weight rows by activation rows, one work item each (so
// the threads share large and small shapes alike); within a block a
// register-tiled kernel computes several outputs per call, so each loaded
// weight block meets several activation rows:
//
//   - float weights (f32, f16, bf16), sgemmMinN activation rows or more:
//     the packed path of mul_mat_sgemm.go (6x16 broadcast micro-kernel).
//   - the new block formats (deqTypes: mxfp4, the IQ formats, tq1_0,
//     tq2_0; gemmDeq), sgemmMinN float32 activation rows or more: the
//     same packed path, the weights decoded to float32 per block and k
//     chunk, the activations float32 as given (computeMulMat does not
//     convert them to the vec-dot type). Fewer rows, or f16/bf16
//     activations, take the dot product.
//   - float weights, fewer rows: 4 weight rows x 3 activation rows of
//     FMA accumulators, over k in chunks of gemmKC. f16 and bf16 panels
//     are widened to float32 once per block and chunk (the packing step);
//     f32 rows are read in place.
//   - 32-element formats (q4_0, q5_0, q8_0): 1 weight row x 4 activation
//     rows, or 8 x 4 where the tier attaches a panel kernel (mul_mat_qtile.go:
//     the weights repacked per row block into panels of eight rows).
//     The q8_0 activations are repacked once per call into groups of four
//     rows interleaved block by block with float32 scales (packGroup).
//   - q4_1, q5_1: as q4_0 with q8_1 activation groups, which also carry
//     the rows' sums s (dot.PackQ81Block).
//   - K formats (q2_K, q3_K, q4_K, q5_K, q6_K): 1 weight row x 4 q8_K
//     activation rows read in place, each output equal bit for bit to the
//     dot product; or 8 x 4 where the tier attaches a panel kernel
//     (mul_mat_ktile.go: q4_K, q5_K and q6_K on AVX2, the weights repacked per row
//     block into panels of eight rows, the activations still in place).
//
// Outside the panel kernels weights are not repacked per call: their
// blocks already are the kernels' input layout. (The matrix-vector path's
// x8 copies, mul_mat_x8.go, are made once; the q4_0/q8_0 panels are
// written from them where they exist.) Outputs the
// tiles do not cover (rows or columns left over at the block edges) are
// computed with the dot product (the panel kernels pad their rows).

// gemmKind selects a gemm driver.
type gemmKind int

const (
	gemmFloat   gemmKind = iota // 4x3 FMA tiles over float32 panels
	gemmQ8Quad                  // 1x4, packed q8_0 activation groups
	gemmKQuad                   // 1x4, q8_K activation rows in place
	gemmQ81Quad                 // 1x4, packed q8_1 activation groups
	// gemmDeq: weights decoded to float32 per block and k chunk,
	// float32 activations, the packed float path (mul_mat_sgemm.go);
	// taken only by deqUsable products, the others use the dot product.
	gemmDeq
)

// A quadFunc is a quad kernel (see dot.QuadFunc).
type quadFunc = dot.QuadFunc

// A gemmKernel is a register-tiled MUL_MAT kernel of one weight type.
type gemmKernel struct {
	kind gemmKind
	// tile adds the 4x3 tile of dot products of the float32 rows a + r*lda
	// and b + col*ldb over k elements (a multiple of 8) to c[r + col*ldc].
	tile func(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int)
	// widen converts len(dst) elements of the weight type to float32;
	// nil for f32. For gemmDeq it decodes whole blocks of a quantized
	// weight row.
	widen func(src []byte, dst []float32)
	// actDecode decodes a gemmDeq product's activation rows, rounded
	// to the weight type's vec-dot type (q8_0, q8_K), to float32; nil
	// for the other kinds.
	actDecode func(src []byte, dst []float32)
	// micro is the packed float path's 6x16 micro-kernel (mul_mat_sgemm.go); nil
	// where the tier has none.
	micro sgemmMicro
	// micro2 is the two-panel micro-kernel (6x32) the packed float path
	// prefers for pairs of panels, bit for bit micro on each; nil where
	// the tier has none.
	micro2 sgemmMicro2
	// microBF16 is the bfloat16 pair micro-kernel (mul_mat_sgemm_bf16.go,
	// VDPBF16PS) the packed path takes for bf16 weights in place of
	// widening them; nil where the tier or CPU has none.
	microBF16 sgemmMicroBF16
	quad      quadFunc
	// qtile is the quantized panel kernel (mul_mat_qtile.go) MUL_MAT prefers to
	// quad from qtile.minN activation rows; nil where the tier has none.
	qtile *qTile
	// ktile is the K-format panel kernel (mul_mat_ktile.go) MUL_MAT prefers to
	// quad from ktile.minN activation rows; nil where the tier has none.
	ktile *kTile
}

// Blocking of the gemm path. A float block's panels (gemmMC rows and
// gemmNCF columns of gemmKC floats) fit in L2 and its 4-row micro-panel in
// L1; a quantized block streams gemmMC weight rows from L2 against each
// 4-row activation group held in L1.
const (
	gemmKC  = 256
	gemmMC  = 64
	gemmNCF = 48 // multiple of 3
	gemmNCQ = 64 // multiple of 4
)

// gemmJob is one gemm call's work, kept in the backend.
type gemmJob struct {
	mm        *mulMatJob
	g         *gemmKernel
	sc        *scratch
	mc, nc    int64
	rowBlocks int64
	colBlocks int64
	// Packed q8 groups (gemmQ8Quad): groups per batch and bytes per
	// group.
	pack       []byte
	groups     int64
	groupBytes int64
}

// gemmUsable reports whether the gemm path handles a product of n
// activation rows of k elements with kernel g.
func gemmUsable(g *gemmKernel, k, n int64) bool {
	if n < 4 {
		return false
	}
	return g.kind != gemmFloat || k%8 == 0
}

// gemmStrides reports whether the float kernels can view the weights a
// and activations acts in place as float32 rows (strides in whole
// elements); only f32 panels are read in place.
func gemmStrides(g *gemmKernel, a *ops.Tensor, acts actRows) bool {
	if g.kind != gemmFloat || g.widen != nil {
		return true
	}
	return a.Nb[1]%4 == 0 && a.Nb[2]%4 == 0 && a.Nb[3]%4 == 0 &&
		acts.nb1%4 == 0 && acts.nb2%4 == 0 && acts.nb3%4 == 0
}

// gemm computes the product described by mm with kernel g.
func (b *Backend) gemm(g *gemmKernel, mm *mulMatJob, x *ops.Tensor) error {
	if g.kind == gemmFloat && sgemmUsable(g, mm.n) {
		b.sgemm(g, mm)
		return nil
	}
	j := &b.gj
	*j = gemmJob{mm: mm, g: g, sc: &b.scratch, mc: gemmMC, nc: gemmNCQ}
	if g.kind == gemmFloat {
		j.nc = gemmNCF
	}
	batches := mm.b2 * mm.b3
	if g.kind == gemmQ8Quad || g.kind == gemmQ81Quad {
		j.groups = ceilDiv(mm.n, 4)
		j.groupBytes = mm.k / quant.QK * dot.PackQ8Block
		if g.kind == gemmQ81Quad {
			j.groupBytes = mm.k / quant.QK * dot.PackQ81Block
		}
		b.scratch.pack = growBytes(b.scratch.pack, batches*j.groups*j.groupBytes)
		j.pack = b.scratch.pack
		p := &b.pk
		*p = packJob{gj: j}
		b.pool.run(int(batches*j.groups), 8, p)
	}
	if g.kind == gemmKQuad && j.kTile() != nil {
		// No panel of an earlier call may be taken for this one's.
		b.scratch.qInvalidatePanels()
	}
	// Shrink the row blocks until every thread has a few blocks.
	for j.mc > 4 && batches*ceilDiv(mm.m, j.mc)*ceilDiv(mm.n, j.nc) < 4*int64(b.pool.threads) {
		j.mc /= 2
	}
	j.rowBlocks, j.colBlocks = ceilDiv(mm.m, j.mc), ceilDiv(mm.n, j.nc)
	b.pool.run(int(batches*j.rowBlocks*j.colBlocks), 1, j)
	return nil
}

func (j *gemmJob) do(w, lo, hi int) {
	mm := j.mm
	per := j.rowBlocks * j.colBlocks
	for t := int64(lo); t < int64(hi); t++ {
		batch, blk := t/per, t%per
		i2, i3 := batch%mm.b2, batch/mm.b2
		i0, c0 := blk/j.colBlocks*j.mc, blk%j.colBlocks*j.nc
		i1, c1 := min(i0+j.mc, mm.m), min(c0+j.nc, mm.n)
		switch j.g.kind {
		case gemmFloat:
			j.floatBlock(w, i0, i1, c0, c1, i2, i3)
		case gemmQ8Quad, gemmQ81Quad:
			j.q8Block(w, i0, i1, c0, c1, i2, i3)
		case gemmKQuad:
			if t := j.kTile(); t != nil {
				j.kTileBlock(w, t, i0, i1, c0, c1, i2, i3)
				continue
			}
			j.kBlock(j.quadOut(w), i0, i1, c0, c1, i2, i3)
		}
	}
}

// quadOut returns worker w's four outputs of a quad kernel (in scratch:
// a local array would escape through the function value and allocate).
func (j *gemmJob) quadOut(w int) *[4]float32 {
	return (*[4]float32)(j.sc.worker(w, 4, 0, 0).f32[:4])
}

// outIndex returns the index in mm.out of output (i, c) of batch (i2, i3).
func (mm *mulMatJob) outIndex(i, c, i2, i3 int64) int64 {
	return i + mm.m*(c+mm.n*(i2+mm.b2*i3))
}

// floatBlock computes rows [i0, i1) by columns [c0, c1) of batch (i2, i3)
// with float tiles.
func (j *gemmJob) floatBlock(w int, i0, i1, c0, c1, i2, i3 int64) {
	mm := j.mm
	r4, c3 := i0+(i1-i0)/4*4, c0+(c1-c0)/3*3
	if r4 > i0 && c3 > c0 {
		for c := c0; c < c3; c++ {
			o := mm.outIndex(i0, c, i2, i3)
			clear(mm.out[o : o+r4-i0])
		}
		var wb *workerBuf
		if j.g.widen != nil {
			wb = j.sc.worker(w, (r4-i0)*gemmKC, (c3-c0)*gemmKC, 0)
		}
		for k0 := int64(0); k0 < mm.k; k0 += gemmKC {
			kl := min(gemmKC, mm.k-k0)
			ap, lda := j.floatPanel(wb, true, i0, r4, k0, kl, i2, i3)
			bp, ldb := j.floatPanel(wb, false, c0, c3, k0, kl, i2, i3)
			for ii := i0; ii < r4; ii += 4 {
				for cc := c0; cc < c3; cc += 3 {
					j.g.tile(int(kl), ap[(ii-i0)*lda:], int(lda), bp[(cc-c0)*ldb:], int(ldb), mm.out[mm.outIndex(ii, cc, i2, i3):], int(mm.m))
				}
			}
		}
	}
	mm.dotRange(r4, i1, c0, c1, i2, i3)
	mm.dotRange(i0, r4, c3, c1, i2, i3)
}

// floatPanel returns elements [k0, k0+kl) of weight rows (weights) or
// activation rows [r0, r1) as float32 with the row stride: a view of f32
// rows in place, or rows widened into the worker's buffer.
func (j *gemmJob) floatPanel(wb *workerBuf, weights bool, r0, r1, k0, kl, i2, i3 int64) ([]float32, int64) {
	mm := j.mm
	var memb []byte
	var first, stride int64
	if weights {
		memb, stride = mm.aMem, mm.a.Nb[1]
		first = at(mm.a, 0, r0, i2/mm.r2, i3/mm.r3)
	} else {
		memb, stride = mm.acts.mem, mm.acts.nb1
		first = r0*mm.acts.nb1 + i2*mm.acts.nb2 + i3*mm.acts.nb3
	}
	if j.g.widen == nil {
		ld := stride / 4
		return f32s(memb, first+4*k0, (r1-r0-1)*ld+kl), ld
	}
	buf := wb.f32b
	if weights {
		buf = wb.f32
	}
	for r := r0; r < r1; r++ {
		off := first + (r-r0)*stride + 2*k0
		j.g.widen(memb[off:off+2*kl], buf[(r-r0)*kl:(r-r0+1)*kl])
	}
	return buf[:(r1-r0)*kl], kl
}

// kBlock computes rows [i0, i1) by columns [c0, c1) with q8_K rows in
// place; a last group of fewer than four columns uses the dot product.
func (j *gemmJob) kBlock(o *[4]float32, i0, i1, c0, c1, i2, i3 int64) {
	mm := j.mm
	nb := int(mm.k / quant.QKK)
	c4 := c0 + (c1-c0)/4*4
	ldy := mm.acts.nb1
	for c := c0; c < c4; c += 4 {
		off := c*mm.acts.nb1 + i2*mm.acts.nb2 + i3*mm.acts.nb3
		y := mm.acts.mem[off : off+3*ldy+mm.acts.rowBytes]
		for i := i0; i < i1; i++ {
			j.g.quad(nb, mm.weightRow(i, i2, i3), y, int(ldy), o)
			for q := range int64(4) {
				mm.out[mm.outIndex(i, c+q, i2, i3)] = o[q]
			}
		}
	}
	mm.dotRange(i0, i1, c4, c1, i2, i3)
}

// packJob writes the packed q8 groups of a gemmQ8Quad or gemmQ81Quad
// call, one group per item (see packGroup).
type packJob struct{ gj *gemmJob }

func (p *packJob) do(_, lo, hi int) {
	j := p.gj
	mm := j.mm
	nb := mm.k / quant.QK
	t := j.qTile()
	if lo == 0 {
		// No tile runs during packing: drop the last call's panels.
		j.sc.qInvalidatePanels()
	}
	for item := int64(lo); item < int64(hi); item++ {
		batch, g := item/j.groups, item%j.groups
		i2, i3 := batch%mm.b2, batch/mm.b2
		var rows [4][]byte
		for c := range int64(4) {
			if col := 4*g + c; col < mm.n {
				rows[c] = mm.acts.row(col, i2, i3)
			}
		}
		grp := j.pack[item*j.groupBytes:][:j.groupBytes]
		packGroup(j.g.kind, &rows, nb, grp)
		if t != nil && t.biased {
			qgemm.BiasGroup(grp, nb)
		}
	}
}

// packGroup writes the activation rows rows[c] (nil: a row past n,
// written as zeros) of nb blocks into grp in the packed layout of kind.
// gemmQ8Quad (q8_0 rows): for block b, the four rows' f16 scales as
// float32 at b*dot.PackQ8Block, then each row's 32 codes. gemmQ81Quad (q8_1
// rows): at b*dot.PackQ81Block the four d as float32, the four s as float32,
// then the codes.
func packGroup(kind gemmKind, rows *[4][]byte, nb int64, grp []byte) {
	bs, codes, srcBytes, srcCodes := int64(dot.PackQ8Block), int64(16), int64(simd.BytesQ8_0), int64(2)
	if kind == gemmQ81Quad {
		bs, codes, srcBytes, srcCodes = dot.PackQ81Block, 32, simd.BytesQ8_1, 4
	}
	for c, row := range rows {
		c := int64(c)
		for b := range nb {
			blk := grp[b*bs : (b+1)*bs]
			dst := blk[codes+32*c : codes+32*c+32]
			if row == nil {
				clear(blk[4*c : 4*c+4])
				if kind == gemmQ81Quad {
					clear(blk[16+4*c : 16+4*c+4])
				}
				clear(dst)
				continue
			}
			src := row[b*srcBytes : (b+1)*srcBytes]
			f32s(blk, 4*c, 1)[0] = simd.HalfAt(src, 0)
			if kind == gemmQ81Quad {
				f32s(blk, 16+4*c, 1)[0] = simd.HalfAt(src, 2)
			}
			copy(dst, src[srcCodes:srcCodes+32])
		}
	}
}

// deqTypes are the weight types whose gemm is gemmDeq: the formats
// whose blocks have no tiled integer kernel (codebooks, non-linear value
// tables, E8M0 scales, ternary codes).
var deqTypes = []quant.Type{
	quant.MXFP4, quant.IQ4_NL, quant.IQ4_XS,
	quant.IQ3_XXS, quant.IQ3_S, quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S,
	quant.IQ1_S, quant.IQ1_M, quant.TQ1_0, quant.TQ2_0,
}

// deqGemms returns the gemmDeq kernels of deqTypes with micro-kernel
// micro, decoding the weights and the rounded activations with the
// tier's fast decoder in deq where it has one (equal bit for bit to
// quant.DequantizeRow) and with quant.DequantizeRow otherwise.
func deqGemms(micro sgemmMicro, deq map[quant.Type]func([]byte, []float32)) map[quant.Type]*gemmKernel {
	decoder := func(t quant.Type) func([]byte, []float32) {
		if f := deq[t]; f != nil {
			return f
		}
		return deqRow(t)
	}
	m := make(map[quant.Type]*gemmKernel, len(deqTypes))
	for _, t := range deqTypes {
		m[t] = &gemmKernel{kind: gemmDeq, micro: micro, widen: decoder(t), actDecode: decoder(t.VecDotType())}
	}
	return m
}

// deqRow returns a decoder of whole blocks of type t. The packed float
// path hands it exactly kl/qk blocks for kl elements, the lengths
// quant.DequantizeRow checks, so its error cannot occur.
func deqRow(t quant.Type) func(src []byte, dst []float32) {
	return func(src []byte, dst []float32) { _ = quant.DequantizeRow(t, src, dst) }
}

// deqUsable reports whether the gemmDeq kernel g takes a product with
// activations x: sgemmMinN rows or more (fewer take the dot product).
// Either way the activations are first rounded to the weight type's
// vec-dot type (q8_0 or q8_K), as ggml rounds them, so that a product's
// outputs do not depend on how many rows the batch has beyond the order
// of float32 sums.
func deqUsable(g *gemmKernel, x *ops.Tensor) bool {
	return g.micro != nil && x.Ne[1] >= sgemmMinN
}

// withDeqGemms returns over with the gemmDeq kernels of deqTypes (micro
// as their micro-kernel, deq's decoders) added.
func withDeqGemms(micro sgemmMicro, deq map[quant.Type]func([]byte, []float32), over map[quant.Type]*gemmKernel) map[quant.Type]*gemmKernel {
	maps.Copy(over, deqGemms(micro, deq))
	return over
}
