package cpu

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/gemv"
	"github.com/kernbench/kernbench/quant"
)

// Repacked weights for the matrix-vector path (ggml's CPU repack). A
// MUL_MAT of one to three activation rows whose weights are a leaf in a
// host buffer marked as holding weights (ops.HostBuffer.MarkWeights: a
// GGUF file's tensors are), of a type the tier has an x8 kernel for
// (q4_0, q8_0, q6_K, q4_K, f16 and bf16 on avx2), reads a copy of the weights
// repacked once into gemv's x8 layout: eight rows interleaved per block
// (per 256-element super-block for the K formats), one contiguous stream
// per group, one activation broadcast serving eight rows (see
// internal/gemv's x8.go, x8k.go and x8f16.go). A group keeps its rows'
// plain byte offsets, and rows past the last whole group stay plain, so
// the copy has the tensor's extent and its tail rows go to the dot
// product as before.
//
// The copy lives outside the Go heap (an anonymous mapping where the
// OS has one, so it does not raise the collector's heap goal), beside
// the buffer's other copies in one huge-page-aligned arena (so that
// transparent huge pages back them, where the OS grants them on
// madvise: fewer TLB misses while the mat-vec kernels stream them; see
// arena), and is made the first time a matrix-vector product reads the tensor; then the
// buffer is told (ops.HostBuffer.Release) that the original bytes are
// not needed, which for a file mapping drops its pages: the weights are
// resident once, not twice. Other readers of the original (the gemm
// path, GET_ROWS) still read it in place and fault those pages back in;
// the gemm path's q4_0 and q8_0 panels are written from the copy
// instead, and after a gemm product or MUL_MAT_ID that read the original
// of weights with a current copy (the K formats' panels,
// mul_mat_ktile.go; the tiled expert kernel) the original is released
// again (x8Rerelease), so prefill between decodes holds one tensor's
// original at a time beside the copies, not all of them.
//
// For q4_0, q8_0 and f16 each row keeps the lanes, FMAs and final sum of
// the plain layout's four-row kernel; for q6_K and q4_K each row's integer
// sums per super-block are exact (in any order) and its float32 step is
// the dot product's, which the plain four-row kernels equal too. The
// copy's tail rows go to the four-row kernel and the dot product as on
// the plain path: the outputs equal the plain path's bit for bit, the
// copy changes speed and memory only.
//
// A copy is valid for one write generation of its buffer
// (ops.HostBuffer.Gen): a WriteAt into the buffer, or a Compute whose
// destination is in it, makes the next product repack. Options.NoRepack
// and $KERNBENCH_REPACK=0 turn the copies off (the plain layout's
// four-row kernels then run, as for weights in unmarked buffers, which
// the harness's cases use).

// An x8Kernel is a tier's x8 matrix-vector kernel for one weight type.
type x8Kernel struct {
	// qk is the block size in elements (quant.QK or quant.QKK; for f16
	// and bf16 the 16-element run, gemv.F16Run), bs in
	// bytes; per is the side slots per block.
	qk, bs, per int64
	// repack writes the x8 form of eight rows of nb blocks.
	repack func(dst, src []byte, nb int)
	// prep writes an activation row's side data.
	prep func(y []byte, nb int, side []float32)
	f    gemv.X8Func
	// tail is the plain layout's four-row kernel with the same side
	// data and rounding, for the copy's plain tail rows: with it every
	// output equals the plain path's bit for bit.
	tail gemvFunc
	// gather, where set (f16), writes runs of 16 elements of one row of
	// an x8 group as they are in the plain row (gemv.GatherX8F16Row), so
	// that the float gemm reads its rows from the copy too (sgemm's
	// widening), and the original, released, stays out of memory.
	gather func(dst, group []byte, nb, r, j0, nj int)
}

// x8Key names a repacked tensor: where its bytes are and what they hold.
type x8Key struct {
	buf *ops.HostBuffer
	off int64
	typ quant.Type
	ne  [4]int64
}

// x8Copy is a repacked tensor, valid while its buffer's generation is
// gen.
type x8Copy struct {
	gen  uint64
	mem  []byte
	free func()
}

// x8Cache holds a backend's repacked tensors by buffer.
type x8Cache struct {
	copies map[*ops.HostBuffer]map[x8Key]*x8Copy
	// arenas hold the copies of each buffer side by side, in one
	// reservation of the buffer's size (copies of its tensors take no
	// more), so that they lie in huge pages.
	arenas map[*ops.HostBuffer]*arena
	// made counts the copies made (tests check that a copy is reused).
	made int
}

// drop frees every copy.
func (c *x8Cache) drop() {
	for _, m := range c.copies {
		for _, e := range m {
			e.free()
		}
	}
	c.copies = nil
	for _, a := range c.arenas {
		a.free()
	}
	c.arenas = nil
}

