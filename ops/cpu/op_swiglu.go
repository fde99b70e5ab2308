package cpu

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// SWIGLU: silu(g)*v over a gate and a value half, row by row.

func init() {
	addKernel(ops.OpSwiGLU, supportsSwiGLU, computeSwiGLU)
}

func supportsSwiGLU(t *ops.Tensor) error {
	if err := checkSrcs(t, 1, 2); err != nil {
		return err
	}
	a, u := t.Src[0], srcAt(t, 1)
	if err := checkType(a, "a", quant.F32); err != nil {
		return err
	}
	if err := checkOut(t, quant.F32); err != nil {
		return err
	}
	if _, ok := t.Params.(ops.GLUParams); !ok {
		return fmt.Errorf("params are %T, want ops.GLUParams", t.Params)
	}
	if u != nil {
		if err := checkType(u, "b", quant.F32); err != nil {
			return err
		}
		if t.Ne != a.Ne || u.Ne != a.Ne {
			return fmt.Errorf("shapes differ: result %v, a %v, b %v", t.Ne, a.Ne, u.Ne)
		}
		return nil
	}
	if !a.HasContiguousRows() {
		return fmt.Errorf("a rows are not packed")
	}
	want := a.Ne
	want[0] /= 2
	if a.Ne[0]%2 != 0 || t.Ne != want {
		return fmt.Errorf("result shape %v, want %v (half of a %v)", t.Ne, want, a.Ne)
	}
	return nil
}

// computeSwiGLU computes silu(g)*u, with g and u the two halves of each row
// of a (one source; swapped puts u first) or the rows of a and b.
func computeSwiGLU(b *Backend, t *ops.Tensor) error {
	if t.NumElements() == 0 {
		return nil
	}
	n, err := rowCount(t)
	if err != nil {
		return err
	}
	j := &b.elt
	*j = eltJob{t: t, k: &b.kern.elt, sc: &b.scratch, op: t.Op, swapped: t.Params.(ops.GLUParams).Swapped}
	j.setSources()
	j.glu = j.k.swigluKernel(b.reach(t, j.a, j.u))
	b.pool.run(n, rowGrain(8*t.Ne[0]), j)
	return nil
}
