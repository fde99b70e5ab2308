package reference

import (
	"math"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func TestSoftMax(t *testing.T) {
	ln2, ln4, inf := math.Ln2, 2*math.Ln2, math.Inf(1)
	row := func() *ops.Tensor { return f32(t, dims(3), 0, ln2, -inf) }
	one := ops.SoftMaxParams{Scale: 1}
	e := math.E
	tests := []struct {
		name           string
		a, mask, sinks *ops.Tensor
		p              ops.SoftMaxParams
		want           []float64
	}{
		// exp: 1, 2, 0 over a sum of 3.
		{"plain", row(), nil, nil, one, []float64{1. / 3, 2. / 3, 0}},
		// A sink logit of 0 adds exp(0) = 1 to the sum only: 1, 2, 0 over 4.
		{"sink 0", row(), nil, f32(t, dims(1), 0), one, []float64{1. / 4, 2. / 4, 0}},
		// A sink of ln 4 is the maximum: 1/4, 1/2, 0 over 1/4+1/2+1 = 7/4.
		{"sink ln 4", row(), nil, f32(t, dims(1), ln4), one, []float64{1. / 7, 2. / 7, 0}},
		// Scale 2 turns [0, ln2/2] into [0, ln2].
		{"scale", f32(t, dims(2), 0, ln2/2), nil, nil, ops.SoftMaxParams{Scale: 2}, []float64{1. / 3, 2. / 3}},
		{"all masked", f32(t, dims(2), -inf, -inf), nil, nil, one, []float64{0, 0}},
		{"all masked with sink", f32(t, dims(2), -inf, -inf), nil, f32(t, dims(1), 1), one, []float64{0, 0}},
		// The f16 mask has 3 rows for x's 2 and one head for x's 2: row r of
		// every head uses mask row r. Row 0 keeps one logit, row 1 two.
		{"causal mask", f32(t, dims(3, 2, 2), make([]float64, 12)...),
			leaf(t, quant.F16, dims(3, 3), 0, -inf, -inf, 0, 0, -inf, 5, 5, 5), nil, one,
			[]float64{1, 0, 0, .5, .5, 0, 1, 0, 0, .5, .5, 0}},
		// Four heads over a mask of two: heads 0 and 2 use mask 0, 1 and 3
		// use mask 1.
		{"mask broadcast dim 2", f32(t, dims(2, 1, 4), make([]float64, 8)...),
			f32(t, dims(2, 1, 2), 0, ln2, ln2, 0), nil, one,
			[]float64{1. / 3, 2. / 3, 2. / 3, 1. / 3, 1. / 3, 2. / 3, 2. / 3, 1. / 3}},
		{"mask broadcast dim 3", f32(t, dims(2, 1, 1, 2), 0, 0, ln2, 0),
			f32(t, dims(2), 0, ln2), nil, one, []float64{1. / 3, 2. / 3, .5, .5}},
		// Sinks per head: head 0 has [0 0] and sink 0, head 1 [0 0] and
		// sink ln 2, so exp(-ln2) = 1/2 twice over a sum of 2.
		{"sink per head", f32(t, dims(2, 1, 2), 0, 0, 0, 0), nil, f32(t, dims(2), 0, ln2), one,
			[]float64{1. / 3, 1. / 3, .25, .25}},
		// ALiBi over 2 heads with max_bias 2: n = 2, m0 = 2^-1, slopes 1/2
		// and 1/4; the mask [0 1] becomes [0 slope].
		{"alibi", f32(t, dims(2, 1, 2), 0, 0, 0, 0), f32(t, dims(2), 0, 1), nil,
			ops.SoftMaxParams{Scale: 1, MaxBias: 2},
			[]float64{1 / (1 + math.Sqrt(e)), math.Sqrt(e) / (1 + math.Sqrt(e)),
				1 / (1 + math.Pow(e, .25)), math.Pow(e, .25) / (1 + math.Pow(e, .25))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Inputs are stored as f32: ln 2 is off by about 3e-8, relative.
			x := must(t)(ops.SoftMax(tc.a, tc.mask, tc.sinks, tc.p))
			near(t, compute(t, x), tc.want, 1e-7)
		})
	}
}

func TestAlibiSlope(t *testing.T) {
	tests := []struct {
		name    string
		maxBias float64
		nHead   int64
		want    []float64
	}{
		// 8 heads: n = 8, m0 = 2^(-8/8) = 1/2, slope_h = 2^-(h+1).
		{"8 heads", 8, 8, []float64{1. / 2, 1. / 4, 1. / 8, 1. / 16, 1. / 32, 1. / 64, 1. / 128, 1. / 256}},
		// 6 heads: n = 4, m0 = 2^(-8/4) = 1/4 for heads 0-3; m1 = 2^(-4/4) = 1/2
		// with odd powers 1 and 3 for heads 4 and 5.
		{"6 heads", 8, 6, []float64{1. / 4, 1. / 16, 1. / 64, 1. / 256, 1. / 2, 1. / 8}},
		{"no bias", 0, 3, []float64{1, 1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []float64
			for h := range tc.nHead {
				got = append(got, alibiSlope(tc.maxBias, tc.nHead, h))
			}
			near(t, got, tc.want, 1e-15)
		})
	}
}
