package reference

import (
	"math"

	"github.com/kernbench/kernbench/ops"
)

// flashAttnExt computes FLASH_ATTN_EXT (ops.FlashAttnExt,
// ops.FlashAttnParams). q is [d, n_q, n_head, q3], k [d, n_kv, n_head_kv,
// k3], v [dv, n_kv, n_head_kv, k3]. For query iq of head h in batch i3, with
// kv head hk = h / (n_head/n_head_kv) and kv batch i3k = i3 / (q3/k3)
// (ggml's broadcast of dimension 3, as in its CPU kernel):
//
//	m[ik] = slope(h) * mask[ik, iq, h % m2, i3 % m3]        (0 without a mask)
//	s[ik] = Softcap*tanh(Scale*q·k[ik]/Softcap) + m[ik]     (Softcap > 0)
//	s[ik] = Scale*q·k[ik] + m[ik]                           (Softcap == 0)
//	dst[:, h, iq, i3] = sum_ik w[ik] v[:, ik, hk, i3k],  w = softmaxRow(s, sink[h])
//
// Keys whose m[ik] is -Inf are left out entirely, as ggml's kernel skips
// them (their k and v are never read, so non-finite values there do not
// matter). A query whose keys are all masked and that has no sink yields
// zeros. The result is [dv, n_head, n_q, q3].
func flashAttnExt(t *ops.Tensor) ([]float64, error) {
	qt, kt, vt := src(t, ops.FAQ), src(t, ops.FAK), src(t, ops.FAV)
	mt, st := src(t, ops.FAMask), src(t, ops.FASinks)
	p, err := paramsOf[ops.FlashAttnParams](t)
	if err != nil {
		return nil, err
	}
	r, err := ops.FlashAttnExt(qt, kt, vt, mt, st, p)
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	q, err := load(qt, "q")
	if err != nil {
		return nil, err
	}
	k, err := load(kt, "k")
	if err != nil {
		return nil, err
	}
	v, err := load(vt, "v")
	if err != nil {
		return nil, err
	}
	var mask, sinks array
	if mt != nil {
		if mask, err = load(mt, "mask"); err != nil {
			return nil, err
		}
	}
	if st != nil {
		if sinks, err = load(st, "sinks"); err != nil {
			return nil, err
		}
	}
	scale, maxBias, softcap := float64(p.Scale), float64(p.MaxBias), float64(p.Softcap)
	dv, nQ, nHead, q3 := v.ne[0], q.ne[1], q.ne[2], q.ne[3]
	nKV := k.ne[1]
	out := make([]float64, t.NumElements())
	s := make([]float64, nKV)
	masked := make([]bool, nKV)
	for i3 := int64(0); i3 < q3; i3++ {
		i3k := i3 / (q3 / k.ne[3])
		for iq := int64(0); iq < nQ; iq++ {
			for h := int64(0); h < nHead; h++ {
				hk := h / (nHead / k.ne[2])
				slope := alibiSlope(maxBias, nHead, h)
				qrow := q.row(iq, h, i3)
				for ik := int64(0); ik < nKV; ik++ {
					mv := 0.0
					if mt != nil {
						mv = slope * mask.at(ik, iq, h%mask.ne[2], i3%mask.ne[3])
					}
					masked[ik] = math.IsInf(mv, -1)
					if masked[ik] {
						s[ik] = math.Inf(-1)
						continue
					}
					qk := dot(qrow, k.row(ik, hk, i3k))
					if softcap > 0 {
						s[ik] = softcap*math.Tanh(scale*qk/softcap) + mv
					} else {
						s[ik] = scale*qk + mv
					}
				}
				sink := math.Inf(-1)
				if st != nil {
					sink = sinks.v[h]
				}
				w := softmaxRow(s, sink)
				o := out[index(t.Ne, 0, h, iq, i3):][:dv]
				for ik := int64(0); ik < nKV; ik++ {
					if masked[ik] {
						continue
					}
					vrow := v.row(ik, hk, i3k)
					for d := range o {
						o[d] += w[ik] * vrow[d]
					}
				}
			}
		}
	}
	return out, nil
}
