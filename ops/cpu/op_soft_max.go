package cpu

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// SOFT_MAX with scale, an f32 or f16 mask broadcast over dimensions 2-3,
// ALiBi slopes and per-head sink logits (see ops.SoftMaxParams).

func init() {
	addKernel(ops.OpSoftMax, supportsSoftMax, computeSoftMax)
}

func supportsSoftMax(t *ops.Tensor) error {
	if err := checkSrcs(t, 1, 3); err != nil {
		return err
	}
	a, mask, sinks := t.Src[ops.SMInput], srcAt(t, ops.SMMask), srcAt(t, ops.SMSinks)
	if err := checkType(a, "a", quant.F32); err != nil {
		return err
	}
	if err := checkOut(t, quant.F32); err != nil {
		return err
	}
	if t.Ne != a.Ne {
		return fmt.Errorf("result shape %v differs from a %v", t.Ne, a.Ne)
	}
	p, ok := t.Params.(ops.SoftMaxParams)
	if !ok {
		return fmt.Errorf("params are %T, want ops.SoftMaxParams", t.Params)
	}
	if !(p.MaxBias >= 0) || math.IsInf(float64(p.MaxBias), 0) || math.IsNaN(float64(p.Scale)) || math.IsInf(float64(p.Scale), 0) {
		return fmt.Errorf("bad parameters %+v", p)
	}
	if mask != nil {
		if err := checkType(mask, "mask", quant.F32, quant.F16); err != nil {
			return err
		}
		if !mask.HasContiguousRows() {
			return fmt.Errorf("mask rows are not packed")
		}
		if mask.Ne[0] != a.Ne[0] || mask.Ne[1] < a.Ne[1] ||
			mask.Ne[2] <= 0 || mask.Ne[3] <= 0 || a.Ne[2]%mask.Ne[2] != 0 || a.Ne[3]%mask.Ne[3] != 0 {
			return fmt.Errorf("mask %v does not cover a %v", mask.Ne, a.Ne)
		}
	}
	if sinks != nil {
		if err := checkType(sinks, "sinks", quant.F32); err != nil {
			return err
		}
		if sinks.Ne[0] != a.Ne[2] || sinks.NumElements() != a.Ne[2] {
			return fmt.Errorf("sinks %v, want one logit per head (%d)", sinks.Ne, a.Ne[2])
		}
	}
	return nil
}

// alibiSlope returns the ALiBi slope of head h of nHead as ggml computes
// it: with n = 2^floor(log2(nHead)), m0 = 2^(-maxBias/n) and
// m1 = 2^(-maxBias/(2n)) rounded to float32 (ggml's powf), head h gets
// m0^(h+1) for h < n and m1^(2(h-n)+1) otherwise; 1 when maxBias is 0.
// SOFT_MAX and FLASH_ATTN_EXT both use it.
func alibiSlope(maxBias float32, h, nHead int64) float32 {
	if maxBias <= 0 {
		return 1
	}
	n := int64(1) << (bits.Len64(uint64(nHead)) - 1)
	if h < n {
		m0 := float32(math.Pow(2, -float64(maxBias)/float64(n)))
		return float32(math.Pow(float64(m0), float64(h+1)))
	}
	m1 := float32(math.Pow(2, -float64(maxBias)/2/float64(n)))
	return float32(math.Pow(float64(m1), float64(2*(h-n)+1)))
}

// computeSoftMax computes each row's softmax. The logits z = scale*x +
// slope*mask are float32, their exponentials are summed in float64 (with
// the sink's), and a row whose maximum (sink included) is -Inf becomes
// zeros. The exponentials come from the tier's row kernels (vecKernels):
// float64 math.Exp rounded to float32 in generic, the float32 vector exp
// of vec.ExpTwin (max relative error 8.3e-8, 1 ulp, see TestExpAccuracy) in
// avx2; the sink's is float64 in both.
func computeSoftMax(b *Backend, t *ops.Tensor) error {
	if t.NumElements() == 0 {
		return nil
	}
	a, mask, sinks := t.Src[ops.SMInput], srcAt(t, ops.SMMask), srcAt(t, ops.SMSinks)
	p := t.Params.(ops.SoftMaxParams)
	n, err := rowCount(t)
	if err != nil {
		return err
	}
	j := &b.sm
	*j = softmaxJob{vk: &b.kern.vec, t: t, a: a, mask: mask, sinks: sinks, p: p, am: mem(a), tm: mem(t), sc: &b.scratch}
	if mask != nil {
		j.mm = mem(mask)
	}
	if sinks != nil {
		j.sm = mem(sinks)
	}
	b.pool.run(n, rowGrain(10*t.Ne[0]), j)
	return nil
}

// softmaxJob is one SOFT_MAX call, kept in the backend so that a call
// allocates nothing; an item is a row.
type softmaxJob struct {
	vk                *vecKernels
	t, a, mask, sinks *ops.Tensor
	p                 ops.SoftMaxParams
	am, tm, mm, sm    []byte
	sc                *scratch
}

func (j *softmaxJob) do(w, lo, hi int) {
	t, a, mask, sinks, p := j.t, j.a, j.mask, j.sinks, j.p
	ne0 := t.Ne[0]
	wb := j.sc.worker(w, ne0, ne0, 0)
	for r := lo; r < hi; r++ {
		i1, i2, i3 := rowIndices(t.Ne, int64(r))
		x := floatRow(a, j.am, i1, i2, i3, wb.f32)
		out := outRow(t, j.tm, i1, i2, i3)
		var m []float32
		slope := float32(1)
		if mask != nil {
			slope = alibiSlope(p.MaxBias, i2, a.Ne[2])
			if mask.Type == quant.F16 && mask.Nb[0] == 2 {
				m = wb.f32b[:ne0]
				j.vk.f16ToF32(m, u16s(j.mm, at(mask, 0, i1, i2%mask.Ne[2], i3%mask.Ne[3]), ne0))
			} else {
				m = floatRow(mask, j.mm, i1, i2%mask.Ne[2], i3%mask.Ne[3], wb.f32b)
			}
		}
		mx := j.vk.smPrep(out, x, m, p.Scale, slope)
		hasSink := sinks != nil
		var sink float32
		if hasSink {
			sink = f32At(j.sm, i2*sinks.Nb[0])
		}
		softmaxRow(j.vk, out, mx, hasSink, sink)
	}
}

// softmaxRow replaces the logits z, whose maximum is mx, with their
// softmax, counting an extra logit sink in the denominator when hasSink is
// set, with the row kernels vk.
func softmaxRow(vk *vecKernels, z []float32, mx float32, hasSink bool, sink float32) {
	if hasSink {
		mx = max(mx, sink)
	}
	if math.IsInf(float64(mx), -1) {
		clear(z)
		return
	}
	sum := vk.expSum(z, mx)
	if hasSink {
		sum += math.Exp(float64(sink - mx))
	}
	inv := float32(1 / sum)
	vk.mulTo(z, z, inv)
}
