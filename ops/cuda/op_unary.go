package cuda

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// SCALE, SILU and GELU: kernels/elementwise.cu.

func init() {
	kernelsByOp.Add(ops.OpScale, gpu.SupportsScale, launchUnary)
	kernelsByOp.Add(ops.OpSilu, gpu.SupportsF32, launchUnary)
	kernelsByOp.Add(ops.OpGelu, gpu.SupportsF32, launchUnary)
}

func launchUnary(b *Backend, t *ops.Tensor) error {
	src, dst, err := b.pointers(t)
	if err != nil {
		return err
	}
	var op int32
	var s, bias float32
	switch t.Op {
	case ops.OpScale:
		p := t.Params.(ops.ScaleParams)
		s, bias = p.Scale, p.Bias
	case ops.OpSilu:
		op = 1
	case ops.OpGelu:
		op = 2
	}
	grid, block := elementGrid(t.NumElements())
	return b.launch("elementwise.cu", "kb_unary_f32", grid, block, 0,
		u64(src[0]), tensorArg(t.Src[0]), u64(dst), tensorArg(t), i32(op), f32(s), f32(bias))
}
