package harness

import (
	"fmt"
	"math/rand/v2"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/reference"
)

// Sampled validation. A point too costly for the whole float64 reference
// (Plan.RefWork above the budget) is still checked where the op's outputs
// are independent of one another: the reference computes a sample of
// them (MUL_MAT: blocks of weight rows by activation rows; MUL_MAT_ID:
// blocks of expert rows by tokens; FLASH_ATTN_EXT: blocks of query rows),
// at the edges and at seeded random places, on
// views of the point's own inputs, and the backend's values there are
// judged with the case's tolerance. A bug that touches every output, or
// every tile, or the last rows or columns, shows in the sample; a bug
// confined to an interior tile the sample misses does not, which is why
// the result says "sampled".

// sampledReason is the reason of a result validated on a sample of its
// outputs.
const sampledReason = "sampled: float64 reference of a sample of the outputs"

// Sampled reports whether r was validated on a sample of its outputs.
func Sampled(r Result) bool {
	return r.Status == StatusOK && r.Reason == sampledReason
}

// Blocks of a sampled MUL_MAT: sampleRows weight rows by sampleCols
// activation rows, at the first and last rows and columns and at
// sampleRand random places in between.
const (
	sampleRows = 8
	sampleCols = 4
	sampleRand = 2
)

// sampledReference returns the float64 reference of a sample of node's
// outputs and their indices in the output, or ok false when node's op has
// no sampled form.
func sampledReference(node *ops.Tensor, seed uint64) (idx []int64, want []float64, ok bool, err error) {
	rng := rand.New(rand.NewPCG(seed, 0x5a3))
	switch {
	case node.Op == ops.OpMulMat && len(node.Src) == 2:
		idx, want, err = sampleMulMat(node, rng)
	case node.Op == ops.OpFlashAttnExt && len(node.Src) >= 3:
		idx, want, err = sampleFlashAttn(node, rng)
	case node.Op == ops.OpMulMatID && len(node.Src) == 3:
		idx, want, err = sampleMulMatID(node, rng)
	default:
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("harness: sample of %s: %w", node.Label(), err)
	}
	// Blocks may overlap on small outputs: keep each output once.
	seen := make(map[int64]bool, len(idx))
	k := 0
	for i, j := range idx {
		if !seen[j] {
			seen[j] = true
			idx[k], want[k] = j, want[i]
			k++
		}
	}
	return idx[:k], want[:k], true, nil
}

// sampleMulMat samples blocks of sampleRows weight rows by sampleCols
// activation rows, every batch.
func sampleMulMat(node *ops.Tensor, rng *rand.Rand) (idx []int64, want []float64, err error) {
	a, b := node.Src[0], node.Src[1]
	m, n := a.Ne[1], b.Ne[1]
	rowStarts := sampleStarts(rng, m, sampleRows)
	colStarts := sampleStarts(rng, n, sampleCols)
	for _, r0 := range rowStarts {
		rows := min(sampleRows, m-r0)
		av, err := ops.View(a, []int64{a.Ne[0], rows, a.Ne[2], a.Ne[3]}, a.Nb[:], r0*a.Nb[1])
		if err != nil {
			return nil, nil, err
		}
		for _, c0 := range colStarts {
			cols := min(sampleCols, n-c0)
			bv, err := ops.View(b, []int64{b.Ne[0], cols, b.Ne[2], b.Ne[3]}, b.Nb[:], c0*b.Nb[1])
			if err != nil {
				return nil, nil, err
			}
			sub, err := ops.MulMat(av, bv)
			if err != nil {
				return nil, nil, err
			}
			vals, err := reference.Compute(sub)
			if err != nil {
				return nil, nil, err
			}
			// vals is [rows, cols, b2, b3] contiguous; the node's output
			// is [m, n, b2, b3].
			for i3 := range node.Ne[3] {
				for i2 := range node.Ne[2] {
					for c := range cols {
						for r := range rows {
							idx = append(idx, r0+r+m*(c0+c+n*(i2+node.Ne[2]*i3)))
							want = append(want, vals[r+rows*(c+cols*(i2+node.Ne[2]*i3))])
						}
					}
				}
			}
		}
	}
	return idx, want, nil
}

// sampleTokens is the number of tokens per sampled block of a
// MUL_MAT_ID: every slot of those tokens is computed.
const sampleTokens = 2

