package cuda

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
)

// SCALE, SILU and GELU: kernels/elementwise.cu.

func init() {
	register(ops.OpScale, supportsScale, launchUnary)
	register(ops.OpSilu, supportsF32, launchUnary)
	register(ops.OpGelu, supportsF32, launchUnary)
}

func supportsScale(t *ops.Tensor) error {
	if _, ok := t.Params.(ops.ScaleParams); !ok {
		return fmt.Errorf("params are %T, want ops.ScaleParams", t.Params)
	}
	return supportsF32(t)
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
