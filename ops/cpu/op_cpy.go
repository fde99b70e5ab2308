package cpu

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// CPY (copy with type conversion, in logical element order) and CONT
// (a packed copy of the same type).

func init() {
	addKernel(ops.OpCpy, supportsCpy, computeCpy)
}

// cpyRun is the most elements CPY converts at a time: one run of a row
// per work item, so long rows still spread over the workers.
const cpyRun = 4096

func supportsCpy(t *ops.Tensor) error {
	if err := checkSrcs(t, 2, 2); err != nil {
		return err
	}
	a, dst := t.Src[0], t.Src[1]
	if !isFloatType(a.Type) {
		return fmt.Errorf("a has type %v, want f32, f16 or bf16", a.Type)
	}
	if t.Type != dst.Type || t.Ne != dst.Ne || t.Nb != dst.Nb {
		return fmt.Errorf("node %v %v nb=%v does not match its destination %v %v nb=%v", t.Type, t.Ne, t.Nb, dst.Type, dst.Ne, dst.Nb)
	}
	if a.NumElements() != t.NumElements() {
		return fmt.Errorf("a has %d elements, the destination %d", a.NumElements(), t.NumElements())
	}
	switch {
	case t.Type.IsFloat():
	case t.Type == quant.Q8_K || t.Type == quant.Q8_1:
		return fmt.Errorf("%v is an activation format, not a copy destination", t.Type)
	case t.Type.IsQuantized() && !quant.CanQuantize(t.Type):
		return fmt.Errorf("no quantizer for %v", t.Type)
	case t.Type.IsQuantized():
		if !t.IsContiguous() {
			return fmt.Errorf("quantized destination must be contiguous")
		}
	default:
		return fmt.Errorf("destination type %v is not a float or quantized type", t.Type)
	}
	return nil
}

