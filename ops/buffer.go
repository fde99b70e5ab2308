package ops

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"
)

// A Buffer is a block of memory owned by a backend: host memory for the
// CPU, device memory for a GPU. Tensors live in buffers at an offset.
//
// For device memory, ReadAt is a download and WriteAt an upload of len(p)
// bytes; both order after the work queued on the buffer (a backend's
// buffers wait for, or queue behind, its pending computations), so callers
// read results and write inputs without synchronizing first.
type Buffer interface {
	// Size returns the buffer's size in bytes.
	Size() int64
	// ReadAt copies len(p) bytes at off into p.
	ReadAt(p []byte, off int64) (int, error)
	// WriteAt copies p into the buffer at off.
	WriteAt(p []byte, off int64) (int, error)
}

// HostBuffer is a Buffer in ordinary Go memory. Its bytes are 64-byte
// aligned so that kernels may view them as []float32 or wider words.
//
// A buffer marked as holding weights (MarkWeights) lets a backend keep a
// derived copy of a tensor in it, such as the CPU's repacked weight
// layouts, valid while the buffer's write generation (Gen) is unchanged:
// WriteAt advances it, and so must Touch after a write through Bytes.
type HostBuffer struct {
	b        []byte
	readOnly bool
	weights  bool
	gen      atomic.Uint64
	// release, when set, drops bytes from memory (see Release).
	release func(p []byte)
}

// NewHostBuffer allocates a zeroed host buffer of size bytes.
func NewHostBuffer(size int64) (*HostBuffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("ops: negative buffer size %d", size)
	}
	const align = 64
	words := make([]uint64, (size+2*align)/8)
	base := unsafe.Pointer(unsafe.SliceData(words))
	skip := (align - uintptr(base)%align) % align
	all := unsafe.Slice((*byte)(base), len(words)*8)
	return &HostBuffer{b: all[skip : skip+uintptr(size) : skip+uintptr(size)]}, nil
}

// Bytes returns the buffer's memory.
func (h *HostBuffer) Bytes() []byte { return h.b }

// Size returns the buffer's size in bytes.
func (h *HostBuffer) Size() int64 { return int64(len(h.b)) }

// ReadAt copies len(p) bytes at off into p.
func (h *HostBuffer) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(h.b)) {
		return 0, fmt.Errorf("ops: read of %d bytes at %d outside host buffer of %d", len(p), off, len(h.b))
	}
	return copy(p, h.b[off:]), nil
}

// WriteAt copies p into the buffer at off. It fails for a read-only
// buffer.
func (h *HostBuffer) WriteAt(p []byte, off int64) (int, error) {
	if h.readOnly {
		return 0, ErrReadOnly
	}
	if off < 0 || off+int64(len(p)) > int64(len(h.b)) {
		return 0, fmt.Errorf("ops: write of %d bytes at %d outside host buffer of %d", len(p), off, len(h.b))
	}
	n := copy(h.b[off:], p)
	h.gen.Add(1)
	return n, nil
}

// Gen returns the buffer's write generation, which changes with every
// WriteAt and Touch: a copy derived from the buffer's bytes at one
// generation is stale at another.
func (h *HostBuffer) Gen() uint64 { return h.gen.Load() }

// Touch advances the write generation; call it after writing the
// buffer's memory through Bytes (or computing into it), so that copies
// derived from the old bytes are not used.
func (h *HostBuffer) Touch() { h.gen.Add(1) }

// MarkWeights declares that the buffer holds weights: read by many
// computations and written rarely, so that a backend may keep derived
// copies of its tensors (revalidated by Gen). It returns h.
func (h *HostBuffer) MarkWeights() *HostBuffer {
	h.weights = true
	return h
}

// Weights reports whether MarkWeights declared the buffer as holding
// weights.
func (h *HostBuffer) Weights() bool { return h.weights }

// SetRelease installs the function Release calls (for a buffer over a
// file mapping: one that drops the pages, which the file still holds).
func (h *HostBuffer) SetRelease(f func(p []byte)) { h.release = f }

// Release tells the buffer that bytes [off, off+n) will not be read for
// a while, for instance because a backend now reads its own copy of
// them: a buffer over a file mapping drops their pages from memory (a
// later read faults them back in from the file); other buffers keep
// them. Out-of-range requests are clipped.
func (h *HostBuffer) Release(off, n int64) {
	if h.release == nil {
		return
	}
	off = max(off, 0)
	end := min(off+n, int64(len(h.b)))
	if end > off {
		h.release(h.b[off:end])
	}
}

// WrapHostBytes returns a HostBuffer over existing memory, such as a
// memory-mapped file, without copying it. Unlike NewHostBuffer it promises
// no alignment beyond b's own; tensors placed in it must keep their element
// alignment (GGUF aligns tensor data to 32 bytes by default).
func WrapHostBytes(b []byte) *HostBuffer {
	return &HostBuffer{b: b[:len(b):len(b)]}
}

// ErrReadOnly is returned for writes into read-only host memory.
var ErrReadOnly = errors.New("ops: buffer is read-only")

// WrapHostBytesReadOnly is WrapHostBytes for memory that must not be
// written, such as a read-only file mapping: WriteAt fails with ErrReadOnly
// and backends refuse to compute into it (writing would fault).
func WrapHostBytesReadOnly(b []byte) *HostBuffer {
	h := WrapHostBytes(b)
	h.readOnly = true
	return h
}

// ReadOnly reports whether the buffer refuses writes.
func (h *HostBuffer) ReadOnly() bool { return h.readOnly }
