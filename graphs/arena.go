package graphs

import (
	"errors"
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops"
)

// Align is the byte alignment of every node an Arena places, enough for
// any kernel to view a node's bytes as float32 or wider vectors.
const Align = 64

// An Arena is one backend buffer that holds the computed nodes of a graph,
// each at its own aligned offset. It is reused by successive allocations:
// a graph placed in it keeps valid data only until another graph is placed
// in the same arena and computed. When a graph needs more bytes than the
// buffer has, the arena replaces it with a larger one (tensors placed
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

// Used returns the bytes the last placement took.
func (a *Arena) Used() int64 { return a.used }

// place gives each tensor storage in the arena's buffer, growing it first
// when they do not fit.
func (a *Arena) place(b ops.Backend, ts []*ops.Tensor) error {
	if a.backend == nil {
		a.backend = b
	}
	if a.backend != b {
		return fmt.Errorf("graphs: arena allocates from backend %s, not %s", a.backend.Name(), b.Name())
	}
	offs := make([]int64, len(ts))
	total := int64(0)
	for i, t := range ts {
		e := t.Extent()
		if e < 0 {
			return fmt.Errorf("graphs: node %s has a negative extent %d", t.Label(), e)
		}
		if total > math.MaxInt64-e-Align {
			return errors.New("graphs: graph storage overflows int64")
		}
		offs[i] = total
		total += (e + Align - 1) / Align * Align
	}
	if a.buf == nil || a.buf.Size() < total {
		buf, err := b.Alloc(total)
		if err != nil {
			return fmt.Errorf("graphs: allocating %d bytes on %s: %w", total, b.Name(), err)
		}
		a.buf = buf
	}
	for i, t := range ts {
		t.Buffer, t.Offset = a.buf, offs[i]
	}
	a.used = total
	return nil
}
