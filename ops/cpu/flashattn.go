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
// A work item is a block of up to faRows query rows sharing a K/V head
// (consecutive queries of a head, or heads sharing it under GQA); the rows
// take each K/V tile in turn, so the tile is read from memory once per
// block. Where the tier has them, f16 keys are scored two per call
// (dot2F16) and f16/f32 value rows added four per pass (axpy4F16/axpy4);
// each element sees the same operations in the same order as with one
// key at a time, so the result does not depend on the grouping.
//
// Unlike ggml, which accumulates f16 V rows in an f16 accumulator, the
// accumulator is always float32: f16 and quantized V rows are widened
// element by element (q8_0 rows by the tier's axpyQ8_0, which adds the
// exact products d*q as quant.DequantizeRow forms them; other quantized
// rows through quant.DequantizeRow).

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

// alibiSlopes returns alibiSlope of each of nHead heads in s (grown when
// short).
func alibiSlopes(maxBias float32, nHead int64, s []float32) []float32 {
	s = growF32(s, nHead)
	for h := range nHead {
		s[h] = alibiSlope(maxBias, h, nHead)
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
	d, nHead := q.Ne[0], q.Ne[2]
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
	// Rows per item: faRows, fewer when that leaves under two items
	// per thread.
	j.rowsPer = faRows
	for j.rowsPer > 1 && faItems(q, k, j.rowsPer) < int64(2*b.pool.threads) {
		j.rowsPer /= 2
	}
	b.pool.run(int(faItems(q, k, j.rowsPer)), 1, j)
	return j.errs.err()
}

// faTile is the number of keys whose scores FLASH_ATTN_EXT computes
// before it rescales and accumulates (at most 64: a tile's masked keys
// are a uint64 bit set).
const faTile = 64

// flashAttnJob is one FLASH_ATTN_EXT call, kept in the backend so that a
// call allocates nothing; an item is up to rowsPer (<= faRows) query rows
// sharing a K/V head (see faItems).
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
	rowsPer                 int64
}

// faRows is the number of query rows sharing a K/V head (of the same
// head, or of heads sharing it under GQA) that a work item takes through
// the keys together: each tile of K and V rows is read once from memory
// and reused from L1 by the other rows.
const faRows = 4

// faRow is the running state of one query row of a work item.
type faRow struct {
	iq, h, i3   int64
	maskOff     int64
	slope       float32
	sum, maxS   float32
	acc, qw, sc []float32
	qc          []byte
}

// faItems returns the number of work items: per batch i3 and K/V head,
// the rk2*nQ query rows (heads sharing the K/V head, then queries) in
// blocks of rowsPer.
func faItems(q, k *ops.Tensor, rowsPer int64) int64 {
	rk2 := q.Ne[2] / k.Ne[2]
	return (rk2*q.Ne[1] + rowsPer - 1) / rowsPer * k.Ne[2] * q.Ne[3]
}

