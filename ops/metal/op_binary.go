package metal

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/quant"
)

// The elementwise ops: kernels/elementwise.metal.

func init() {
	kernelsByOp.Add(ops.OpAdd, gpu.SupportsBinary, encodeBinary)
	kernelsByOp.Add(ops.OpMul, gpu.SupportsBinary, encodeBinary)
}

// rowThreads is the threadgroup size for a kernel whose threads stride
// along a row of n elements: a multiple of 32 up to limit, no more
// threads than the row has elements (rounded up to a simdgroup).
func rowThreads(n int64, limit int) int {
	t := (n + 31) / 32 * 32
	return int(min(max(t, 32), int64(limit)))
}

// rowGrid is one threadgroup per row of t: (ne1, ne2, ne3).
func rowGrid(t *ops.Tensor) [3]int {
	return [3]int{int(t.Ne[1]), int(t.Ne[2]), int(t.Ne[3])}
}

func encodeBinary(e *encoder, t *ops.Tensor) error {
	a, err := e.src(1, t.Src[0])
	if err != nil {
		return err
	}
	b, err := e.src(2, t.Src[1])
	if err != nil {
		return err
	}
	d, err := e.out(3, t)
	if err != nil {
		return err
	}
	name := "kb_add_f32"
	if t.Op == ops.OpMul {
		name = "kb_mul_f32"
	}
	if t.Src[1].Type == quant.F16 {
		name += "_f16"
	}
	var s gpu.CStruct
	s.Tensor(t.Src[0]).Tensor(t.Src[1]).Tensor(t)
	return e.dispatch("elementwise.metal", name, rowGrid(t), [3]int{rowThreads(t.Ne[0], 256), 1, 1}, nil, args(&s), a, b, d)
}
