package cpu

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/flashattn"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
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
// whose (slope-scaled) mask is -Inf are skipped: they never contribute,
// and without the block kernels below K and V rows are not even read.
// The optional sink logit joins S (and M) after the keys, and a query row
// with nothing left (S == 0) yields zeros.
//
// A work item is a block of query rows sharing a K/V head (consecutive
// queries of a head, or heads sharing it under GQA); the rows take each
// K/V tile in turn, so the tile is read from memory once per item. Where
// the tier has them, f16 keys are scored two per call (dot2F16) and
// f16/f32 value rows added four per pass (axpy4F16/axpy4); each element
// sees the same operations in the same order as with one key at a time,
// so the result does not depend on the grouping.
//
// With f16 or q8_0 K and V on the AVX2 tier (head sizes a multiple of
// 8), an item is up to faBlockRows rows taken through each tile in groups
// of three (tileBlock; two rows left fill a group by repeating the last,
// one row left goes alone), and prefill becomes two register-tiled
// products: the scores S = Q K^T, 3 rows x 4 keys per step
// (faBlockKernels.scores, reading f16 keys directly and summing every dot
// product in the block order: one 8-lane accumulator over the runs of 8,
// then hsum8, so that all 12 accumulators stay in registers; this is not
// dot2F16's order, so the f16 results differ from the row path's in the
// last bits, but every row of the block path is summed alike whatever
// rows, items or threads it shares; for q8_0 keys
// 3 rows x 2 keys against the q8_0 query rows, each block's integer dot
// scaled and summed as the q8_0 dot kernel does), and O += P V, 3 rows x
// 32 value elements held in registers over a run of keys
// (faBlockKernels.values, the FMAs of axpyF16 in key order; q8_0 value
// rows are widened once per tile for all the item's rows, to the values
// axpyQ8_0 adds). A row alone (decode without GQA) takes one-row kernels
// of the same sums: for f16 keys 12 keys per pass (3 for a last group)
// (q8_0 keys: 4 keys per pass), and 64 value elements in registers over
// a run of keys. An item of exactly four rows (GQA decode, four query
// heads per K/V head) is scored 4 rows x 2 keys per step instead
// (faBlockKernels.scores4, the same sums), reading each key row once.
// The first group's score kernel and the value kernels
// prefetch the same keys of the next tile as they go (a long K/V cache
// is read from L3 or memory once per item, and the next tile is then in
// L1 when reached), and the mask kernel the next tile's mask values. The
// mask widening, the logits and their maximum are vector kernels too. A
// tile masked for every row of the item is skipped whole (causal prefill
// skips the tiles past the diagonal), and so is a run of four keys masked for every row of a
// group. Other masked keys may be scored with the rest (their K rows
// read, their scores dropped), but a value row is added only to the rows
// that take its key. Rows thus never mix in a masked key, whatever its K
// or V hold.
//
// Head and value sizes 8 and 16 (f16 K and V, an f16 mask or none, no
// softcap) take the small-head path of op_flash_attn_ext_small.go
// instead of the block kernels: keys in lanes, so that a score is not one
// FMA and a horizontal sum, and 256-key tiles.
//
// Unlike ggml, which accumulates f16 V rows in an f16 accumulator, the
// accumulator is always float32: f16 and quantized V rows are widened
// element by element (q8_0 rows by the tier's axpyQ8_0, which adds the
// exact products d*q as quant.DequantizeRow forms them; other quantized
// rows through quant.DequantizeRow).

