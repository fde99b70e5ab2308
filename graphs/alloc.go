package graphs

import (
	"errors"
	"math"
)

// A block is a range of bytes of an arena.
type block struct {
	off, size int64
}

// An allocator hands out ranges of one arena's bytes: it keeps the free
// ranges below its high-water mark in offset order, gives each request
// the smallest free range that fits (best fit, lowest offset on ties), and
// grows the high-water mark only when none does. Its decisions depend only
// on the sequence of requests, so a plan is deterministic.
type allocator struct {
	free []block
	end  int64
}

var errOverflow = errors.New("graphs: graph storage overflows int64")

// alloc returns the offset of size free bytes. A zero size takes no bytes
// and gets offset 0.
func (a *allocator) alloc(size int64) (int64, error) {
	if size == 0 {
		return 0, nil
	}
	best := -1
	for i, b := range a.free {
		if b.size >= size && (best < 0 || b.size < a.free[best].size) {
			best = i
		}
	}
	if best >= 0 {
		b := &a.free[best]
		off := b.off
		b.off += size
		b.size -= size
		if b.size == 0 {
			a.free = append(a.free[:best], a.free[best+1:]...)
		}
		return off, nil
	}
	// Extend the last free range when it ends at the high-water mark.
	start := a.end
	if n := len(a.free); n > 0 && a.free[n-1].off+a.free[n-1].size == a.end {
		start = a.free[n-1].off
		a.free = a.free[:n-1]
	}
	if start > math.MaxInt64-size {
		return 0, errOverflow
	}
	a.end = start + size
	return start, nil
}

// release gives back the size bytes at off, merging them with free
// neighbours.
func (a *allocator) release(off, size int64) {
	if size == 0 {
		return
	}
	i := 0
	for i < len(a.free) && a.free[i].off < off {
		i++
	}
	a.free = append(a.free, block{})
	copy(a.free[i+1:], a.free[i:])
	a.free[i] = block{off, size}
	if i+1 < len(a.free) && a.free[i].off+a.free[i].size == a.free[i+1].off {
		a.free[i].size += a.free[i+1].size
		a.free = append(a.free[:i+1], a.free[i+2:]...)
	}
	if i > 0 && a.free[i-1].off+a.free[i-1].size == a.free[i].off {
		a.free[i-1].size += a.free[i].size
		a.free = append(a.free[:i], a.free[i+1:]...)
	}
}

// alignUp rounds n up to a multiple of Align.
func alignUp(n int64) (int64, error) {
	if n < 0 || n > math.MaxInt64-Align {
		return 0, errOverflow
	}
	return (n + Align - 1) / Align * Align, nil
}
