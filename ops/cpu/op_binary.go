package cpu

import (
	"fmt"

	"github.com/klauspost/cpuid/v2"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// Elementwise kernels: ADD and MUL with broadcasting, SCALE, SILU, GELU and
// SWIGLU. Every one works row by row; a source row that is not packed f32
// is first gathered (and converted) into a per-worker scratch row. The row
// loops are the tier's eltKernels, for ADD, MUL and SWIGLU chosen by how
// far from the cores the op's tensors reach (L2, L3, DRAM: reach); one
// job per op kind lives in the backend, so a call allocates nothing.

// eltKernels are a tier's row kernels of the elementwise ops; each writes
// len(out) elements and may run in place (out aliasing x or g).
type eltKernels struct {
	add, mul func(out, x, y []float32)
	// addL3 and mulL3, where a tier has them, replace add and mul for ops
	// past the L2 caches (reachL3) that one thread runs, and addStream,
	// mulStream and swigluStream add, mul and swiglu for ops past the
	// last level cache (reachDRAM): the same results bit for bit, the
	// stream ones written with non-temporal stores.
	addL3, mulL3                       func(out, x, y []float32)
	addStream, mulStream, swigluStream func(out, x, y []float32)
	silu                               func(out, x []float32)
	gelu                               func(out, x []float32)
	swiglu                             func(out, g, v []float32)
	// swigluOAI is SWIGLU_OAI's row with its alpha and limit.
	swigluOAI func(out, g, v []float32, alpha, limit float32)
}

func init() {
	addKernel(ops.OpAdd, supportsBinary, computeBinary)
	addKernel(ops.OpMul, supportsBinary, computeBinary)
}

func supportsBinary(t *ops.Tensor) error {
	if err := checkSrcs(t, 2, 2); err != nil {
		return err
	}
	a, y := t.Src[0], t.Src[1]
	if err := checkType(a, "a", quant.F32); err != nil {
		return err
	}
	if err := checkType(y, "b", quant.F32, quant.F16); err != nil {
		return err
	}
	if err := checkOut(t, quant.F32); err != nil {
		return err
	}
	if t.Ne != a.Ne {
		return fmt.Errorf("result shape %v differs from a %v", t.Ne, a.Ne)
	}
	for i, n := range y.Ne {
		if n <= 0 || a.Ne[i]%n != 0 {
			return fmt.Errorf("b %v cannot broadcast to a %v", y.Ne, a.Ne)
		}
	}
	return nil
}

// computeBinary computes ADD or MUL: t = a op b, b repeated to a's shape.
func computeBinary(b *Backend, t *ops.Tensor) error {
	if t.NumElements() == 0 {
		return nil
	}
	n, err := rowCount(t)
	if err != nil {
		return err
	}
	j := &b.elt
	*j = eltJob{t: t, k: &b.kern.elt, sc: &b.scratch, op: t.Op}
	j.setSources()
	grain := rowGrain(t.Ne[0])
	j.binary = j.k.binaryKernel(t.Op, b.reach(t, j.a, j.u), b.pool.threadsFor(n, grain), b.tuned.eltL3Bytes)
	b.pool.run(n, grain, j)
	return nil
}

// eltJob is one elementwise op's work, row by row, kept in the backend.
type eltJob struct {
	t      *ops.Tensor
	k      *eltKernels
	sc     *scratch
	op     ops.Op
	a, u   *ops.Tensor // sources (u: ADD/MUL's b, SWIGLU's second)
	am, um []byte
	tm     []byte
	// SCALE's parameters; SWIGLU's halves swapped; SWIGLU_OAI's.
	scale, bias  float32
	swapped      bool
	alpha, limit float32
	// binary is ADD's or MUL's row kernel, glu SWIGLU's, chosen for the
	// op's reach.
	binary, glu func(out, x, y []float32)
}

// setSources fills the job's sources and their memory from t.
func (j *eltJob) setSources() {
	j.a, j.u = j.t.Src[0], srcAt(j.t, 1)
	j.am, j.tm = mem(j.a), mem(j.t)
	if j.u != nil {
		j.um = mem(j.u)
	}
}

func (j *eltJob) do(w, lo, hi int) {
	t, a, u := j.t, j.a, j.u
	var wb *workerBuf
	if !packedF32(a) || u != nil && !packedF32(u) {
		var nu int64
		if u != nil {
			nu = u.Ne[0]
		}
		wb = j.sc.worker(w, a.Ne[0], nu, 0)
	}
	var sa, su []float32
	if wb != nil {
		sa, su = wb.f32, wb.f32b
	}
	for r := lo; r < hi; r++ {
		i1, i2, i3 := rowIndices(t.Ne, int64(r))
		out := outRow(t, j.tm, i1, i2, i3)
		switch j.op {
		case ops.OpAdd, ops.OpMul:
			x := floatRow(a, j.am, i1, i2, i3, sa)
			y := floatRow(u, j.um, i1%u.Ne[1], i2%u.Ne[2], i3%u.Ne[3], su)
			f := j.binary
			if len(y) == 1 {
				// One b value per row (MoE's expert weights): one
				// loop, not a kernel call per element. IEEE products
				// and sums are exact-rounded, so the bits are the
				// kernels'.
				broadcastScalar(out, x, y[0], j.op)
				break
			}
			// Each repeat of b's row covers len(y) elements of a's.
			for k := 0; k < len(out); k += len(y) {
				f(out[k:k+len(y)], x[k:k+len(y)], y)
			}
		case ops.OpScale:
			scaleRow(out, floatRow(a, j.am, i1, i2, i3, sa), j.scale, j.bias)
		case ops.OpSilu:
			j.k.silu(out, floatRow(a, j.am, i1, i2, i3, sa))
		case ops.OpGelu:
			j.k.gelu(out, floatRow(a, j.am, i1, i2, i3, sa))
		case ops.OpSwiGLU:
			var g, v []float32
			if u != nil {
				g = floatRow(a, j.am, i1, i2, i3, sa)
				v = floatRow(u, j.um, i1, i2, i3, su)
			} else {
				row := floatRow(a, j.am, i1, i2, i3, sa)
				nc := int64(len(out))
				g, v = row[:nc], row[nc:]
				if j.swapped {
					g, v = v, g
				}
			}
			j.glu(out, g, v)
		case ops.OpSwiGLUOAI:
			g := floatRow(a, j.am, i1, i2, i3, sa)
			v := floatRow(u, j.um, i1, i2, i3, su)
			j.k.swigluOAI(out, g, v, j.alpha, j.limit)
		}
	}
}

// packedF32 reports whether t's rows are packed float32, read in place.
func packedF32(t *ops.Tensor) bool {
	return t.Type == quant.F32 && t.Nb[0] == 4
}

// broadcastScalar sets out = x op s for ADD or MUL.
func broadcastScalar(out, x []float32, s float32, op ops.Op) {
	x = x[:len(out)]
	if op == ops.OpMul {
		for i, v := range x {
			out[i] = v * s
		}
		return
	}
	for i, v := range x {
		out[i] = v + s
	}
}

// reach is how far from the cores an elementwise op's tensors reach,
// which picks its row kernels (eltKernels).
type reach uint8

const (
	// reachL2: the tensors fit in the threads' L2 caches together.
	reachL2 reach = iota
	// reachL3: past the L2s, within the last level cache.
	reachL3
	// reachDRAM: past the last level cache. Nothing of the result would
	// be left in cache for the next op to read, and a plain store first
	// reads each output line from memory, a third more traffic for ADD
	// and MUL: the result is written around the caches.
	reachDRAM
)

// reach returns where the tensors of an elementwise op writing t from
// srcs (nil ones skipped) reach, each counted once.
func (b *Backend) reach(t *ops.Tensor, srcs ...*ops.Tensor) reach {
	bytes := t.Bytes()
	for _, s := range srcs {
		if s != nil {
			bytes += s.Bytes()
		}
	}
	switch {
	case bytes > b.llcBytes:
		return reachDRAM
	case bytes > b.l2Bytes:
		return reachL3
	}
	return reachL2
}

// binaryKernel returns ADD's (op OpAdd) or MUL's row kernel for an op of
// reach r run by threads threads; l3Bytes is EltL3Bytes's value, the
// vector width past the L2s with two or more threads.
func (k *eltKernels) binaryKernel(op ops.Op, r reach, threads, l3Bytes int) func(out, x, y []float32) {
	plain, l3, stream := k.add, k.addL3, k.addStream
	if op == ops.OpMul {
		plain, l3, stream = k.mul, k.mulL3, k.mulStream
	}
	if r == reachDRAM && stream != nil {
		return stream
	}
	if r >= reachL3 && l3 != nil && (threads == 1 || l3Bytes == 32) {
		return l3
	}
	return plain
}

// swigluKernel returns SWIGLU's row kernel for an op of reach r.
func (k *eltKernels) swigluKernel(r reach) func(out, g, v []float32) {
	if r == reachDRAM && k.swigluStream != nil {
		return k.swigluStream
	}
	return k.swiglu
}

// defaultL2, defaultLLC are the L2 and last level cache sizes taken
// where cpuid reports none.
const defaultL2, defaultLLC = 1 << 20, 32 << 20

// cacheSizes returns the bytes of the L2 caches of threads cores
// together and of the last level cache, as cpuid reports them (the LLC
// is the L3 a core shares, else the L2s), or defaultL2 and defaultLLC.
func cacheSizes(threads int) (l2, llc int64) {
	c := cpuid.CPU.Cache
	l2 = defaultL2
	if c.L2 > 0 {
		l2 = int64(c.L2)
	}
	l2 *= int64(max(threads, 1))
	llc = defaultLLC
	switch {
	case c.L3 > 0:
		llc = int64(c.L3)
	case c.L2 > 0:
		llc = l2
	}
	return l2, max(llc, l2)
}
