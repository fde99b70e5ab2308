package reference

import (
	"math"

	"github.com/kernbench/kernbench/ops"
)

// rmsNorm computes RMS_NORM (ops.RMSNorm, ops.NormParams). For each row x
// of Ne[0] elements:
//
//	y[i] = x[i] / sqrt(sum_j x[j]^2 / Ne[0] + Eps)
func rmsNorm(t *ops.Tensor) ([]float64, error) {
	xt := src(t, 0)
	p, err := paramsOf[ops.NormParams](t)
	if err != nil {
		return nil, err
	}
	r, err := ops.RMSNorm(xt, p.Eps)
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
				row := x.row(i1, i2, i3)
				sum := 0.0
				for _, v := range row {
					sum += v * v
				}
				rms := math.Sqrt(sum/float64(len(row)) + float64(p.Eps))
				y := out[index(t.Ne, 0, i1, i2, i3):]
				for i, v := range row {
					y[i] = v / rms
				}
			}
		}
	}
	return out, nil
}
