package cpu

import (
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// Row reductions: RMS_NORM and SUM_ROWS. Both accumulate in float64, as
// ggml does (its ggml_float).

func init() {
	addKernel(ops.OpRMSNorm, supportsRMSNorm, computeRMSNorm)
}

func supportsRMSNorm(t *ops.Tensor) error {
	if err := supportsUnaryShape(t); err != nil {
		return err
	}
	p, ok := t.Params.(ops.NormParams)
	if !ok {
		return fmt.Errorf("params are %T, want ops.NormParams", t.Params)
	}
	if !(p.Eps >= 0) || math.IsInf(float64(p.Eps), 0) {
		return fmt.Errorf("eps %v must be finite and >= 0", p.Eps)
	}
	return nil
}

// supportsUnaryShape checks a one-source f32 op whose f32 result has its
// source's shape.
func supportsUnaryShape(t *ops.Tensor) error {
	if err := checkSrcs(t, 1, 1); err != nil {
		return err
	}
	a := t.Src[0]
	if err := checkType(a, "a", quant.F32); err != nil {
		return err
	}
	if err := checkOut(t, quant.F32); err != nil {
		return err
	}
	if t.Ne != a.Ne {
		return fmt.Errorf("result shape %v differs from a %v", t.Ne, a.Ne)
	}
	return nil
}

// computeRMSNorm sets each row to x / sqrt(mean(x²) + eps). The sum of
// squares is a float64 (summed in the tier's order: sequentially in
// generic, in eight fused lanes in avx2); the scale is rounded to float32
// before it multiplies the row, as in ggml.
func computeRMSNorm(b *Backend, t *ops.Tensor) error {
	if t.NumElements() == 0 {
		return nil
	}
	a := t.Src[0]
	eps := t.Params.(ops.NormParams).Eps
	n, err := rowCount(t)
	if err != nil {
		return err
	}
	j := &b.rms
	*j = rmsNormJob{vk: &b.kern.vec, t: t, a: a, eps: eps, am: mem(a), tm: mem(t), sc: &b.scratch}
	b.pool.run(n, rowGrain(3*t.Ne[0]), j)
	return nil
}

// rmsNormJob is one RMS_NORM call, kept in the backend so that a call
// allocates nothing; an item is a row.
type rmsNormJob struct {
	vk     *vecKernels
	t, a   *ops.Tensor
	eps    float32
	am, tm []byte
	sc     *scratch
}

func (j *rmsNormJob) do(w, lo, hi int) {
	t, a := j.t, j.a
	ne0 := t.Ne[0]
	sa := j.sc.worker(w, ne0, 0, 0).f32
	for r := lo; r < hi; r++ {
		i1, i2, i3 := rowIndices(t.Ne, int64(r))
		x := floatRow(a, j.am, i1, i2, i3, sa)
		sum := j.vk.sumSq(x[:ne0])
		mean := float32(sum / float64(ne0))
		scale := float32(1 / math.Sqrt(float64(mean+j.eps)))
		j.vk.mulTo(outRow(t, j.tm, i1, i2, i3), x, scale)
	}
}
