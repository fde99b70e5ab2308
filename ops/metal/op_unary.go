package metal

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// SCALE, SILU and GELU: kernels/elementwise.metal.

func init() {
	kernelsByOp.Add(ops.OpScale, gpu.SupportsScale, encodeUnary)
	kernelsByOp.Add(ops.OpSilu, gpu.SupportsF32, encodeUnary)
	kernelsByOp.Add(ops.OpGelu, gpu.SupportsF32, encodeUnary)
}

func encodeUnary(e *encoder, t *ops.Tensor) error {
	a, err := e.src(1, t.Src[0])
	if err != nil {
		return err
	}
	d, err := e.out(2, t)
	if err != nil {
		return err
	}
	var op int32
	var sc, bias float32
	switch t.Op {
	case ops.OpScale:
		p := t.Params.(ops.ScaleParams)
		sc, bias = p.Scale, p.Bias
	case ops.OpSilu:
		op = 1
	case ops.OpGelu:
		op = 2
	}
	var s gpu.CStruct
	s.Tensor(t.Src[0]).Tensor(t).I32(op).F32(sc).F32(bias)
	return e.dispatch("elementwise.metal", "kb_unary_f32", rowGrid(t), [3]int{rowThreads(t.Ne[0], 256), 1, 1}, nil, args(&s), a, d)
}
