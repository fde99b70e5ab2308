package cuda

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
)

// MUL_MAT_ID: kernels/mul_mat_id.cu groups the (slot, token) pairs by
// expert; the products are mul_mat.cu's, mul_mat_q.cu's and mul_mat_f.cu's
// kernels (see op_mul_mat.go).

func init() {
	kernelsByOp.Add(ops.OpMulMatID, supportsMulMatID, launchMulMatID)
}

func supportsMulMatID(t *ops.Tensor) error {
	if len(t.Src) != 3 {
		return fmt.Errorf("want 3 sources, got %d", len(t.Src))
	}
	w, x, ids := t.Src[ops.MMIDExperts], t.Src[ops.MMIDInput], t.Src[ops.MMIDIDs]
	want, err := ops.MulMatID(w, x, ids)
	if err != nil {
		return err
	}
	if err := supportsMatmulTypes(t, want, w.Type, x.Type); err != nil {
		return err
	}
	pairs := ids.Ne[0] * ids.Ne[1]
	if pairs > 1<<31-1 || maxTiles(pairs, w.Ne[2], tileN) > 65535 {
		return fmt.Errorf("%d (slot, token) pairs, more than a grid takes", pairs)
	}
	return nil
}

// maxTiles bounds the column tiles of cols columns of pairs grouped by
// nExpert experts: each expert's pairs fill whole tiles but the last, and
// no tile is empty.
func maxTiles(pairs, nExpert, cols int64) int64 {
	return min(pairs, pairs/cols+min(nExpert, pairs))
}

// mmidHalfTile is MUL_MAT_ID's f16/bf16 tile for pairs (slot, token)
// pairs over nExp experts of m rows: the backend's forced one, else
// MUL_MAT's for an m x pairs product, but 128x64 for 128x128 where the
// pairs of an expert (on average over the experts the pairs can reach)
// are fewer than 128, as each expert's last tile is partly empty.
func (b *Backend) mmidHalfTile(m, pairs, nExp int64, aligned bool) hTile {
	h := b.halfTile(m, pairs, 1, aligned)
	if b.tiles.half.Name == "" && h.N > hTile128x64.N && pairs < h.N*min(nExp, pairs) {
		return hTile128x64
	}
	return h
}

func launchMulMatID(b *Backend, t *ops.Tensor) error {
	src, dst, err := b.pointers(t)
	if err != nil {
		return err
	}
	w, x, ids := t.Src[ops.MMIDExperts], t.Src[ops.MMIDInput], t.Src[ops.MMIDIDs]
	if err := checkAligned(w, src[0]); err != nil {
		return err
	}
	m, nExp := w.Ne[1], w.Ne[2]
	pairs := ids.Ne[0] * ids.Ne[1]
	tiled := pairs > mmvMaxCols
	file, name, half := b.kernelFor(w.Type, tiled, 1) // the mat-vec kernels take a pair per grid row
	act, err := b.prepare(x, src[1], w.Type, half)
	if err != nil {
		return err
	}
	status, err := b.statusFor(t, func(code, v int32) error {
		return fmt.Errorf("MUL_MAT_ID: expert id %d outside [0, %d)", v, nExp)
	})
	if err != nil {
		return err
	}
	args := mmArgs{
		w: src[0], wNb1: w.Nb[1], wNb2: w.Nb[2], wNb3: w.Nb[3],
		x: act.x, xNb1: act.nb1, xNb2: act.nb2, xNb3: act.nb3,
		d: dst, dNb1: t.Nb[1], dNb2: t.Nb[2], dNb3: t.Nb[3],
		m: m, n: pairs, k: w.Ne[0], b2: 1, r2: 1, r3: 1,
		ids: src[2], idsNb0: ids.Nb[0], idsNb1: ids.Nb[1], used: ids.Ne[0], b1: x.Ne[1], nExpert: nExp,
		status: status,
	}
	if tiled {
		var h hTile
		if half {
			h = b.mmidHalfTile(m, pairs, nExp, rows16(w, src[0], act))
		}
		tl := b.tileFor(w.Type, name, half, h, m, maxTiles(pairs, nExp, tileN), w.Ne[0]/32, false)
		// The grouping: pairs, then 3 ints per tile, then the count.
		nt := maxTiles(pairs, nExp, tl.cols)
		var buf uint64
		if buf, err = b.scratchBuffer(scratchGroups, 4*(pairs+3*nt+1)); err != nil {
			return err
		}
		args.pairs, args.tiles, args.ntile = buf, buf+uint64(4*pairs), buf+uint64(4*(pairs+3*nt))
		if err := b.launch("mul_mat_id.cu", "kb_mmid_group", dim3{1, 1, 1}, dim3{256, 1, 1}, int(8*nExp),
			args.bytes(), u64(args.pairs), u64(args.tiles), u64(args.ntile), i32(int32(tl.cols))); err != nil {
			return err
		}
		return b.launchTiled(file, tl, m, nt, 1, args)
	}
	gx, block, shared := mmvGeometry(w.Type, m, 1) // a pair per grid row
	return b.launch(file, name, dim3{gx, uint32(pairs), 1}, block, shared, args.bytes())
}
