package metal

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// RMS_NORM: kernels/rms_norm.metal.

func init() {
	kernelsByOp.Add(ops.OpRMSNorm, supportsRMSNorm, encodeRMSNorm)
}

func supportsRMSNorm(t *ops.Tensor) error {
	if _, ok := t.Params.(ops.NormParams); !ok {
		return fmt.Errorf("params are %T, want ops.NormParams", t.Params)
	}
	return gpu.SupportsF32(t)
}

func encodeRMSNorm(e *encoder, t *ops.Tensor) error {
	x, err := e.src(1, t.Src[0])
	if err != nil {
		return err
	}
	y, err := e.out(2, t)
	if err != nil {
		return err
	}
	var s gpu.CStruct
	s.Tensor(t.Src[0]).Tensor(t).F32(t.Params.(ops.NormParams).Eps)
	return e.dispatch("rms_norm.metal", "kb_rms_norm_f32", rowGrid(t), [3]int{rowThreads(t.Ne[0], 256), 1, 1}, nil, args(&s), x, y)
}
