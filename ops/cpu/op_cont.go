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

// computeCont copies a into t's packed rows as bytes (cpySame).
func computeCont(b *Backend, t *ops.Tensor) error {
	if t.NumElements() > 0 {
		b.cpySame(t)
	}
	return nil
}
