package cpu

import (
	"fmt"

	"github.com/kernbench/kernbench/ops/cpu/internal/gemv"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"

	"github.com/kernbench/kernbench/ops"
)

// MUL_MAT follows ggml's CPU scheme: every activation row (src1) is
// converted once to the weight type's vec-dot type (f32, f16, bf16, q8_0,
// q8_1 or q8_K; the new block formats' gemm, gemmDeq, decodes the rounded
// rows back to float32), then each output element is one dot product of a weight
// row with a converted activation row (see dot_kernels.go). The output is cut
// into tiles of weight rows by activation rows, one work item each, so
// that both matrix-vector (n == 1: tiles of rows) and matrix-matrix
// products keep every thread busy, and a tile's weight rows stay in cache
// while they meet all of the tile's activation rows.

func init() {
	addKernel(ops.OpMulMat, supportsMulMat, computeMulMat)
}

// supportsMulMat checks the node against ops.MulMat's rules and that its
// weight type has a dot kernel.
func supportsMulMat(t *ops.Tensor) error {
	if len(t.Src) != 2 {
		return fmt.Errorf("want 2 sources, got %d", len(t.Src))
	}
	want, err := ops.MulMat(t.Src[0], t.Src[1])
	if err != nil {
		return err
	}
	if err := sameNode(t, want); err != nil {
		return err
	}
	if _, err := dotKernelFor(t.Src[0].Type); err != nil {
		return err
	}
	return nil
}

// sameNode checks that t has the type and shape its op's constructor gives
// (want) and packed storage, which the kernels write through.
func sameNode(t, want *ops.Tensor) error {
	if t.Type != want.Type || t.Ne != want.Ne {
		return fmt.Errorf("node is %v %v, its sources give %v %v", t.Type, t.Ne, want.Type, want.Ne)
	}
	if !t.IsContiguous() {
		return fmt.Errorf("destination %s is not contiguous (nb=%v)", t.Label(), t.Nb)
	}
	return nil
}

// Tile sizes of the matrix kernels before they shrink to give every
// thread several work items.
const (
	tileRows = 16
	tileCols = 16
)

