package cpu

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
)

// MUL_MAT_ID uses MUL_MAT's dot kernels and activation conversion. The
// (slot, token) pairs are grouped by the expert they select, so that each
// expert's weights are read together for all the tokens routed to it:
// work items are tiles of one expert's rows by a run of its pairs, ordered
// expert by expert and row tile by row tile, so a thread's share of the
// items walks each weight tile once and reuses it from cache across the
// pairs. Experts nobody selects are never read.

func init() {
	register(ops.OpMulMatID, supportsMulMatID, computeMulMatID)
}

func supportsMulMatID(t *ops.Tensor) error {
	if len(t.Src) != 3 {
		return fmt.Errorf("want 3 sources, got %d", len(t.Src))
	}
	want, err := ops.MulMatID(t.Src[ops.MMIDExperts], t.Src[ops.MMIDInput], t.Src[ops.MMIDIDs])
	if err != nil {
		return err
	}
	if err := sameNode(t, want); err != nil {
		return err
	}
	if _, err := dotKernelFor(t.Src[ops.MMIDExperts].Type); err != nil {
		return err
	}
	return nil
}

// expertPair is one output row of MUL_MAT_ID: slot e of token t.
type expertPair struct{ slot, token int64 }

// expertTile is one work item: rows [i0, i1) of an expert's weights by
// pairs [p0, p1) of the grouped pair list.
type expertTile struct {
	expert, i0, i1, p0, p1 int64
}

// groupByExpert reads ids ([n_used, n_tokens], any strides), checks every
// id is in [0, nExpert) and returns the pairs sorted by expert (stable,
// so tokens keep their order) with start[e] the first pair of expert e.
func groupByExpert(ids *ops.Tensor, nExpert int64) (pairs []expertPair, start []int64, err error) {
	nUsed, nTok := ids.Ne[0], ids.Ne[1]
	raw := mem(ids)
	chosen := make([]int64, nUsed*nTok)
	count := make([]int64, nExpert+1)
	for tok := range nTok {
		for e := range nUsed {
			id := int64(i32s(raw, e*ids.Nb[0]+tok*ids.Nb[1], 1)[0])
			if id < 0 || id >= nExpert {
				return nil, nil, fmt.Errorf("ids[%d, %d] = %d is outside [0, %d)", e, tok, id, nExpert)
			}
			chosen[e+nUsed*tok] = id
			count[id+1]++
		}
	}
	start = count
	for i := int64(1); i <= nExpert; i++ {
		start[i] += start[i-1]
	}
	pairs = make([]expertPair, nUsed*nTok)
	next := append([]int64(nil), start[:nExpert]...)
	for tok := range nTok {
		for e := range nUsed {
			id := chosen[e+nUsed*tok]
			pairs[next[id]] = expertPair{slot: e, token: tok}
			next[id]++
		}
	}
	return pairs, start, nil
}

// expertTiles cuts each expert's rows and pairs into tiles, shrinking the
// row tiles until there are four items per thread where possible.
func expertTiles(m int64, start []int64, threads int) []expertTile {
	nExpert := int64(len(start) - 1)
	var maxPairs int64
	for e := range nExpert {
		maxPairs = max(maxPairs, start[e+1]-start[e])
	}
	tm, tn := min(tileRows, max(m, 1)), min(tileCols, max(maxPairs, 1))
	count := func(tm int64) int64 {
		var c int64
		for e := range nExpert {
			c += ceilDiv(m, tm) * ceilDiv(start[e+1]-start[e], tn)
		}
		return c
	}
	for tm > 1 && count(tm) < 4*int64(threads) {
		tm = (tm + 1) / 2
	}
	tiles := make([]expertTile, 0, count(tm))
	for e := range nExpert {
		for i0 := int64(0); i0 < m; i0 += tm {
			for p0 := start[e]; p0 < start[e+1]; p0 += tn {
				tiles = append(tiles, expertTile{expert: e, i0: i0, i1: min(i0+tm, m), p0: p0, p1: min(p0+tn, start[e+1])})
			}
		}
	}
	return tiles
}

// computeMulMatID computes dst[:, e, t] = experts[:, :, ids[e, t]] ·
// b[:, e % b1, t].
func computeMulMatID(b *Backend, t *ops.Tensor) error {
	w, x, ids := t.Src[ops.MMIDExperts], t.Src[ops.MMIDInput], t.Src[ops.MMIDIDs]
	k, m, nExpert := w.Ne[0], w.Ne[1], w.Ne[2]
	nUsed, b1 := ids.Ne[0], x.Ne[1]
	// Check every id before computing anything.
	pairs, start, err := groupByExpert(ids, nExpert)
	if err != nil {
		return err
	}
	if t.NumElements() == 0 {
		return nil
	}
	kern, err := b.kern.dot(w.Type)
	if err != nil {
		return err
	}
	acts, err := b.prepareActivations(x, kern.actType)
	if err != nil {
		return err
	}
	wRow, err := w.Type.RowSize(k)
	if err != nil {
		return err
	}
	wMem := mem(w)
	out := f32s(mem(t), 0, t.NumElements())
	tiles := expertTiles(m, start, b.pool.threads)
	b.pool.parallelFor(len(tiles), 1, func(_, lo, hi int) {
		for _, tile := range tiles[lo:hi] {
			for i := tile.i0; i < tile.i1; i++ {
				off := at(w, 0, i, tile.expert, 0)
				wr := wMem[off : off+wRow]
				for _, p := range pairs[tile.p0:tile.p1] {
					y := acts.row(p.slot%b1, p.token, 0)
					out[i+m*(p.slot+nUsed*p.token)] = kern.dot(int(k), wr, y)
				}
			}
		}
	})
	return nil
}
