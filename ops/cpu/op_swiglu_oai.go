package cpu

import (
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// SWIGLU_OAI: gpt-oss's clamped SwiGLU with alpha and limit.

func init() {
	addKernel(ops.OpSwiGLUOAI, supportsSwiGLUOAI, computeSwiGLUOAI)
}

func supportsSwiGLUOAI(t *ops.Tensor) error {
	if err := checkSrcs(t, 2, 2); err != nil {
		return err
	}
	a, u := t.Src[0], t.Src[1]
	if err := checkType(a, "g", quant.F32); err != nil {
		return err
	}
	if err := checkType(u, "u", quant.F32); err != nil {
		return err
	}
	if err := checkOut(t, quant.F32); err != nil {
		return err
	}
	if _, ok := t.Params.(ops.GLUOAIParams); !ok {
		return fmt.Errorf("params are %T, want ops.GLUOAIParams", t.Params)
	}
	if t.Ne != a.Ne || u.Ne != a.Ne {
		return fmt.Errorf("shapes differ: result %v, g %v, u %v", t.Ne, a.Ne, u.Ne)
	}
	return nil
}

// computeSwiGLUOAI computes gpt-oss's clamped SwiGLU row by row with the
// tier's kernel (generic: swigluOAIRow; avx2: internal/vec's, with its
// vector exp).
func computeSwiGLUOAI(b *Backend, t *ops.Tensor) error {
	if t.NumElements() == 0 {
		return nil
	}
	n, err := rowCount(t)
	if err != nil {
		return err
	}
	p := t.Params.(ops.GLUOAIParams)
	j := &b.elt
	*j = eltJob{t: t, k: &b.kern.elt, sc: &b.scratch, op: t.Op, alpha: p.Alpha, limit: p.Limit}
	j.setSources()
	b.pool.run(n, rowGrain(12*t.Ne[0]), j)
	return nil
}

// swigluOAIRow sets out = x*sigmoid(alpha*x)*(y+1) with x = min(g, limit)
// and y = clamp(v, -limit, limit), in float32 with a float64 exp, as
// ggml's CPU kernel computes it (x / (1 + exp(-alpha*x))).
func swigluOAIRow(out, g, v []float32, alpha, limit float32) {
	g, v = g[:len(out)], v[:len(out)]
	for i, x := range g {
		x = min(x, limit)
		y := max(min(v[i], limit), -limit)
		out[i] = x / (1 + float32(math.Exp(float64(-alpha*x)))) * (y + 1)
	}
}
