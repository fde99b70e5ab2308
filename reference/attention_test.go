package reference

import (
	"math"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func TestFlashAttnExt(t *testing.T) {
	e, inf, nan := math.E, math.Inf(1), math.NaN()
	// Keys k0 = [1 0], k1 = [0 1]; values v0 = [1 0], v1 = [0 2]. A query
	// [1 0] has logits [1 0] and weights [e 1]/(e+1), so its output is A;
	// a query [0 1] has weights [1 e]/(e+1) and output B.
	A := []float64{e / (e + 1), 2 / (e + 1)}
	B := []float64{1 / (e + 1), 2 * e / (e + 1)}
	k := func() *ops.Tensor { return f32(t, dims(2, 2), 1, 0, 0, 1) }
	v := func() *ops.Tensor { return f32(t, dims(2, 2), 1, 0, 0, 2) }
	q := func() *ops.Tensor { return f32(t, dims(2), 1, 0) }
	one := ops.FlashAttnParams{Scale: 1}
	join := func(parts ...[]float64) []float64 {
		var out []float64
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	times := func(c float64, x []float64) []float64 {
		return []float64{c * x[0], c * x[1]}
	}
	sc := 2 * math.Tanh(0.5) // logit of k0 under softcap 2

	// A q8_0 key of 32 elements: k0 has codes 2 with d = 1/2 (all ones), k1
	// codes 0. The query is the unit vector e0, so the logits are [1 0].
	var twos, zeros [32]int8
	for j := range twos {
		twos[j] = 2
	}
	kq := leafBytes(t, quant.Q8_0, dims(32, 2), append(q8Block(f16Half, twos), q8Block(f16Half, zeros)...))
	e0 := make([]float64, 32)
	e0[0] = 1

	tests := []struct {
		name                 string
		q, k, v, mask, sinks *ops.Tensor
		p                    ops.FlashAttnParams
		want                 []float64
	}{
		{"basic", q(), k(), v(), nil, nil, one, A},
		// Scale 1/2 halves the logits: weights [√e 1]/(√e+1).
		{"scale", q(), k(), v(), nil, nil, ops.FlashAttnParams{Scale: .5},
			[]float64{math.Sqrt(e) / (math.Sqrt(e) + 1), 2 / (math.Sqrt(e) + 1)}},
		{"mask", q(), k(), v(), leaf(t, quant.F16, dims(2), 0, -inf), nil, one, []float64{1, 0}},
		// A masked key is skipped entirely: NaNs in its value do not leak.
		{"masked NaN value", q(), k(), f32(t, dims(2, 2), 1, 0, nan, nan),
			f32(t, dims(2), 0, -inf), nil, one, []float64{1, 0}},
		{"all masked", q(), k(), v(), f32(t, dims(2), -inf, -inf), nil, one, []float64{0, 0}},
		{"all masked with sink", q(), k(), v(), f32(t, dims(2), -inf, -inf), f32(t, dims(1), 3), one, []float64{0, 0}},
		// Softcap 2: logits 2*tanh(1/2) and 0.
		{"softcap", q(), k(), v(), nil, nil, ops.FlashAttnParams{Scale: 1, Softcap: 2},
			[]float64{math.Exp(sc) / (math.Exp(sc) + 1), 2 / (math.Exp(sc) + 1)}},
		// Sink 0 with logits [1 0]: weights [1, 1/e] over 1 + 1/e + 1/e.
		{"sink", q(), k(), v(), nil, f32(t, dims(1), 0), one, []float64{e / (e + 2), 2 / (e + 2)}},
		// ALiBi over one head with max_bias 1: slope 2^-1 turns the mask
		// [0 1] into [0 1/2]; the query [0 0] adds nothing.
		{"alibi", f32(t, dims(2), 0, 0), k(), v(), f32(t, dims(2), 0, 1), nil,
			ops.FlashAttnParams{Scale: 1, MaxBias: 1},
			[]float64{1 / (1 + math.Sqrt(e)), 2 * math.Sqrt(e) / (1 + math.Sqrt(e))}},
		// GQA: two query heads ([1 0] and [0 1]) share one kv head.
		{"gqa", f32(t, dims(2, 1, 2), 1, 0, 0, 1), k(), v(), nil, nil, one, join(A, B)},
		// Two queries and two heads, kv head 1 holding 10 times the values:
		// the result is [dv, n_head, n_q], heads inside queries.
		{"heads and queries", f32(t, dims(2, 2, 2), 1, 0, 0, 1, 1, 0, 0, 1),
			f32(t, dims(2, 2, 2), 1, 0, 0, 1, 1, 0, 0, 1),
			f32(t, dims(2, 2, 2), 1, 0, 0, 2, 10, 0, 0, 20), nil, nil, one,
			join(A, times(10, A), B, times(10, B))},
		// q3 = 4 over k3 = 2: batches 0 and 1 read kv batch 0, 2 and 3 kv
		// batch 1 (which holds 10 times the values).
		{"broadcast dim 3", f32(t, dims(2, 1, 1, 4), 1, 0, 1, 0, 1, 0, 1, 0),
			f32(t, dims(2, 2, 1, 2), 1, 0, 0, 1, 1, 0, 0, 1),
			f32(t, dims(2, 2, 1, 2), 1, 0, 0, 2, 10, 0, 0, 20), nil, nil, one,
			join(A, A, times(10, A), times(10, A))},
		{"f16 k and v", q(), leaf(t, quant.F16, dims(2, 2), 1, 0, 0, 1),
			leaf(t, quant.F16, dims(2, 2), 1, 0, 0, 2), nil, nil, one, A},
		{"q8_0 k", f32(t, dims(32), e0...), kq, v(), nil, nil, one, A},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := must(t)(ops.FlashAttnExt(tc.q, tc.k, tc.v, tc.mask, tc.sinks, tc.p))
			near(t, compute(t, x), tc.want, 1e-15)
		})
	}
}
