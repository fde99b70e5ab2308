package cpu

import (
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/rope"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// ROPE, normal and NeoX, with partial rotation, frequency factors and YaRN
// (see ops.RopeParams).
//
// Like ggml, each worker fills a cache of (cos, sin) pairs once per token
// and rotates every head of that token with it, all heads in one kernel
// call. Unlike ggml, which walks theta = p*base^(-2i/n) by repeated
// float32 multiplication, the angles are computed in float64 and the
// cosines and sines rounded once, so they stay accurate at large positions
// (at p = 100000 float32 angles are off by up to ~0.01 rad). Only YaRN's
// correction range, a discrete choice, is computed in float32 as ggml
// does. The generic tier takes math.Sincos; the AVX2 tier evaluates sin
// and cos four pairs at a time in float64 (package internal/rope), as accurate
// for a float32 result, at a fraction of the cost, which matters since the
// cache costs as much as the rotation when there are few heads.

func init() {
	addKernel(ops.OpRope, supportsRope, computeRope)
}

func supportsRope(t *ops.Tensor) error {
	if err := checkSrcs(t, 2, 3); err != nil {
		return err
	}
	a, pos, ff := t.Src[ops.RopeInput], t.Src[ops.RopePos], srcAt(t, ops.RopeFreqFactors)
	if err := checkType(a, "a", quant.F32); err != nil {
		return err
	}
	if err := checkType(pos, "pos", quant.I32); err != nil {
		return err
	}
	if err := checkOut(t, quant.F32); err != nil {
		return err
	}
	if t.Ne != a.Ne {
		return fmt.Errorf("result shape %v differs from a %v", t.Ne, a.Ne)
	}
	if a.Ne[3] != 1 {
		return fmt.Errorf("a %v must be 3-D", a.Ne)
	}
	if pos.Ne[0] != a.Ne[2] || pos.NumElements() != a.Ne[2] {
		return fmt.Errorf("pos %v, want one position per token (%d)", pos.Ne, a.Ne[2])
	}
	p, ok := t.Params.(ops.RopeParams)
	if !ok {
		return fmt.Errorf("params are %T, want ops.RopeParams", t.Params)
	}
	if p.Mode != ops.RopeNormal && p.Mode != ops.RopeNeoX {
		return fmt.Errorf("mode %d is not supported (normal 0, NeoX 2)", p.Mode)
	}
	if p.NDims <= 0 || p.NDims%2 != 0 || int64(p.NDims) > a.Ne[0] {
		return fmt.Errorf("n_dims %d must be even and in (0, %d]", p.NDims, a.Ne[0])
	}
	for _, v := range []float32{p.FreqBase, p.FreqScale, p.ExtFactor, p.AttnFactor, p.BetaFast, p.BetaSlow} {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("bad parameters %+v", p)
		}
	}
	if p.FreqBase <= 0 || p.FreqScale <= 0 {
		return fmt.Errorf("bad parameters %+v", p)
	}
	if ff != nil {
		if err := checkType(ff, "freq_factors", quant.F32); err != nil {
			return err
		}
		if ff.Ne[0] < int64(p.NDims/2) {
			return fmt.Errorf("freq_factors %v shorter than n_dims/2 = %d", ff.Ne, p.NDims/2)
		}
	}
	return nil
}

// yarnCorrDims returns YaRN's correction range [low, high] in pair
// indices: with dim(b) = nDims*ln(nCtxOrig/(2π b)) / (2 ln base), low =
// max(0, floor(dim(betaFast))) and high = min(nDims-1, ceil(dim(betaSlow))).
// dim is computed in float32 as ggml computes it, since floor and ceil turn
// a tiny difference into a whole step.
func yarnCorrDims(p ops.RopeParams) (low, high float64) {
	logf := func(x float32) float32 { return float32(math.Log(float64(x))) }
	dim := func(beta float32) float32 {
		return float32(p.NDims) * logf(float32(p.NCtxOrig)/(beta*2*float32(math.Pi))) / (2 * logf(p.FreqBase))
	}
	low = math.Max(0, math.Floor(float64(dim(p.BetaFast))))
	high = math.Min(float64(p.NDims-1), math.Ceil(float64(dim(p.BetaSlow))))
	return low, high
}

