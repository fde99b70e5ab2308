package cuda

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
)

// CONT: kernels/cpy.cu.

func init() {
	kernelsByOp.Add(ops.OpCont, supportsCont, launchCont)
}

func supportsCont(t *ops.Tensor) error {
	a := t.Src[0]
	if a.Type.TypeSize() <= 0 || t.Type != a.Type || t.Ne != a.Ne {
		return fmt.Errorf("result %v %v differs from a %v %v", t.Type, t.Ne, a.Type, a.Ne)
	}
	if !t.IsContiguous() {
		return fmt.Errorf("result is not packed")
	}
	if a.Type.BlockSize() > 1 && !a.HasContiguousRows() {
		return fmt.Errorf("block-quantized a must have packed rows")
	}
	return nil
}

// launchCont copies in units of elements (blocks for quantized types):
// a tiled transpose when a's dimension 1 is packed (a transposed matrix
// of 2- or 4-byte elements), else a word-wise copy in logical order, a
// row at a time as one unit where both rows are packed.
func launchCont(b *Backend, t *ops.Tensor) error {
	src, dst, err := b.pointers(t)
	if err != nil {
		return err
	}
	a := t.Src[0]
	ta, td := *a, *t
	bs, esize := a.Type.BlockSize(), a.Type.TypeSize()
	ta.Ne[0] /= bs
	td.Ne[0] /= bs
	if (esize == 2 || esize == 4) && a.Nb[1] == esize && a.Nb[0] != esize && a.Ne[2]*a.Ne[3] <= 65535 {
		grid := dim3{uint32((ta.Ne[0] + 31) / 32), uint32((ta.Ne[1] + 31) / 32), uint32(ta.Ne[2] * ta.Ne[3])}
		if grid.x <= 1<<31-1 && grid.y <= 65535 {
			return b.launch("cpy.cu", fmt.Sprintf("kb_transpose_w%d", esize), grid, dim3{32, 8, 1}, 0,
				u64(src[0]), tensorArg(&ta), u64(dst), tensorArg(&td))
		}
	}
	if ta.Nb[0] == esize && td.Nb[0] == esize {
		// Packed rows: a row is one unit.
		esize *= ta.Ne[0]
		ta.Ne[0], td.Ne[0] = 1, 1
		ta.Nb[0], td.Nb[0] = esize, esize
	}
	w := int64(8)
	for _, v := range []int64{esize, int64(src[0]), int64(dst), ta.Nb[1], ta.Nb[2], ta.Nb[3], td.Nb[1], td.Nb[2], td.Nb[3]} {
		for v%w != 0 {
			w /= 2
		}
	}
	if ta.Ne[0] > 1 {
		for ta.Nb[0]%w != 0 {
			w /= 2
		}
	}
	grid, block := elementGrid(td.NumElements() * (esize / w))
	return b.launch("cpy.cu", fmt.Sprintf("kb_cont_w%d", w), grid, block, 0,
		u64(src[0]), tensorArg(&ta), u64(dst), tensorArg(&td), i64(esize))
}