func init() {
	addKernel(ops.OpFlashAttnExt, supportsFlashAttn, computeFlashAttn)
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
		smallBits: j.smallBits,
	}
	if sinks != nil {
		j.sinkMem = mem(sinks)
	}
	if mask != nil {
		j.maskMem = mem(mask)
	}
	j.dot2 = b.kern.vec.dot2F16 != nil && k.Type == quant.F16 && kern.actType == quant.F16
	// The block kernels score f16 keys in the block order (within
	// rounding of dot2F16) and q8_0 keys as the AVX2 tier's q8_0 dot
	// kernel does, and add values as axpyF16 and axpyQ8_0 do (bit for
	// bit), so they stand in for them wherever they apply: f16 or q8_0 K
	// and V, head sizes a multiple of 8, and K/V row strides they can
	// step (not negative; even for f16).
	j.kq8 = b.kern.fa != nil && k.Type == quant.Q8_0 && kern.actType == quant.Q8_0
	j.vq8 = v.Type == quant.Q8_0
	kOK := (j.dot2 && k.Nb[1]%2 == 0 || j.kq8) && k.Nb[1] >= 0
	vOK := (v.Type == quant.F16 && v.Nb[1]%2 == 0 || j.vq8) && v.Nb[1] >= 0
	if b.kern.fa != nil && b.kern.vec.dot2F16 != nil && !faNoBlock && kOK && vOK && d%8 == 0 && dv%8 == 0 {
		j.blk = b.kern.fa
	}
	if j.blk != nil && faSmallFits(j.blk.small, q, k, v, mask, p) {
		// Head sizes 8 and 16: the small-head kernels
		// (op_flash_attn_ext_small.go), faSmallRows rows per item, fewer
		// when that leaves under two items per thread.
		j.small = j.blk.small
		if n := b.pool.threads * faSmallTile / 64; len(j.smallBits) < n {
			j.smallBits = make([]uint64, n)
		}
		j.rowsPer = faSmallRows
		for j.rowsPer > 1 && faItems(q, k, j.rowsPer) < int64(2*b.pool.threads) {
			j.rowsPer /= 2
		}
		b.pool.run(int(faItems(q, k, j.rowsPer)), 1, faSmallJob{j})
		return j.errs.err()
	}
	// Rows per item: faRows (faBlockRows with the block kernels), fewer
	// when that leaves under two items per thread (in multiples of 3 for
	// the block kernels).
	j.rowsPer = faRows
	if j.blk != nil {
		j.rowsPer = faBlockRows
		for j.rowsPer > 3 && faItems(q, k, j.rowsPer) < int64(2*b.pool.threads) {
			j.rowsPer = max(3, j.rowsPer/2/3*3)
		}
	}
	for j.blk == nil && j.rowsPer > 1 && faItems(q, k, j.rowsPer) < int64(2*b.pool.threads) {
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
// call allocates nothing; an item is up to rowsPer (<= faBlockRows)
// query rows sharing a K/V head (see faItems).
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
	// dot2: f16 keys are scored with the tier's dot2F16 (against the
	// widened f16 query row qw).
	dot2 bool
	// kq8, vq8: q8_0 keys (with q8_0 query rows) and values for the
	// block kernels.
	kq8, vq8 bool
	// blk, when not nil, takes the rows of an item in groups of three
	// (and a row alone) through each tile (see tileBlock).
	blk *faBlockKernels
	// small, when not nil, takes the job instead (faSmallJob), with
	// faSmallTile mask bits per worker in smallBits (kept from call to
	// call).
	small     *faSmallKernels
	smallBits []uint64
}

// faNoBlock turns the block kernels off (benchmarks compare both paths).
var faNoBlock bool

// faBlockRows is the number of query rows of a work item with the block
// kernels: four groups of three take each K/V tile (16 KiB of f16 keys and
// as much of values at head size 128) while it is in L1/L2.
const faBlockRows = 12

// faRows is the number of query rows sharing a K/V head (of the same
// head, or of heads sharing it under GQA) that a work item takes through
// the keys together: each tile of K and V rows is read once from memory
// and reused from L1 by the other rows.
const faRows = 4

