package metal

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/quant"
)

// ROPE: kernels/rope.metal.

func init() {
	kernelsByOp.Add(ops.OpRope, supportsRope, encodeRope)
}

func supportsRope(t *ops.Tensor) error {
	p, ok := t.Params.(ops.RopeParams)
	if !ok {
		return fmt.Errorf("params are %T, want ops.RopeParams", t.Params)
	}
	if p.Mode != ops.RopeNormal && p.Mode != ops.RopeNeoX {
		return fmt.Errorf("mode %d is not supported (normal 0, NeoX 2)", p.Mode)
	}
	a := t.Src[ops.RopeInput]
	if t.Type != quant.F32 || a.Type != quant.F32 || t.Src[ops.RopePos].Type != quant.I32 {
		return fmt.Errorf("types %v from %v and %v positions, want f32 from f32 and i32", t.Type, a.Type, t.Src[ops.RopePos].Type)
	}
	if a.Ne[3] != 1 {
		return fmt.Errorf("a %v must be 3-D", a.Ne)
	}
	if ff := srcAt(t, ops.RopeFreqFactors); ff != nil && ff.Type != quant.F32 {
		return fmt.Errorf("freq_factors type %v, want f32", ff.Type)
	}
	return nil
}

// ropeFreqs returns, for each pair i, the angle per position w[i] =
// base^(-2i/n_dims) * (scale*(1-mix) + mix) (mix YaRN's extrapolated
// share; before frequency factors, which the kernel divides by) as two
// floats hi + lo, and the magnitude mscale, all from float64.
func ropeFreqs(p ops.RopeParams) ([]byte, float32) {
	np := p.NDims / 2
	scale := float64(p.FreqScale)
	mscale := float64(p.AttnFactor)
	ext := float64(p.ExtFactor)
	var low, high float64
	if ext != 0 {
		low, high = yarnCorrDims(p)
		mscale *= 1 + 0.1*math.Log(1/scale)
	}
	out := make([]byte, 0, 8*np)
	for i := range np {
		inv := math.Pow(float64(p.FreqBase), -2*float64(i)/float64(p.NDims))
		k := scale
		if ext != 0 {
			y := (float64(i) - low) / math.Max(0.001, high-low)
			mix := (1 - math.Min(1, math.Max(0, y))) * ext
			k = scale*(1-mix) + mix
		}
		w := inv * k
		hi := float32(w)
		lo := float32(w - float64(hi))
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(hi))
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(lo))
	}
	return out, float32(mscale)
}

// yarnCorrDims returns YaRN's correction range [low, high] in pair
// indices, computed in float32 as ggml computes it (floor and ceil turn a
// tiny difference into a whole step): with dim(b) = n_dims*ln(n_ctx_orig /
// (2*pi*b)) / (2 ln base), low = max(0, floor(dim(beta_fast))) and high =
// min(n_dims-1, ceil(dim(beta_slow))).
func yarnCorrDims(p ops.RopeParams) (low, high float64) {
	logf := func(x float32) float32 { return float32(math.Log(float64(x))) }
	dim := func(beta float32) float32 {
		return float32(p.NDims) * logf(float32(p.NCtxOrig)/(beta*2*float32(math.Pi))) / (2 * logf(p.FreqBase))
	}
	low = math.Max(0, math.Floor(float64(dim(p.BetaFast))))
	high = math.Min(float64(p.NDims-1), math.Ceil(float64(dim(p.BetaSlow))))
	return low, high
}

func encodeRope(e *encoder, t *ops.Tensor) error {
	a, pos, ff := t.Src[ops.RopeInput], t.Src[ops.RopePos], srcAt(t, ops.RopeFreqFactors)
	p := t.Params.(ops.RopeParams)
	ab, err := e.src(1, a)
	if err != nil {
		return err
	}
	pb, err := e.src(2, pos)
	if err != nil {
		return err
	}
	fb := pb
	fb.index = 3
	var ffNb0 int64
	if ff != nil {
		if fb, err = e.src(3, ff); err != nil {
			return err
		}
		ffNb0 = ff.Nb[0]
	}
	freqs, mscale := ropeFreqs(p)
	wb, err := e.table(4, freqs)
	if err != nil {
		return err
	}
	d, err := e.out(5, t)
	if err != nil {
		return err
	}
	var s gpu.CStruct
	s.Tensor(a).Tensor(t).I64(pos.Nb[0]).I64(ffNb0).I32(int32(p.NDims)).I32(b32(p.Mode == ops.RopeNeoX)).I32(b32(ff != nil)).F32(mscale)
	threads := rowThreads(max(int64(p.NDims/2), t.Ne[0]-int64(p.NDims)), 256)
	return e.dispatch("rope.metal", "kb_rope_f32", [3]int{int(t.Ne[1]), int(t.Ne[2]), 1}, [3]int{threads, 1, 1}, nil, args(&s), ab, pb, fb, wb, d)
}