// tileSizes returns tile dimensions for an m x n output repeated over
// batches: at most tileRows x tileCols, halved (columns first) until there
// are at least four tiles per thread or the tiles are single elements.
func tileSizes(m, n, batches int64, threads int) (tm, tn int64) {
	return tileSizesCap(m, n, batches, threads, tileRows)
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// computeMulMat computes dst[i, j, i2, i3] = a[:, i, i2/r2, i3/r3] ·
// b[:, j, i2, i3]. With several activation rows and a register-tiled
// kernel for the weight type in the backend's tier, it takes the gemm
// path (mul_mat_gemm.go); otherwise every output is one dot product.
func computeMulMat(b *Backend, t *ops.Tensor) error {
	a, x := t.Src[0], t.Src[1]
	if t.NumElements() == 0 {
		return nil
	}
	kern, err := b.kern.dot(a.Type)
	if err != nil {
		return err
	}
	aRow, err := a.Type.RowSize(a.Ne[0])
	if err != nil {
		return err
	}
	acts, err := b.prepareActivations(x, kern.actType)
	if err != nil {
		return err
	}
	j := b.newMulMatJob(t, kern, aRow, acts)
	g := b.kern.gemm[a.Type]
	if g != nil && g.kind == gemmDeq && deqUsable(g, x) {
		// The weights are decoded to float32 (mul_mat_sgemm.go), and
		// so are the activations, after the same rounding to the
		// vec-dot type as the dot path's.
		b.sgemm(g, j)
		return nil
	}
	if g != nil && g.kind != gemmDeq && gemmUsable(g, j.k, j.n) && gemmStrides(g, a, acts) {
		if xk := b.kern.x8[a.Type]; xk != nil && b.repack && g.qtile != nil && g.qtile.fromX8 != nil && j.n >= g.qtile.minN {
			// The panels come from the weights' x8 copy (made here
			// when the matrix-vector path has not made it yet).
			j.x8mem = b.x8Weights(a, xk)
		} else if xk != nil && b.repack && xk.gather != nil && g.kind == gemmFloat && sgemmUsable(g, j.n) {
			// sgemm widens its rows from the copy (f16).
			if j.x8mem = b.x8Weights(a, xk); j.x8mem != nil {
				j.x8gather = xk.gather
			}
		}
		err := b.gemm(g, j, x)
		if j.x8mem == nil {
			b.x8Rerelease(a)
		}
		return err
	}
	if xk := b.kern.x8[a.Type]; xk != nil && b.repack && j.n < 4 {
		if x8 := b.x8Weights(a, xk); x8 != nil {
			b.mulMatX8(j, xk, x8)
			return nil
		}
	}
	if sk := b.kern.gemvSide[a.Type]; sk != nil && j.n < 4 && j.k%quant.QK == 0 {
		j.gemv, j.nb, j.per = sk.f, j.k/quant.QK, int64(sk.per)
		j.dy = sk.prepare(&b.scratch.dy, acts, j.n, j.b2, j.b3, j.nb)
		j.wout = b.scratch.quad
	} else if gv := b.gemvKernel(a); gv != nil && j.n < 4 {
		if run := gemvRun(a.Type); run > 0 && j.k%run == 0 {
			j.gemv = gv
			j.nb = j.k / run
			j.per = 1
			if a.Type.VecDotType() == quant.Q8_0 {
				j.dy = widenQ8Scales(&b.scratch.dy, acts, j.n, j.b2, j.b3, j.nb)
			}
			j.wout = b.scratch.quad
		}
	}
	if nt := b.pool.threads; gemvHomeRows && nt > 1 && j.n < 4 && j.b2*j.b3 == 1 {
		j.homeRowTiles(nt)
		b.pool.run(nt, 1, j)
		return nil
	}
	rowCap := int64(tileRows)
	if j.n < 4 {
		rowCap = b.tuned.gemvRows // tunable: GemvRows
	}
	j.tm, j.tn = tileSizesCap(j.m, j.n, j.b2*j.b3, b.pool.threads, rowCap)
	if j.gemv != nil {
		// Whole groups of four rows per tile: a tile of 3 or 5 rows
		// (tileSizes halves to give every thread items) would leave
		// rows to the slower dot product.
		j.tm = (j.tm + 3) / 4 * 4
	}
	j.rowTiles, j.colTiles = ceilDiv(j.m, j.tm), ceilDiv(j.n, j.tn)
	b.pool.run(int(j.b2*j.b3*j.rowTiles*j.colTiles), 1, j)
	return nil
}

// newMulMatJob sets the backend's mulMatJob up for node t (weights
// t.Src[0] with rows of aRow bytes, activation rows acts) and returns it.
func (b *Backend) newMulMatJob(t *ops.Tensor, kern dotKernel, aRow int64, acts actRows) *mulMatJob {
	a, x := t.Src[0], t.Src[1]
	j := &b.mm
	home := j.home // its counters, kept across calls
	*j = mulMatJob{
		home: home,
		kern: kern, a: a, aMem: mem(a), aRow: aRow, acts: acts, transpose: b.kern.transpose,
		out: f32s(mem(t), 0, t.NumElements()),
		k:   a.Ne[0], m: a.Ne[1], n: x.Ne[1], b2: x.Ne[2], b3: x.Ne[3],
	}
	j.r2, j.r3 = j.b2/a.Ne[2], j.b3/a.Ne[3]
	return j
}

// mulMatJob is one MUL_MAT's work, kept in the backend so that a call
// allocates nothing. As a job it computes tiles of outputs with the dot
// product.
type mulMatJob struct {
	kern                       dotKernel
	a                          *ops.Tensor
	aMem                       []byte
	aRow                       int64
	acts                       actRows
	out                        []float32
	k, m, n, b2, b3, r2, r3    int64
	tm, tn, rowTiles, colTiles int64
	// The four-row kernel for few activation rows, with the activation
	// rows' block scales as float32 or a side kernel's prepared data
	// (per slots per block: row r's at dy[r*nb*per:]; nil unless the
	// rows are q8_0).
	gemv    gemvFunc
	nb, per int64
	dy      []float32
	wout    []quadOut // per worker
	// transpose is the tier's 16-row transpose (kernelSet.transpose):
	// the packed paths' panels and output stores.
	transpose func(dst []uint32, ld int, rows *[16][]uint32, n int)
	// x8 is the x8 kernel when aMem is an x8 copy of the weights
	// (mul_mat_x8.go; tm then counts groups of eight rows), pfd its
	// prefetch distance (X8Prefetch).
	x8  *x8Kernel
	pfd int
	// x8mem, on the gemm path, is the weights' x8 copy the panel
	// kernel's panels are written from (aMem stays the original, which
	// the rest of the gemm path reads).
	x8mem []byte
	// x8gather, with x8mem on the sgemm path, reads a row's runs from
	// the copy (x8Kernel.gather).
	x8gather func(dst, group []byte, nb, r, j0, nj int)
	// home, when on, hands out the row tiles one by one in home parts
	// (see homeParts) instead of the pool's chunks.
	homeOn bool
	home   homeParts
}

// gemvHomeRows turns on home parts by row tile for MUL_MAT with one to
// three activation rows and one batch, and for MUL_MAT_ID with one token
// (a variable so that benchmarks can compare: BenchmarkGemvThreads),
// instead of the pool's chunks of tiles (which the pool hands out in
// home parts too, a chunk at a time). Off: on the shared 2-vCPU machine
// of round 2 it could not be told apart from the pool's shared counter
// of then (best passes within a few percent either way, medians ruled
// by the other load).
var gemvHomeRows = false

// homeRowTiles sets the job up for home parts over row tiles of
// tileRows rows (whole groups of four for the gemv kernel) by all
// activation rows, for nt threads.
func (j *mulMatJob) homeRowTiles(nt int) {
	j.homeOn = true
	j.tm, j.tn = min(tileRows, max(j.m, 1)), j.n
	if j.gemv != nil {
		j.tm = (j.tm + 3) / 4 * 4
	}
	j.rowTiles, j.colTiles = ceilDiv(j.m, j.tm), 1
	j.home.reset(nt, j.rowTiles)
}

// doHome runs worker w's share of a home-parts job.
func (j *mulMatJob) doHome(w int) {
	k := 0
	for t := j.home.take(w, &k); t >= 0; t = j.home.take(w, &k) {
		i0 := t * j.tm
		i1 := min(i0+j.tm, j.m)
		if j.gemv != nil {
			i0 = j.gemvRange(w, i0, i1, 0, j.n, 0, 0)
		}
		j.dotRange(i0, i1, 0, j.n, 0, 0)
	}
}

// weightRow returns row i of the weights of batch (i2, i3).
func (j *mulMatJob) weightRow(i, i2, i3 int64) []byte {
	off := at(j.a, 0, i, i2/j.r2, i3/j.r3)
	return j.aMem[off : off+j.aRow]
}

// dotRange computes outputs (i, jj) for i in [i0, i1), jj in [j0, j1) of
// batch (i2, i3) with the dot product.
func (j *mulMatJob) dotRange(i0, i1, j0, j1, i2, i3 int64) {
	for i := i0; i < i1; i++ {
		w := j.weightRow(i, i2, i3)
		for c := j0; c < j1; c++ {
			j.out[i+j.m*(c+j.n*(i2+j.b2*i3))] = j.kern.dot(int(j.k), w, j.acts.row(c, i2, i3))
		}
	}
}

func (j *mulMatJob) do(w, lo, hi int) {
	if j.homeOn {
		j.doHome(w)
		return
	}
	perBatch := j.rowTiles * j.colTiles
	for task := int64(lo); task < int64(hi); task++ {
		batch, tile := task/perBatch, task%perBatch
		i2, i3 := batch%j.b2, batch/j.b2
		i0, j0 := tile/j.colTiles*j.tm, tile%j.colTiles*j.tn
		i1, j1 := min(i0+j.tm, j.m), min(j0+j.tn, j.n)
		if j.gemv != nil {
			i0 = j.gemvRange(w, i0, i1, j0, j1, i2, i3)
		}
		j.dotRange(i0, i1, j0, j1, i2, i3)
	}
}

// gemvRange computes outputs (i, c) for c in [c0, c1) and i in [i0, i1)
// in groups of four rows with the gemv kernel, and returns the first row
// it left (fewer than four remain) for the dot product.
func (j *mulMatJob) gemvRange(w int, i0, i1, c0, c1, i2, i3 int64) int64 {
	r4 := i0 + (i1-i0)/4*4
	if r4 == i0 {
		return i0
	}
	out := &j.wout[w].v
	ldx := j.a.Nb[1]
	// What depends on the column alone, and the first row's offset
	// (at divides), once per range rather than once per four rows.
	nc := c1 - c0
	var ys [3][]byte
	var dys [3][]float32
	var obase [3]int64
	for c := range nc {
		col := c0 + c
		ys[c] = j.acts.row(col, i2, i3)
		if j.dy != nil {
			dys[c] = j.dy[(col+j.n*(i2+j.b2*i3))*j.nb*j.per:][:j.nb*j.per]
		}
		obase[c] = j.m * (col + j.n*(i2+j.b2*i3))
	}
	base := at(j.a, 0, i0, i2/j.r2, i3/j.r3)
	// Rows outer, activation rows inner: with n = 2 or 3 the four weight
	// rows (a few KB) are still in L1 when the next activation row meets
	// them; the other order walked the whole tile (tens of KB, from L2)
	// once per activation row.
	for i := i0; i < r4; i += 4 {
		off := base + (i-i0)*ldx
		x := j.aMem[off : off+3*ldx+j.aRow]
		for c := range nc {
			j.gemv(int(j.nb), x, int(ldx), ys[c], dys[c], out)
			copy(j.out[obase[c]+i:][:4], out[:])
		}
	}
	return r4
}

// gemvKernel returns the four-row kernel of weights a: the tier's
// gemvLLC one where a's bytes lie about the last level cache's size
// (nearLLC), else its gemv one (nil for types without one).
func (b *Backend) gemvKernel(a *ops.Tensor) gemvFunc {
	if f := b.kern.gemvLLC[a.Type]; f != nil && nearLLC(a.Bytes(), b.llcBytes) {
		return f
	}
	return b.kern.gemv[a.Type]
}

// nearLLC reports whether weights of bytes lie about the size of a last
// level cache of llc bytes: from 11/16 of it to 3/2 of it (22 to 48 MiB
// of a 32 MiB L3), the window kernelSet.gemvLLC's kernels were measured
// faster in.
func nearLLC(bytes, llc int64) bool { return bytes > llc*11/16 && bytes <= llc*3/2 }

// gemvRun returns the elements per block of a four-row kernel for weight
// type t (the nb it takes counts these), or 0 for types without one: the
// block of the q8_0, q8_1 or q8_K activation rows, or gemv.F16Run for the
// float types.
func gemvRun(t quant.Type) int64 {
	switch {
	case t == quant.F16, t == quant.BF16, t == quant.F32:
		return gemv.F16Run
	case t.VecDotType() == quant.Q8_0, t.VecDotType() == quant.Q8_1:
		return quant.QK
	case t.VecDotType() == quant.Q8_K:
		return quant.QKK
	}
	return 0
}

// widenQ8Scales returns the block scales of every q8_0 activation row as
// float32, in *buf (grown when short): row (c, i2, i3) at index
// (c + n*(i2 + b2*i3))*nb.
func widenQ8Scales(buf *[]float32, acts actRows, n, b2, b3, nb int64) []float32 {
	*buf = growF32(*buf, n*b2*b3*nb)
	d := *buf
	for i3 := range b3 {
		for i2 := range b2 {
			for c := range n {
				row := acts.row(c, i2, i3)
				dr := d[(c+n*(i2+b2*i3))*nb:][:nb]
				for ib := range dr {
					dr[ib] = simd.HalfAt(row, ib*simd.BytesQ8_0)
				}
			}
		}
	}
	return d
}

// A gemvSideKernel is a four-row kernel of a 32-element format with q8_0
// activation rows (nb counts 32-element blocks) that takes, in place of
// the widened scales dy, per slots of data per block that prep derives
// from the activation row once per call: what depends on the activation
// alone and would otherwise be recomputed for every four weight rows.
type gemvSideKernel struct {
	per  int
	prep func(y []byte, nb int, side []float32)
	f    gemvFunc
}

// prepare returns the side data of every activation row in *buf (grown
// when short): row (c, i2, i3) at index (c + n*(i2 + b2*i3))*nb*per.
func (sk *gemvSideKernel) prepare(buf *[]float32, acts actRows, n, b2, b3, nb int64) []float32 {
	return prepareSide(buf, sk.prep, int64(sk.per), acts, n, b2, b3, nb)
}

// prepareSide returns prep's side data (per slots per block) of every
// activation row in *buf (grown when short): row (c, i2, i3) at index
// (c + n*(i2 + b2*i3))*nb*per.
func prepareSide(buf *[]float32, prep func(y []byte, nb int, side []float32), per int64, acts actRows, n, b2, b3, nb int64) []float32 {
	per *= nb
	*buf = growF32(*buf, n*b2*b3*per)
	d := *buf
	for i3 := range b3 {
		for i2 := range b2 {
			for c := range n {
				prep(acts.row(c, i2, i3), int(nb), d[(c+n*(i2+b2*i3))*per:][:per])
			}
		}
	}
	return d
}
