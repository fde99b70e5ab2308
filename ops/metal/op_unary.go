package metal

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
)

// SCALE, SILU and GELU: kernels/elementwise.metal.

func init() {
	register(ops.OpScale, supportsScale, encodeUnary)
	register(ops.OpSilu, supportsF32, encodeUnary)
	register(ops.OpGelu, supportsF32, encodeUnary)
}

func supportsScale(t *ops.Tensor) error {
	if _, ok := t.Params.(ops.ScaleParams); !ok {
		return fmt.Errorf("params are %T, want ops.ScaleParams", t.Params)
	}
	return supportsF32(t)
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
	var s cstruct
	s.tensor(t.Src[0]).tensor(t).i32(op).f32(sc).f32(bias)
	return e.dispatch("elementwise.metal", "kb_unary_f32", rowGrid(t), [3]int{rowThreads(t.Ne[0], 256), 1, 1}, nil, args(&s), a, d)
}
