package cpu

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// SSM_CONV: Mamba's causal depthwise convolution, in float32 like
// ggml's CPU kernel; every operand may have any strides.

func init() {
	addKernel(ops.OpSSMConv, supportsSSMConv, computeSSMConv)
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

// computeSSMConv computes dst[i, t, s] = sum_j sx[t+j, i, s]*c[j, i], the
// sum in order of j from 0 with each product rounded. Items are groups of
// 8 channels; a tier's conv4 kernel (d_conv 4, packed sx rows) takes
// whole runs of 8 tokens of a group and writes rows of 8 channels, its
// conv4g the tokens left (gathering across channels), its conv41 a single
// token of packed channels, and the generic loop, their twin, does the
// rest.
func computeSSMConv(b *Backend, t *ops.Tensor) error {
	if t.NumElements() == 0 {
		return nil
	}
	sx, c := t.Src[0], t.Src[1]
	j := &b.ssmConv
	j.sk = b.kern.ssm
	j.t, j.sx, j.c = t, sx, c
	j.xm, j.cm, j.tm = mem(sx), mem(c), mem(t)
	j.sc = &b.scratch
	nGroups := (t.Ne[0] + 7) / 8
	b.pool.run(int(nGroups), rowGrain(8*2*c.Ne[0]*t.Ne[1]*t.Ne[2]), j)
	j.t, j.sx, j.c, j.xm, j.cm, j.tm = nil, nil, nil, nil, nil, nil
	return nil
}

// ssmConvJob is one SSM_CONV call; an item is a group of 8 channels. It
// is kept in the backend so that a call allocates nothing.
type ssmConvJob struct {
	sk         *ssmKernels
	t, sx, c   *ops.Tensor
	xm, cm, tm []byte
	sc         *scratch
}

// do computes the channel groups [lo, hi) on worker w: the tier's kernels
// where they apply, the generic loop for the rest.
func (j *ssmConvJob) do(w, lo, hi int) {
	t, sx, c := j.t, j.sx, j.c
	dInner, nTok, nSeq, dConv := t.Ne[0], t.Ne[1], t.Ne[2], c.Ne[0]
	// f32: the group's weights for conv4 (and a converted c row); f32b:
	// a converted sx row.
	wb := j.sc.worker(w, 32+dConv, sx.Ne[0], 0)
	cw, cs := wb.f32[:32], wb.f32[32:32+dConv]
	fast := j.sk.conv4 != nil && dConv == 4 && sx.Nb[0] == 4 && sx.Nb[1]%4 == 0 && t.Nb[1]%4 == 0 && nTok >= 8
	gather := j.sk.conv4g != nil && dConv == 4 && sx.Nb[0] == 4 && sx.Nb[1]%4 == 0 && t.Nb[1]%4 == 0 &&
		c.Nb[0] == 4 && c.Nb[1]%4 == 0
	nTok8 := nTok &^ 7
	if j.sk.conv41 != nil && nTok == 1 && dConv == 4 && sx.Nb[0] == 4 && sx.Nb[1] == 16 && c.Nb[0] == 4 && c.Nb[1] == 16 {
		// Decoding: all whole groups of the range in one call.
		full := min(int64(hi), dInner/8)
		if g0 := int64(lo); full > g0 {
			for s := range nSeq {
				j.sk.conv41(f32s(j.tm, 32*g0+s*t.Nb[2], 8*(full-g0)),
					f32s(j.xm, 8*g0*sx.Nb[1]+s*sx.Nb[2], 32*(full-g0)), f32s(j.cm, 8*g0*c.Nb[1], 32*(full-g0)))
			}
			lo = int(full)
		}
	}
	for g := int64(lo); g < int64(hi); g++ {
		ch0, ch1 := 8*g, min(8*g+8, dInner)
		tok0 := int64(0)
		if fast && ch1-ch0 == 8 {
			for k := range int64(8) {
				copy(cw[4*k:4*k+4], floatRow(c, j.cm, ch0+k, 0, 0, cs))
			}
			sxS := sx.Nb[1] / 4
			for s := range nSeq {
				dst := f32s(j.tm, ch0*4+s*t.Nb[2], (nTok8-1)*(t.Nb[1]/4)+8)
				x := f32s(j.xm, ch0*sx.Nb[1]+s*sx.Nb[2], 7*sxS+sx.Ne[0])
				j.sk.conv4(dst, int(t.Nb[1]/4), x, int(sxS), cw, int(nTok8))
			}
			tok0 = nTok8
		}
		if gather && tok0 < nTok && ch1-ch0 == 8 {
			sxS, cS := sx.Nb[1]/4, c.Nb[1]/4
			cw8 := f32s(j.cm, ch0*c.Nb[1], 7*cS+4)
			for s := range nSeq {
				dst := f32s(j.tm, ch0*4+tok0*t.Nb[1]+s*t.Nb[2], (nTok-tok0-1)*(t.Nb[1]/4)+8)
				x := f32s(j.xm, ch0*sx.Nb[1]+s*sx.Nb[2]+4*tok0, 7*sxS+sx.Ne[0]-tok0)
				j.sk.conv4g(dst, int(t.Nb[1]/4), x, int(sxS), cw8, int(cS), int(nTok-tok0))
			}
			tok0 = nTok
		}
		if tok0 < nTok {
			for i := ch0; i < ch1; i++ {
				w := floatRow(c, j.cm, i, 0, 0, cs)
				for s := range nSeq {
					ssmConvRows(j.tm, t, i, s, tok0, floatRow(sx, j.xm, i, s, 0, wb.f32b), w)
				}
			}
		}
	}
}

// ssmConvRows is the generic SSM_CONV loop for channel i of sequence s,
// tokens tok0 and on: each window's sum in order from 0, products rounded.
func ssmConvRows(tm []byte, t *ops.Tensor, i, s, tok0 int64, x, w []float32) {
	dConv := int64(len(w))
	for tok := tok0; tok < t.Ne[1]; tok++ {
		win := x[tok : tok+dConv]
		var sum float32
		for j, v := range w {
			sum += win[j] * v
		}
		putF32At(tm, i*4+tok*t.Nb[1]+s*t.Nb[2], sum)
	}
}