// faRow is the running state of one query row of a work item.
type faRow struct {
	iq, h, i3         int64
	maskOff           int64
	slope             float32
	sum, maxS         float32
	acc, qw, sc, dots []float32
	dq                []float32 // q8_0 K: the query scales, each 8 times
	qc                []byte
}

// faItems returns the number of work items: per batch i3 and K/V head,
// the rk2*nQ query rows (heads sharing the K/V head, then queries) in
// blocks of rowsPer.
func faItems(q, k *ops.Tensor, rowsPer int64) int64 {
	rk2 := q.Ne[2] / k.Ne[2]
	return (rk2*q.Ne[1] + rowsPer - 1) / rowsPer * k.Ne[2] * q.Ne[3]
}

func (j *flashAttnJob) do(w, lo, hi int) {
	q, k, v, mask := j.q, j.k, j.v, j.mask
	d, nQ, nHead := q.Ne[0], q.Ne[1], q.Ne[2]
	dv, nKV := v.Ne[0], k.Ne[1]
	nHeadKV := k.Ne[2]
	rk2, rk3 := nHead/nHeadKV, q.Ne[3]/k.Ne[3]
	nRows := rk2 * nQ
	rowsPer := j.rowsPer
	nBlk := (nRows + rowsPer - 1) / rowsPer
	vk := &j.ks.vec
	// Per worker: the f32 query row, a widened V row, and per row of an
	// item the accumulator, a tile's scores and raw dot products (block
	// kernels), and the converted query row (with, for f16 K with the
	// tier's dot2F16, its widened form qw; the f16 block kernels round
	// the query row to f16 and widen it back into qw in one pass).
	// The block kernels widen a q8_0 value tile into vt.
	nbq := d / 32
	per := d + dv + 2*faTile + 4 + 8*nbq
	head := d + dv
	var nvt int64
	if j.vq8 && j.blk != nil {
		nvt = faTile * dv
	}
	wb := j.sc.worker(w, head+faBlockRows*per, nvt, faBlockRows*j.qBytes)
	qf, vf, vt := wb.f32[:d], wb.f32[d:d+dv], wb.f32b[:nvt]
	var rows [faBlockRows]faRow
	for r := range rows {
		f := wb.f32[head+int64(r)*per : head+int64(r+1)*per]
		rows[r].acc, rows[r].sc, rows[r].dots = f[:dv], f[dv:dv+faTile], f[dv+faTile:dv+2*faTile+4]
		rows[r].qw, rows[r].dq = f[dv+2*faTile+4:dv+2*faTile+4+d], f[dv+2*faTile+4+d:per]
		rows[r].qc = wb.bytes[int64(r)*j.qBytes : int64(r+1)*j.qBytes]
	}
	dot2 := j.dot2
	for u := int64(lo); u < int64(hi) && !j.errs.failed(w); u++ {
		blk, ik2, i3 := u%nBlk, u/nBlk%nHeadKV, u/(nBlk*nHeadKV)
		ik3 := i3 / rk3
		r0 := blk * rowsPer
		nr := min(rowsPer, nRows-r0)
		for g := range nr {
			row := &rows[g]
			r := r0 + g
			row.iq, row.h, row.i3 = r%nQ, ik2*rk2+r/nQ, i3
			qOff := at(q, 0, row.iq, row.h, i3)
			blk16 := dot2 && j.blk != nil // the f16 block kernels read only qw
			switch {
			case blk16 && q.Nb[0] == 4:
				// Rounded straight from the packed query row.
				j.blk.roundF16(row.qw, f32s(j.qMem, qOff, d))
			default:
				if err := loadFloatRow(quant.F32, j.qMem, qOff, q.Nb[0], qf); err != nil {
					j.errs.set(w, err)
					return
				}
				if blk16 {
					j.blk.roundF16(row.qw, qf)
					break
				}
				if err := j.ks.convertRow(j.kern.actType, qf, row.qc); err != nil {
					j.errs.set(w, err)
					return
				}
				if dot2 {
					vk.f16ToF32(row.qw, u16s(row.qc, 0, d))
				}
			}
			if j.kq8 {
				for b := range nbq {
					for l := range int64(8) {
						row.dq[8*b+l] = simd.HalfAt(row.qc, int(b*simd.BytesQ8_0))
					}
				}
			}
			clear(row.acc)
			if mask != nil {
				row.maskOff = at(mask, 0, row.iq, row.h%mask.Ne[2], i3%mask.Ne[3])
			}
			row.slope = j.slopes[row.h]
			row.sum, row.maxS = 0, float32(math.Inf(-1))
		}
		kBase, vBase := at(k, 0, 0, ik2, ik3), at(v, 0, 0, ik2, ik3)
		// Keys go in tiles of faTile; the rows of the item take the tile
		// together (tileBlock) or one at a time (tile).
		for ic0 := int64(0); ic0 < nKV; ic0 += faTile {
			nt := min(faTile, nKV-ic0)
			if j.blk != nil {
				j.tileBlock(rows[:nr], ic0, nt, kBase, vBase, vt)
				continue
			}
			for g := range nr {
				if err := j.tile(&rows[g], ic0, nt, kBase, vBase, dot2, vf); err != nil {
					j.errs.set(w, err)
					return
				}
			}
		}
		for g := range nr {
			row := &rows[g]
			j.finish(row.acc, row.sum, row.maxS, row.iq, row.h, row.i3)
		}
	}
}

