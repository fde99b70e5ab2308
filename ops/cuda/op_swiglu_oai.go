package cuda

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
)

// SWIGLU_OAI: kernels/elementwise.cu.

func init() {
	register(ops.OpSwiGLUOAI, supportsSwiGLUOAI, launchSwiGLUOAI)
}

func supportsSwiGLUOAI(t *ops.Tensor) error {
	if _, ok := t.Params.(ops.GLUOAIParams); !ok {
		return fmt.Errorf("params are %T, want ops.GLUOAIParams", t.Params)
	}
	return supportsF32(t)
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
