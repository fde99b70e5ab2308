package reference

import (
	"github.com/kernbench/kernbench/ops"
)

// getRows computes GET_ROWS (ops.GetRows). With a [ne0, n_rows, a2, a3] and
// ids [n, a2, a3]:
//
//	dst[:, i, j, k] = a[:, ids[i, j, k], j, k]
//
// An id outside [0, n_rows) is an error. For an i32 a the result holds
// the integers themselves.
func getRows(t *ops.Tensor) ([]float64, error) {
	at, it := src(t, 0), src(t, 1)
	r, err := ops.GetRows(at, it)
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	a, err := load(at, "a")
	if err != nil {
		return nil, err
	}
	ids, err := load(it, "ids")
	if err != nil {
		return nil, err
	}
	out := make([]float64, t.NumElements())
	for k := int64(0); k < ids.ne[2]; k++ {
		for j := int64(0); j < ids.ne[1]; j++ {
			for i := int64(0); i < ids.ne[0]; i++ {
				row, err := intAt(ids.at(i, j, k, 0), a.ne[1], "row id")
				if err != nil {
					return nil, err
				}
				copy(out[index(t.Ne, 0, i, j, k):], a.row(row, j, k))
			}
		}
	}
	return out, nil
}
