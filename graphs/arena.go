package graphs

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
)

// Align is the byte alignment of every node an Arena places, enough for
// any kernel to view a node's bytes as float32 or wider vectors.
const Align = 64

// An Arena is one backend buffer that holds the intermediates of a graph
// at the offsets its memory plan gives them. It is reused by successive
// plans: a graph placed in it keeps valid data only until another graph is
// placed in the same arena and computed. When a plan needs more bytes than
// the buffer has, the arena replaces it with a larger one (tensors placed
// earlier keep the old buffer alive).
type Arena struct {
	backend ops.Backend
	buf     ops.Buffer
	used    int64
}

// NewArena returns an empty arena that allocates from b.
func NewArena(b ops.Backend) *Arena { return &Arena{backend: b} }

// Size returns the size of the arena's buffer in bytes (0 before the first
// allocation).
func (a *Arena) Size() int64 {
	if a.buf == nil {
		return 0
	}
	return a.buf.Size()
}

// Used returns the bytes the last plan placed in the arena took.
func (a *Arena) Used() int64 { return a.used }

// check fails unless the arena allocates from b (an arena made without a
// backend takes the first one it is used with).
func (a *Arena) check(b ops.Backend) error {
	if a.backend == nil {
		a.backend = b
	}
	if a.backend != b {
		return fmt.Errorf("graphs: arena allocates from backend %s, not %s", a.backend.Name(), b.Name())
	}
	return nil
}

// reserve returns the arena's buffer, grown first to at least size bytes.
func (a *Arena) reserve(b ops.Backend, size int64) (ops.Buffer, error) {
	if err := a.check(b); err != nil {
		return nil, err
	}
	if a.buf == nil || a.buf.Size() < size {
		buf, err := b.Alloc(size)
		if err != nil {
			return nil, fmt.Errorf("graphs: allocating %d bytes on %s: %w", size, b.Name(), err)
		}
		a.buf = buf
	}
	a.used = size
	return a.buf, nil
}
