package reference

import (
	"github.com/kernbench/kernbench/ops"
)

// cpy computes CPY (ops.Cpy): the destination's element k in logical order
// is a's element k in logical order, so the result is a's values as Read
// returns them, whatever the two shapes. Rounding to the destination type
// is the backend's, judged by tolerance.
func cpy(t *ops.Tensor) ([]float64, error) {
	r, err := ops.Cpy(src(t, 0), src(t, 1))
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	a, err := load(src(t, 0), "a")
	if err != nil {
		return nil, err
	}
	return a.v, nil
}

// cont computes CONT (ops.Cont): a's elements in logical order, packed.
func cont(t *ops.Tensor) ([]float64, error) {
	r, err := ops.Cont(src(t, 0))
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	a, err := load(src(t, 0), "a")
	if err != nil {
		return nil, err
	}
	return a.v, nil
}
