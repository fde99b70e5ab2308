package cpu

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
)

// CONT: a copy of a view into packed rows of the same type.

func init() {
	addKernel(ops.OpCont, supportsCont, computeCont)
}

func supportsCont(t *ops.Tensor) error {
	if err := checkSrcs(t, 1, 1); err != nil {
		return err
	}
	a := t.Src[0]
	if !a.Type.Valid() || t.Type != a.Type || t.Ne != a.Ne {
		return fmt.Errorf("result %v %v differs from a %v %v", t.Type, t.Ne, a.Type, a.Ne)
	}
	if err := checkDims(t, "result"); err != nil {
		return err
	}
	if !t.HasContiguousRows() {
		return fmt.Errorf("result rows are not packed")
	}
	if a.Type.BlockSize() > 1 && !a.HasContiguousRows() {
		return fmt.Errorf("block-quantized a must have packed rows")
	}
	return nil
}

// computeCont copies a row by row: whole rows when a's rows are packed,
// else element by element (1, 2, 4 or more bytes each).
func computeCont(b *Backend, t *ops.Tensor) error {
	if t.NumElements() == 0 {
		return nil
	}
	a := t.Src[0]
	n, err := rowCount(t)
	if err != nil {
		return err
	}
	am, tm := mem(a), mem(t)
	rowBytes := t.RowBytes()
	ts := a.Type.TypeSize()
	packed := a.HasContiguousRows()
	ne0 := t.Ne[0]
	b.pool.parallelFor(n, rowGrain(rowBytes/4), func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndices(t.Ne, int64(r))
			to := i1*t.Nb[1] + i2*t.Nb[2] + i3*t.Nb[3]
			from := i1*a.Nb[1] + i2*a.Nb[2] + i3*a.Nb[3]
			out := tm[to : to+rowBytes]
			if packed {
				copy(out, am[from:from+rowBytes])
				continue
			}
			copyStrided(out, am, from, a.Nb[0], ts, ne0)
		}
	})
	return nil
}
