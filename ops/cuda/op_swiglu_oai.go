package cuda

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// SWIGLU_OAI: kernels/elementwise.cu.

func init() {
	kernelsByOp.Add(ops.OpSwiGLUOAI, gpu.SupportsSwiGLUOAI, launchSwiGLUOAI)
}

func launchSwiGLUOAI(b *Backend, t *ops.Tensor) error {
	src, dst, err := b.pointers(t)
	if err != nil {
		return err
	}
	p := t.Params.(ops.GLUOAIParams)
	grid, block := elementGrid(t.NumElements())
	return b.launch("elementwise.cu", "kb_swiglu_oai_f32", grid, block, 0,
		u64(src[0]), tensorArg(t.Src[0]), u64(src[1]), tensorArg(t.Src[1]), u64(dst), tensorArg(t), f32(p.Alpha), f32(p.Limit))
}
