package cpu

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
)

// SCALE, SILU and GELU: one f32 source, row by row through the tier's
// eltKernels (op_binary.go).

func init() {
	addKernel(ops.OpScale, supportsUnary, computeUnary)
	addKernel(ops.OpSilu, supportsUnary, computeUnary)
	addKernel(ops.OpGelu, supportsUnary, computeUnary)
}

func supportsUnary(t *ops.Tensor) error {
	if err := supportsUnaryShape(t); err != nil {
		return err
	}
	if t.Op == ops.OpScale {
		if _, ok := t.Params.(ops.ScaleParams); !ok {
			return fmt.Errorf("params are %T, want ops.ScaleParams", t.Params)
		}
	}
	return nil
}

// computeUnary computes SCALE, SILU or GELU.
func computeUnary(b *Backend, t *ops.Tensor) error {
	if t.NumElements() == 0 {
		return nil
	}
	n, err := rowCount(t)
	if err != nil {
		return err
	}
	j := &b.elt
	*j = eltJob{t: t, k: &b.kern.elt, sc: &b.scratch, op: t.Op}
	work := int64(8)
	switch t.Op {
	case ops.OpScale:
		p := t.Params.(ops.ScaleParams)
		j.scale, j.bias, work = p.Scale, p.Bias, 1
	case ops.OpSilu, ops.OpGelu:
	default:
		return fmt.Errorf("no unary kernel for %v", t.Op)
	}
	j.setSources()
	b.pool.run(n, rowGrain(work*t.Ne[0]), j)
	return nil
}

// scaleRow sets out = s*x + bias.
func scaleRow(out, x []float32, s, bias float32) {
	x = x[:len(out)]
	for i, v := range x {
		out[i] = v*s + bias
	}
}
