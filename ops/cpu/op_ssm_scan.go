package cpu

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/ssm"
	"github.com/kernbench/kernbench/quant"
)

// The state-space ops of Mamba: SSM_CONV (causal depthwise convolution) and
// SSM_SCAN (selective scan, Mamba-1 and Mamba-2 forms). Both compute in
// float32 like ggml's CPU kernels; every operand may have any strides.
//
// SSM_SCAN's work is tiled so that the per-element work dominates: a
// worker takes a block of heads of one sequence and walks the tokens in
// tiles, first taking ssm.Softplus of the tile's dt for all its heads in one
// vector call (dt is contiguous across heads). Mamba-1 (one channel per
// head, A per state, d_state 16) then updates the whole block of heads
// for a token in one kernel call, exp(dt·A) computed in the kernel, the
// block's states (4 KiB) staying in L1. Mamba-2 (scalar A per head, many
// rows of d_state 128) updates blocks of a head's rows over all the
// tile's tokens in one call; where the tier has scanSTile, every row of
// the head in one call on a scaled state (ssm.ScaleTile): s' = s/p with p
// the product of the tile's dA, so a token costs one FMA per state
// element for the update and one for y, and a 4-row by 16-state tile of
// s' stays in registers over the tile's tokens. The kernels are a tier's
// ssmKernels: generic Go, or AVX2 assembly with Go twins.

func init() {
	addKernel(ops.OpSSMScan, supportsSSMScan, computeSSMScan)
}

// ssmScanSrcNames names SSM_SCAN's sources in errors.
var ssmScanSrcNames = [7]string{"s", "x", "dt", "A", "B", "C", "ids"}

func supportsSSMScan(t *ops.Tensor) error {
	if err := ops.CheckSSMScan(t); err != nil {
		return err
	}
	for i, x := range t.Src {
		if err := checkDims(x, ssmScanSrcNames[i]); err != nil {
			return err
		}
	}
	return checkOut(t, quant.F32)
}

// ssmKernels are one tier's SSM_SCAN kernels. ssm.Softplus sets dst =
// ssm.Softplus(x) (dst may be x). scanA updates nRows state rows for one token
// (row r of st at st[r*stS:], of the previous state at src[r*srcS:], st may
// be src): with d = dsp[r*dspS], xdt = x[r*xS]*d and dA = exp(a[r*aS+i]*d),
// st[r][i] = src[r][i]*dA + b[i]*xdt for i < dState, and y[r*yS] = the sum
// of st[r][i]*c[i]. scanS is scanA with one dA and one d for all rows (a
// scalar A per head, Mamba-2).
type ssmKernels struct {
	softplus func(dst, x []float32)
	// expMul sets dst[i] to e^(x[i]·a[i]) (ssm.ExpMul): Mamba-2's dA for
	// a row of heads.
	expMul func(dst, x, a []float32)
	scanA  func(st, src []float32, stS, srcS int, a []float32, aS int, dsp []float32, dspS int, x []float32, xS int, y []float32, yS int, b, c []float32, nRows, dState int)
	scanS  func(st, src []float32, stS, srcS int, x []float32, xS int, y []float32, yS int, b, c []float32, nRows, dState int, dA, dsp float32)
	// scanSTok is scanS in place (src = st) for nTok tokens in turn:
	// token k reads x, y, b and c at k times their token strides xT, yT,
	// bT, cT, and its dA and dsp from ed[2k] and ed[2k+1].
	scanSTok func(st []float32, stS, nRows, dState int, x []float32, xS, xT int, y []float32, yS, yT int, b []float32, bT int, c []float32, cT int, ed []float32, nTok int)
	// scanSTile, when not nil, is scanSTok on a scaled state for dState
	// a multiple of 16, token k's (g, q, p, flag) at ed[4k:] as
	// ssm.ScaleTile makes them, with buf (ssm.TileBuf floats per token) as
	// scratch (see ssm.ScanSTileTwin): a kernel that keeps a tile of the
	// state in registers across the tokens, so any number of rows may go
	// in one call.
	scanSTile func(st []float32, stS, nRows, dState int, x []float32, xS, xT int, y []float32, yS, yT int, b []float32, bT int, c []float32, cT int, ed []float32, nTok int, buf []float32)
	// conv4, when not nil, is SSM_CONV with d_conv 4 for 8 channels and
	// nTok8 (a multiple of 8) tokens as ssmConvRows computes it: channel
	// k's row at sx[k*sxS:], its weights cw[4k:4k+4], token t's 8 results
	// at dst[t*dstT:].
	conv4 func(dst []float32, dstT int, sx []float32, sxS int, cw []float32, nTok8 int)
	// conv4g, when not nil, is conv4 for any number of tokens reading the
	// weights at c[k*cS:] itself; it gathers across channels, so it
	// serves the tokens short of a run of 8 (one when decoding).
	conv4g func(dst []float32, dstT int, sx []float32, sxS int, c []float32, cS int, nTok int)
	// conv41, when not nil, is conv4 for one token with packed windows
	// and weights (4 floats per channel): dst[i] for len(dst)/8 groups of
	// 8 channels, channel i's window and weights at sx[4i:] and c[4i:].
	conv41 func(dst, sx, c []float32)
}

