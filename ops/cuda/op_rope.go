package cuda

import (
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/quant"
)

// ROPE: kernels/rope.cu.

func init() {
	kernelsByOp.Add(ops.OpRope, supportsRope, launchRope)
}

func supportsRope(t *ops.Tensor) error {
	a, pos := t.Src[ops.RopeInput], t.Src[ops.RopePos]
	if a.Type != quant.F32 || pos.Type != quant.I32 || t.Type != quant.F32 {
		return fmt.Errorf("types %v = rope(%v, pos %v), want f32 = rope(f32, pos i32)", t.Type, a.Type, pos.Type)
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
	if t.Ne != a.Ne || a.Ne[3] != 1 || pos.NumElements() != a.Ne[2] {
		return fmt.Errorf("shapes %v = rope(%v, pos %v)", t.Ne, a.Ne, pos.Ne)
	}
	if ff := ropeFreqFactors(t); ff != nil && (ff.Type != quant.F32 || ff.Ne[0] < int64(p.NDims/2)) {
		return fmt.Errorf("freq_factors %v %v, want f32 of at least %d", ff.Type, ff.Ne, p.NDims/2)
	}
	if hpb, _ := ropeGeometry(t); a.Ne[2] > 1<<31-1 || (a.Ne[1]+hpb-1)/hpb > 65535 {
		return fmt.Errorf("%d tokens of %d heads, more than a grid takes", a.Ne[2], a.Ne[1])
	}
	return nil
}

// ropeGeometry returns how many heads of a token a block takes (about
// 256 pairs to rotate in all) and the block size.
func ropeGeometry(t *ops.Tensor) (heads int64, threads uint32) {
	half := int64(t.Params.(ops.RopeParams).NDims / 2)
	heads = max(1, min(t.Ne[1], 256/half))
	return heads, rowBlock(min(heads*half, 256))
}

// ropeFreqFactors returns the node's frequency factors, or nil.
func ropeFreqFactors(t *ops.Tensor) *ops.Tensor {
	if len(t.Src) > ops.RopeFreqFactors {
		return t.Src[ops.RopeFreqFactors]
	}
	return nil
}

// ropeCorrDims returns YaRN's correction range [low, high] in pair
// indices, computed in float32 with correctly rounded logarithms as ggml
// (and the CPU backend) compute it: floor and ceil turn a tiny difference
// into a whole step.
func ropeCorrDims(p ops.RopeParams) (low, high float64) {
	logf := func(x float32) float32 { return float32(math.Log(float64(x))) }
	dim := func(beta float32) float32 {
		return float32(p.NDims) * logf(float32(p.NCtxOrig)/(beta*2*float32(math.Pi))) / (2 * logf(p.FreqBase))
	}
	low = math.Max(0, math.Floor(float64(dim(p.BetaFast))))
	high = math.Min(float64(p.NDims-1), math.Ceil(float64(dim(p.BetaSlow))))
	return low, high
}

// launchRope gives a block one token and a run of heads (ropeGeometry).
func launchRope(b *Backend, t *ops.Tensor) error {
	src, dst, err := b.pointers(t)
	if err != nil {
		return err
	}
	a, pos := t.Src[ops.RopeInput], t.Src[ops.RopePos]
	p := t.Params.(ops.RopeParams)
	half := int64(p.NDims / 2)
	heads := a.Ne[1]
	hpb, threads := ropeGeometry(t)

	var s gpu.CStruct
	f64 := func(v float64) { s.I64(int64(math.Float64bits(v))) }
	mscale := float64(p.AttnFactor)
	var low, high float64
	if p.ExtFactor != 0 {
		low, high = ropeCorrDims(p)
		mscale *= 1 + 0.1*math.Log(1/float64(p.FreqScale))
	}
	f64(float64(p.FreqBase))
	f64(float64(p.FreqScale))
	f64(float64(p.ExtFactor))
	f64(low)
	f64(high)
	f64(mscale)
	s.I32(int32(p.NDims))
	neox, hasFF := int32(0), int32(0)
	if p.Mode == ops.RopeNeoX {
		neox = 1
	}
	ff := &ops.Tensor{}
	if f := ropeFreqFactors(t); f != nil {
		ff, hasFF = f, 1
	}
	s.I32(neox)
	s.I32(hasFF)
	s.I32(int32(hpb))
	var ffPtr uint64
	if len(src) > ops.RopeFreqFactors {
		ffPtr = src[ops.RopeFreqFactors]
	}
	grid := dim3{uint32(a.Ne[2]), uint32((heads + hpb - 1) / hpb), 1}
	return b.launch("rope.cu", "kb_rope_f32", grid, dim3{threads, 1, 1}, int(8*half),
		u64(src[ops.RopeInput]), tensorArg(a), u64(src[ops.RopePos]), tensorArg(pos), u64(ffPtr), tensorArg(ff),
		u64(dst), tensorArg(t), s.Bytes())
}