// sampleMulMatID samples blocks of sampleRows expert rows by sampleTokens
// tokens (every slot), with the matching ids and activation rows.
func sampleMulMatID(node *ops.Tensor, rng *rand.Rand) (idx []int64, want []float64, err error) {
	w, b, ids := node.Src[ops.MMIDExperts], node.Src[ops.MMIDInput], node.Src[ops.MMIDIDs]
	m, used, nt := node.Ne[0], node.Ne[1], node.Ne[2]
	for _, r0 := range sampleStarts(rng, m, sampleRows) {
		rows := min(sampleRows, m-r0)
		wv, err := ops.View(w, []int64{w.Ne[0], rows, w.Ne[2]}, w.Nb[:3], r0*w.Nb[1])
		if err != nil {
			return nil, nil, err
		}
		for _, t0 := range sampleStarts(rng, nt, sampleTokens) {
			toks := min(sampleTokens, nt-t0)
			bv, err := ops.View(b, []int64{b.Ne[0], b.Ne[1], toks}, b.Nb[:3], t0*b.Nb[2])
			if err != nil {
				return nil, nil, err
			}
			iv, err := ops.View(ids, []int64{ids.Ne[0], toks}, ids.Nb[:2], t0*ids.Nb[1])
			if err != nil {
				return nil, nil, err
			}
			sub, err := ops.MulMatID(wv, bv, iv)
			if err != nil {
				return nil, nil, err
			}
			vals, err := reference.Compute(sub)
			if err != nil {
				return nil, nil, err
			}
			// vals is [rows, used, toks]; the node's output [m, used, nt].
			for t := range toks {
				for e := range used {
					for r := range rows {
						idx = append(idx, r0+r+m*(e+used*(t0+t)))
						want = append(want, vals[r+rows*(e+used*t)])
					}
				}
			}
		}
	}
	return idx, want, nil
}

// sampleQueries is the number of query rows per sampled block of a
// FLASH_ATTN_EXT: every head and sequence of those rows is computed.
const sampleQueries = 2

// sampleFlashAttn samples blocks of sampleQueries query rows (all heads,
// all sequences), with the matching rows of the mask.
func sampleFlashAttn(node *ops.Tensor, rng *rand.Rand) (idx []int64, want []float64, err error) {
	q := node.Src[ops.FAQ]
	var mask, sinks *ops.Tensor
	if len(node.Src) > ops.FAMask {
		mask = node.Src[ops.FAMask]
	}
	if len(node.Src) > ops.FASinks {
		sinks = node.Src[ops.FASinks]
	}
	p, _ := node.Params.(ops.FlashAttnParams)
	dv, nh, nq, ns := node.Ne[0], node.Ne[1], node.Ne[2], node.Ne[3]
	for _, r0 := range sampleStarts(rng, nq, sampleQueries) {
		rows := min(sampleQueries, nq-r0)
		qv, err := ops.View(q, []int64{q.Ne[0], rows, q.Ne[2], q.Ne[3]}, q.Nb[:], r0*q.Nb[1])
		if err != nil {
			return nil, nil, err
		}
		mv := mask
		if mask != nil {
			if mv, err = ops.View(mask, []int64{mask.Ne[0], rows, mask.Ne[2], mask.Ne[3]}, mask.Nb[:], r0*mask.Nb[1]); err != nil {
				return nil, nil, err
			}
		}
		sub, err := ops.FlashAttnExt(qv, node.Src[ops.FAK], node.Src[ops.FAV], mv, sinks, p)
		if err != nil {
			return nil, nil, err
		}
		vals, err := reference.Compute(sub)
		if err != nil {
			return nil, nil, err
		}
		// vals is [dv, nh, rows, ns]; the node's output [dv, nh, nq, ns].
		for s := range ns {
			for r := range rows {
				for h := range nh {
					for e := range dv {
						idx = append(idx, e+dv*(h+nh*(r0+r+nq*s)))
						want = append(want, vals[e+dv*(h+nh*(r+rows*s))])
					}
				}
			}
		}
	}
	return idx, want, nil
}

// sampleStarts returns the first indices of blocks of size bs among n:
// the first block, the last, and sampleRand at random, without repeats.
func sampleStarts(rng *rand.Rand, n, bs int64) []int64 {
	if n <= 0 {
		return nil
	}
	starts := []int64{0}
	add := func(s int64) {
		for _, t := range starts {
			if t == s {
				return
			}
		}
		starts = append(starts, s)
	}
	add(max(0, n-bs))
	for range sampleRand {
		add(rng.Int64N(max(1, n-bs+1)))
	}
	return starts
}