// alloc returns n zeroed bytes for a copy of weights in hb, and the
// function that frees them: from hb's arena (reserved at the first
// copy), or, when it has no room left (weights rewritten while older
// copies are still held), from a mapping of their own.
func (c *x8Cache) alloc(hb *ops.HostBuffer, n int64) ([]byte, func(), error) {
	a := c.arenas[hb]
	if a == nil {
		var err error
		if a, err = newArena(hb.Size()); err == nil {
			if c.arenas == nil {
				c.arenas = map[*ops.HostBuffer]*arena{}
			}
			c.arenas[hb] = a
		}
	}
	if a != nil {
		if p, put, ok := a.take(n); ok {
			return p, put, nil
		}
	}
	return allocOffHeap(n)
}

// x8Source returns the host buffer and offset of a, when a is a leaf in
// a buffer marked as holding weights, contiguous and of at least eight
// rows of whole blocks of qk elements; else nil.
func x8Source(a *ops.Tensor, qk int64) (*ops.HostBuffer, int64) {
	if a.Op != ops.OpNone || a.ViewOf != nil || !a.IsContiguous() || a.Ne[1] < 8 || a.Ne[0]%qk != 0 {
		return nil, 0
	}
	buf, off := a.Storage()
	hb, ok := buf.(*ops.HostBuffer)
	if !ok || !hb.Weights() {
		return nil, 0
	}
	return hb, off
}

// x8Weights returns the x8 copy of the weights a (repacking them when
// there is none for the buffer's current generation), or nil when a does
// not qualify.
func (b *Backend) x8Weights(a *ops.Tensor, xk *x8Kernel) []byte {
	if p := a.ViewOf; p != nil {
		// A view of whole matrices of a weight tensor (MUL_MAT_ID by
		// expert's expert): the copy keeps every matrix at its plain
		// offset, so the view's bytes are the parent copy's at the
		// view's offset.
		if !wholeMatrices(a) {
			return nil
		}
		c := b.x8Weights(p, xk)
		if c == nil || a.Offset+a.Extent() > int64(len(c)) {
			return nil
		}
		return c[a.Offset : a.Offset+a.Extent()]
	}
	hb, off := x8Source(a, xk.qk)
	if hb == nil {
		return nil
	}
	key := x8Key{buf: hb, off: off, typ: a.Type, ne: a.Ne}
	gen := hb.Gen()
	m := b.x8.copies[hb]
	if e := m[key]; e != nil {
		if e.gen == gen {
			return e.mem
		}
		e.free()
		delete(m, key)
	}
	src := mem(a)
	dst, free, err := b.x8.alloc(hb, int64(len(src)))
	if err != nil {
		return nil // no memory for a copy: the plain layout still works
	}
	b.x8Repack(dst, src, a, xk)
	b.x8.made++
	if b.x8.copies == nil {
		b.x8.copies = map[*ops.HostBuffer]map[x8Key]*x8Copy{}
	}
	if m == nil {
		m = map[x8Key]*x8Copy{}
		b.x8.copies[hb] = m
	}
	m[key] = &x8Copy{gen: gen, mem: dst, free: free}
	hb.Release(off, int64(len(src)))
	return dst
}

// x8Rerelease tells a's buffer again that the original bytes of a are
// not needed, when a has an x8 copy for the buffer's current generation:
// after a path that reads the original in place (the gemm path's K
// panels, MUL_MAT_ID's tiled kernel) faulted its pages back in, so that
// prefill between decodes keeps the weights resident about once (the
// original of one tensor at a time beside the copies), not twice.
// For a view of whole matrices (an expert of MUL_MAT_ID by expert) it
// releases the view's bytes when the parent has a copy.
func (b *Backend) x8Rerelease(a *ops.Tensor) {
	xk := b.kern.x8[a.Type]
	if xk == nil || !b.repack {
		return
	}
	p, at, n := a, int64(0), int64(-1)
	if a.ViewOf != nil {
		if !wholeMatrices(a) {
			return
		}
		p, at, n = a.ViewOf, a.Offset, a.Extent()
	}
	hb, off := x8Source(p, xk.qk)
	if hb == nil {
		return
	}
	key := x8Key{buf: hb, off: off, typ: p.Type, ne: p.Ne}
	if e := b.x8.copies[hb][key]; e != nil && e.gen == hb.Gen() {
		if n < 0 {
			n = int64(len(e.mem))
		}
		hb.Release(off+at, min(n, int64(len(e.mem))-at))
	}
}

// wholeMatrices reports whether the view a holds whole matrices of its
// parent, a tensor that is no view: contiguous, of the parent's type and
// rows, at a multiple of the parent's matrix stride.
func wholeMatrices(a *ops.Tensor) bool {
	p := a.ViewOf
	return p != nil && p.ViewOf == nil && a.Type == p.Type && a.Ne[0] == p.Ne[0] && a.Ne[1] == p.Ne[1] &&
		a.IsContiguous() && p.IsContiguous() && p.Nb[2] != 0 && a.Offset%p.Nb[2] == 0
}

