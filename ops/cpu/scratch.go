package cpu

import (
	"errors"
	"unsafe"
)

// Scratch memory for the matrix kernels. Each call allocates what its
// shapes need; buffers are 8-byte aligned so that float32 and int16 views
// of them are aligned.

// alignedBytes returns n zeroed bytes whose first byte is 8-byte aligned.
func alignedBytes(n int64) []byte {
	if n <= 0 {
		return nil
	}
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), n)
}

// workerErrors collects the errors workers meet, one slot per worker, so
// that a failing worker never panics and the caller reports the failure.
type workerErrors []error

// set records err for worker w, keeping the first one.
func (e workerErrors) set(w int, err error) {
	if err != nil && e[w] == nil {
		e[w] = err
	}
}

// failed reports whether worker w has already failed.
func (e workerErrors) failed(w int) bool { return e[w] != nil }

// err returns the recorded errors joined, or nil.
func (e workerErrors) err() error { return errors.Join(e...) }

// scratch is a backend's reusable working memory for the hot kernels:
// grown when a call needs more, never shrunk, so that repeated calls of
// the same shapes allocate nothing. A backend runs one Compute at a time,
// so one set serves every kernel.
type scratch struct {
	errs  workerErrors // one slot per worker
	act   []byte       // activation rows converted to the vec-dot type
	pack  []byte       // activations in a gemm kernel's packed layout
	packF []float32    // activation panels of the packed float gemm
	f32   []float32    // per-call values (ALiBi slopes)
	dy    []float32    // activation block scales as float32
	quad  []quadOut    // per worker: the outputs of a four-row kernel
	ids   []int64      // GET_ROWS: the source row of each output row
	// workers holds each worker's private buffers.
	workers []workerBuf
}

// workerBuf is one worker's private scratch.
type workerBuf struct {
	f32   []float32
	f32b  []float32
	bytes []byte
	// rows are a panel transpose's sixteen source rows (kept here, as
	// a local array passed to the tier's kernel would be allocated on
	// every call).
	rows [16][]uint32
}

// growBytes returns b with length n, reallocated (zeroed, 8-byte
// aligned) when its capacity is short. The contents are not kept.
func growBytes(b []byte, n int64) []byte {
	if int64(cap(b)) < n {
		return alignedBytes(n)
	}
	return b[:n]
}

// growF32 returns b with length n, reallocated when its capacity is
// short. The contents are not kept.
func growF32(b []float32, n int64) []float32 {
	if int64(cap(b)) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// worker returns worker w's buffers with at least nf floats, nf2 floats
// in the second buffer and nb bytes.
func (s *scratch) worker(w int, nf, nf2, nb int64) *workerBuf {
	wb := &s.workers[w]
	wb.f32 = growF32(wb.f32, nf)
	wb.f32b = growF32(wb.f32b, nf2)
	wb.bytes = growBytes(wb.bytes, nb)
	return wb
}

// workerErrs returns the backend's per-worker error slots, cleared.
func (b *Backend) workerErrs() workerErrors {
	e := b.scratch.errs
	if len(e) != b.pool.threads {
		e = make(workerErrors, b.pool.threads)
		b.scratch.errs = e
	}
	clear(e)
	return e
}

// quadOut is one worker's outputs of a four-row kernel, padded to 128
// bytes (two cache lines, which Zen and Intel cores fetch in pairs) so
// that no two workers write one line. Unpadded, the workers' four floats
// shared a line that every kernel call wrote: a MUL_MAT_ID decode
// (q4_K, 768x2048, 128 experts, 8 used) took 205 us instead of 120 in
// some processes, with 22% of its time in copying the four outputs out.
type quadOut struct {
	v [4]float32
	_ [112]byte
}
