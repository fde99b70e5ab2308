package cpu

import (
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// ROPE, normal and NeoX, with partial rotation, frequency factors and YaRN
// (see ops.RopeParams).
//
// Like ggml, each worker fills a cache of (cos, sin) pairs once per token
// and rotates every head of that token with it. Unlike ggml, which walks
// theta = p*base^(-2i/n) by repeated float32 multiplication, the cache is
// computed in float64 and rounded once, so angles stay accurate at large
// positions (at p = 100000 float32 angles are off by up to ~0.01 rad). Only
// YaRN's correction range, a discrete choice, is computed in float32 as
// ggml does.

func init() {
	register(ops.OpRope, supportsRope, computeRope)
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

// ropeFreqs are the per-pair quantities of a ROPE node that do not depend
// on the position.
type ropeFreqs struct {
	inv    []float64 // base^(-2i/n_dims) / freq_factor[i]
	mix    []float64 // YaRN ramp(i)*ext_factor: the extrapolated share
	scale  float64   // freq_scale
	mscale float64   // magnitude: attn_factor, YaRN-corrected
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

// newRopeFreqs computes the position-independent part of the rope cache.
func newRopeFreqs(p ops.RopeParams, ff *ops.Tensor) ropeFreqs {
	np := p.NDims / 2
	f := ropeFreqs{inv: make([]float64, np), mix: make([]float64, np), scale: float64(p.FreqScale), mscale: float64(p.AttnFactor)}
	var ffm []byte
	if ff != nil {
		ffm = mem(ff)
	}
	base := float64(p.FreqBase)
	low, high := yarnCorrDims(p)
	ext := float64(p.ExtFactor)
	if ext != 0 {
		f.mscale *= 1 + 0.1*math.Log(1/f.scale)
	}
	for i := range np {
		f.inv[i] = math.Pow(base, -2*float64(i)/float64(p.NDims))
		if ff != nil {
			f.inv[i] /= float64(f32At(ffm, int64(i)*ff.Nb[0]))
		}
		if ext != 0 {
			y := (float64(i) - low) / math.Max(0.001, high-low)
			f.mix[i] = (1 - math.Min(1, math.Max(0, y))) * ext
		}
	}
	return f
}

// fill sets cos[i] and sin[i] to the cosine and sine of pair i's angle
// at position pos, times the magnitude scale.
func (f *ropeFreqs) fill(cos, sin []float32, pos float64) {
	cos, sin = cos[:len(f.inv)], sin[:len(f.inv)]
	for i, inv := range f.inv {
		extrap := pos * inv
		interp := f.scale * extrap
		theta := interp*(1-f.mix[i]) + extrap*f.mix[i]
		s, c := math.Sincos(theta)
		cos[i] = float32(c * f.mscale)
		sin[i] = float32(s * f.mscale)
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
	freqs := newRopeFreqs(p, srcAt(t, ops.RopeFreqFactors))
	am, tm, pm := mem(a), mem(t), mem(pos)
	nd, half := p.NDims, p.NDims/2
	neox := p.Mode == ops.RopeNeoX
	vk := &b.kern.vec
	b.pool.parallelFor(n, rowGrain(6*t.Ne[0]), func(_, lo, hi int) {
		sa := scratchFor(a)
		// cos and sin of the token's angles; for the normal mode also
		// each cosine twice (cc) and each sine as -s, s (ss).
		cache := make([]float32, 3*nd)
		cos, sin := cache[:half], cache[half:nd]
		cc, ss := cache[nd:2*nd], cache[2*nd:]
		tok := int64(-1)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndices(t.Ne, int64(r))
			if i2 != tok {
				tok = i2
				freqs.fill(cos, sin, float64(int32At(pm, i2*pos.Nb[0])))
				if !neox {
					for i := range half {
						cc[2*i], cc[2*i+1] = cos[i], cos[i]
						ss[2*i], ss[2*i+1] = -sin[i], sin[i]
					}
				}
			}
			x := floatRow(a, am, i1, i2, i3, sa)
			out := outRow(t, tm, i1, i2, i3)
			if neox {
				vk.ropeNeoX(out[:half], out[half:nd], x[:half], x[half:nd], cos, sin)
			} else {
				vk.ropeNorm(out[:nd], x[:nd], cc, ss)
			}
			copy(out[nd:], x[nd:])
		}
	})
	return nil
}