// ropeKernels are one tier's ROPE kernels. angles fills a token's cache:
// for pair i, with θ = pos·w[i], c[i] = cos θ·mscale and s[i] = sin
// θ·mscale rounded to float32, or with dup (the normal mode's layout)
// c[2i] = c[2i+1] = cos and s[2i] = -sin, s[2i+1] = sin. norm and neox
// rotate the first nd elements of nh heads of one token, head h at
// out[h*ostr:] and x[h*xstr:] (out may be x), with that cache.
type ropeKernels struct {
	angles func(c, s []float32, w []float64, pos, mscale float64, dup bool)
	norm   func(out, x []float32, ostr, xstr, nh, nd int, cc, ss []float32)
	neox   func(out, x []float32, ostr, xstr, nh, nd int, cos, sin []float32)
}

// ropeJob is one ROPE call; an item is a row (head i1 of token i2), and a
// worker rotates its rows token by token, all heads of a token in one
// kernel call after filling the token's cache. It is kept in the backend
// so that a call allocates nothing.
type ropeJob struct {
	rk         *ropeKernels
	t, a, pos  *ops.Tensor
	am, tm, pm []byte
	sc         *scratch
	// w[i] is pair i's angle per position: θ = pos·w[i].
	w []float64
	// wmax bounds |w[i]| (+Inf if one is not finite): a token whose
	// angles may exceed rope.FastAngle takes rope.Angles.
	wmax   float64
	mscale float64
	nd     int
	neox   bool
	// packed: a's rows are packed float32 with a whole number of floats
	// between heads, so a token's heads are one slice for the kernel.
	packed bool
	// freqsSet says that w, wmax and mscale are those of freqsOf without
	// frequency factors: a model's ROPE nodes share their parameters, and
	// with one token per call the Pow and Log of setFreqs would cost as
	// much as the rotation.
	freqsOf  ops.RopeParams
	freqsSet bool
}

// setFreqs computes w, wmax and mscale, the position-independent part of
// the cache. For pair i, with inv = base^(-2i/n_dims)/freq_factor[i] and
// YaRN's extrapolated share mix = ramp(i)·ext_factor, ggml's angle
// θ = scale·pos·inv·(1-mix) + pos·inv·mix is pos·w with w =
// inv·(scale·(1-mix) + mix). base^(-2i/n_dims) is built by repeated
// float64 multiplication: i roundings of 1e-16 each, far below the
// float32 result, instead of a Pow per pair and call.
func (j *ropeJob) setFreqs(p ops.RopeParams, ff *ops.Tensor) {
	if ff == nil && j.freqsOf == p && j.freqsSet {
		return
	}
	j.freqsOf, j.freqsSet = p, ff == nil
	np := p.NDims / 2
	if cap(j.w) < np {
		j.w = make([]float64, np)
	}
	j.w = j.w[:np]
	var ffm []byte
	if ff != nil {
		ffm = mem(ff)
	}
	scale := float64(p.FreqScale)
	j.mscale = float64(p.AttnFactor)
	ext := float64(p.ExtFactor)
	var low, high float64
	if ext != 0 {
		low, high = yarnCorrDims(p)
		j.mscale *= 1 + 0.1*math.Log(1/scale)
	}
	step := math.Pow(float64(p.FreqBase), -2/float64(p.NDims))
	inv := 1.0
	j.wmax = 0
	for i := range np {
		v := inv
		if ff != nil {
			v /= float64(f32At(ffm, int64(i)*ff.Nb[0]))
		}
		k := scale
		if ext != 0 {
			y := (float64(i) - low) / math.Max(0.001, high-low)
			mix := (1 - math.Min(1, math.Max(0, y))) * ext
			k = scale*(1-mix) + mix
		}
		v *= k
		j.w[i] = v
		if a := math.Abs(v); !(a <= j.wmax) {
			j.wmax = a
			if math.IsNaN(a) || math.IsInf(a, 0) {
				j.wmax = math.Inf(1)
			}
		}
		inv *= step
	}
}

