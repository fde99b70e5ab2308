package reference

import (
	"github.com/kernbench/kernbench/ops"
)

// sumRows computes SUM_ROWS (ops.SumRows): dst[0, i1, i2, i3] is the sum
// of row (i1, i2, i3) of a.
func sumRows(t *ops.Tensor) ([]float64, error) {
	xt := src(t, 0)
	r, err := ops.SumRows(xt)
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	x, err := load(xt, "a")
	if err != nil {
		return nil, err
	}
	out := make([]float64, t.NumElements())
	for i3 := int64(0); i3 < x.ne[3]; i3++ {
		for i2 := int64(0); i2 < x.ne[2]; i2++ {
			for i1 := int64(0); i1 < x.ne[1]; i1++ {
				sum := 0.0
				for _, v := range x.row(i1, i2, i3) {
					sum += v
				}
				out[index(t.Ne, 0, i1, i2, i3)] = sum
			}
		}
	}
	return out, nil
}
