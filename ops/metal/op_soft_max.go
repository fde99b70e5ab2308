package metal

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/quant"
)

// SOFT_MAX: kernels/soft_max.metal.

func init() {
	kernelsByOp.Add(ops.OpSoftMax, supportsSoftMax, encodeSoftMax)
}

func supportsSoftMax(t *ops.Tensor) error {
	if _, ok := t.Params.(ops.SoftMaxParams); !ok {
		return fmt.Errorf("params are %T, want ops.SoftMaxParams", t.Params)
	}
	if t.Type != quant.F32 || t.Src[ops.SMInput].Type != quant.F32 {
		return fmt.Errorf("types %v from %v, want f32", t.Type, t.Src[ops.SMInput].Type)
	}
	if m := srcAt(t, ops.SMMask); m != nil {
		if m.Type != quant.F32 && m.Type != quant.F16 {
			return fmt.Errorf("mask type %v, want f32 or f16", m.Type)
		}
		if !m.HasContiguousRows() {
			return fmt.Errorf("mask rows are not packed")
		}
	}
	if s := srcAt(t, ops.SMSinks); s != nil && (s.Type != quant.F32 || s.Nb[0] != 4) {
		return fmt.Errorf("sinks must be packed f32, not %v with stride %d", s.Type, s.Nb[0])
	}
	return nil
}

// srcAt returns source i of t, or nil when t has none there.
func srcAt(t *ops.Tensor, i int) *ops.Tensor {
	if i < len(t.Src) {
		return t.Src[i]
	}
	return nil
}

// alibi returns ggml's ALiBi parameters for nHead heads: n_head_log2 (the
// largest power of two <= nHead) and m0 = 2^(-maxBias/n), m1 =
// 2^(-maxBias/(2n)) rounded to float32; a kernel takes head h's slope as
// m0^(h+1) below n and m1^(2(h-n)+1) from n.
func alibi(maxBias float32, nHead int64) (n int32, m0, m1 float32) {
	if maxBias <= 0 || nHead <= 0 {
		return 1, 1, 1
	}
	nl := int64(1) << (bits.Len64(uint64(nHead)) - 1)
	m0 = float32(math.Pow(2, -float64(maxBias)/float64(nl)))
	m1 = float32(math.Pow(2, -float64(maxBias)/2/float64(nl)))
	return int32(nl), m0, m1
}

func encodeSoftMax(e *encoder, t *ops.Tensor) error {
	x := t.Src[ops.SMInput]
	p := t.Params.(ops.SoftMaxParams)
	xb, err := e.src(1, x)
	if err != nil {
		return err
	}
	mb, sb := xb, xb // unused bindings when absent
	mb.index, sb.index = 2, 3
	mask, sinks := srcAt(t, ops.SMMask), srcAt(t, ops.SMSinks)
	mt := x
	name := "kb_soft_max_f32"
	if mask != nil {
		if mb, err = e.src(2, mask); err != nil {
			return err
		}
		mt = mask
		if mask.Type == quant.F16 {
			name = "kb_soft_max_f32_f16"
		}
	}
	if sinks != nil {
		if sb, err = e.src(3, sinks); err != nil {
			return err
		}
	}
	d, err := e.out(4, t)
	if err != nil {
		return err
	}
	nl, m0, m1 := alibi(p.MaxBias, x.Ne[2])
	var s gpu.CStruct
	s.Tensor(x).Tensor(mt).Tensor(t).F32(p.Scale).F32(p.MaxBias).F32(m0).F32(m1).I32(nl).I32(b32(mask != nil)).I32(b32(sinks != nil))
	return e.dispatch("soft_max.metal", name, rowGrid(t), [3]int{rowThreads(t.Ne[0], 256), 1, 1}, nil, args(&s), xb, mb, sb, d)
}
