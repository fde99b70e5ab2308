package cpu

import (
	"fmt"

	"github.com/kernbench/kernbench/quant"

	"github.com/kernbench/kernbench/ops"
)

// MUL_MAT follows ggml's CPU scheme: every activation row (src1) is
// converted once to the weight type's vec-dot type (f32, f16, bf16, q8_0,
// q8_1 or q8_K), then each output element is one dot product of a weight
// row with a converted activation row (see vecdot.go). The output is cut
// into tiles of weight rows by activation rows, one work item each, so
// that both matrix-vector (n == 1: tiles of rows) and matrix-matrix
// products keep every thread busy, and a tile's weight rows stay in cache
// while they meet all of the tile's activation rows.

func init() {
	register(ops.OpMulMat, supportsMulMat, computeMulMat)
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
	tm, tn = min(tileRows, max(m, 1)), min(tileCols, max(n, 1))
	want := 4 * int64(threads)
	for batches*ceilDiv(m, tm)*ceilDiv(n, tn) < want {
		switch {
		case tn > 1 && tn >= tm:
			tn = (tn + 1) / 2
		case tm > 1:
			tm = (tm + 1) / 2
		default:
			return tm, tn
		}
	}
	return tm, tn
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// computeMulMat computes dst[i, j, i2, i3] = a[:, i, i2/r2, i3/r3] ·
// b[:, j, i2, i3]. With several activation rows and a register-tiled
// kernel for the weight type in the backend's tier, it takes the gemm
// path (gemm.go); otherwise every output is one dot product.
func computeMulMat(b *Backend, t *ops.Tensor) error {
	a, x := t.Src[0], t.Src[1]
	if t.NumElements() == 0 {
		return nil
	}
	kern, err := b.kern.dot(a.Type)
	if err != nil {
		return err
	}
	acts, err := b.prepareActivations(x, kern.actType)
	if err != nil {
		return err
	}
	aRow, err := a.Type.RowSize(a.Ne[0])
	if err != nil {
		return err
	}
	j := &b.mm
	*j = mulMatJob{
		kern: kern, a: a, aMem: mem(a), aRow: aRow, acts: acts,
		out: f32s(mem(t), 0, t.NumElements()),
		k:   a.Ne[0], m: a.Ne[1], n: x.Ne[1], b2: x.Ne[2], b3: x.Ne[3],
	}
	j.r2, j.r3 = j.b2/a.Ne[2], j.b3/a.Ne[3]
	if g := b.kern.gemm[a.Type]; g != nil && gemmUsable(g, j.k, j.n) && gemmStrides(g, a, acts) {
		return b.gemm(g, j, x)
	}
	if gv := b.kern.gemv[a.Type]; gv != nil && j.n < 4 {
		if run := gemvRun(a.Type); run > 0 && j.k%run == 0 {
			j.gemv = gv
			j.nb = j.k / run
			if a.Type.VecDotType() == quant.Q8_0 {
				j.dy = widenQ8Scales(&b.scratch.dy, acts, j.n, j.b2, j.b3, j.nb)
			}
			j.wout = b.scratch.quad
		}
	}
	j.tm, j.tn = tileSizes(j.m, j.n, j.b2*j.b3, b.pool.threads)
	j.rowTiles, j.colTiles = ceilDiv(j.m, j.tm), ceilDiv(j.n, j.tn)
	b.pool.run(int(j.b2*j.b3*j.rowTiles*j.colTiles), 1, j)
	return nil
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
	// rows' block scales as float32 (row r's at dy[r*nb:]; nil unless
	// the rows are q8_0).
	gemv gemvFunc
	nb   int64
	dy   []float32
	wout [][4]float32 // per worker
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
	out := &j.wout[w]
	ldx := j.a.Nb[1]
	// Rows outer, activation rows inner: with n = 2 or 3 the four weight
	// rows (a few KB) are still in L1 when the next activation row meets
	// them; the other order walked the whole tile (tens of KB, from L2)
	// once per activation row.
	for i := i0; i < r4; i += 4 {
		off := at(j.a, 0, i, i2/j.r2, i3/j.r3)
		x := j.aMem[off : off+3*ldx+j.aRow]
		for c := c0; c < c1; c++ {
			var dy []float32
			if j.dy != nil {
				dy = j.dy[(c+j.n*(i2+j.b2*i3))*j.nb:][:j.nb]
			}
			j.gemv(int(j.nb), x, int(ldx), j.acts.row(c, i2, i3), dy, out)
			for r := range int64(4) {
				j.out[i+r+j.m*(c+j.n*(i2+j.b2*i3))] = out[r]
			}
		}
	}
	return r4
}

// gemvRun returns the elements per block of a four-row kernel for weight
// type t (the nb it takes counts these), or 0 for types without one: the
// block of the q8_0, q8_1 or q8_K activation rows, or gemvF16Run for the
// float types.
func gemvRun(t quant.Type) int64 {
	switch {
	case t == quant.F16, t == quant.BF16, t == quant.F32:
		return gemvF16Run
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
					dr[ib] = halfAt(row, ib*bytesQ8_0)
				}
			}
		}
	}
	return d
}
