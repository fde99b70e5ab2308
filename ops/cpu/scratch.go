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

// workerScratch holds one float32 buffer and one byte buffer per worker.
type workerScratch struct {
	f32   [][]float32
	bytes [][]byte
}

// newWorkerScratch returns scratch for threads workers: nf float32 values
// and nb bytes each.
func newWorkerScratch(threads int, nf, nb int64) *workerScratch {
	s := &workerScratch{f32: make([][]float32, threads), bytes: make([][]byte, threads)}
	for w := range threads {
		if nf > 0 {
			s.f32[w] = make([]float32, nf)
		}
		s.bytes[w] = alignedBytes(nb)
	}
	return s
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
