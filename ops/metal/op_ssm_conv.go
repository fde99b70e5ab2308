package metal

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// SSM_CONV: kernels/ssm_conv.metal.

func init() {
	kernelsByOp.Add(ops.OpSSMConv, gpu.SupportsF32, encodeSSMConv)
}

func encodeSSMConv(e *encoder, t *ops.Tensor) error {
	sx, err := e.src(1, t.Src[0])
	if err != nil {
		return err
	}
	c, err := e.src(2, t.Src[1])
	if err != nil {
		return err
	}
	d, err := e.out(3, t)
	if err != nil {
		return err
	}
	var s gpu.CStruct
	s.Tensor(t.Src[0]).Tensor(t.Src[1]).Tensor(t)
	return e.dispatch("ssm_conv.metal", "kb_ssm_conv_f32", [3]int{int(t.Ne[1]), int(t.Ne[2]), 1}, [3]int{rowThreads(t.Ne[0], 256), 1, 1}, nil, args(&s), sx, c, d)
}
