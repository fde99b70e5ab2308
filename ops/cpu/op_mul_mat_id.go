package cpu

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/quant"
)

// MUL_MAT_ID uses MUL_MAT's dot kernels and activation conversion. The
// (slot, token) pairs are grouped by the expert they select, so that each
// expert's weights are read together for all the tokens routed to it:
// work items are tiles of one expert's rows by a run of its pairs, ordered
// expert by expert and row tile by row tile, so a thread's share of the
// items walks each weight tile once and reuses it from cache across the
// pairs. Experts nobody selects are never read. Within a tile, four pairs
// at a time meet each weight row through the tier's tiled kernel
// (mul_mat_gemm.go: their activation rows gathered or packed into a worker's
// buffer) where it has one; the pairs left, one at a time, meet groups of
// four weight rows through the four-row kernel (gemvSide, with its data
// prepared once per call, or gemv) where it has one, or groups of eight
// through the x8 kernel from the experts' x8 copy (mul_mat_x8.go) where
// no expert has four pairs, and the dot product otherwise. Row tiles
// keep whole groups of four or eight rows, and a worker's run of
// consecutive tiles of one expert and pairs is computed as one (joins),
// so a run of tiles costs one kernel call per pair; the threads take
// runs that shrink as the tiles run out (guidedRuns), so they finish
// together.
// The grouping, the tiles and the job live
// in the backend and are reused, so a call allocates nothing once its
// shapes have been seen.