// Tiles of computeSSMScan: a worker takes up to ssmHeadBlock heads of one
// sequence at a time and walks the tokens in tiles of ssmTokTile, the
// ssm.Softplus of the tile's dt computed first in one vector call.
const (
	ssmHeadBlock = 64
	ssmTokTile   = 32
	// ssmExpOff is where a worker's float scratch holds a scalar-A
	// block's A values and exp(d·A) tile, past the softplus tile, the
	// (exp(d·A), d) pairs and scanTile's scratch.
	ssmExpOff = ssmHeadBlock*ssmTokTile + (2+4+ssm.TileBuf)*ssmTokTile + 8
	// ssmRowBlock is how many rows of a head (Mamba-2) scanTile takes
	// over the tile's tokens: 32 rows of d_state 128 are 16 KiB, half of L1.
	ssmRowBlock = 32
)

// ssmJob is one SSM_SCAN call; an item is a (sequence, head) pair. It is
// kept in the backend so that a call allocates nothing.
type ssmJob struct {
	sk                           *ssmKernels
	t, s, x, dt, A, B, C         *ops.Tensor
	sm, xm, dtm, am, bm, cm, tm  []byte
	sc                           *scratch
	slots                        []int64
	dState, headDim, nHead, nTok int64
	nX, headsPerGroup            int64
	scalarA                      bool
	// sPacked: s's rows are packed float32, so the first token reads the
	// initial state where it lies instead of a copy.
	sPacked bool
	// bcPacked: B and C rows are packed float32, so scanTile can walk
	// them by their token stride.
	bcPacked bool
	// rowsAreHeads: one channel per head with A per state (Mamba-1), so
	// a block of heads is a block of rows for one kernel call per token.
	rowsAreHeads bool
}

