package cpu

import (
	"fmt"

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
// b[:, j, i2, i3].
func computeMulMat(b *Backend, t *ops.Tensor) error {
	a, x := t.Src[0], t.Src[1]
	if t.NumElements() == 0 {
		return nil
	}
	kern, err := dotKernelFor(a.Type)
	if err != nil {
		return err
	}
	acts, err := b.prepareActivations(x, kern.actType)
	if err != nil {
		return err
	}
	k, m, n := a.Ne[0], a.Ne[1], x.Ne[1]
	b2, b3 := x.Ne[2], x.Ne[3]
	r2, r3 := b2/a.Ne[2], b3/a.Ne[3]
	aRow, err := a.Type.RowSize(k)
	if err != nil {
		return err
	}
	aMem := mem(a)
	out := f32s(mem(t), 0, t.NumElements())

	tm, tn := tileSizes(m, n, b2*b3, b.pool.threads)
	rowTiles, colTiles := ceilDiv(m, tm), ceilDiv(n, tn)
	perBatch := rowTiles * colTiles
	b.pool.parallelFor(int(b2*b3*perBatch), 1, func(_, lo, hi int) {
		for task := int64(lo); task < int64(hi); task++ {
			batch, tile := task/perBatch, task%perBatch
			i2, i3 := batch%b2, batch/b2
			i0, j0 := tile/colTiles*tm, tile%colTiles*tn
			i1, j1 := min(i0+tm, m), min(j0+tn, n)
			for i := i0; i < i1; i++ {
				off := at(a, 0, i, i2/r2, i3/r3)
				w := aMem[off : off+aRow]
				for j := j0; j < j1; j++ {
					out[i+m*(j+n*(i2+b2*i3))] = kern.dot(int(k), w, acts.row(j, i2, i3))
				}
			}
		}
	})
	return nil
}