// x8Repack writes the x8 form of every matrix of a (plain bytes src)
// into dst, groups split over the pool; tail rows are copied as they
// are.
func (b *Backend) x8Repack(dst, src []byte, a *ops.Tensor, xk *x8Kernel) {
	nb := a.Ne[0] / xk.qk
	row := nb * xk.bs
	m := a.Ne[1]
	groups := m / 8
	mats := a.Ne[2] * a.Ne[3]
	mat := m * row
	b.pool.parallelFor(int(mats*groups), 16, func(_, lo, hi int) {
		for i := int64(lo); i < int64(hi); i++ {
			o := i/groups*mat + i%groups*8*row
			xk.repack(dst[o:o+8*row], src[o:o+8*row], int(nb))
		}
	})
	if tail := m % 8; tail > 0 {
		for i := range mats {
			o := i*mat + groups*8*row
			copy(dst[o:o+tail*row], src[o:o+tail*row])
		}
	}
}

// touchWeights advances the write generation of t's buffer when it holds
// weights, after a Compute wrote t (the copies of its tensors may be
// stale).
func touchWeights(t *ops.Tensor) {
	if buf, _ := t.Storage(); buf != nil {
		if hb, ok := buf.(*ops.HostBuffer); ok && hb.Weights() {
			hb.Touch()
		}
	}
}

// mulMatX8 computes the product j describes (n < 4) from the x8 copy x8
// of its weights: work items of whole groups per matrix batch, each
// column's outputs of a group range written by one kernel call; the tail
// rows (m % 8) go to the four-row kernel and the dot product, as on the
// plain path.
func (b *Backend) mulMatX8(j *mulMatJob, xk *x8Kernel, x8 []byte) {
	j.x8, j.aMem, j.wout = xk, x8, b.scratch.quad
	j.pfd = int(b.tuned.x8Prefetch)
	j.nb = j.k / xk.qk
	j.per = xk.per
	j.dy = prepareSide(&b.scratch.dy, xk.prep, xk.per, j.acts, j.n, j.b2, j.b3, j.nb)
	groups := j.m / 8
	// Items of up to x8MaxGroups groups, at least four per thread,
	// handed out in guided runs (one per thread to start, shrinking to
	// an item at the end), a run's items of one batch one kernel call
	// per column.
	// (One shared counter handing out items in order, so the threads
	// stream neighbouring rows, was tried for weights past the LLC and
	// reverted: q6_K n=1 at 4096x14336 took 640-798 against 586-605 us,
	// bf16 no better; results/amd-epyc-zen5-2c/*-shared.txt.)
	nt := int64(b.pool.threads)
	j.tm = max(1, min(x8MaxGroups, groups/(4*nt)))
	j.rowTiles = ceilDiv(groups, j.tm)
	b.pool.runGuided(int(j.b2*j.b3*j.rowTiles), x8Job{j})
}

// x8MaxGroups is the most eight-row groups one work item of the x8
// path takes.
const x8MaxGroups = 8

// x8Job runs a mulMatJob's items on the x8 path.
type x8Job struct{ j *mulMatJob }

// do computes a run of items [lo, hi) on worker w: the items of one
// batch together, their groups in one kernel call per column (each
// group's outputs are the kernel's whatever the calls: it starts every
// group afresh).
func (x x8Job) do(w, lo, hi int) {
	j := x.j
	groups := j.m / 8
	gbytes := 8 * j.aRow
	for item := int64(lo); item < int64(hi); {
		batch, tile := item/j.rowTiles, item%j.rowTiles
		end := min(int64(hi), (batch+1)*j.rowTiles) // past the last item of the batch in the run
		i2, i3 := batch%j.b2, batch/j.b2
		g0 := tile * j.tm
		g1 := min((tile+end-item)*j.tm, groups)
		item = end
		base := at(j.a, 0, 0, i2/j.r2, i3/j.r3) + g0*gbytes
		x := j.aMem[base : base+(g1-g0)*gbytes]
		per := j.nb * j.per
		for c := range j.n {
			col := c + j.n*(i2+j.b2*i3)
			o := j.m*col + 8*g0
			j.x8.f(int(j.nb), int(g1-g0), x, j.acts.row(c, i2, i3), j.dy[col*per:][:per], j.out[o:o+8*(g1-g0)], j.pfd)
		}
		if g1 == groups && j.m%8 != 0 {
			i := 8 * groups
			if j.m-i >= 4 {
				// Four plain rows: the four-row kernel, as the plain
				// path computes them.
				off := at(j.a, 0, i, i2/j.r2, i3/j.r3)
				rows := j.aMem[off : off+4*j.aRow]
				out := &j.wout[w].v
				for c := range j.n {
					col := c + j.n*(i2+j.b2*i3)
					j.x8.tail(int(j.nb), rows, int(j.aRow), j.acts.row(c, i2, i3), j.dy[col*per:][:per], out)
					copy(j.out[j.m*col+i:][:4], out[:])
				}
				i += 4
			}
			j.dotRange(i, j.m, 0, j.n, i2, i3)
		}
	}
}
