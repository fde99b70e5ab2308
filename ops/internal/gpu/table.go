package gpu

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
)

// A Kernel is how a backend computes one op. Run is the backend's own
// (CUDA launches, Metal encodes).
type Kernel[F any] struct {
	// Supports returns nil when the backend's kernels take t (types,
	// shapes, parameters), else why not.
	Supports func(t *ops.Tensor) error
	// Run computes t.
	Run F
	// Checked, when set, marks an op whose kernels check their input data
	// and write the status words: it gives the error for a code and
	// detail they wrote.
	Checked func(t *ops.Tensor, code, detail int32) error
}

// A Table holds a backend's kernels by op. Each op's file adds its op
// from init; Supports and the backend's Compute dispatch through it.
type Table[F any] struct {
	backend string
	kernels map[ops.Op]Kernel[F]
}

// NewTable returns an empty table of backend's kernels (backend prefixes
// the errors: "cuda", "metal").
func NewTable[F any](backend string) *Table[F] {
	return &Table[F]{backend: backend, kernels: map[ops.Op]Kernel[F]{}}
}

// Add adds op's kernels. Adding an op twice is a programming error (two
// files claim the op) and panics, at init.
func (tb *Table[F]) Add(op ops.Op, supports func(t *ops.Tensor) error, run F) {
	tb.add(op, Kernel[F]{Supports: supports, Run: run})
}

// AddChecked adds op's kernels, which check their input data: a bad input
// sets the status words and describe gives the error for them.
func (tb *Table[F]) AddChecked(op ops.Op, supports func(t *ops.Tensor) error, run F, describe func(t *ops.Tensor, code, detail int32) error) {
	tb.add(op, Kernel[F]{Supports: supports, Run: run, Checked: describe})
}

func (tb *Table[F]) add(op ops.Op, k Kernel[F]) {
	if _, dup := tb.kernels[op]; dup {
		panic(tb.backend + ": two kernels added for " + op.String())
	}
	tb.kernels[op] = k
}

// Kernel returns op's kernels, and whether the table has them.
func (tb *Table[F]) Kernel(op ops.Op) (Kernel[F], bool) {
	k, ok := tb.kernels[op]
	return k, ok
}

// Supports reports whether the backend can compute t: nil, or why not,
// prefixed with the backend and the op.
func (tb *Table[F]) Supports(t *ops.Tensor) error {
	k, ok := tb.kernels[t.Op]
	if !ok {
		return fmt.Errorf("%s: no kernel for %v", tb.backend, t.Op)
	}
	if err := k.Supports(t); err != nil {
		return fmt.Errorf("%s: %v: %w", tb.backend, t.Op, err)
	}
	return nil
}

// SupportsAll is Supports of every node, the first refusal.
func (tb *Table[F]) SupportsAll(nodes []*ops.Tensor) error {
	for _, t := range nodes {
		if err := tb.Supports(t); err != nil {
			return err
		}
	}
	return nil
}

// Locked runs f between enter and the function enter returns (a
// backend's lock, and on CUDA its context made current): the shape of
// every Compute, ComputeGraph and Synchronize.
func Locked(enter func() (leave func(), err error), f func() error) error {
	leave, err := enter()
	if err != nil {
		return err
	}
	defer leave()
	return f()
}
