package cuda

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// SUM_ROWS: kernels/sum_rows.cu.

func init() {
	kernelsByOp.Add(ops.OpSumRows, supportsSumRows, launchSumRows)
}

func supportsSumRows(t *ops.Tensor) error {
	if t.NumRows() > 1<<31-1 {
		return fmt.Errorf("%d rows, more than a grid takes", t.NumRows())
	}
	return gpu.SupportsF32(t)
}

// launchSumRows gives a row to a warp (4 rows to a block of 128 threads)
// up to 1024 elements, else a block of up to 256 threads.
func launchSumRows(b *Backend, t *ops.Tensor) error {
	src, dst, err := b.pointers(t)
	if err != nil {
		return err
	}
	a := t.Src[0]
	rows := t.NumRows()
	grid, block, warpRows := dim3{uint32(rows), 1, 1}, dim3{rowBlock(min(a.Ne[0], 256)), 1, 1}, int32(0)
	if a.Ne[0] <= 1024 {
		grid, block, warpRows = dim3{uint32((rows + 3) / 4), 1, 1}, dim3{128, 1, 1}, 1
	}
	return b.launch("sum_rows.cu", "kb_sum_rows_f32", grid, block, 0, u64(src[0]), tensorArg(a), u64(dst), tensorArg(t), i32(warpRows))
}
