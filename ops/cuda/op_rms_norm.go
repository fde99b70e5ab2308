package cuda

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// RMS_NORM: kernels/rms_norm.cu.

func init() {
	kernelsByOp.Add(ops.OpRMSNorm, supportsRMSNorm, launchRMSNorm)
}

func supportsRMSNorm(t *ops.Tensor) error {
	if _, ok := t.Params.(ops.NormParams); !ok {
		return fmt.Errorf("params are %T, want ops.NormParams", t.Params)
	}
	if rows := t.Ne[1] * t.Ne[2] * t.Ne[3]; rows > 1<<31-1 {
		return fmt.Errorf("%d rows, more than a grid takes", rows)
	}
	return gpu.SupportsF32(t)
}

// rowBlock is the block size for a kernel that gives a row of n elements
// to a block: a multiple of 32 up to 1024, enough threads for the row.
func rowBlock(n int64) uint32 {
	t := (n + 31) / 32 * 32
	return uint32(min(max(t, 32), 1024))
}

func launchRMSNorm(b *Backend, t *ops.Tensor) error {
	src, dst, err := b.pointers(t)
	if err != nil {
		return err
	}
	rows := t.Ne[1] * t.Ne[2] * t.Ne[3]
	return b.launch("rms_norm.cu", "kb_rms_norm_f32", dim3{uint32(rows), 1, 1}, dim3{rowBlock(t.Ne[0]), 1, 1}, 0,
		u64(src[0]), tensorArg(t.Src[0]), u64(dst), tensorArg(t), f32(t.Params.(ops.NormParams).Eps))
}
