package cpu

import (
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// FLASH_ATTN_EXT follows ggml's CPU kernel: one pass over the keys per
// (query row, head) with an online softmax. The query row is converted
// once to K's vec-dot type (f32 for f32 K, f16 for f16 K, q8_0 for q8_0
// and q4_0 K) and dotted with each key row by MUL_MAT's dot kernels. A
// running maximum M, sum S and value accumulator are kept over tiles of
// faTile keys: a tile's logits are computed first; when their maximum
// raises M the accumulator and S are rescaled once by exp(M_old - M_new);
// then the tile's exp(logit - M) (the tier's vector exp) join S and weight
// the value rows added to the accumulator. Keys
// whose (slope-scaled) mask is -Inf are skipped without reading K or V.
// The optional sink logit joins S (and M) after the keys, and a query row
// with nothing left (S == 0) yields zeros.
//
// Unlike ggml, which accumulates f16 V rows in an f16 accumulator, the
// accumulator is always float32: f16 and quantized V rows are widened
// element by element (q8_0/q4_0 rows through quant.DequantizeRow).

func init() {
	register(ops.OpFlashAttnExt, supportsFlashAttn, computeFlashAttn)
}

// faSource returns t's source i, nil when absent.
func faSource(t *ops.Tensor, i int) *ops.Tensor {
	if i < len(t.Src) {
		return t.Src[i]
	}
	return nil
}

func supportsFlashAttn(t *ops.Tensor) error {
	if len(t.Src) < 3 || len(t.Src) > 5 {
		return fmt.Errorf("want 3 to 5 sources, got %d", len(t.Src))
	}
	p, ok := t.Params.(ops.FlashAttnParams)
	if !ok {
		return fmt.Errorf("parameters are %T, want ops.FlashAttnParams", t.Params)
	}
	want, err := ops.FlashAttnExt(t.Src[ops.FAQ], t.Src[ops.FAK], t.Src[ops.FAV], faSource(t, ops.FAMask), faSource(t, ops.FASinks), p)
	if err != nil {
		return err
	}
	if err := sameNode(t, want); err != nil {
		return err
	}
	if _, err := dotKernelFor(t.Src[ops.FAK].Type); err != nil {
		return err
	}
	return nil
}

// alibiSlopes returns the ALiBi slope of each of nHead heads in s (grown
// when short), as ggml
// computes them: with n = 2^floor(log2(nHead)), m0 = 2^(-maxBias/n) and
// m1 = 2^(-maxBias/(2n)), head h gets m0^(h+1) for h < n and
// m1^(2(h-n)+1) otherwise. All slopes are 1 when maxBias is 0.
func alibiSlopes(maxBias float32, nHead int64, s []float32) []float32 {
	s = growF32(s, nHead)
	if maxBias <= 0 {
		for h := range s {
			s[h] = 1
		}
		return s
	}
	n := int64(1) << uint(math.Floor(math.Log2(float64(nHead))))
	m0 := float32(math.Pow(2, -float64(maxBias)/float64(n)))
	m1 := float32(math.Pow(2, -float64(maxBias)/2/float64(n)))
	for h := range nHead {
		if h < n {
			s[h] = float32(math.Pow(float64(m0), float64(h+1)))
		} else {
			s[h] = float32(math.Pow(float64(m1), float64(2*(h-n)+1)))
		}
	}
	return s
}

// expf returns e^x in float32.
func expf(x float32) float32 { return float32(math.Exp(float64(x))) }

// computeFlashAttn fills dst[:, h, iq, i3] for every query row iq, head h
// and batch i3.
func computeFlashAttn(b *Backend, t *ops.Tensor) error {
	q, k, v := t.Src[ops.FAQ], t.Src[ops.FAK], t.Src[ops.FAV]
	mask, sinks := faSource(t, ops.FAMask), faSource(t, ops.FASinks)
	p := t.Params.(ops.FlashAttnParams)
	if t.NumElements() == 0 {
		return nil
	}
	d, nQ, nHead, q3 := q.Ne[0], q.Ne[1], q.Ne[2], q.Ne[3]
	dv := v.Ne[0]

	kern, err := b.kern.dot(k.Type)
	if err != nil {
		return err
	}
	qBytes, err := kern.actType.RowSize(d)
	if err != nil {
		return fmt.Errorf("query rows: %w", err)
	}
	kBytes, err := k.Type.RowSize(d)
	if err != nil {
		return err
	}
	vBytes, err := v.Type.RowSize(dv)
	if err != nil {
		return err
	}
	scale, softcap := p.Scale, p.Softcap
	if softcap != 0 {
		scale /= softcap
	}
	b.scratch.f32 = alibiSlopes(p.MaxBias, nHead, b.scratch.f32)
	j := &b.fa
	*j = flashAttnJob{
		ks: b.kern, kern: kern, sc: &b.scratch, errs: b.workerErrs(),
		t: t, q: q, k: k, v: v, mask: mask, sinks: sinks,
		qMem: mem(q), kMem: mem(k), vMem: mem(v), out: f32s(mem(t), 0, t.NumElements()),
		scale: scale, softcap: softcap, slopes: b.scratch.f32[:nHead],
		qBytes: qBytes, kBytes: kBytes, vBytes: vBytes,
	}
	if sinks != nil {
		j.sinkMem = mem(sinks)
	}
	if mask != nil {
		j.maskMem = mem(mask)
	}
	b.pool.run(int(nQ*nHead*q3), 1, j)
	return j.errs.err()
}

// faTile is the number of keys whose scores FLASH_ATTN_EXT computes
// before it rescales and accumulates (at most 64: a tile's masked keys
// are a uint64 bit set).
const faTile = 64

// flashAttnJob is one FLASH_ATTN_EXT call, kept in the backend so that a
// call allocates nothing; an item is one (query row, head, batch).
type flashAttnJob struct {
	ks                      *kernelSet
	kern                    dotKernel
	sc                      *scratch
	errs                    workerErrors
	t, q, k, v, mask, sinks *ops.Tensor
	qMem, kMem, vMem        []byte
	sinkMem, maskMem        []byte
	out                     []float32
	scale, softcap          float32
	slopes                  []float32
	qBytes, kBytes, vBytes  int64
}

func (j *flashAttnJob) do(w, lo, hi int) {
	q, k, v, mask, sinks := j.q, j.k, j.v, j.mask, j.sinks
	d, nQ, nHead := q.Ne[0], q.Ne[1], q.Ne[2]
	dv, nKV := v.Ne[0], k.Ne[1]
	rk2, rk3 := nHead/k.Ne[2], q.Ne[3]/k.Ne[3]
	scale, softcap := j.scale, j.softcap
	vk := &j.ks.vec
	kNb1, vNb1 := k.Nb[1], v.Nb[1]
	// Per worker: the f32 query row, the accumulator, a widened V row,
	// a tile's scores and the converted query row.
	wb := j.sc.worker(w, d+2*dv+faTile, 0, j.qBytes)
	qf, acc, vf := wb.f32[:d], wb.f32[d:d+dv], wb.f32[d+dv:d+2*dv]
	scores := wb.f32[d+2*dv : d+2*dv+faTile]
	qc := wb.bytes[:j.qBytes]
	for u := int64(lo); u < int64(hi) && !j.errs.failed(w); u++ {
		iq, h, i3 := u%nQ, u/nQ%nHead, u/(nQ*nHead)
		ik2, ik3 := h/rk2, i3/rk3
		if err := loadFloatRow(quant.F32, j.qMem, at(q, 0, iq, h, i3), q.Nb[0], qf); err != nil {
			j.errs.set(w, err)
			return
		}
		if err := j.ks.convertRow(j.kern.actType, qf, qc); err != nil {
			j.errs.set(w, err)
			return
		}
		clear(acc)
		var maskOff int64
		if mask != nil {
			maskOff = at(mask, 0, iq, h%mask.Ne[2], i3%mask.Ne[3])
		}
		slope := j.slopes[h]
		kBase, vBase := at(k, 0, 0, ik2, ik3), at(v, 0, 0, ik2, ik3)
		sum, maxS := float32(0), float32(math.Inf(-1))
		// Keys go in tiles of faTile: the tile's scores, one rescale of
		// the accumulator by the tile's new maximum, the exponentials
		// and their sum in one vector pass, then the value rows.
		for ic0 := int64(0); ic0 < nKV; ic0 += faTile {
			nt := min(faTile, nKV-ic0)
			sc := scores[:nt]
			var masked uint64 // bit t: key ic0+t is masked out
			tmx := float32(math.Inf(-1))
			for t := range nt {
				ic := ic0 + t
				var mv float32
				if mask != nil {
					if mask.Type == quant.F16 {
						mv = slope * halfAt(j.maskMem, int(maskOff+2*ic))
					} else {
						mv = slope * f32At(j.maskMem, maskOff+4*ic)
					}
					if math.IsInf(float64(mv), -1) {
						masked |= 1 << t
						sc[t] = mv
						continue
					}
				}
				ko := kBase + ic*kNb1
				s := j.kern.dot(int(d), j.kMem[ko:ko+j.kBytes], qc) * scale
				if softcap != 0 {
					s = softcap * float32(math.Tanh(float64(s)))
				}
				s += mv
				sc[t] = s
				tmx = max(tmx, s)
			}
			if math.IsInf(float64(tmx), -1) {
				continue // every key of the tile is masked
			}
			if tmx > maxS {
				ms := expf(maxS - tmx)
				maxS = tmx
				vk.mulTo(acc, acc, ms)
				sum *= ms
			}
			sum += float32(vk.expSum(sc, maxS))
			for t := range nt {
				if masked&(1<<t) != 0 {
					continue
				}
				vo := vBase + (ic0+t)*vNb1
				if err := addValueRow(vk, v.Type, j.vMem[vo:vo+j.vBytes], sc[t], acc, vf); err != nil {
					j.errs.set(w, err)
					return
				}
			}
		}
		// A -Inf sink adds exp(-Inf) = 0; skip it rather than form
		// -Inf - -Inf when every key was masked.
		if s := sinkLogit(sinks, j.sinkMem, h); !math.IsInf(float64(s), -1) {
			ms, vs := float32(1), float32(1)
			if s > maxS {
				ms = expf(maxS - s)
				vk.mulTo(acc, acc, ms)
			} else {
				vs = expf(s - maxS)
			}
			sum = sum*ms + vs
		}
		inv := float32(0)
		if sum != 0 {
			inv = 1 / sum
		}
		vk.mulTo(j.out[dv*(h+nHead*(iq+nQ*i3)):][:dv], acc, inv)
	}
}

// sinkLogit returns head h's sink logit, or -Inf without sinks.
func sinkLogit(sinks *ops.Tensor, sinkMem []byte, h int64) float32 {
	if sinks == nil {
		return float32(math.Inf(-1))
	}
	return f32At(sinkMem, h*sinks.Nb[0])
}

// addValueRow adds vs times the value row row (of type typ) to acc with
// the row kernels vk, using tmp to widen quantized rows.
func addValueRow(vk *vecKernels, typ quant.Type, row []byte, vs float32, acc, tmp []float32) error {
	switch typ {
	case quant.F32:
		vk.axpy(acc, f32s(row, 0, int64(len(acc))), vs)
	case quant.F16:
		vk.axpyF16(acc, u16s(row, 0, int64(len(acc))), vs)
	default:
		if err := quant.DequantizeRow(typ, row, tmp); err != nil {
			return fmt.Errorf("value row: %w", err)
		}
		vk.axpy(acc, tmp, vs)
	}
	return nil
}
