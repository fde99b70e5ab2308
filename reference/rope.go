package reference

import (
	"math"

	"github.com/kernbench/kernbench/ops"
)

// rope computes ROPE (ops.Rope, ops.RopeParams) with YaRN as ggml's CPU
// kernel does. For token i2 at position p = pos[i2], each head row is
// rotated pair by pair: pair i (0 <= i < NDims/2) is elements (2i, 2i+1) in
// normal mode and (i, i+NDims/2) in NeoX mode, and becomes
//
//	x0' = (x0*cos(theta) - x1*sin(theta)) * mscale
//	x1' = (x0*sin(theta) + x1*cos(theta)) * mscale
//
// with theta and mscale from ropeAngle. Elements NDims and above are copied.
func rope(t *ops.Tensor) ([]float64, error) {
	at, pt, ft := src(t, ops.RopeInput), src(t, ops.RopePos), src(t, ops.RopeFreqFactors)
	p, err := paramsOf[ops.RopeParams](t)
	if err != nil {
		return nil, err
	}
	r, err := ops.Rope(at, pt, ft, p)
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	a, err := load(at, "a")
	if err != nil {
		return nil, err
	}
	pos, err := load(pt, "pos")
	if err != nil {
		return nil, err
	}
	var factors array
	if ft != nil {
		if factors, err = load(ft, "freq_factors"); err != nil {
			return nil, err
		}
	}
	half := int64(p.NDims / 2)
	corr := yarnCorrDims(p.NDims, p.NCtxOrig, p.FreqBase, p.BetaFast, p.BetaSlow)
	out := make([]float64, t.NumElements())
	for i2 := int64(0); i2 < a.ne[2]; i2++ {
		for i1 := int64(0); i1 < a.ne[1]; i1++ {
			x := a.row(i1, i2, 0)
			y := out[index(t.Ne, 0, i1, i2, 0):][:len(x)]
			copy(y, x)
			for i := int64(0); i < half; i++ {
				ff := 1.0
				if ft != nil {
					ff = factors.v[i]
				}
				theta, mscale := ropeAngle(pos.v[i2], i, ff, p, corr)
				j0, j1 := 2*i, 2*i+1
				if p.Mode == ops.RopeNeoX {
					j0, j1 = i, i+half
				}
				x0, x1 := x[j0], x[j1]
				y[j0] = (x0*math.Cos(theta) - x1*math.Sin(theta)) * mscale
				y[j1] = (x0*math.Sin(theta) + x1*math.Cos(theta)) * mscale
			}
		}
	}
	return out, nil
}

// ropeAngle returns the rotation angle and magnitude of pair i at position
// pos, as ggml's rope_yarn computes them:
//
//	theta_extrap = pos * FreqBase^(-2i/NDims) / ff
//	theta_interp = FreqScale * theta_extrap
//	theta  = theta_interp                                   (ExtFactor == 0)
//	theta  = theta_interp*(1-r) + theta_extrap*r,  r = ramp(i)*ExtFactor
//	mscale = AttnFactor, times 1 + 0.1*ln(1/FreqScale) when ExtFactor != 0
//
// where ramp(i) = 1 - clamp((i - low) / max(0.001, high - low), 0, 1) and
// corr = [low, high] are the YaRN correction dimensions.
func ropeAngle(pos float64, i int64, ff float64, p ops.RopeParams, corr [2]float64) (theta, mscale float64) {
	extrap := pos * math.Pow(float64(p.FreqBase), -2*float64(i)/float64(p.NDims)) / ff
	interp := float64(p.FreqScale) * extrap
	theta, mscale = interp, float64(p.AttnFactor)
	if ext := float64(p.ExtFactor); ext != 0 {
		y := (float64(i) - corr[0]) / math.Max(0.001, corr[1]-corr[0])
		ramp := 1 - math.Min(1, math.Max(0, y))
		mix := ramp * ext
		theta = interp*(1-mix) + extrap*mix
		mscale *= 1 + 0.1*math.Log(1/float64(p.FreqScale))
	}
	return theta, mscale
}

// yarnCorrDims returns YaRN's correction dimensions [low, high] as ggml's
// ggml_rope_yarn_corr_dims does:
//
//	dim(b) = nDims * ln(nCtxOrig / (2*pi*b)) / (2*ln(freqBase))
//	low    = max(0, floor(dim(betaFast)))
//	high   = min(nDims-1, ceil(dim(betaSlow)))
//
// These are discrete choices, so they are computed in float32 as ggml
// computes them (with a correctly rounded float32 logarithm): a float64
// dim(b) that fell on the other side of an integer would change the ramp
// by a whole step, which no tolerance should have to absorb.
func yarnCorrDims(nDims, nCtxOrig int, freqBase, betaFast, betaSlow float32) [2]float64 {
	dim := func(beta float32) float32 {
		arg := float32(nCtxOrig) / (beta * 2 * float32(math.Pi))
		return float32(nDims) * log32(arg) / (2 * log32(freqBase))
	}
	low := math.Max(0, math.Floor(float64(dim(betaFast))))
	high := math.Min(float64(nDims-1), math.Ceil(float64(dim(betaSlow))))
	return [2]float64{low, high}
}

// log32 is the natural logarithm rounded to float32, standing in for C's
// logf.
func log32(x float32) float32 {
	return float32(math.Log(float64(x)))
}

// RopeAngle returns the angle and magnitude ROPE gives pair i
// (0 <= i < p.NDims/2) at position pos with frequency factor ff (1 for
// none), YaRN included, as ggml computes them: for float64 model
// references that rotate vectors themselves.
func RopeAngle(p ops.RopeParams, pos float64, i int, ff float64) (theta, mscale float64) {
	corr := yarnCorrDims(p.NDims, p.NCtxOrig, p.FreqBase, p.BetaFast, p.BetaSlow)
	return ropeAngle(pos, int64(i), ff, p, corr)
}
