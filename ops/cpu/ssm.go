package cpu

import (
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// The state-space ops of Mamba: SSM_CONV (causal depthwise convolution) and
// SSM_SCAN (selective scan, Mamba-1 and Mamba-2 forms). Both compute in
// float32 like ggml's CPU kernels; every operand may have any strides.

func init() {
	register(ops.OpSSMConv, supportsSSMConv, computeSSMConv)
	register(ops.OpSSMScan, supportsSSMScan, computeSSMScan)
}

func supportsSSMConv(t *ops.Tensor) error {
	if err := checkSrcs(t, 2, 2); err != nil {
		return err
	}
	sx, c := t.Src[0], t.Src[1]
	if err := checkType(sx, "sx", quant.F32); err != nil {
		return err
	}
	if err := checkType(c, "c", quant.F32); err != nil {
		return err
	}
	if err := checkOut(t, quant.F32); err != nil {
		return err
	}
	if c.Ne[2] != 1 || c.Ne[3] != 1 || sx.Ne[3] != 1 || sx.Ne[1] != c.Ne[1] || c.Ne[0] < 1 || sx.Ne[0] < c.Ne[0]-1 {
		return fmt.Errorf("sx %v and c %v do not match", sx.Ne, c.Ne)
	}
	if want := [ops.MaxDims]int64{sx.Ne[1], sx.Ne[0] - c.Ne[0] + 1, sx.Ne[2], 1}; t.Ne != want {
		return fmt.Errorf("result shape %v, want %v", t.Ne, want)
	}
	return nil
}

// computeSSMConv computes dst[i, t, s] = sum_j sx[t+j, i, s]*c[j, i],
// splitting the channels i between workers.
func computeSSMConv(b *Backend, t *ops.Tensor) error {
	if t.NumElements() == 0 {
		return nil
	}
	sx, c := t.Src[0], t.Src[1]
	dInner, nTok, nSeq, dConv := t.Ne[0], t.Ne[1], t.Ne[2], c.Ne[0]
	xm, cm, tm := mem(sx), mem(c), mem(t)
	b.pool.parallelFor(int(dInner), rowGrain(2*dConv*nTok*nSeq), func(_, lo, hi int) {
		sxs, cs := scratchFor(sx), scratchFor(c)
		for i := int64(lo); i < int64(hi); i++ {
			w := floatRow(c, cm, i, 0, 0, cs)
			for s := range nSeq {
				x := floatRow(sx, xm, i, s, 0, sxs)
				for tok := range nTok {
					win := x[tok : tok+dConv]
					var sum float32
					for j, v := range w {
						sum += win[j] * v
					}
					putF32At(tm, i*4+tok*t.Nb[1]+s*t.Nb[2], sum)
				}
			}
		}
	})
	return nil
}

func supportsSSMScan(t *ops.Tensor) error {
	if err := checkSrcs(t, 7, 7); err != nil {
		return err
	}
	names := []string{"s", "x", "dt", "A", "B", "C", "ids"}
	for i, x := range t.Src[:7] {
		want := quant.F32
		if i == ops.ScanIDs {
			want = quant.I32
		}
		if err := checkType(x, names[i], want); err != nil {
			return err
		}
	}
	if err := checkOut(t, quant.F32); err != nil {
		return err
	}
	s, x, dt, A, B, C, ids := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4], t.Src[5], t.Src[6]
	dState, headDim, nHead := s.Ne[0], s.Ne[1], s.Ne[2]
	nTok, nSeqs := x.Ne[2], x.Ne[3]
	switch {
	case x.Ne[0] != headDim || x.Ne[1] != nHead:
		return fmt.Errorf("x %v does not match s %v", x.Ne, s.Ne)
	case dt.Ne != [ops.MaxDims]int64{nHead, nTok, nSeqs, 1}:
		return fmt.Errorf("dt %v, want [%d %d %d 1]", dt.Ne, nHead, nTok, nSeqs)
	case A.Ne[0] != dState && A.Ne[0] != 1 || A.Ne[1] != nHead || A.Ne[2] != 1 || A.Ne[3] != 1:
		return fmt.Errorf("A %v, want [%d or 1, %d]", A.Ne, dState, nHead)
	case B.Ne != C.Ne:
		return fmt.Errorf("B %v and C %v differ", B.Ne, C.Ne)
	case B.Ne[0] != dState || B.Ne[1] <= 0 || nHead%B.Ne[1] != 0 || B.Ne[2] != nTok || B.Ne[3] != nSeqs:
		return fmt.Errorf("B %v, want [%d, n_group | %d, %d, %d]", B.Ne, dState, nHead, nTok, nSeqs)
	case ids.Ne[0] != nSeqs || ids.NumElements() != nSeqs:
		return fmt.Errorf("ids %v, want [%d]", ids.Ne, nSeqs)
	case s.Ne[3] < nSeqs:
		return fmt.Errorf("%d state slots for %d sequences", s.Ne[3], nSeqs)
	}
	if want := [ops.MaxDims]int64{x.NumElements() + dState*headDim*nHead*nSeqs, 1, 1, 1}; t.Ne != want {
		return fmt.Errorf("result shape %v, want %v", t.Ne, want)
	}
	return nil
}