func (j *flashAttnJob) do(w, lo, hi int) {
	q, k, v, mask, sinks := j.q, j.k, j.v, j.mask, j.sinks
	d, nQ, nHead := q.Ne[0], q.Ne[1], q.Ne[2]
	dv, nKV := v.Ne[0], k.Ne[1]
	nHeadKV := k.Ne[2]
	rk2, rk3 := nHead/nHeadKV, q.Ne[3]/k.Ne[3]
	nRows := rk2 * nQ
	rowsPer := j.rowsPer
	nBlk := (nRows + rowsPer - 1) / rowsPer
	vk := &j.ks.vec
	// Per worker: the f32 query row, a widened V row, and per row of a
	// block the accumulator, a tile's scores, and the converted query row
	// (with, for f16 K with the tier's dot2F16, its widened form qw).
	per := 2*d + dv + faTile
	wb := j.sc.worker(w, d+dv+faRows*per, 0, faRows*j.qBytes)
	qf, vf := wb.f32[:d], wb.f32[d:d+dv]
	var rows [faRows]faRow
	for r := range rows {
		f := wb.f32[d+dv+int64(r)*per : d+dv+int64(r+1)*per]
		rows[r].acc, rows[r].sc, rows[r].qw = f[:dv], f[dv:dv+faTile], f[dv+faTile:dv+faTile+d]
		rows[r].qc = wb.bytes[int64(r)*j.qBytes : int64(r+1)*j.qBytes]
	}
	dot2 := vk.dot2F16 != nil && k.Type == quant.F16 && j.kern.actType == quant.F16
	for u := int64(lo); u < int64(hi) && !j.errs.failed(w); u++ {
		blk, ik2, i3 := u%nBlk, u/nBlk%nHeadKV, u/(nBlk*nHeadKV)
		ik3 := i3 / rk3
		r0 := blk * rowsPer
		nr := min(rowsPer, nRows-r0)
		for g := range nr {
			row := &rows[g]
			r := r0 + g
			row.iq, row.h, row.i3 = r%nQ, ik2*rk2+r/nQ, i3
			if err := loadFloatRow(quant.F32, j.qMem, at(q, 0, row.iq, row.h, i3), q.Nb[0], qf); err != nil {
				j.errs.set(w, err)
				return
			}
			if err := j.ks.convertRow(j.kern.actType, qf, row.qc); err != nil {
				j.errs.set(w, err)
				return
			}
			if dot2 {
				vk.f16ToF32(row.qw, u16s(row.qc, 0, d))
			}
			clear(row.acc)
			if mask != nil {
				row.maskOff = at(mask, 0, row.iq, row.h%mask.Ne[2], i3%mask.Ne[3])
			}
			row.slope = j.slopes[row.h]
			row.sum, row.maxS = 0, float32(math.Inf(-1))
		}
		kBase, vBase := at(k, 0, 0, ik2, ik3), at(v, 0, 0, ik2, ik3)
		// Keys go in tiles of faTile; each row of the block takes the
		// tile in turn (see tile).
		for ic0 := int64(0); ic0 < nKV; ic0 += faTile {
			nt := min(faTile, nKV-ic0)
			for g := range nr {
				if err := j.tile(&rows[g], ic0, nt, kBase, vBase, dot2, vf); err != nil {
					j.errs.set(w, err)
					return
				}
			}
		}
		for g := range nr {
			row := &rows[g]
			acc, sum, maxS := row.acc, row.sum, row.maxS
			// A -Inf sink adds exp(-Inf) = 0; skip it rather than form
			// -Inf - -Inf when every key was masked.
			if s := sinkLogit(sinks, j.sinkMem, row.h); !math.IsInf(float64(s), -1) {
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
			vk.mulTo(j.out[dv*(row.h+nHead*(row.iq+nQ*row.i3)):][:dv], acc, inv)
		}
	}
}

// tile takes query row row through the nt keys from ic0: the tile's
// scores, one rescale of the accumulator by the tile's new maximum, the
// exponentials and their sum in one vector pass, then the value rows.
func (j *flashAttnJob) tile(row *faRow, ic0, nt, kBase, vBase int64, dot2 bool, vf []float32) error {
	mask, v := j.mask, j.v
	d := j.q.Ne[0]
	kNb1, vNb1 := j.k.Nb[1], v.Nb[1]
	scale, softcap, slope := j.scale, j.softcap, row.slope
	vk := &j.ks.vec
	sc, acc := row.sc[:nt], row.acc
	var masked uint64 // bit t: key ic0+t is masked out
	tmx := float32(math.Inf(-1))
	// The slope-scaled mask values first (sc[t] holds key t's), then the
	// scores of the unmasked keys: two adjacent ones per dot2F16 call
	// where the tier has it.
	for t := range nt {
		var mv float32
		if mask != nil {
			ic := ic0 + t
			if mask.Type == quant.F16 {
				mv = slope * halfAt(j.maskMem, int(row.maskOff+2*ic))
			} else {
				mv = slope * f32At(j.maskMem, row.maskOff+4*ic)
			}
			if math.IsInf(float64(mv), -1) {
				masked |= 1 << t
			}
		}
		sc[t] = mv
	}
	for t := int64(0); t < nt; t++ {
		if masked&(1<<t) != 0 {
			continue
		}
		ko := kBase + (ic0+t)*kNb1
		if dot2 && t+1 < nt && masked&(1<<(t+1)) == 0 {
			d0, d1 := vk.dot2F16(u16s(j.kMem, ko, d), u16s(j.kMem, ko+kNb1, d), row.qw)
			sc[t] = faLogit(d0, scale, softcap, sc[t])
			sc[t+1] = faLogit(d1, scale, softcap, sc[t+1])
			tmx = max(tmx, sc[t], sc[t+1])
			t++
			continue
		}
		sc[t] = faLogit(j.kern.dot(int(d), j.kMem[ko:ko+j.kBytes], row.qc), scale, softcap, sc[t])
		tmx = max(tmx, sc[t])
	}
	if math.IsInf(float64(tmx), -1) {
		return nil // every key of the tile is masked
	}
	if tmx > row.maxS {
		ms := expf(row.maxS - tmx)
		row.maxS = tmx
		vk.mulTo(acc, acc, ms)
		row.sum *= ms
	}
	row.sum += float32(vk.expSum(sc, row.maxS))
	for t := int64(0); t < nt; t++ {
		if masked&(1<<t) != 0 {
			continue
		}
		vo := vBase + (ic0+t)*vNb1
		// Four unmasked keys share one pass over the accumulator (the
		// same fma per element and key, in key order).
		if t+4 <= nt && (masked>>t)&15 == 0 && (v.Type == quant.F16 || v.Type == quant.F32) {
			addValueRows4(vk, v.Type, j.vMem, vo, vNb1, j.vBytes, sc[t:t+4], acc)
			t += 3
			continue
		}
		if err := addValueRow(vk, v.Type, j.vMem[vo:vo+j.vBytes], sc[t], acc, vf); err != nil {
			return err
		}
	}
	return nil
}

// faLogit returns the logit of a key whose dot product with the query is
// dot and whose slope-scaled mask value is mv.
func faLogit(dot, scale, softcap, mv float32) float32 {
	s := dot * scale
	if softcap != 0 {
		s = softcap * float32(math.Tanh(float64(s)))
	}
	return s + mv
}

// sinkLogit returns head h's sink logit, or -Inf without sinks.
func sinkLogit(sinks *ops.Tensor, sinkMem []byte, h int64) float32 {
	if sinks == nil {
		return float32(math.Inf(-1))
	}
	return f32At(sinkMem, h*sinks.Nb[0])
}

// addValueRows4 adds the four f16 or f32 value rows at mem[off:],
// mem[off+stride:], ... (of rowBytes bytes each), scaled by vs[0..3], to acc
// as four addValueRow calls would.
func addValueRows4(vk *vecKernels, typ quant.Type, mem []byte, off, stride, rowBytes int64, vs []float32, acc []float32) {
	n := int64(len(acc))
	r0 := mem[off : off+rowBytes]
	r1 := mem[off+stride : off+stride+rowBytes]
	r2 := mem[off+2*stride : off+2*stride+rowBytes]
	r3 := mem[off+3*stride : off+3*stride+rowBytes]
	if typ == quant.F16 {
		vk.axpy4F16(acc, u16s(r0, 0, n), u16s(r1, 0, n), u16s(r2, 0, n), u16s(r3, 0, n), vs[0], vs[1], vs[2], vs[3])
		return
	}
	vk.axpy4(acc, f32s(r0, 0, n), f32s(r1, 0, n), f32s(r2, 0, n), f32s(r3, 0, n), vs[0], vs[1], vs[2], vs[3])
}

// addValueRow adds vs times the value row row (of type typ) to acc with
// the row kernels vk, using tmp to widen quantized rows.
func addValueRow(vk *vecKernels, typ quant.Type, row []byte, vs float32, acc, tmp []float32) error {
	switch typ {
	case quant.F32:
		vk.axpy(acc, f32s(row, 0, int64(len(acc))), vs)
	case quant.F16:
		vk.axpyF16(acc, u16s(row, 0, int64(len(acc))), vs)
	case quant.Q8_0:
		vk.axpyQ8_0(acc, row, vs)
	default:
		if err := quant.DequantizeRow(typ, row, tmp); err != nil {
			return fmt.Errorf("value row: %w", err)
		}
		vk.axpy(acc, tmp, vs)
	}
	return nil
}
