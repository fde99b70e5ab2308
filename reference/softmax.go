package reference

import (
	"math"
	"math/bits"

	"github.com/kernbench/kernbench/ops"
)

// softMax computes SOFT_MAX (ops.SoftMax, ops.SoftMaxParams). For each row
// (i1, i2, i3) of x:
//
//	z[i] = Scale*x[i] + slope(i2)*mask[i, i1, i2 % m2, i3 % m3]
//	y[i] = exp(z[i] - M) / (sum_j exp(z[j] - M) + exp(sink[i2] - M))
//
// where M is the maximum of the row's z and the sink, the sink term is
// present only with a sinks tensor, and slope is alibiSlope over the
// x.Ne[2] heads. The mask row index is i1 itself (the mask may have more
// rows than x). A row whose M is -Inf (all logits masked, no sink) is
// zeros, as ops documents.
func softMax(t *ops.Tensor) ([]float64, error) {
	xt, mt, st := src(t, ops.SMInput), src(t, ops.SMMask), src(t, ops.SMSinks)
	p, err := paramsOf[ops.SoftMaxParams](t)
	if err != nil {
		return nil, err
	}
	r, err := ops.SoftMax(xt, mt, st, p)
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	x, err := load(xt, "a")
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
	scale, maxBias := float64(p.Scale), float64(p.MaxBias)
	nHead := x.ne[2]
	out := make([]float64, t.NumElements())
	z := make([]float64, x.ne[0])
	for i3 := int64(0); i3 < x.ne[3]; i3++ {
		for i2 := int64(0); i2 < x.ne[2]; i2++ {
			slope := alibiSlope(maxBias, nHead, i2)
			for i1 := int64(0); i1 < x.ne[1]; i1++ {
				for i0 := range z {
					z[i0] = scale * x.at(int64(i0), i1, i2, i3)
					if mt != nil {
						z[i0] += slope * mask.at(int64(i0), i1, i2%mask.ne[2], i3%mask.ne[3])
					}
				}
				sink := math.Inf(-1)
				if st != nil {
					sink = sinks.v[i2]
				}
				y := softmaxRow(z, sink)
				copy(out[index(t.Ne, 0, i1, i2, i3):], y)
			}
		}
	}
	return out, nil
}

// softmaxRow returns exp(z[i] - M) / (sum_j exp(z[j] - M) + exp(sink - M))
// with M the maximum of z and sink. Pass sink = -Inf for no sink: its term
// is then exp(-Inf) = 0. When M is -Inf every logit is masked and the
// result is zeros.
func softmaxRow(z []float64, sink float64) []float64 {
	y := make([]float64, len(z))
	m := sink
	for _, v := range z {
		m = math.Max(m, v)
	}
	if math.IsInf(m, -1) {
		return y
	}
	sum := math.Exp(sink - m)
	for i, v := range z {
		y[i] = math.Exp(v - m)
		sum += y[i]
	}
	for i := range y {
		y[i] /= sum
	}
	return y
}

// alibiSlope returns the ALiBi slope of head h of nHead heads, as ggml
// computes it: 1 when maxBias is 0; otherwise, with n = 2^floor(log2(nHead)),
// m0 = 2^(-maxBias/n) and m1 = 2^(-maxBias/(2n)), the slope is m0^(h+1)
// for h < n and m1^(2(h-n)+1) for the heads past n.
func alibiSlope(maxBias float64, nHead, h int64) float64 {
	if maxBias <= 0 || nHead <= 0 {
		return 1
	}
	n := int64(1) << (bits.Len64(uint64(nHead)) - 1) // largest power of 2 <= nHead
	m0 := math.Pow(2, -maxBias/float64(n))
	m1 := math.Pow(2, -maxBias/2/float64(n))
	if h < n {
		return math.Pow(m0, float64(h+1))
	}
	return math.Pow(m1, float64(2*(h-n)+1))
}
