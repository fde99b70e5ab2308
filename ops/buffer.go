package ops

import (
	"errors"
	"fmt"
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
type HostBuffer struct {
	b        []byte
	readOnly bool
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
	return copy(h.b[off:], p), nil
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
