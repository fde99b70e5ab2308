package reference

import (
	"cmp"
	"slices"

	"github.com/kernbench/kernbench/ops"
)

// argsort computes ARGSORT (ops.Argsort, ops.ArgsortParams): per row, the
// indices that sort the row in ascending or descending order, ties keeping
// their original order (a stable sort). Values compare as cmp.Compare
// orders them, so a NaN sorts before every number in ascending order and
// after every number in descending order; ops leaves NaN undefined and
// this choice only makes the oracle deterministic.
func argsort(t *ops.Tensor) ([]float64, error) {
	xt := src(t, 0)
	p, err := paramsOf[ops.ArgsortParams](t)
	if err != nil {
		return nil, err
	}
	r, err := ops.Argsort(xt, p.Order)
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	x, err := load(xt, "a")
	if err != nil {
		return nil, err
	}
	out := make([]float64, t.NumElements())
	idx := make([]int64, x.ne[0])
	for i3 := int64(0); i3 < x.ne[3]; i3++ {
		for i2 := int64(0); i2 < x.ne[2]; i2++ {
			for i1 := int64(0); i1 < x.ne[1]; i1++ {
				row := x.row(i1, i2, i3)
				for i := range idx {
					idx[i] = int64(i)
				}
				slices.SortStableFunc(idx, func(i, j int64) int {
					if p.Order == ops.SortDesc {
						return cmp.Compare(row[j], row[i])
					}
					return cmp.Compare(row[i], row[j])
				})
				y := out[index(t.Ne, 0, i1, i2, i3):]
				for i, j := range idx {
					y[i] = float64(j)
				}
			}
		}
	}
	return out, nil
}
