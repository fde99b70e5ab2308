package cpu

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// SUM_ROWS: each row's sum, accumulated in float64 as ggml does.

func init() {
	addKernel(ops.OpSumRows, supportsSumRows, computeSumRows)
}

func supportsSumRows(t *ops.Tensor) error {
	if err := checkSrcs(t, 1, 1); err != nil {
		return err
	}
	a := t.Src[0]
	if err := checkType(a, "a", quant.F32); err != nil {
		return err
	}
	if err := checkOut(t, quant.F32); err != nil {
		return err
	}
	if want := [ops.MaxDims]int64{1, a.Ne[1], a.Ne[2], a.Ne[3]}; t.Ne != want {
		return fmt.Errorf("result shape %v, want %v", t.Ne, want)
	}
	return nil
}

// computeSumRows sets t[0, i1, i2, i3] to the float64 sum of a's row,
// rounded to float32. An empty row sums to 0.
func computeSumRows(b *Backend, t *ops.Tensor) error {
	if t.NumElements() == 0 {
		return nil
	}
	a := t.Src[0]
	n, err := rowCount(t)
	if err != nil {
		return err
	}
	am, tm := mem(a), mem(t)
	b.pool.parallelFor(n, rowGrain(a.Ne[0]), func(_, lo, hi int) {
		sa := scratchFor(a)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndices(t.Ne, int64(r))
			var sum float64
			for _, v := range floatRow(a, am, i1, i2, i3, sa) {
				sum += float64(v)
			}
			outRow(t, tm, i1, i2, i3)[0] = float32(sum)
		}
	})
	return nil
}
