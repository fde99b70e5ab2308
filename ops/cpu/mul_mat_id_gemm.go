package cpu

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// MUL_MAT_ID by expert: with many (slot, token) pairs per expert
// (prefill), each expert's product is a MUL_MAT of its weight matrix by
// its pairs' activation rows gathered into one packed matrix, computed
// by computeMulMat, so it takes the same gemm path as a dense matrix of
// that shape (the panel kernels, or sgemm for the float types), and its
// outputs are scattered back to their (slot, token) places. The tiled
// path of mulMatIDJob meets four pairs with one weight row at a time,
// and for the float types it has no tiled kernel at all; ggml computes
// MoE prefill the same way (gathered rows, the dense product).

// idGemmMinPairs is the fewest pairs of one expert for which MUL_MAT_ID
// goes by expert: below it (decoding, small batches) the tiled and
// matrix-vector paths of mulMatIDJob, which need no gathering, are
// taken.
const idGemmMinPairs = 16

// idCopyChunk is the fewest pairs a thread takes of an expert's
// gathering or scattering (rows of a few KiB each).
const idCopyChunk = 8

// idGemm holds the backend's gathered activations and outputs for
// MUL_MAT_ID by expert, grown as needed and reused.
type idGemm struct {
	xs, out *ops.HostBuffer
	// The MUL_MAT node of one expert and its sources, rewritten for
	// each (kept here so that a call allocates nothing).
	we, xe, node ops.Tensor
	src          [2]*ops.Tensor
	copies       idCopyJob
}

// idCopyJob is one expert's gathering of its pairs' input rows into g
// (gather) or scattering of its output rows o to the op's output dst,
// a pair per item, on the backend's threads. On the calling thread
// alone, with the others waiting, they were 5.7% of a one-thread
// profile of gpt-oss-100m's pp512, so a larger share of the
// multi-threaded time.
type idCopyJob struct {
	pairs   []expertPair
	gather  bool
	x       *ops.Tensor
	xm      []byte
	g       []float32
	o, dst  []float32
	k, b1   int64
	m, used int64
}

func (c *idCopyJob) do(_, lo, hi int) {
	for i := int64(lo); i < int64(hi); i++ {
		p := c.pairs[i]
		if c.gather {
			off := at(c.x, 0, p.slot%c.b1, p.token, 0)
			copy(c.g[i*c.k:][:c.k], f32s(c.xm, off, c.k))
		} else {
			copy(c.dst[c.m*(p.slot+c.used*p.token):][:c.m], c.o[i*c.m:][:c.m])
		}
	}
}

// buffer returns *h with at least n bytes, replacing it when short.
func (g *idGemm) buffer(h **ops.HostBuffer, n int64) (*ops.HostBuffer, error) {
	if *h == nil || (*h).Size() < n {
		nb, err := ops.NewHostBuffer(max(n, 1<<16))
		if err != nil {
			return nil, err
		}
		*h = nb
	}
	return *h, nil
}

// mulMatIDByExpert computes t by expert when its weights have a gemm
// kernel, its input rows are packed float32 and some expert has at least
// idGemmMinPairs pairs (j's grouping made); it reports whether it did.
func (b *Backend) mulMatIDByExpert(t *ops.Tensor, j *mulMatIDJob) (bool, error) {
	w, x := t.Src[ops.MMIDExperts], t.Src[ops.MMIDInput]
	if b.kern.gemm[w.Type] == nil || x.Type != quant.F32 || x.Nb[0] != 4 {
		return false, nil
	}
	maxPairs := j.maxPairs()
	if maxPairs < idGemmMinPairs {
		return false, nil
	}
	k, m, nExpert := w.Ne[0], w.Ne[1], w.Ne[2]
	b1, nUsed := x.Ne[1], t.Ne[1]
	xs, err := b.idg.buffer(&b.idg.xs, 4*k*maxPairs)
	if err != nil {
		return false, err
	}
	outs, err := b.idg.buffer(&b.idg.out, 4*m*maxPairs)
	if err != nil {
		return false, err
	}
	xm, dst := mem(x), f32s(mem(t), 0, t.NumElements())
	for e := range nExpert {
		pairs := j.pairs[j.start[e]:j.start[e+1]]
		np := int64(len(pairs))
		if np == 0 {
			continue
		}
		cp := &b.idg.copies
		*cp = idCopyJob{pairs: pairs, gather: true, x: x, xm: xm, g: f32s(xs.Bytes(), 0, k*np), k: k, b1: b1}
		b.pool.run(int(np), idCopyChunk, cp)
		we, xe, node := &b.idg.we, &b.idg.xe, &b.idg.node
		*we = ops.Tensor{Name: w.Name, Type: w.Type, Ne: [4]int64{k, m, 1, 1},
			Nb: [4]int64{w.Nb[0], w.Nb[1], m * w.Nb[1], m * w.Nb[1]}, ViewOf: w, Offset: e * w.Nb[2]}
		*xe = ops.Tensor{Name: x.Name, Type: quant.F32, Ne: [4]int64{k, np, 1, 1}, Buffer: xs}
		xe.Nb = ops.ContiguousStrides(quant.F32, xe.Ne)
		b.idg.src = [2]*ops.Tensor{we, xe}
		*node = ops.Tensor{Name: t.Name, Op: ops.OpMulMat, Type: quant.F32, Ne: [4]int64{m, np, 1, 1},
			Src: b.idg.src[:], Buffer: outs}
		node.Nb = ops.ContiguousStrides(quant.F32, node.Ne)
		if err := computeMulMat(b, node); err != nil {
			return true, err
		}
		*cp = idCopyJob{pairs: pairs, o: f32s(outs.Bytes(), 0, m*np), dst: dst, m: m, used: nUsed}
		b.pool.run(int(np), idCopyChunk, cp)
	}
	return true, nil
}