// computeSSMScan runs the selective scan. Head h reads B and C group
// h/(n_head/n_group), as ggml's CPU kernel does (repeat_interleave). Each
// (sequence, head) pair is one work item: its state starts as slot
// ids[seq] of s and is updated in the result's state area token by token,
// so with no tokens the final state is the initial one.
func computeSSMScan(b *Backend, t *ops.Tensor) error {
	s, x, dt, A, B, C, ids := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4], t.Src[5], t.Src[6]
	nSeqs := x.Ne[3]
	if t.NumElements() == 0 {
		return nil
	}
	j := &b.ssm
	if int64(cap(j.slots)) < nSeqs {
		j.slots = make([]int64, nSeqs)
	}
	j.slots = j.slots[:nSeqs]
	idm := mem(ids)
	for q := range nSeqs {
		id := int64(int32At(idm, q*ids.Nb[0]))
		if id < 0 || id >= s.Ne[3] {
			return fmt.Errorf("ids[%d] = %d is outside the %d state slots", q, id, s.Ne[3])
		}
		j.slots[q] = id
	}
	n := nSeqs * s.Ne[2]
	if n > int64(int(^uint(0)>>1)) {
		return fmt.Errorf("%d sequence-head pairs is too many", n)
	}
	j.sk = b.kern.ssm
	j.t, j.s, j.x, j.dt, j.A, j.B, j.C = t, s, x, dt, A, B, C
	j.sm, j.xm, j.dtm, j.am, j.bm, j.cm, j.tm = mem(s), mem(x), mem(dt), mem(A), mem(B), mem(C), mem(t)
	j.sc = &b.scratch
	j.dState, j.headDim, j.nHead, j.nTok = s.Ne[0], s.Ne[1], s.Ne[2], x.Ne[2]
	j.nX = x.NumElements()
	j.headsPerGroup = j.nHead / B.Ne[1]
	j.scalarA = A.Ne[0] == 1
	j.sPacked = s.Nb[0] == 4 && s.Nb[1]%4 == 0 && s.Nb[2]%4 == 0 && s.Nb[3]%4 == 0
	j.bcPacked = B.Nb[0] == 4 && C.Nb[0] == 4
	j.rowsAreHeads = j.headDim == 1 && !j.scalarA && A.Nb[0] == 4 && A.Nb[1]%4 == 0 && x.Nb[1]%4 == 0
	b.pool.run(int(n), rowGrain(4*j.nTok*j.headDim*j.dState), j)
	j.t, j.s, j.x, j.dt, j.A, j.B, j.C = nil, nil, nil, nil, nil, nil, nil
	j.sm, j.xm, j.dtm, j.am, j.bm, j.cm, j.tm = nil, nil, nil, nil, nil, nil, nil
	return nil
}

// do scans items [lo, hi) in blocks of heads of one sequence (and, when
// rows are heads, one B/C group).
func (j *ssmJob) do(w, lo, hi int) {
	ds := j.dState
	// f32: the ssm.Softplus tile and a tile of (exp(d·A), d) pairs; f32b: B,
	// C and A rows converted from non-packed layouts.
	// f32 also holds scanTile's scaled (g, q, p, flag) quadruples and the
	// scratch of scanSTile, then (ssmExpOff) a scalar-A block's A values
	// and its tile of exp(d·A).
	wb := j.sc.worker(w, ssmExpOff+ssmHeadBlock+ssmHeadBlock*ssmTokTile, 3*ds, 0)
	for it := int64(lo); it < int64(hi); {
		q, h0 := it/j.nHead, it%j.nHead
		h1 := min(j.nHead, h0+int64(hi)-it, h0+ssmHeadBlock)
		if j.rowsAreHeads {
			h1 = min(h1, (h0/j.headsPerGroup+1)*j.headsPerGroup)
		}
		j.block(wb, q, h0, h1)
		it += h1 - h0
	}
}

// stateOf returns the state area of head h of sequence q in the result:
// headDim rows of dState.
func (j *ssmJob) stateOf(q, h, nh int64) []float32 {
	return f32s(j.tm, 4*(j.nX+(q*j.nHead+h)*j.headDim*j.dState), nh*j.headDim*j.dState)
}