// computeRope rotates each head of each token of a.
func computeRope(b *Backend, t *ops.Tensor) error {
	if t.NumElements() == 0 {
		return nil
	}
	a, pos := t.Src[ops.RopeInput], t.Src[ops.RopePos]
	p := t.Params.(ops.RopeParams)
	n, err := rowCount(t)
	if err != nil {
		return err
	}
	j := &b.rope
	j.rk = b.kern.rope
	j.t, j.a, j.pos = t, a, pos
	j.am, j.tm, j.pm = mem(a), mem(t), mem(pos)
	j.sc = &b.scratch
	j.nd, j.neox = p.NDims, p.Mode == ops.RopeNeoX
	j.packed = a.Nb[0] == 4 && a.Nb[1] >= 0 && a.Nb[1]%4 == 0 && t.Nb[1]%4 == 0
	j.setFreqs(p, srcAt(t, ops.RopeFreqFactors))
	b.pool.run(n, rowGrain(3*t.Ne[0]), j)
	j.t, j.a, j.pos, j.am, j.tm, j.pm = nil, nil, nil, nil, nil, nil
	return nil
}

// do rotates rows [lo, hi) on worker wk, token by token: the token's
// cache is filled when the token changes, then all its heads in the range
// go to the kernel in one call (head by head through a converted row when
// a's rows are not packed).
func (j *ropeJob) do(wk, lo, hi int) {
	t, a, rk := j.t, j.a, j.rk
	nd, ne0, ne1 := j.nd, t.Ne[0], t.Ne[1]
	wb := j.sc.worker(wk, 2*int64(nd), ne0, 0)
	c, s := wb.f32[:nd], wb.f32[nd:2*nd]
	tok := int64(-1)
	for r := int64(lo); r < int64(hi); {
		i1, i2, i3 := rowIndices(t.Ne, r)
		nh := min(ne1-i1, int64(hi)-r)
		if i2 != tok {
			tok = i2
			p := float64(int32At(j.pm, i2*j.pos.Nb[0]))
			if math.Abs(p)*j.wmax <= rope.FastAngle {
				rk.angles(c, s, j.w, p, j.mscale, !j.neox)
			} else {
				rope.Angles(c, s, j.w, p, j.mscale, !j.neox)
			}
		}
		rot := rk.norm
		if j.neox {
			rot = rk.neox
		}
		if j.packed {
			xstr, ostr := a.Nb[1]/4, t.Nb[1]/4
			x := f32s(j.am, i1*a.Nb[1]+i2*a.Nb[2]+i3*a.Nb[3], (nh-1)*xstr+ne0)
			out := f32s(j.tm, i1*t.Nb[1]+i2*t.Nb[2]+i3*t.Nb[3], (nh-1)*ostr+ne0)
			rot(out, x, int(ostr), int(xstr), int(nh), nd, c, s)
			if int64(nd) < ne0 {
				for h := range nh {
					copy(out[h*ostr+int64(nd):h*ostr+ne0], x[h*xstr+int64(nd):h*xstr+ne0])
				}
			}
		} else {
			for h := range nh {
				x := floatRow(a, j.am, i1+h, i2, i3, wb.f32b)
				out := outRow(t, j.tm, i1+h, i2, i3)
				rot(out, x, 0, 0, 1, nd, c, s)
				copy(out[nd:], x[nd:])
			}
		}
		r += nh
	}
}
