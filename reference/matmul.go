package reference

import (
	"github.com/kernbench/kernbench/ops"
)

// mulMat computes MUL_MAT (ops.MulMat). With a [k, m, a2, a3] and
// b [k, n, b2, b3]:
//
//	dst[i, j, i2, i3] = sum_l a[l, i, i2/(b2/a2), i3/(b3/a3)] * b[l, j, i2, i3]
func mulMat(t *ops.Tensor) ([]float64, error) {
	at, bt := src(t, 0), src(t, 1)
	r, err := ops.MulMat(at, bt)
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	a, err := load(at, "a")
	if err != nil {
		return nil, err
	}
	b, err := load(bt, "b")
	if err != nil {
		return nil, err
	}
	m, n, b2, b3 := t.Ne[0], t.Ne[1], t.Ne[2], t.Ne[3]
	out := make([]float64, t.NumElements())
	for i3 := int64(0); i3 < b3; i3++ {
		for i2 := int64(0); i2 < b2; i2++ {
			// a broadcasts: b2/a2 consecutive b matrices share one a.
			a2 := i2 / (b2 / a.ne[2])
			a3 := i3 / (b3 / a.ne[3])
			for j := int64(0); j < n; j++ {
				brow := b.row(j, i2, i3)
				for i := int64(0); i < m; i++ {
					out[index(t.Ne, i, j, i2, i3)] = dot(a.row(i, a2, a3), brow)
				}
			}
		}
	}
	return out, nil
}

// mulMatID computes MUL_MAT_ID (ops.MulMatID). With experts
// [k, m, n_expert], b [k, b1, n_tokens] and ids [n_used, n_tokens]:
//
//	dst[i, e, tok] = sum_l experts[l, i, ids[e, tok]] * b[l, e % b1, tok]
//
// An id outside [0, n_expert) is an error.
func mulMatID(t *ops.Tensor) ([]float64, error) {
	et, bt, it := src(t, ops.MMIDExperts), src(t, ops.MMIDInput), src(t, ops.MMIDIDs)
	r, err := ops.MulMatID(et, bt, it)
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	experts, err := load(et, "experts")
	if err != nil {
		return nil, err
	}
	b, err := load(bt, "b")
	if err != nil {
		return nil, err
	}
	ids, err := load(it, "ids")
	if err != nil {
		return nil, err
	}
	m, nUsed, nTok := t.Ne[0], t.Ne[1], t.Ne[2]
	out := make([]float64, t.NumElements())
	for tok := int64(0); tok < nTok; tok++ {
		for e := int64(0); e < nUsed; e++ {
			id, err := intAt(ids.at(e, tok, 0, 0), experts.ne[2], "expert id")
			if err != nil {
				return nil, err
			}
			brow := b.row(e%b.ne[1], tok, 0)
			for i := int64(0); i < m; i++ {
				out[index(t.Ne, i, e, tok, 0)] = dot(experts.row(i, id, 0), brow)
			}
		}
	}
	return out, nil
}

// dot returns sum_l x[l]*y[l] over equal-length vectors.
func dot(x, y []float64) float64 {
	s := 0.0
	for l := range x {
		s += x[l] * y[l]
	}
	return s
}
