package metal

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// SWIGLU_OAI: kernels/elementwise.metal.

func init() {
	kernelsByOp.Add(ops.OpSwiGLUOAI, gpu.SupportsSwiGLUOAI, encodeSwiGLUOAI)
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
	var s gpu.CStruct
	s.Tensor(t.Src[0]).Tensor(t.Src[1]).Tensor(t).F32(p.Alpha).F32(p.Limit)
	return e.dispatch("elementwise.metal", "kb_swiglu_oai_f32", rowGrid(t), [3]int{rowThreads(t.Ne[0], 256), 1, 1}, nil, args(&s), g, u, d)
}
