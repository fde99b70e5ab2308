package metal

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// CONT: kernels/cpy.metal.

func init() {
	kernelsByOp.Add(ops.OpCont, supportsCont, encodeCont)
}

func supportsCont(t *ops.Tensor) error {
	a := t.Src[0]
	if t.Type != a.Type || t.Ne != a.Ne {
		return fmt.Errorf("result %v %v differs from a %v %v", t.Type, t.Ne, a.Type, a.Ne)
	}
	if !t.HasContiguousRows() {
		return fmt.Errorf("result rows are not packed")
	}
	if a.Type.BlockSize() > 1 && !a.HasContiguousRows() {
		return fmt.Errorf("block-quantized a must have packed rows")
	}
	if t.Type.TypeSize() <= 0 {
		return fmt.Errorf("type %v has no element size", t.Type)
	}
	return nil
}

func encodeCont(e *encoder, t *ops.Tensor) error {
	a := t.Src[0]
	ab, err := e.src(1, a)
	if err != nil {
		return err
	}
	d, err := e.out(2, t)
	if err != nil {
		return err
	}
	units := t.Ne[0] / int64(t.Type.BlockSize())
	var s gpu.CStruct
	s.Tensor(a).Tensor(t).I64(units).I32(int32(t.Type.TypeSize()))
	return e.dispatch("cpy.metal", "kb_cont", rowGrid(t), [3]int{rowThreads(units, 256), 1, 1}, nil, args(&s), ab, d)
}