func init() {
	addKernel(ops.OpMulMatID, supportsMulMatID, computeMulMatID)
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

// mulMatIDJob is one MUL_MAT_ID's work, kept in the backend with its
// buffers (grown, never shrunk) so that a call allocates nothing.
type mulMatIDJob struct {
	kern            dotKernel
	w               *ops.Tensor
	wMem            []byte
	wRow            int64
	acts            actRows
	out             []float32
	k, m, nUsed, b1 int64
	// The grouping: pairs sorted by expert, start[e] the first pair of
	// expert e (nExpert+1 entries), and the tiles.
	pairs  []expertPair
	start  []int64
	next   []int64
	chosen []int64
	tiles  []expertTile
	// The four-row kernel, when the tier has one for the weight type:
	// blocks per row and the activation rows' widened q8_0 scales or a
	// side kernel's data, per slots per block (row (c, token) at
	// dy[(c + b1*token)*nb*per:]).
	gemv    gemvFunc
	nb, per int64
	dy      []float32
	wout    []quadOut
	// x8 is the x8 kernel, when the experts have an x8 copy x8mem
	// (mul_mat_x8.go), in place of gemv: whole groups of eight rows
	// of a tile per call and pair, dy then its side data; pfd is its
	// prefetch distance (X8Prefetch).
	x8    *x8Kernel
	x8mem []byte
	pfd   int
	// The tier's tiled kernel (a quantized one), when it has one: four
	// of a tile's pairs at a time, their activation rows gathered into a
	// worker's buffer (groupBytes: four q8_K rows, or a packed q8 group),
	// meet each weight row of the tile in one call.
	g          *gemmKernel
	sc         *scratch
	nbq        int64 // blocks per row for g
	groupBytes int64
	// homeOn: the tiles go out in home parts (home); otherwise in
	// the pool's guided runs (runGuided).
	homeOn bool
	home   homeParts
}

// growI64 returns b with length n, reallocated when its capacity is
// short. The contents are not kept.
func growI64(b []int64, n int64) []int64 {
	if int64(cap(b)) < n {
		return make([]int64, n)
	}
	return b[:n]
}

// groupByExpert reads ids ([n_used, n_tokens], any strides), checks every
// id is in [0, nExpert) and sets j.pairs to the pairs sorted by expert
// (stable, so tokens keep their order) with j.start[e] the first pair of
// expert e.
func (j *mulMatIDJob) groupByExpert(ids *ops.Tensor, nExpert int64) error {
	nUsed, nTok := ids.Ne[0], ids.Ne[1]
	raw := mem(ids)
	j.chosen = growI64(j.chosen, nUsed*nTok)
	j.start = growI64(j.start, nExpert+1)
	count := j.start
	clear(count)
	for tok := range nTok {
		for e := range nUsed {
			id := int64(i32s(raw, e*ids.Nb[0]+tok*ids.Nb[1], 1)[0])
			if id < 0 || id >= nExpert {
				return fmt.Errorf("ids[%d, %d] = %d is outside [0, %d)", e, tok, id, nExpert)
			}
			j.chosen[e+nUsed*tok] = id
			count[id+1]++
		}
	}
	for i := int64(1); i <= nExpert; i++ {
		count[i] += count[i-1]
	}
	if int64(cap(j.pairs)) < nUsed*nTok {
		j.pairs = make([]expertPair, nUsed*nTok)
	}
	j.pairs = j.pairs[:nUsed*nTok]
	j.next = growI64(j.next, nExpert)
	copy(j.next, j.start[:nExpert])
	for tok := range nTok {
		for e := range nUsed {
			id := j.chosen[e+nUsed*tok]
			j.pairs[j.next[id]] = expertPair{slot: e, token: tok}
			j.next[id]++
		}
	}
	return nil
}

// idTileRowsQuad is the row tile of MUL_MAT_ID's tiled-kernel path.
const idTileRowsQuad = 64

// maxPairs returns the most pairs one expert has.
func (j *mulMatIDJob) maxPairs() int64 {
	var n int64
	for e := range len(j.start) - 1 {
		n = max(n, j.start[e+1]-j.start[e])
	}
	return n
}

// expertTiles sets j.tiles to each expert's rows and pairs cut into
// tiles, shrinking the row tiles until there are four items per thread
// where possible.
func (j *mulMatIDJob) expertTiles(threads int) {
	m, start := j.m, j.start
	nExpert := int64(len(start) - 1)
	var maxPairs int64
	for e := range nExpert {
		maxPairs = max(maxPairs, start[e+1]-start[e])
	}
	tm, tn := min(tileRows, max(m, 1)), min(tileCols, max(maxPairs, 1))
	if j.g != nil && maxPairs >= 4 {
		// Taller tiles spread the gathering of each four pairs' rows
		// over more weight rows.
		tm = min(idTileRowsQuad, max(m, 1))
	}
	count := func(tm int64) int64 {
		var c int64
		for e := range nExpert {
			if np := start[e+1] - start[e]; np > 0 {
				c += ceilDiv(np, tn)
			}
		}
		return ceilDiv(m, tm) * c
	}
	// With the four-row kernel tiles keep whole groups of four rows,
	// with the x8 kernel whole groups of eight (tm a multiple of 4 or 8,
	// so every tile starts a group and only an expert's last tile has
	// rows past its last group: which kernel computes a row does not
	// depend on the thread count).
	group := int64(1)
	if j.gemv != nil {
		group = 4
	}
	if j.x8 != nil {
		// Decoding: each tile's rows in one x8 kernel call of up to
		// x8MaxGroups groups, as the dense path's items.
		group, tm = 8, min(8*x8MaxGroups, max(m, 1))
	}
	tm = (tm + group - 1) / group * group
	for tm > group && count(tm) < 4*int64(threads) {
		tm = ((tm+1)/2 + group - 1) / group * group
	}
	j.tiles = j.tiles[:0]
	for e := range nExpert {
		if start[e] == start[e+1] {
			continue // never read
		}
		for i0 := int64(0); i0 < m; i0 += tm {
			for p0 := start[e]; p0 < start[e+1]; p0 += tn {
				j.tiles = append(j.tiles, expertTile{expert: e, i0: i0, i1: min(i0+tm, m), p0: p0, p1: min(p0+tn, start[e+1])})
			}
		}
	}
}

// computeMulMatID computes dst[:, e, t] = experts[:, :, ids[e, t]] ·
// b[:, e % b1, t].
func computeMulMatID(b *Backend, t *ops.Tensor) error {
	w, x, ids := t.Src[ops.MMIDExperts], t.Src[ops.MMIDInput], t.Src[ops.MMIDIDs]
	k, m, nExpert := w.Ne[0], w.Ne[1], w.Ne[2]
	j := &b.mmid
	// Check every id before computing anything.
	if err := j.groupByExpert(ids, nExpert); err != nil {
		return err
	}
	if t.NumElements() == 0 {
		return nil
	}
	if done, err := b.mulMatIDByExpert(t, j); done || err != nil {
		return err
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
	j.kern, j.w, j.wMem, j.wRow, j.acts = kern, w, mem(w), wRow, acts
	j.out = f32s(mem(t), 0, t.NumElements())
	j.k, j.m, j.nUsed, j.b1 = k, m, ids.Ne[0], x.Ne[1]
	j.gemv, j.nb, j.per, j.dy, j.wout = nil, 0, 1, nil, nil
	j.x8, j.x8mem = nil, nil
	var x8 []byte
	xk := b.kern.x8[w.Type]
	if xk != nil && b.repack && (b.kern.gemm[w.Type] == nil || j.maxPairs() < 4) {
		// Only where the tiled kernel, which reads the original
		// experts, has no four pairs of an expert to take (decoding):
		// otherwise it would fault the released original back in.
		x8 = b.x8Weights(w, xk)
	}
	if x8 != nil {
		// The four-row kernel takes the tail rows, with the same side
		// data (prepared once: the side kernel's below is not needed).
		j.gemv, j.x8, j.x8mem, j.wout = xk.tail, xk, x8, b.scratch.quad
		j.pfd = int(b.tuned.x8Prefetch)
		j.nb, j.per = k/xk.qk, xk.per
		j.dy = prepareSide(&b.scratch.dy, xk.prep, xk.per, acts, j.b1, x.Ne[2], 1, j.nb)
	} else if sk := b.kern.gemvSide[w.Type]; sk != nil && m >= 4 && k%quant.QK == 0 {
		j.gemv, j.nb, j.per, j.wout = sk.f, k/quant.QK, int64(sk.per), b.scratch.quad
		j.dy = sk.prepare(&b.scratch.dy, acts, j.b1, x.Ne[2], 1, j.nb)
	} else if gv := b.kern.gemv[w.Type]; gv != nil && m >= 4 {
		if run := gemvRun(w.Type); run > 0 && k%run == 0 {
			j.gemv, j.nb, j.wout = gv, k/run, b.scratch.quad
			if w.Type.VecDotType() == quant.Q8_0 {
				j.dy = widenQ8Scales(&b.scratch.dy, acts, j.b1, x.Ne[2], 1, j.nb)
			}
		}
	}
	j.g, j.sc = nil, &b.scratch
	if g := b.kern.gemm[w.Type]; g != nil {
		switch g.kind {
		case gemmKQuad:
			j.g, j.nbq, j.groupBytes = g, k/quant.QKK, 4*acts.rowBytes
		case gemmQ8Quad:
			j.g, j.nbq, j.groupBytes = g, k/quant.QK, k/quant.QK*dot.PackQ8Block
		case gemmQ81Quad:
			j.g, j.nbq, j.groupBytes = g, k/quant.QK, k/quant.QK*dot.PackQ81Block
		}
	}
	j.expertTiles(b.pool.threads)
	nt := b.pool.threads
	j.homeOn = gemvHomeRows && nt > 1 && ids.Ne[1] == 1
	if j.homeOn {
		// One token (decoding): home parts (see homeParts), so that a
		// thread keeps the same experts' rows from call to call.
		j.home.reset(nt, int64(len(j.tiles)))
		b.pool.run(nt, 1, j)
	} else {
		b.pool.runGuided(len(j.tiles), j)
	}
	if j.x8 == nil {
		// The tiled kernel or the plain rows read the original experts.
		b.x8Rerelease(w)
	}
	return nil
}

// do computes, in home parts, worker wk's share of the tiles, or else
// the run of tiles [lo, hi) the pool handed out.
func (j *mulMatIDJob) do(wk, lo, hi int) {
	if j.homeOn {
		k := 0
		for t := j.home.take(wk, &k); t >= 0; t = j.home.take(wk, &k) {
			j.doTile(wk, j.tiles[t])
		}
		return
	}
	// Consecutive tiles of one expert and pairs join (joins).
	for t := lo; t < hi; {
		tile := j.tiles[t]
		for t++; t < hi && j.joins(tile, j.tiles[t]); t++ {
			tile.i1 = j.tiles[t].i1
		}
		j.doTile(wk, tile)
	}
}

// joins reports whether tile u continues tile t (the same expert and
// pairs, the next rows), so that one doTile computes both, as one run of
// rows per kernel call: a chunk of the pool's items then costs one call
// per pair, not one per tile. Every row's output is computed as in its
// own tile: the x8 groups, the tiled kernel and the dot product take
// rows one at a time or in groups of eight that tiles (a multiple of
// eight rows with the x8 kernel) never split, and with the four-row
// kernel t ends a whole number of groups of four after its start, so
// u's groups of four are the same.
func (j *mulMatIDJob) joins(t, u expertTile) bool {
	return u.expert == t.expert && u.p0 == t.p0 && u.p1 == t.p1 && u.i0 == t.i1 &&
		(j.gemv == nil || j.x8 != nil || (t.i1-t.i0)%4 == 0)
}

// doTile computes one tile on worker wk.
func (j *mulMatIDJob) doTile(wk int, tile expertTile) {
	ldx := j.w.Nb[1]
	if j.g != nil {
		tile.p0 = j.quadPairs(wk, tile)
	}
	i := tile.i0
	wMem := j.wMem
	if j.x8 != nil {
		i = j.x8Tile(tile)
		wMem = j.x8mem // the rows left are its plain tail rows
	}
	if j.gemv != nil {
		out := &j.wout[wk].v
		i0 := i
		base := at(j.w, 0, i0, tile.expert, 0) // at divides: once per tile
		for ; i+4 <= tile.i1; i += 4 {
			off := base + (i-i0)*ldx
			rows := wMem[off : off+3*ldx+j.wRow]
			for _, p := range j.pairs[tile.p0:tile.p1] {
				c := p.slot % j.b1
				var dy []float32
				if j.dy != nil {
					dy = j.dy[(c+j.b1*p.token)*j.nb*j.per:][:j.nb*j.per]
				}
				j.gemv(int(j.nb), rows, int(ldx), j.acts.row(c, p.token, 0), dy, out)
				o := j.m * (p.slot + j.nUsed*p.token)
				copy(j.out[o+i:o+i+4], out[:])
			}
		}
	}
	for ; i < tile.i1; i++ {
		off := at(j.w, 0, i, tile.expert, 0)
		wr := wMem[off : off+j.wRow]
		for _, p := range j.pairs[tile.p0:tile.p1] {
			y := j.acts.row(p.slot%j.b1, p.token, 0)
			j.out[i+j.m*(p.slot+j.nUsed*p.token)] = j.kern.dot(int(j.k), wr, y)
		}
	}
}

// x8Tile computes the tile's whole groups of eight rows (tile.i0 starts
// one) for its pairs from p0 with the x8 kernel, one call per pair, and
// returns the first row it left: the tail rows past the last group.
func (j *mulMatIDJob) x8Tile(tile expertTile) int64 {
	g0, g1 := tile.i0/8, min(tile.i1, j.m/8*8)/8
	if g1 <= g0 {
		return tile.i0
	}
	base := at(j.w, 0, 8*g0, tile.expert, 0)
	x := j.x8mem[base : base+(g1-g0)*8*j.wRow]
	per := j.nb * j.per
	for _, p := range j.pairs[tile.p0:tile.p1] {
		c := p.slot % j.b1
		col := c + j.b1*p.token
		o := j.m*(p.slot+j.nUsed*p.token) + 8*g0
		j.x8.f(int(j.nb), int(g1-g0), x, j.acts.row(c, p.token, 0), j.dy[col*per:][:per], j.out[o:o+8*(g1-g0)], j.pfd)
	}
	return 8 * g1
}

// quadPairs computes the tile's pairs four at a time with the tiled
// kernel and returns the first pair it left (fewer than four remain).
func (j *mulMatIDJob) quadPairs(wk int, tile expertTile) int64 {
	p0 := tile.p0
	if tile.p1-p0 < 4 {
		return p0
	}
	wb := j.sc.worker(wk, 4, 0, j.groupBytes)
	out, grp := (*[4]float32)(wb.f32[:4]), wb.bytes
	ldy := j.acts.rowBytes
	for ; p0+4 <= tile.p1; p0 += 4 {
		ps := j.pairs[p0 : p0+4]
		var rows [4][]byte
		for c, p := range ps {
			rows[c] = j.acts.row(p.slot%j.b1, p.token, 0)
		}
		if j.g.kind == gemmKQuad {
			for c := range rows {
				copy(grp[int64(c)*ldy:], rows[c])
			}
		} else {
			packGroup(j.g.kind, &rows, j.nbq, grp)
		}
		for i := tile.i0; i < tile.i1; i++ {
			off := at(j.w, 0, i, tile.expert, 0)
			j.g.quad(int(j.nbq), j.wMem[off:off+j.wRow], grp, int(ldy), out)
			for c, p := range ps {
				j.out[i+j.m*(p.slot+j.nUsed*p.token)] = out[c]
			}
		}
	}
	return p0
}
