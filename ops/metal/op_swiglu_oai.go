package metal

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
)

// SWIGLU_OAI: kernels/elementwise.metal.

func init() {
	register(ops.OpSwiGLUOAI, supportsSwiGLUOAI, encodeSwiGLUOAI)
}

func supportsSwiGLUOAI(t *ops.Tensor) error {
	if _, ok := t.Params.(ops.GLUOAIParams); !ok {
		return fmt.Errorf("params are %T, want ops.GLUOAIParams", t.Params)
	}
	return supportsF32(t)
}

func encodeSwiGLUOAI(e *encoder, t *ops.Tensor) error {
	g, err := e.src(1, t.Src[0])
	if err != nil {
		return err
	}
	u, err := e.src(2, t.Src[1])
	if err != nil {
		return err
	}
	d, err := e.out(3, t)
	if err != nil {
		return err
	}
	p := t.Params.(ops.GLUOAIParams)
	var s cstruct
	s.tensor(t.Src[0]).tensor(t.Src[1]).tensor(t).f32(p.Alpha).f32(p.Limit)
	return e.dispatch("elementwise.metal", "kb_swiglu_oai_f32", rowGrid(t), [3]int{rowThreads(t.Ne[0], 256), 1, 1}, nil, args(&s), g, u, d)
}