// softplus returns ln(1+e^x), or x itself above 20, as ggml does.
func softplus(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log1p(math.Exp(float64(x))))
}

// computeSSMScan runs the selective scan. Head h reads B and C group
// h/(n_head/n_group), as ggml's CPU kernel does (repeat_interleave). Each
// (sequence, head) pair is one work item: its state starts as a copy of
// slot ids[seq] of s in the result's state area and is updated there token
// by token, so with no tokens the final state is the initial one.
func computeSSMScan(b *Backend, t *ops.Tensor) error {
	s, x, dt, A, B, C, ids := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4], t.Src[5], t.Src[6]
	dState, headDim, nHead := s.Ne[0], s.Ne[1], s.Ne[2]
	nTok, nSeqs := x.Ne[2], x.Ne[3]
	if t.NumElements() == 0 {
		return nil
	}
	idm := mem(ids)
	slots := make([]int64, nSeqs)
	for q := range nSeqs {
		id := int64(int32At(idm, q*ids.Nb[0]))
		if id < 0 || id >= s.Ne[3] {
			return fmt.Errorf("ids[%d] = %d is outside the %d state slots", q, id, s.Ne[3])
		}
		slots[q] = id
	}
	n := nSeqs * nHead
	if n > int64(int(^uint(0)>>1)) {
		return fmt.Errorf("%d sequence-head pairs is too many", n)
	}
	sm, xm, dtm, am, bm, cm, tm := mem(s), mem(x), mem(dt), mem(A), mem(B), mem(C), mem(t)
	nX := x.NumElements()
	headsPerGroup := nHead / B.Ne[1]
	scalarA := A.Ne[0] == 1
	vk := &b.kern.vec
	b.pool.parallelFor(int(n), rowGrain(4*nTok*headDim*dState), func(_, lo, hi int) {
		ss, as, bs, cs := scratchFor(s), scratchFor(A), scratchFor(B), scratchFor(C)
		dA := make([]float32, dState)
		for item := int64(lo); item < int64(hi); item++ {
			q, h := item/nHead, item%nHead
			g := h / headsPerGroup
			st := f32s(tm, 4*(nX+item*headDim*dState), headDim*dState)
			for i1 := range headDim {
				copy(st[i1*dState:(i1+1)*dState], floatRow(s, sm, i1, h, slots[q], ss))
			}
			var arow []float32
			if !scalarA {
				arow = floatRow(A, am, h, 0, 0, as)
			}
			aScalar := f32At(am, h*A.Nb[1])
			for tok := range nTok {
				dsp := softplus(f32At(dtm, h*dt.Nb[0]+tok*dt.Nb[1]+q*dt.Nb[2]))
				if scalarA {
					e := float32(math.Exp(float64(dsp * aScalar)))
					for i := range dA {
						dA[i] = e
					}
				} else {
					vk.expScale(dA, arow, dsp)
				}
				brow := floatRow(B, bm, g, tok, q, bs)
				crow := floatRow(C, cm, g, tok, q, cs)
				y := f32s(tm, 4*(((q*nTok+tok)*nHead+h)*headDim), headDim)
				for i1 := range headDim {
					xdt := f32At(xm, i1*x.Nb[0]+h*x.Nb[1]+tok*x.Nb[2]+q*x.Nb[3]) * dsp
					y[i1] = vk.ssmRow(st[i1*dState:(i1+1)*dState], dA, brow, crow, xdt)
				}
			}
		}
	})
	return nil
}