// computeCpy copies a's elements into t's storage in logical order. Each
// work item is a run of up to cpyRun elements of one destination row: the
// matching source elements are gathered into float32 scratch, then
// converted (or quantized, whole blocks at a time) into place.
func computeCpy(b *Backend, t *ops.Tensor) error {
	if t.NumElements() == 0 {
		return nil
	}
	a := t.Src[0]
	if a.Type == t.Type && (a.Ne == t.Ne || a.IsContiguous()) {
		b.cpySame(t)
		return nil
	}
	if a.Type == quant.F32 && t.HasContiguousRows() && (a.Nb[0] == 4 && a.Ne == t.Ne || a.IsContiguous()) {
		return b.cpyRows(t)
	}
	ne0 := t.Ne[0]
	bs, ts := t.Type.BlockSize(), t.Type.TypeSize()
	run := min(ne0, cpyRun)
	if t.Type.IsQuantized() {
		run = max(1, cpyRun/bs) * bs
		if ne0%bs != 0 {
			return fmt.Errorf("row of %d elements is not a multiple of %v's block size %d", ne0, t.Type, bs)
		}
	}
	runsPerRow := (ne0 + run - 1) / run
	n := t.NumRows() * runsPerRow
	if n > int64(int(^uint(0)>>1)) {
		return fmt.Errorf("%d work items is too many", n)
	}
	am, tm := mem(a), mem(t)
	errs := make([]error, b.pool.threads)
	b.pool.parallelFor(int(n), rowGrain(4*run), func(worker, lo, hi int) {
		buf := make([]float32, run)
		for item := int64(lo); item < int64(hi); item++ {
			r, k := item/runsPerRow, item%runsPerRow
			e0 := k * run
			vals := buf[:min(run, ne0-e0)]
			gatherLogical(a, am, r*ne0+e0, vals)
			i1, i2, i3 := rowIndices(t.Ne, r)
			off := i1*t.Nb[1] + i2*t.Nb[2] + i3*t.Nb[3]
			if !t.Type.IsQuantized() {
				storeFloats(t.Type, tm, off+e0*t.Nb[0], t.Nb[0], vals)
				continue
			}
			off += e0 / bs * ts
			if err := quant.QuantizeRow(t.Type, vals, tm[off:off+int64(len(vals))/bs*ts]); err != nil && errs[worker] == nil {
				errs[worker] = err
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("quantizing to %v: %w", t.Type, err)
		}
	}
	return nil
}

// cpyRows is CPY's path for f32 rows into a tensor with packed rows
// (writing the K/V cache, converting activations): row r of t is row r of
// a when the shapes are equal and a's rows are packed, or elements
// [r*ne0, (r+1)*ne0) of a contiguous a (the logical order CPY copies in),
// converted by the tier's converter for t's type (the bytes
// quant.QuantizeRow gives for finite values), one row per item.
func (b *Backend) cpyRows(t *ops.Tensor) error {
	n, err := rowCount(t)
	if err != nil {
		return err
	}
	rowBytes, err := t.Type.RowSize(t.Ne[0])
	if err != nil {
		return err
	}
	j := &b.cpy
	a := t.Src[0]
	*j = cpyRowsJob{t: t, am: mem(a), tm: mem(t), rowBytes: rowBytes, conv: b.kern.act[t.Type], errs: b.workerErrs(),
		flat: a.Ne != t.Ne || a.Nb[0] != 4}
	b.pool.run(n, rowGrain(4*t.Ne[0]), j)
	if err := j.errs.err(); err != nil {
		return fmt.Errorf("converting to %v: %w", t.Type, err)
	}
	return nil
}

// cpyRowsJob is one cpyRows call's work, kept in the backend so that a
// call allocates nothing.
type cpyRowsJob struct {
	t        *ops.Tensor
	am, tm   []byte
	rowBytes int64
	// conv is the tier's converter for t's type, nil for
	// quant.QuantizeRow.
	conv func(src []float32, dst []byte)
	errs workerErrors
	// flat: a is contiguous and row r of t takes a's elements
	// [r*ne0, (r+1)*ne0); otherwise row r of a, same shape.
	flat bool
}

func (j *cpyRowsJob) do(w, lo, hi int) {
	t, a := j.t, j.t.Src[0]
	for r := lo; r < hi && !j.errs.failed(w); r++ {
		i1, i2, i3 := rowIndices(t.Ne, int64(r))
		var src []float32
		if j.flat {
			src = f32s(j.am, 4*int64(r)*t.Ne[0], t.Ne[0])
		} else {
			src = f32s(j.am, i1*a.Nb[1]+i2*a.Nb[2]+i3*a.Nb[3], t.Ne[0])
		}
		off := i1*t.Nb[1] + i2*t.Nb[2] + i3*t.Nb[3]
		dst := j.tm[off : off+j.rowBytes]
		if j.conv != nil {
			j.conv(src, dst)
			continue
		}
		j.errs.set(w, quant.QuantizeRow(t.Type, src, dst))
	}
}

// cpySameBytes is the size below which a same-type copy runs on the
// calling thread: handing it to the workers costs more than the copy
// (the Mamba state copies of a decoded token are 6 to 200 KiB).
const cpySameBytes = 256 << 10

// cpySame copies t.Src[0] into t where both have one type and the source
// has t's shape or is contiguous (the logical order then is its byte
// order): CPY between tensors of one float type, and CONT. The bytes
// move unchanged, a packed run at a time, with no
// round trip through float32 (so a NaN keeps its payload) and no work per
// row beyond the copy, since a decoded token copies thousands of rows of
// one to three elements (Mamba's conv state). Both contiguous, it is one
// memmove, split over the workers when large.
func (b *Backend) cpySame(t *ops.Tensor) {
	j := &b.same
	*j = cpySameJob{t: t, am: mem(t.Src[0]), tm: mem(t)}
	total := t.Bytes()
	a := t.Src[0]
	if a.IsContiguous() && t.IsContiguous() {
		j.flatBytes = total
		chunks := int((total + cpySameChunk - 1) / cpySameChunk)
		if total < cpySameBytes {
			j.do(0, 0, chunks)
			return
		}
		b.pool.run(chunks, 2, j)
		return
	}
	rows := t.NumRows()
	if total < cpySameBytes || rows < 2 {
		j.do(0, 0, int(rows))
		return
	}
	b.pool.run(int(rows), int(max(1, cpySameChunk/max(1, t.RowBytes()))), j)
}

// cpySameChunk is a work item of a large contiguous same-type copy.
const cpySameChunk = 64 << 10

// cpySameJob is one cpySame call's work, kept in the backend so that a
// call allocates nothing. With flatBytes > 0 an item is a cpySameChunk
// of one memmove; otherwise an item is a row of t.
type cpySameJob struct {
	t         *ops.Tensor
	am, tm    []byte
	flatBytes int64
}

func (j *cpySameJob) do(_, lo, hi int) {
	if j.flatBytes > 0 {
		from := min(int64(lo)*cpySameChunk, j.flatBytes)
		to := min(int64(hi)*cpySameChunk, j.flatBytes)
		copy(j.tm[from:to], j.am[from:to])
		return
	}
	t, a := j.t, j.t.Src[0]
	// An element is a block of a block-quantized type (whose rows are
	// packed: supportsCont).
	ts := int64(t.Type.TypeSize())
	ne0, ne1 := t.Ne[0]/int64(t.Type.BlockSize()), t.Ne[1]
	flat := a.Ne != t.Ne
	// Rows lo..hi-1 in runs of one (i2, i3): each run is a 2-D copy.
	for r := int64(lo); r < int64(hi); {
		i1, i2, i3 := rowIndices(t.Ne, r)
		n := min(ne1-i1, int64(hi)-r)
		var from, srow, selem int64
		if flat {
			from, srow, selem = r*ne0*ts, ne0*ts, ts
		} else {
			from, srow, selem = i1*a.Nb[1]+i2*a.Nb[2]+i3*a.Nb[3], a.Nb[1], a.Nb[0]
		}
		to := i1*t.Nb[1] + i2*t.Nb[2] + i3*t.Nb[3]
		copyGrid(j.tm, to, t.Nb[1], t.Nb[0], j.am, from, srow, selem, ts, ne0, n)
		r += n
	}
}

// copyGrid copies rows rows of n elements of size bytes: element (i, r)
// from byte soff + r*srow + i*selem of src to byte doff + r*drow +
// i*delem of dst; strides are not negative (ops.View refuses them).
// Packed rows of 64 bytes or more are copied whole (a memmove call costs
// more than a short row); otherwise the elements move one at a time,
// 2- and 4-byte ones after one bounds check of the grid's last element
// (the thousands of rows of one to three elements of a Mamba state copy
// cost a few instructions each).
func copyGrid(dst []byte, doff, drow, delem int64, src []byte, soff, srow, selem, size, n, rows int64) {
	if n == 0 || rows == 0 {
		return
	}
	if selem == size && delem == size && n*size >= 64 {
		for r := range rows {
			copy(dst[doff+r*drow:doff+r*drow+n*size], src[soff+r*srow:soff+r*srow+n*size])
		}
		return
	}
	if size != 2 && size != 4 {
		for r := range rows {
			for i := range n {
				d, s := doff+r*drow+i*delem, soff+r*srow+i*selem
				copy(dst[d:d+size], src[s:s+size])
			}
		}
		return
	}
	_ = src[soff+(rows-1)*srow+(n-1)*selem+size-1]
	_ = dst[doff+(rows-1)*drow+(n-1)*delem+size-1]
	sp := unsafe.Pointer(&src[soff])
	dp := unsafe.Pointer(&dst[doff])
	if unalignedWords && size == 4 && selem == 4 && delem == 4 && n <= 4 {
		copyShortRows4(dp, drow, sp, srow, n, rows)
		return
	}
	for r := range rows {
		s, d := unsafe.Add(sp, r*srow), unsafe.Add(dp, r*drow)
		if size == 4 {
			for i := range n {
				*(*uint32)(unsafe.Add(d, i*delem)) = *(*uint32)(unsafe.Add(s, i*selem))
			}
			continue
		}
		for i := range n {
			*(*uint16)(unsafe.Add(d, i*delem)) = *(*uint16)(unsafe.Add(s, i*selem))
		}
	}
}

// unalignedWords: the architecture loads and stores 8-byte words at any
// 4-byte boundary (copyShortRows4's moves).
const unalignedWords = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64"

// copyShortRows4 copies rows rows of n (1 to 4) packed 4-byte elements,
// row r from sp + r*srow to dp + r*drow, each row in straight-line moves
// for its n: SSM_CONV's state rows (3 elements of each channel, between
// the cache and the conv input) and its one new column per token, a few
// thousand rows each, go through here every decode step.
func copyShortRows4(dp unsafe.Pointer, drow int64, sp unsafe.Pointer, srow int64, n, rows int64) {
	switch n {
	case 1:
		for r := range rows {
			*(*uint32)(unsafe.Add(dp, r*drow)) = *(*uint32)(unsafe.Add(sp, r*srow))
		}
	case 2:
		for r := range rows {
			*(*uint64)(unsafe.Add(dp, r*drow)) = *(*uint64)(unsafe.Add(sp, r*srow))
		}
	case 3:
		for r := range rows {
			s, d := unsafe.Add(sp, r*srow), unsafe.Add(dp, r*drow)
			*(*uint64)(d) = *(*uint64)(s)
			*(*uint32)(unsafe.Add(d, 8)) = *(*uint32)(unsafe.Add(s, 8))
		}
	case 4:
		for r := range rows {
			s, d := unsafe.Add(sp, r*srow), unsafe.Add(dp, r*drow)
			*(*uint64)(d) = *(*uint64)(s)
			*(*uint64)(unsafe.Add(d, 8)) = *(*uint64)(unsafe.Add(s, 8))
		}
	}
}

// gatherLogical converts len(dst) elements of t (F32, F16 or BF16; m its bytes),
// starting at logical (row-major) element index first, into dst.
func gatherLogical(t *ops.Tensor, m []byte, first int64, dst []float32) {
	ne := t.Ne
	j0 := first % ne[0]
	r := first / ne[0]
	j1, j2, j3 := rowIndices(ne, r)
	for len(dst) > 0 {
		c := min(ne[0]-j0, int64(len(dst)))
		loadFloats(t.Type, m, j0*t.Nb[0]+j1*t.Nb[1]+j2*t.Nb[2]+j3*t.Nb[3], t.Nb[0], dst[:c])
		dst = dst[c:]
		j0 = 0
		if j1++; j1 == ne[1] {
			j1 = 0
			if j2++; j2 == ne[2] {
				j2 = 0
				j3++
			}
		}
	}
}
