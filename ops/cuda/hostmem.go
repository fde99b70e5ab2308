package cuda

import (
	"fmt"
	"unsafe"
)

// The memory the backend keeps so that a split allocates nothing once
// warm: device memory for copies of writable host tensors (copyPool),
// pinned host memory that uploads pass through (staging), and the status
// words of the checks of queued nodes (statusBlock).

// copyPool keeps device memory for the copies of writable host tensors,
// by exact size, so that the emulator's bounds check still ends at the
// copy's last byte. A copy is taken for queued work and comes back at the
// next synchronization (see releaseBuffer); memory idle for poolIdleSyncs
// synchronizations is freed.
type copyPool struct {
	free map[int64][]pooled
}

// A pooled buffer waits in the pool; idle counts the synchronizations
// since it came back.
type pooled struct {
	d    *deviceBuffer
	idle int
}

// poolIdleSyncs is how many synchronizations a pooled buffer waits to be
// taken again before it is freed.
const poolIdleSyncs = 64

// take returns a pooled buffer of size bytes, or nil.
func (p *copyPool) take(size int64) *deviceBuffer {
	l := p.free[size]
	if len(l) == 0 {
		return nil
	}
	d := l[len(l)-1].d
	p.free[size] = l[:len(l)-1]
	return d
}

// put gives d back to the pool.
func (p *copyPool) put(d *deviceBuffer) {
	if p.free == nil {
		p.free = map[int64][]pooled{}
	}
	p.free[d.size] = append(p.free[d.size], pooled{d: d})
}

// age counts a synchronization and frees the buffers idle too long.
func (p *copyPool) age() {
	for size, l := range p.free {
		kept := l[:0]
		for _, e := range l {
			if e.idle++; e.idle > poolIdleSyncs {
				e.d.release()
				continue
			}
			kept = append(kept, e)
		}
		clear(l[len(kept):])
		if len(kept) == 0 {
			delete(p.free, size)
		} else {
			p.free[size] = kept
		}
	}
}

// releaseAll frees the pooled buffers.
func (p *copyPool) releaseAll() {
	for _, l := range p.free {
		for _, e := range l {
			e.d.release()
		}
	}
	p.free = nil
}

// hostCopy returns device memory holding p, a writable host tensor's
// bytes, for the work queued until the next synchronization: pooled
// memory of its size when there is some.
func (b *Backend) hostCopy(p []byte) (*deviceBuffer, error) {
	d := b.copies.take(int64(len(p)))
	if d == nil {
		var err error
		if d, err = b.alloc(int64(len(p))); err != nil {
			return nil, err
		}
		d.pooled = true
	}
	if len(p) > 0 {
		if err := b.upload(d.ptr, p); err != nil {
			b.copies.put(d)
			return nil, err
		}
	}
	return d, nil
}

// releaseBuffer is the release of the backend's temporaries and kept
// copies: a pooled copy goes back to the pool, other memory is freed.
func (b *Backend) releaseBuffer(d *deviceBuffer) {
	if d.pooled && !b.closed {
		b.copies.put(d)
		return
	}
	d.release()
}

// staging is pinned host memory (cuMemHostAlloc) that uploads pass
// through: a copy from pinned memory is truly asynchronous on a GPU, and
// a captured one is allowed. Its chunks are filled in turn and reused
// after the next synchronization; up to stagingMax bytes are added while
// work is queued, beyond which an upload outside a capture waits for the
// stream (the first copy of a model's weights) and one inside adds more.
type staging struct {
	chunks [][]byte
	cur    int // the chunk being filled
	off    int // its first free byte
}

// Staging sizes: one chunk, and the most kept while work is queued.
const (
	stagingChunk = 4 << 20
	stagingMax   = 64 << 20
)

// stage returns pinned memory for up to n bytes of an upload (at least
// one byte, at most n), in use until the next synchronization.
func (b *Backend) stage(n int) ([]byte, error) {
	s := &b.pinned
	for {
		if s.cur < len(s.chunks) {
			if c := s.chunks[s.cur]; s.off < len(c) {
				k := min(n, len(c)-s.off)
				p := c[s.off : s.off+k]
				s.off += k
				return p, nil
			}
			s.cur, s.off = s.cur+1, 0
			continue
		}
		if len(s.chunks)*stagingChunk >= stagingMax && !b.capturing {
			// Every chunk holds bytes of queued copies: wait for them.
			if err := b.api.check("cuStreamSynchronize", b.api.cuStreamSynchronize(b.strm)); err != nil {
				return nil, err
			}
			s.cur, s.off = 0, 0
			continue
		}
		var p unsafe.Pointer
		if err := b.api.check("cuMemHostAlloc", b.api.cuMemHostAlloc(&p, stagingChunk, 0)); err != nil {
			return nil, fmt.Errorf("cuda: allocating %d bytes of pinned memory: %w", stagingChunk, err)
		}
		s.chunks = append(s.chunks, unsafe.Slice((*byte)(p), stagingChunk))
	}
}

// resetStaging makes the staging memory free again: the copies from it
// are done.
func (b *Backend) resetStaging() { b.pinned.cur, b.pinned.off = 0, 0 }

// freeStaging frees the staging memory beyond stagingMax (chunks a
// capture added), or all of it.
func (b *Backend) freeStaging(all bool) {
	s := &b.pinned
	keep := 0
	if !all {
		keep = min(len(s.chunks), stagingMax/stagingChunk)
	}
	for _, c := range s.chunks[keep:] {
		b.api.cuMemFreeHost(unsafe.Pointer(&c[0]))
	}
	clear(s.chunks[keep:])
	s.chunks = s.chunks[:keep]
}

// upload queues the copy of p to device address dst, through the staging
// memory: p may change once upload returns.
func (b *Backend) upload(dst uint64, p []byte) error {
	for len(p) > 0 {
		buf, err := b.stage(len(p))
		if err != nil {
			return err
		}
		n := copy(buf, p)
		if err := b.api.check("cuMemcpyHtoDAsync_v2", b.api.cuMemcpyHtoDAsync(dst, unsafe.Pointer(&buf[0]), uint64(n), b.strm)); err != nil {
			return err
		}
		dst += uint64(n)
		p = p[n:]
	}
	return nil
}

// A statusBlock holds statusSlots status word pairs in device memory and
// the pinned host memory they are copied to.
type statusBlock struct {
	dev  *deviceBuffer
	host []byte
}

// newStatusBlock allocates a block of status words, zeroed.
func (b *Backend) newStatusBlock() (statusBlock, error) {
	d, err := b.alloc(statusBlockBytes)
	if err != nil {
		return statusBlock{}, err
	}
	var p unsafe.Pointer
	if err := b.api.check("cuMemHostAlloc", b.api.cuMemHostAlloc(&p, statusBlockBytes, 0)); err != nil {
		d.release()
		return statusBlock{}, fmt.Errorf("cuda: allocating pinned memory for status words: %w", err)
	}
	return statusBlock{dev: d, host: unsafe.Slice((*byte)(p), statusBlockBytes)}, nil
}

// free frees the block's memory.
func (s statusBlock) free(b *Backend) {
	s.dev.release()
	b.api.cuMemFreeHost(unsafe.Pointer(&s.host[0]))
}
