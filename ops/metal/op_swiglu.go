package metal

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// SWIGLU: kernels/elementwise.metal.

func init() {
	kernelsByOp.Add(ops.OpSwiGLU, gpu.SupportsSwiGLU, encodeSwiGLU)
}

// encodeSwiGLU passes g and u as two tensors shaped like the output: for
// one source, views of its two halves (the second half starts ne0
// elements into each row).
func encodeSwiGLU(e *encoder, t *ops.Tensor) error {
	g, err := e.src(1, t.Src[0])
	if err != nil {
		return err
	}
	tg, tu := *t.Src[0], *t.Src[0]
	var u binding
	if len(t.Src) > 1 && t.Src[1] != nil {
		if u, err = e.src(2, t.Src[1]); err != nil {
			return err
		}
		tu = *t.Src[1]
	} else {
		tg.Ne, tu.Ne = t.Ne, t.Ne
		u = g
		u.index = 2
		u.off += t.Ne[0] * t.Src[0].Nb[0]
		if t.Params.(ops.GLUParams).Swapped {
			g.off, u.off = u.off, g.off
		}
	}
	d, err := e.out(3, t)
	if err != nil {
		return err
	}
	var s gpu.CStruct
	s.Tensor(&tg).Tensor(&tu).Tensor(t)
	return e.dispatch("elementwise.metal", "kb_swiglu_f32", rowGrid(t), [3]int{rowThreads(t.Ne[0], 256), 1, 1}, nil, args(&s), g, u, d)
}