// finish writes the output of query row iq, head h, batch i3 from its
// accumulator acc, sum and maximum over the keys, with the head's sink.
func (j *flashAttnJob) finish(acc []float32, sum, maxS float32, iq, h, i3 int64) {
	vk := &j.ks.vec
	dv, nQ, nHead := j.v.Ne[0], j.q.Ne[1], j.q.Ne[2]
	// A -Inf sink adds exp(-Inf) = 0; skip it rather than form -Inf -
	// -Inf when every key was masked. A +Inf one makes the row NaN, as
	// the reference's exp(Inf - Inf) (and SOFT_MAX's): an infinite logit
	// is a fault to show, not a weight that zeros the row.
	if s := sinkLogit(j.sinks, j.sinkMem, h); math.IsInf(float64(s), 1) {
		sum = float32(math.NaN())
	} else if !math.IsInf(float64(s), -1) {
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

// tile takes query row row through the nt keys from ic0: the tile's
// scores, one rescale of the accumulator by the tile's new maximum, the
// exponentials and their sum in one vector pass, then the value rows.
func (j *flashAttnJob) tile(row *faRow, ic0, nt, kBase, vBase int64, dot2 bool, vf []float32) error {
	v := j.v
	d := j.q.Ne[0]
	kNb1, vNb1 := j.k.Nb[1], v.Nb[1]
	scale, softcap := j.scale, j.softcap
	vk := &j.ks.vec
	sc, acc := row.sc[:nt], row.acc
	tmx := float32(math.Inf(-1))
	// The slope-scaled mask values first, then the scores of the unmasked
	// keys: two adjacent ones per dot2F16 call where the tier has it.
	masked := j.maskTile(row, ic0, nt)
	for t := int64(0); t < nt; t++ {
		if masked&(1<<t) != 0 {
			continue
		}
		ko := kBase + (ic0+t)*kNb1
		if dot2 && t+1 < nt && masked&(1<<(t+1)) == 0 {
			d0, d1 := vk.dot2F16(u16s(j.kMem, ko, d), u16s(j.kMem, ko+kNb1, d), row.qw)
			sc[t] = flashattn.Logit(d0, scale, softcap, sc[t])
			sc[t+1] = flashattn.Logit(d1, scale, softcap, sc[t+1])
			tmx = max(tmx, sc[t], sc[t+1])
			t++
			continue
		}
		sc[t] = flashattn.Logit(j.kern.dot(int(d), j.kMem[ko:ko+j.kBytes], row.qc), scale, softcap, sc[t])
		tmx = max(tmx, sc[t])
	}
	if math.IsInf(float64(tmx), -1) {
		return nil // every key of the tile is masked
	}
	j.rescale(row, sc, tmx)
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

// maskTile sets row.sc[t] to the slope-scaled mask value of key ic0+t
// (0 without a mask) for t < nt and returns the keys masked out (-Inf)
// as bit t.
func (j *flashAttnJob) maskTile(row *faRow, ic0, nt int64) uint64 {
	mask, sc, slope := j.mask, row.sc[:nt], row.slope
	if mask == nil {
		clear(sc)
		return 0
	}
	if j.blk != nil && mask.Type == quant.F16 {
		return j.blk.maskF16(sc, u16s(j.maskMem, row.maskOff+2*ic0, nt), slope)
	}
	var masked uint64
	for t := range nt {
		var mv float32
		ic := ic0 + t
		if mask.Type == quant.F16 {
			mv = slope * simd.HalfAt(j.maskMem, int(row.maskOff+2*ic))
		} else {
			mv = slope * f32At(j.maskMem, row.maskOff+4*ic)
		}
		if math.IsInf(float64(mv), -1) {
			masked |= 1 << t
		}
		sc[t] = mv
	}
	return masked
}

// rescale takes a tile's logits sc (of maximum tmx, not -Inf) into row's
// running state: when tmx raises the maximum, the accumulator and the sum
// are rescaled once by exp(M_old - M_new); then sc becomes the keys'
// exp(logit - M), whose sum joins row.sum.
func (j *flashAttnJob) rescale(row *faRow, sc []float32, tmx float32) {
	vk := &j.ks.vec
	if tmx > row.maxS {
		ms := expf(row.maxS - tmx)
		row.maxS = tmx
		vk.mulTo(row.acc, row.acc, ms)
		row.sum *= ms
	}
	row.sum += float32(vk.expSum(sc, row.maxS))
}

// tileBlock takes the rows of an item through the nt keys from ic0 as
// tile takes each, with the same operations per element. The rows go in
// groups of three (the last row repeated to fill the last group, where
// two rows are left; one row left goes alone): the block kernels score a
// group of keys at a time (4 f16 or 2 q8_0 keys for three rows, 3 f16 or
// 4 q8_0 keys for one row), a run of such key groups per call, and add
// each run of keys that all rows of the group take with the accumulators
// in registers. vt holds the tile's q8_0 value rows widened (faTile*dv
// floats, q8_0 V only).
//
// A key masked for some rows of a group is scored for all three (its
// score is then dropped) but added to the accumulators only of the rows
// that take it, by axpyF16, so no row adds a key it does not take and
// the keys reach each accumulator in order. Key groups masked for every
// row are neither scored nor read, and a tile masked for every row of
// the item is skipped whole (causal prefill).
func (j *flashAttnJob) tileBlock(rows []faRow, ic0, nt, kBase, vBase int64, vt []float32) {
	dv := j.v.Ne[0]
	kNb1, vNb1 := j.k.Nb[1], j.v.Nb[1]
	scale, softcap := j.scale, j.softcap
	vk := &j.ks.vec
	full := uint64(1)<<nt - 1 // all ones for nt == 64
	// skip[g]: the keys row g does not take (masked, or the whole tile
	// when its logits are all -Inf).
	var skip [faBlockRows]uint64
	every := full
	for g := range rows {
		skip[g] = j.maskTile(&rows[g], ic0, nt)
		every &= skip[g]
	}
	if every == full {
		return
	}
	// Group g0/3 is rows g0, g0+1, g0+2, the last row repeated past the
	// end: a repeated row gets the same values twice over in the same
	// place (the kernels compute each row on its own). A last group of
	// one row takes the one-row kernels instead.
	group := func(g0 int) [3]int {
		n := len(rows) - 1
		return [3]int{g0, min(g0+1, n), min(g0+2, n)}
	}
	// Four rows (GQA decode) are scored together, two keys at a time,
	// rather than as three and one: each key row is read once.
	four := len(rows) == 4 && !j.kq8 && j.blk.scores4 != nil
	if four {
		live := full &^ (skip[0] & skip[1] & skip[2] & skip[3])
		q := [4][]float32{rows[0].qw, rows[1].qw, rows[2].qw, rows[3].qw}
		faScoreRuns(live, nt, 2, kNb1, func(t0, ks, nk int64) {
			out := [4][]float32{rows[0].dots[t0:], rows[1].dots[t0:], rows[2].dots[t0:], rows[3].dots[t0:]}
			j.blk.scores4(q, j.kMem[kBase+(ic0+t0)*kNb1:], int(ks), int(nk), out, true)
		})
	}
	for g0 := 0; g0 < len(rows) && !four; g0 += 3 {
		if g0 == len(rows)-1 {
			row := &rows[g0]
			if j.kq8 {
				faScoreRuns(full&^skip[g0], nt, 4, kNb1, func(t0, ks, nk int64) {
					j.blk.scores1Q8(row.qc, row.dq, j.kMem[kBase+(ic0+t0)*kNb1:], int(ks), int(nk), row.dots[t0:])
				})
				continue
			}
			faScoreRuns(full&^skip[g0], nt, 3, kNb1, func(t0, ks, nk int64) {
				j.blk.scores1(row.qw, j.kMem[kBase+(ic0+t0)*kNb1:], int(ks), int(nk), row.dots[t0:], g0 == 0)
			})
			continue
		}
		m := group(g0)
		live := full &^ (skip[m[0]] & skip[m[1]] & skip[m[2]])
		out := func(t0 int64) [3][]float32 {
			return [3][]float32{rows[m[0]].dots[t0:], rows[m[1]].dots[t0:], rows[m[2]].dots[t0:]}
		}
		if j.kq8 {
			q := [3][]byte{rows[m[0]].qc, rows[m[1]].qc, rows[m[2]].qc}
			dq := [3][]float32{rows[m[0]].dq, rows[m[1]].dq, rows[m[2]].dq}
			faScoreRuns(live, nt, 2, kNb1, func(t0, ks, nk int64) {
				j.blk.scoresQ8(q, dq, j.kMem[kBase+(ic0+t0)*kNb1:], int(ks), int(nk), out(t0))
			})
			continue
		}
		q := [3][]float32{rows[m[0]].qw, rows[m[1]].qw, rows[m[2]].qw}
		faScoreRuns(live, nt, 4, kNb1, func(t0, ks, nk int64) {
			j.blk.scores(q, j.kMem[kBase+(ic0+t0)*kNb1:], int(ks), int(nk), out(t0), g0 == 0)
		})
	}
	for g := range rows {
		row := &rows[g]
		if skip[g] == full {
			continue
		}
		sc, dots := row.sc[:nt], row.dots[:nt]
		tmx := float32(math.Inf(-1))
		if softcap == 0 {
			tmx = j.blk.logits(sc, dots, scale)
		} else {
			for t := range nt {
				if skip[g]&(1<<t) == 0 {
					sc[t] = flashattn.Logit(dots[t], scale, softcap, sc[t])
					tmx = max(tmx, sc[t])
				}
			}
		}
		if math.IsInf(float64(tmx), -1) {
			skip[g] = full
			continue
		}
		j.rescale(row, sc, tmx)
	}
	// q8_0 values: the rows of the keys some row takes, widened once into
	// vt (row t at vt[t*dv:]) for all groups.
	if j.vq8 {
		every = full
		for g := range rows {
			every &= skip[g]
		}
		for t := range nt {
			if every>>t&1 == 0 {
				vo := vBase + (ic0+t)*vNb1
				j.blk.dequantQ8(vt[t*dv:(t+1)*dv], j.vMem[vo:vo+j.vBytes])
			}
		}
	}
	// addRun adds the values of keys t..u-1 to the rows of a group (or to
	// one row, with the one-row kernels).
	addRun := func(acc, p [3][]float32, one bool, t, u int64) {
		switch {
		case j.vq8 && one:
			j.blk.values1F32(acc[0], p[0], vt[t*dv:], int(dv), int(u-t))
		case j.vq8:
			j.blk.valuesF32(acc, p, vt[t*dv:], int(dv), int(u-t))
		case one:
			j.blk.values1(acc[0], p[0], j.vMem[vBase+(ic0+t)*vNb1:], int(vNb1), int(u-t))
		default:
			j.blk.values(acc, p, j.vMem[vBase+(ic0+t)*vNb1:], int(vNb1), int(u-t))
		}
	}
	for g0 := 0; g0 < len(rows); g0 += 3 {
		if g0 == len(rows)-1 {
			row, s := &rows[g0], skip[g0]
			for t := int64(0); t < nt; {
				if s>>t&1 != 0 {
					t++
					continue
				}
				u := faRunEnd(s, t, nt)
				addRun([3][]float32{row.acc}, [3][]float32{row.sc[t:u]}, true, t, u)
				t = u
			}
			continue
		}
		m := group(g0)
		s0, s1, s2 := skip[m[0]], skip[m[1]], skip[m[2]]
		some, all := s0|s1|s2, s0&s1&s2
		acc := [3][]float32{rows[m[0]].acc, rows[m[1]].acc, rows[m[2]].acc}
		for t := int64(0); t < nt; {
			switch {
			case all>>t&1 != 0:
				t++
			case some>>t&1 != 0:
				for i, s := range [3]uint64{s0, s1, s2} {
					if s>>t&1 != 0 || g0+i >= len(rows) {
						continue
					}
					if j.vq8 {
						vk.axpy(acc[i], vt[t*dv:(t+1)*dv], rows[m[i]].sc[t])
					} else {
						vk.axpyF16(acc[i], u16s(j.vMem, vBase+(ic0+t)*vNb1, dv), rows[m[i]].sc[t])
					}
				}
				t++
			default:
				u := faRunEnd(some, t, nt)
				addRun(acc, [3][]float32{rows[m[0]].sc[t:u], rows[m[1]].sc[t:u], rows[m[2]].sc[t:u]}, false, t, u)
				t = u
			}
		}
	}
}

// faRunEnd returns the end of the run of keys from t (whose bit in s is
// clear) up to the next key with its bit set, or nt.
func faRunEnd(s uint64, t, nt int64) int64 {
	return min(nt, t+int64(bits.TrailingZeros64(s>>t)))
}

// faScoreRuns hands the keys of a tile of nt keys that live marks (bit t
// for key t) to score(t0, ks, nk) in groups of w keys: one call per run
// of groups with a live key (ks the key stride); a last group of fewer
// than w keys goes as the w keys ending the tile or, in a tile of under
// w keys, key by key, each w times over (ks 0). score may be handed keys
// that are not live; their scores are dropped.
func faScoreRuns(live uint64, nt, w, ks int64, score func(t0, ks, nk int64)) {
	if live == 0 {
		return
	}
	nw := nt - nt%w
	grp := uint64(1)<<w - 1
	for t0 := int64(0); t0 < nw; {
		if live>>t0&grp == 0 {
			t0 += w
			continue
		}
		u := t0 + w
		for u < nw && live>>u&grp != 0 {
			u += w
		}
		score(t0, ks, u-t0)
		t0 = u
	}
	switch {
	case nw == nt || live>>nw == 0:
	case nt >= w:
		score(nt-w, ks, w)
	default:
		for t := range nt {
			score(t, 0, w)
		}
	}
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
