package cpu

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// ARGSORT: per row, the i32 indices that sort the row, stably.

func init() {
	addKernel(ops.OpArgsort, supportsArgsort, computeArgsort)
}

func supportsArgsort(t *ops.Tensor) error {
	if err := checkSrcs(t, 1, 1); err != nil {
		return err
	}
	a := t.Src[0]
	if err := checkType(a, "a", quant.F32); err != nil {
		return err
	}
	if err := checkOut(t, quant.I32); err != nil {
		return err
	}
	if t.Ne != a.Ne {
		return fmt.Errorf("result shape %v differs from a %v", t.Ne, a.Ne)
	}
	p, ok := t.Params.(ops.ArgsortParams)
	if !ok {
		return fmt.Errorf("params are %T, want ops.ArgsortParams", t.Params)
	}
	if p.Order != ops.SortAsc && p.Order != ops.SortDesc {
		return fmt.Errorf("unknown sort order %d", p.Order)
	}
	if a.Ne[0] > math.MaxInt32 {
		return fmt.Errorf("rows of %d elements do not fit i32 indices", a.Ne[0])
	}
	return nil
}

// computeArgsort sorts each row's indices by value with a stable sort, so
// equal values keep their original order in both directions. NaNs order
// before every other value (cmp.Compare's order), so they come first in
// ascending and last in descending order.
func computeArgsort(b *Backend, t *ops.Tensor) error {
	if t.NumElements() == 0 {
		return nil
	}
	a := t.Src[0]
	desc := t.Params.(ops.ArgsortParams).Order == ops.SortDesc
	n, err := rowCount(t)
	if err != nil {
		return err
	}
	am, tm := mem(a), mem(t)
	ne0 := t.Ne[0]
	lg := int64(1)
	for x := ne0; x > 1; x >>= 1 {
		lg++
	}
	b.pool.parallelFor(n, rowGrain(4*ne0*lg), func(_, lo, hi int) {
		sa := scratchFor(a)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndices(t.Ne, int64(r))
			x := floatRow(a, am, i1, i2, i3, sa)
			idx := i32s(tm, i1*t.Nb[1]+i2*t.Nb[2]+i3*t.Nb[3], ne0)
			for i := range idx {
				idx[i] = int32(i)
			}
			if desc {
				slices.SortStableFunc(idx, func(i, j int32) int { return cmp.Compare(x[j], x[i]) })
			} else {
				slices.SortStableFunc(idx, func(i, j int32) int { return cmp.Compare(x[i], x[j]) })
			}
		}
	})
	return nil
}