// block scans heads [h0, h1) of sequence q over every token.
func (j *ssmJob) block(wb *workerBuf, q, h0, h1 int64) {
	ds, hd, nh := j.dState, j.headDim, h1-h0
	sk := j.sk
	slot := j.slots[q]
	st := j.stateOf(q, h0, nh)
	// first is the state the first token reads: the slot of s itself
	// when packed, else a copy in st.
	var first []float32
	var firstRowS, firstHeadS int64
	if j.sPacked && j.nTok > 0 {
		firstRowS, firstHeadS = j.s.Nb[1]/4, j.s.Nb[2]/4
		first = f32s(j.sm, h0*j.s.Nb[2]+slot*j.s.Nb[3], (nh-1)*firstHeadS+(hd-1)*firstRowS+ds)
	} else {
		ss := wb.f32b[:ds]
		for h := h0; h < h1; h++ {
			for i1 := range hd {
				copy(st[((h-h0)*hd+i1)*ds:][:ds], floatRow(j.s, j.sm, i1, h, slot, ss))
			}
		}
		first, firstRowS, firstHeadS = st, ds, hd*ds
	}
	bs, cs, as := wb.f32b[:ds], wb.f32b[ds:2*ds], wb.f32b[2*ds:3*ds]
	x, dt := j.x, j.dt
	// Scalar A: the block's A values, gathered once for every tile.
	var ar []float32
	if j.scalarA {
		ar = wb.f32[ssmExpOff:][:nh]
		for h := h0; h < h1; h++ {
			ar[h-h0] = f32At(j.am, h*j.A.Nb[1])
		}
	}
	for t0 := int64(0); t0 < j.nTok; t0 += ssmTokTile {
		tn := min(ssmTokTile, j.nTok-t0)
		sp, ed := wb.f32[:tn*nh], wb.f32[ssmHeadBlock*ssmTokTile:][:2*tn]
		for tok := range tn {
			off := h0*dt.Nb[0] + (t0+tok)*dt.Nb[1] + q*dt.Nb[2]
			row := sp[tok*nh : (tok+1)*nh]
			if dt.Nb[0] == 4 {
				copy(row, f32s(j.dtm, off, nh))
			} else {
				for i := range row {
					row[i] = f32At(j.dtm, off+int64(i)*dt.Nb[0])
				}
			}
		}
		sk.softplus(sp, sp)
		// Scalar A: every head's exp(d·A) of the tile in one vector call
		// per token (ex[tok*nh+h-h0]).
		var ex []float32
		if j.scalarA {
			ex = wb.f32[ssmExpOff+ssmHeadBlock:][:tn*nh]
			for tok := range tn {
				sk.expMul(ex[tok*nh:(tok+1)*nh], sp[tok*nh:(tok+1)*nh], ar)
			}
		}
		if j.rowsAreHeads {
			a := f32s(j.am, h0*j.A.Nb[1], (nh-1)*(j.A.Nb[1]/4)+ds)
			g := h0 / j.headsPerGroup
			for tok := t0; tok < t0+tn; tok++ {
				src, srcS := st, ds
				if tok == 0 {
					src, srcS = first, firstHeadS
				}
				xr := f32s(j.xm, h0*x.Nb[1]+tok*x.Nb[2]+q*x.Nb[3], (nh-1)*(x.Nb[1]/4)+1)
				y := f32s(j.tm, 4*((q*j.nTok+tok)*j.nHead+h0), nh)
				sk.scanA(st, src, int(ds), int(srcS), a, int(j.A.Nb[1]/4), sp[(tok-t0)*nh:], 1, xr, int(x.Nb[1]/4), y, 1,
					floatRow(j.B, j.bm, g, tok, q, bs), floatRow(j.C, j.cm, g, tok, q, cs), int(nh), int(ds))
			}
			continue
		}
		xRowS := x.Nb[0] / 4
		for h := h0; h < h1; h++ {
			g := h / j.headsPerGroup
			var arow []float32
			if j.scalarA {
				// One dA per token: the tile's (exp(d·A), d) pairs.
				for tok := range tn {
					i := tok*nh + h - h0
					ed[2*tok], ed[2*tok+1] = ex[i], sp[i]
				}
				if j.bcPacked {
					j.scanTile(h, g, q, t0, tn, st[(h-h0)*hd*ds:][:hd*ds], first[(h-h0)*firstHeadS:], firstRowS, ed, bs, cs,
						wb.f32[ssmHeadBlock*ssmTokTile+2*ssmTokTile:][:(4+ssm.TileBuf)*ssmTokTile+8])
					continue
				}
			} else {
				arow = floatRow(j.A, j.am, h, 0, 0, as)
			}
			// All rows of the head for each token in one call: the
			// loads of B and C and the call are shared by many rows.
			sth := st[(h-h0)*hd*ds:][:hd*ds]
			for tok := t0; tok < t0+tn; tok++ {
				src, srcS := sth, ds
				if tok == 0 {
					src, srcS = first[(h-h0)*firstHeadS:], firstRowS
				}
				d := sp[(tok-t0)*nh+h-h0]
				xr := f32s(j.xm, h*x.Nb[1]+tok*x.Nb[2]+q*x.Nb[3], (hd-1)*xRowS+1)
				y := f32s(j.tm, 4*((q*j.nTok+tok)*j.nHead+h)*hd, hd)
				brow, crow := floatRow(j.B, j.bm, g, tok, q, bs), floatRow(j.C, j.cm, g, tok, q, cs)
				if j.scalarA {
					sk.scanS(sth, src, int(ds), int(srcS), xr, int(xRowS), y, 1, brow, crow, int(hd), int(ds), ed[2*(tok-t0)], d)
				} else {
					sk.scanA(sth, src, int(ds), int(srcS), arow, 0, sp[(tok-t0)*nh+h-h0:], 0, xr, int(xRowS), y, 1, brow, crow, int(hd), int(ds))
				}
			}
		}
	}
}

