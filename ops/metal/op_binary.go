package metal

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// The elementwise ops: kernels/elementwise.metal.

func init() {
	register(ops.OpAdd, supportsBinary, encodeBinary)
	register(ops.OpMul, supportsBinary, encodeBinary)
}

// supportsF32 takes a node whose sources and output are f32.
func supportsF32(t *ops.Tensor) error {
	if t.Type != quant.F32 {
		return fmt.Errorf("output type %v, want f32", t.Type)
	}
	for i, s := range t.Src {
		if s != nil && s.Type != quant.F32 {
			return fmt.Errorf("source %d type %v, want f32", i, s.Type)
		}
	}
	return nil
}

// supportsBinary takes ADD and MUL of f32 by f32 or f16.
func supportsBinary(t *ops.Tensor) error {
	if t.Type != quant.F32 || t.Src[0].Type != quant.F32 {
		return fmt.Errorf("types %v = %v op %v, want f32 = f32 op f32 or f16", t.Type, t.Src[0].Type, t.Src[1].Type)
	}
	if b := t.Src[1].Type; b != quant.F32 && b != quant.F16 {
		return fmt.Errorf("b type %v, want f32 or f16", b)
	}
	return nil
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
	var s cstruct
	s.tensor(t.Src[0]).tensor(t.Src[1]).tensor(t)
	return e.dispatch("elementwise.metal", name, rowGrid(t), [3]int{rowThreads(t.Ne[0], 256), 1, 1}, nil, args(&s), a, b, d)
}
