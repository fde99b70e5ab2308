package cpu

import (
	"math"
	"math/bits"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// FLASH_ATTN_EXT for small heads (head and value sizes 8 or 16) with f16
// K and V, an f16 mask or none, and no softcap, where the tier has the
// small-head kernels (faSmallKernels; the AVX2 tier): the block kernels'
// dot products of 3 rows x 4 keys are one FMA and a horizontal sum each
// at head size 8, and their per-tile work (mask, logits, maximum,
// rescale, exponentials) is paid per few FLOPs. Here the keys go in
// lanes instead. A work item is up to faSmallRows query rows sharing a
// K/V head; for each tile of faSmallTile keys the item widens and
// transposes the keys and the values once (element e of key t at
// e*faSmallTile+t), and then each row in turn
//
//   - scores the tile, 32 keys per step, each element of the row
//     broadcast and FMAed into four 8-key accumulators (one FMA chain
//     per key over the elements in order, from zero), the slope-scaled
//     mask added and the maximum taken in the same pass; a masked key's
//     logit is -Inf (its K row read with the rest but its score dropped),
//     and a run of 32 masked keys is not scored;
//   - rescales its accumulator and sum when the tile raises its maximum,
//     and forms the exponentials and their sum (the tier's expSum, as
//     the other paths do) up to its last key not masked;
//   - adds the values weighted by the probabilities, eight keys per FMA
//     (for each value element, eight lane sums, key t in lane t%8, added
//     to the accumulator at the end of the tile). A masked key's
//     probability and values are taken as zeros (whatever its V row
//     holds), and a run of eight masked keys is skipped.
//
// A row's operations do not depend on the other rows of its item, the
// item or the thread, nor on the number of query rows: prefill and decode
// take the same sums. They differ from the block kernels' in the order
// of the dot products and of the value sums (within rounding).
type faSmallKernels struct {
	// kt sets dst[e*ts+t] to element e of the f16 key (or value) row at
	// k[t*ks:] widened, for t < nk, e < d (flashattn.KTTwin).
	kt func(dst []float32, ts int, k []byte, ks, nk, d int)
	// scores sets sc[t] to the logit of key t of the transposed tile kt
	// (row stride ts) against the query row q, with slope times the f16
	// mask value m[t] added, -Inf (bit t of bits set) where that is -Inf,
	// and returns the largest logit (flashattn.ScoresSmallTwin).
	scores func(q, kt []float32, ts int, m []uint16, slope, scale float32, sc []float32, bits []uint64) float32
	// values adds to acc the transposed values vt (row stride ts) of the
	// keys t < nk whose bit is clear, weighted by p[t], in eight lane
	// sums per element (flashattn.ValuesSmallTTwin); len(acc) is a
	// multiple of 8, and p and vt's rows hold nk rounded up to 8.
	values func(acc, p, vt []float32, ts, nk int, bits []uint64)
}

// faSmallTile is the number of keys of a small-head tile: per row, one
// call of each kernel per 256 keys.
const faSmallTile = 256

// faSmallRows is the most query rows of a small-head work item: the
// tile's transposed keys and values (32 KiB at head size 16) serve them
// all from L1 and L2.
const faSmallRows = 64

// faNoSmall turns the small-head kernels off (tests and benchmarks
// compare with the block kernels).
var faNoSmall bool

// faSmallNoMask is the mask values of a tile without a mask (zeros).
var faSmallNoMask [faSmallTile]uint16

// faSmallFits reports whether FLASH_ATTN_EXT on these operands takes the
// small-head kernels sk, given that it takes the f16 block kernels.
func faSmallFits(sk *faSmallKernels, q, k, v, mask *ops.Tensor, p ops.FlashAttnParams) bool {
	small := func(n int64) bool { return n == 8 || n == 16 }
	return sk != nil && !faNoSmall && small(q.Ne[0]) && small(v.Ne[0]) &&
		k.Type == quant.F16 && v.Type == quant.F16 && p.Softcap == 0 &&
		(mask == nil || mask.Type == quant.F16)
}

// faSmallJob runs a flashAttnJob with the small-head kernels.
type faSmallJob struct{ j *flashAttnJob }

func (s faSmallJob) do(w, lo, hi int) {
	j := s.j
	q, k, v, mask := j.q, j.k, j.v, j.mask
	d, nQ, nHead := q.Ne[0], q.Ne[1], q.Ne[2]
	dv, nKV := v.Ne[0], k.Ne[1]
	nHeadKV := k.Ne[2]
	rk2, rk3 := nHead/nHeadKV, q.Ne[3]/k.Ne[3]
	nRows := rk2 * nQ
	rowsPer := j.rowsPer
	nBlk := (nRows + rowsPer - 1) / rowsPer
	kNb1, vNb1 := k.Nb[1], v.Nb[1]
	vk, sk := &j.ks.vec, j.small
	// Per worker: the f32 query row, a row's logits, and per row of an
	// item its f16-rounded query row and its accumulator; the tile's
	// transposed keys and values.
	kts, vts := d*faSmallTile, dv*faSmallTile
	wb := j.sc.worker(w, d+faSmallTile+rowsPer*(d+dv), kts+vts, 0)
	qf, sc, per := wb.f32[:d], wb.f32[d:d+faSmallTile], wb.f32[d+faSmallTile:]
	kt, vt := wb.f32b[:kts], wb.f32b[kts:kts+vts]
	var (
		iqs, hs, maskOffs [faSmallRows]int64
		slopes, sums, mxs [faSmallRows]float32
	)
	mb := j.smallBits[w*faSmallTile/64 : (w+1)*faSmallTile/64]
	qw := func(g int64) []float32 { return per[g*(d+dv) : g*(d+dv)+d] }
	acc := func(g int64) []float32 { return per[g*(d+dv)+d : (g+1)*(d+dv)] }
	for u := int64(lo); u < int64(hi) && !j.errs.failed(w); u++ {
		blk, ik2, i3 := u%nBlk, u/nBlk%nHeadKV, u/(nBlk*nHeadKV)
		ik3 := i3 / rk3
		r0 := blk * rowsPer
		nr := min(rowsPer, nRows-r0)
		for g := range nr {
			r := r0 + g
			iq, h := r%nQ, ik2*rk2+r/nQ
			iqs[g], hs[g] = iq, h
			qOff := at(q, 0, iq, h, i3)
			if q.Nb[0] == 4 {
				j.blk.roundF16(qw(g), f32s(j.qMem, qOff, d))
			} else {
				if err := loadFloatRow(quant.F32, j.qMem, qOff, q.Nb[0], qf); err != nil {
					j.errs.set(w, err)
					return
				}
				j.blk.roundF16(qw(g), qf)
			}
			clear(acc(g))
			if mask != nil {
				maskOffs[g] = at(mask, 0, iq, h%mask.Ne[2], i3%mask.Ne[3])
			}
			slopes[g] = j.slopes[h]
			sums[g], mxs[g] = 0, float32(math.Inf(-1))
		}
		kBase, vBase := at(k, 0, 0, ik2, ik3), at(v, 0, 0, ik2, ik3)
		for ic0 := int64(0); ic0 < nKV; ic0 += faSmallTile {
			nt := min(faSmallTile, nKV-ic0)
			sk.kt(kt, faSmallTile, j.kMem[kBase+ic0*kNb1:], int(kNb1), int(nt), int(d))
			sk.kt(vt, faSmallTile, j.vMem[vBase+ic0*vNb1:], int(vNb1), int(nt), int(dv))
			for g := range nr {
				m := faSmallNoMask[:nt]
				if mask != nil {
					m = u16s(j.maskMem, maskOffs[g]+2*ic0, nt)
				}
				p := sc[:nt]
				tmx := sk.scores(qw(g), kt, faSmallTile, m, slopes[g], j.scale, p, mb)
				if math.IsInf(float64(tmx), -1) {
					continue // every key of the tile is masked for this row
				}
				a := acc(g)
				if tmx > mxs[g] {
					ms := expf(mxs[g] - tmx)
					mxs[g] = tmx
					vk.mulTo(a, a, ms)
					sums[g] *= ms
				}
				// Up to the last live key, rounded up to whole vectors (the
				// masked keys add exp(-Inf) = 0).
				n := faLiveEnd(mb, nt)
				sums[g] += float32(vk.expSum(p[:min((n+7)&^7, nt)], mxs[g]))
				sk.values(a, sc, vt, faSmallTile, int(n), mb)
			}
		}
		for g := range nr {
			j.finish(acc(g), sums[g], mxs[g], iqs[g], hs[g], i3)
		}
	}
}

// faLiveEnd returns one past the last key of a tile of nt keys whose bit
// in mb is clear (0 when every key is masked).
func faLiveEnd(mb []uint64, nt int64) int64 {
	for w := (nt+63)/64 - 1; w >= 0; w-- {
		live := ^mb[w]
		if r := nt - 64*w; r < 64 {
			live &= 1<<r - 1
		}
		if live != 0 {
			return 64*w + 64 - int64(bits.LeadingZeros64(live))
		}
	}
	return 0
}