// scanTile scans head h (scalar A, B and C packed) over the tokens [t0,
// t0+tn) of sequence q: the first token of the sequence alone, reading
// the initial state first (rows at stride firstRowS), then the rest in
// blocks of ssmRowBlock rows, each block over every token in one call so
// that its state stays in L1 while B and C stream past; or, where the
// tier has scanSTile, all rows in one call on the scaled state, ed4 (the
// first 4·ssmTokTile floats of tb) holding the tokens' scaling and the
// rest scanSTile's scratch.
func (j *ssmJob) scanTile(h, g, q, t0, tn int64, sth, first []float32, firstRowS int64, ed, bs, cs, tb []float32) {
	ds, hd, x, B, C := j.dState, j.headDim, j.x, j.B, j.C
	xRowS := x.Nb[0] / 4
	tk := t0
	if t0 == 0 {
		xr := f32s(j.xm, h*x.Nb[1]+q*x.Nb[3], (hd-1)*xRowS+1)
		y := f32s(j.tm, 4*(q*j.nTok*j.nHead+h)*hd, hd)
		j.sk.scanS(sth, first, int(ds), int(firstRowS), xr, int(xRowS), y, 1,
			floatRow(B, j.bm, g, 0, q, bs), floatRow(C, j.cm, g, 0, q, cs), int(hd), int(ds), ed[0], ed[1])
		tk = 1
	}
	ntk := t0 + tn - tk
	if ntk <= 0 {
		return
	}
	xT, yT, bT, cT := x.Nb[2]/4, j.nHead*hd, B.Nb[2]/4, C.Nb[2]/4
	b := f32s(j.bm, g*B.Nb[1]+tk*B.Nb[2]+q*B.Nb[3], (ntk-1)*bT+ds)
	c := f32s(j.cm, g*C.Nb[1]+tk*C.Nb[2]+q*C.Nb[3], (ntk-1)*cT+ds)
	if j.sk.scanSTile != nil && ds%16 == 0 && hd%4 == 0 {
		ed4 := tb[:4*ntk]
		ssm.ScaleTile(ed4, ed[2*(tk-t0):], int(ntk))
		xr := f32s(j.xm, h*x.Nb[1]+tk*x.Nb[2]+q*x.Nb[3], (ntk-1)*xT+(hd-1)*xRowS+1)
		y := f32s(j.tm, 4*((q*j.nTok+tk)*j.nHead+h)*hd, (ntk-1)*yT+hd)
		j.sk.scanSTile(sth, int(ds), int(hd), int(ds), xr, int(xRowS), int(xT), y, 1, int(yT),
			b, int(bT), c, int(cT), ed4, int(ntk), tb[4*ssmTokTile:])
		return
	}
	for r0 := int64(0); r0 < hd; r0 += ssmRowBlock {
		nr := min(ssmRowBlock, hd-r0)
		xr := f32s(j.xm, r0*x.Nb[0]+h*x.Nb[1]+tk*x.Nb[2]+q*x.Nb[3], (ntk-1)*xT+(nr-1)*xRowS+1)
		y := f32s(j.tm, 4*(((q*j.nTok+tk)*j.nHead+h)*hd+r0), (ntk-1)*yT+nr)
		j.sk.scanSTok(sth[r0*ds:][:nr*ds], int(ds), int(nr), int(ds), xr, int(xRowS), int(xT), y, 1, int(yT),
			b, int(bT), c, int(cT), ed[2*(tk-t0):], int(ntk))
	}
}
