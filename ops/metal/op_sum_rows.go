package metal

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// SUM_ROWS: kernels/sum_rows.metal.

func init() {
	kernelsByOp.Add(ops.OpSumRows, gpu.SupportsF32, encodeSumRows)
}

func encodeSumRows(e *encoder, t *ops.Tensor) error {
	x, err := e.src(1, t.Src[0])
	if err != nil {
		return err
	}
	y, err := e.out(2, t)
	if err != nil {
		return err
	}
	var s gpu.CStruct
	s.Tensor(t.Src[0]).Tensor(t)
	return e.dispatch("sum_rows.metal", "kb_sum_rows_f32", rowGrid(t), [3]int{rowThreads(t.Src[0].Ne[0], 256), 1, 1}, nil, args(&s), x, y)
}
