package cuda

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// SWIGLU: kernels/elementwise.cu.

func init() {
	kernelsByOp.Add(ops.OpSwiGLU, gpu.SupportsSwiGLU, launchSwiGLU)
}

// launchSwiGLU passes g and u as two tensors shaped like the output: for
// one source, views of its two halves (the second half starts ne0
// elements into each row).
func launchSwiGLU(b *Backend, t *ops.Tensor) error {
	src, dst, err := b.pointers(t)
	if err != nil {
		return err
	}
	g, u := src[0], src[0]
	tg, tu := *t.Src[0], *t.Src[0]
	if len(t.Src) > 1 && t.Src[1] != nil {
		u, tu = src[1], *t.Src[1]
	} else {
		tg.Ne, tu.Ne = t.Ne, t.Ne
		u += uint64(t.Ne[0] * t.Src[0].Nb[0])
		if t.Params.(ops.GLUParams).Swapped {
			g, u = u, g
		}
	}
	grid, block := elementGrid(t.NumElements())
	return b.launch("elementwise.cu", "kb_swiglu_f32", grid, block, 0,
		u64(g), tensorArg(&tg), u64(u), tensorArg(&tu), u64(dst), tensorArg(t))
}
