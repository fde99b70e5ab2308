package reference

import (
	"math"
	"testing"

	"github.com/kernbench/kernbench/ops"
)

func TestRope(t *testing.T) {
	cos, sin := math.Cos, math.Sin
	// ropeParams returns plain RoPE over n dims with base b, changed by f.
	ropeParams := func(n, mode int, b float32, f func(*ops.RopeParams)) ops.RopeParams {
		p := ops.DefaultRopeParams(n, mode)
		p.FreqBase = b
		if f != nil {
			f(&p)
		}
		return p
	}
	// YaRN with n_dims 4, base 10000, n_ctx_orig 4096, beta 32 and 1: the
	// correction dims are floor(0.6545) = 0 and ceil(1.4071) = 2, so
	// ramp(0) = 1 and ramp(1) = 1 - 1/2. With ext_factor 1 and freq_scale
	// 1/4, pair 0 keeps theta = p and pair 1 gets
	// p/100 * (1/4 * 1/2 + 1/2) = p/160; mscale is 1 + 0.1 ln 4.
	yarn := ropeParams(4, ops.RopeNormal, 10000, func(p *ops.RopeParams) {
		p.NCtxOrig, p.ExtFactor, p.FreqScale = 4096, 1, 0.25
	})
	ms := 1 + 0.1*math.Log(4)

	tests := []struct {
		name    string
		a       *ops.Tensor
		pos     []float64
		factors *ops.Tensor
		p       ops.RopeParams
		tol     float64
		want    []float64
	}{
		// Pair 0 turns by theta = pos = 1.
		{"unit vector", f32(t, dims(2, 1, 1), 1, 0), []float64{1}, nil,
			ropeParams(2, ops.RopeNormal, 10000, nil), 1e-15, []float64{cos(1), sin(1)}},
		// freq_factor 2/pi makes theta = 1/(2/pi) = pi/2: [1 0] -> [0 1].
		{"freq factor", f32(t, dims(2, 1, 1), 1, 0), []float64{1}, f32(t, dims(1), 2/math.Pi),
			ropeParams(2, ops.RopeNormal, 10000, nil), 1e-7, []float64{0, 1}},
		// Head of 6, n_dims 4, base 100, pos 2: pair 0 turns by 2, pair 1 by
		// 2*100^(-2/4) = 0.2; elements 4 and 5 are copied.
		{"partial normal", f32(t, dims(6, 1, 1), 1, 0, 0, 1, 7, 8), []float64{2}, nil,
			ropeParams(4, ops.RopeNormal, 100, nil), 1e-15,
			[]float64{cos(2), sin(2), -sin(.2), cos(.2), 7, 8}},
		// NeoX pairs (0, 2) and (1, 3) of the same row.
		{"partial neox", f32(t, dims(6, 1, 1), 1, 0, 0, 1, 7, 8), []float64{2}, nil,
			ropeParams(4, ops.RopeNeoX, 100, nil), 1e-15,
			[]float64{cos(2), -sin(.2), sin(2), cos(.2), 7, 8}},
		// Two heads, two tokens at positions 0 and 3.
		{"heads and tokens", f32(t, dims(2, 2, 2), 1, 0, 1, 0, 1, 0, 1, 0), []float64{0, 3}, nil,
			ropeParams(2, ops.RopeNormal, 10000, nil), 1e-15,
			[]float64{1, 0, 1, 0, cos(3), sin(3), cos(3), sin(3)}},
		// Without ext_factor, freq_scale 1/2 halves theta and attn_factor 2
		// doubles the magnitude.
		{"freq scale and attn factor", f32(t, dims(2, 1, 1), 1, 0), []float64{2}, nil,
			ropeParams(2, ops.RopeNormal, 10000, func(p *ops.RopeParams) { p.FreqScale, p.AttnFactor = .5, 2 }),
			1e-15, []float64{2 * cos(1), 2 * sin(1)}},
		{"yarn", f32(t, dims(4, 1, 1), 1, 0, 1, 0), []float64{1}, nil, yarn, 1e-15,
			[]float64{ms * cos(1), ms * sin(1), ms * cos(1./160), ms * sin(1./160)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pos := i32(t, dims(int64(len(tc.pos))), tc.pos...)
			x := must(t)(ops.Rope(tc.a, pos, tc.factors, tc.p))
			near(t, compute(t, x), tc.want, tc.tol)
		})
	}
}

func TestYarnCorrDims(t *testing.T) {
	tests := []struct {
		nDims, nCtxOrig       int
		base, betaFast, betaS float32
		want                  [2]float64
	}{
		// dim(32) = 0.6545 and dim(1) = 1.4071.
		{4, 4096, 10000, 32, 1, [2]float64{0, 2}},
		// dim(32) = 20.944 and dim(1) = 45.027.
		{128, 4096, 10000, 32, 1, [2]float64{20, 46}},
		// dim(32) = 9.0406 and dim(1) = 17.492.
		{64, 8192, 500000, 32, 1, [2]float64{9, 18}},
		// n_ctx_orig 0: dim = -Inf, so low clamps to 0 and high stays -Inf.
		{4, 0, 10000, 32, 1, [2]float64{0, math.Inf(-1)}},
	}
	for _, tc := range tests {
		got := yarnCorrDims(tc.nDims, tc.nCtxOrig, tc.base, tc.betaFast, tc.betaS)
		if got != tc.want {
			t.Errorf("yarnCorrDims(%d, %d, %v, %v, %v) = %v, want %v",
				tc.nDims, tc.nCtxOrig, tc.base, tc.betaFast, tc.betaS, got, tc.want)
		}
	}
}
