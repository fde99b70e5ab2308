package harness

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// An OpDef declares one op to the harness, once: its named sizes, the
// types it runs with, how a point of it is built, its validation cases
// and its tolerances. Validation (Cases), benchmark points (Point, and so
// `go test -bench` and opbench sweep) and the tolerance table all take the
// op from here, as ggml's test-backend-ops runs one test struct in both its
// correctness and its perf mode.
//
// Each op's definition is a file of this package, op_<name>.go, that
// registers it from an init function (ops that share a variant type, such
// as ADD and MUL, share a file: op_binary.go, op_unary.go). The file also
// declares the op's variant type: a struct of the sizes, types and options
// (layouts, masks, modes) its nodes are built from, with a Case method
// whose Build is the one function that draws the leaves through a Builder
// and makes the node. A benchmark point is a
// variant at the point's sizes with default options; the validation cases
// are variants at edge shapes and options, plus, where a case needs a
// build of its own (operands that do not match, which the op must refuse),
// a Case with a custom Build in the same file.
//
// An op's cost (FLOPs and bytes moved) is its own, not a case's: the
// formula lives in ops' cost table, where graphs read it too, and the
// harness takes it through ops.CostOf.
type OpDef struct {
	Op ops.Op
	// Dims are the op's sizes, in display order: what a benchmark point
	// or a sweep sets.
	Dims []Dim
	// Types are the types a point may have; DefaultType is used when none
	// is asked for. TypeRole says which operand the type is, such as
	// "weights" or "K/V cache".
	Types       []quant.Type
	DefaultType quant.Type
	TypeRole    string
	// FlopBound reports whether the op is read by GFLOP/s (matrix
	// products, attention); the others are read by GB/s.
	FlopBound bool
	// Shapes are the default shapes of `go test -bench`, modest enough to
	// run in seconds on the generic tier.
	Shapes []Dims
	// Note says what a point builds, beyond the sizes (masks, modes).
	Note string
	// Tolerances are the op's entries of the tolerance table, each with
	// the reason for its limits (see LookupTolerance); their Op is the
	// definition's.
	Tolerances []Tolerance

	// point returns the case of a benchmark point: the op's variant for
	// type t at sizes d (every size of Dims, each at least 1), with
	// default options. Point.Case names it by the sizes.
	point func(t quant.Type, d Dims) (Case, error)
	// cases returns the op's validation cases, default and large.
	cases func() []Case
	// sample, when set, computes the float64 reference of a sample of
	// node's outputs, for points too costly for the whole reference:
	// their indices in the output and values (see sampled.go).
	sample func(node *ops.Tensor, rng *rand.Rand) (idx []int64, want []float64, err error)
	// expect, when set, turns the reference's values for node into the
	// values the backend must produce (CPY rounds them through its
	// destination type).
	expect func(node *ops.Tensor, want []float64) ([]float64, error)
}

// A Dim is one named size of an op, such as MUL_MAT's "m", "n" and "k".
type Dim struct {
	Name    string
	Default int64
	// Doc says what the size is, for help texts.
	Doc string
}

// Dims are sizes by dimension name.
type Dims map[string]int64

// Dimension names shared by the ops, so that a sweep over "n" means tokens
// (or rows) for every op that has it.
const (
	DimM       = "m"        // output rows: weight rows of a matrix product, rows of a table
	DimN       = "n"        // tokens (activation columns, queries, rows)
	DimK       = "k"        // row length: the dot-product length, or a row's elements
	DimKV      = "kv"       // keys: KV cache length, or the softmax row length
	DimD       = "d"        // head size
	DimHeads   = "heads"    // query heads
	DimKVHeads = "kv_heads" // K/V heads (GQA)
	DimExperts = "experts"  // experts of a MoE layer
	DimUsed    = "used"     // experts used per token
	DimDConv   = "d_conv"   // Mamba convolution width
	DimDInner  = "d_inner"  // Mamba channels
	DimDState  = "d_state"  // Mamba state size
	DimHeadDim = "head_dim" // Mamba-2 head size (1: Mamba-1)
	DimSeqs    = "seqs"     // sequences in the batch
)

// Name returns the op's name in lower case, as flags spell it.
func (o OpDef) Name() string { return strings.ToLower(o.Op.String()) }

// HasDim reports whether the op has a dimension called name.
func (o OpDef) HasDim(name string) bool {
	return slices.ContainsFunc(o.Dims, func(d Dim) bool { return d.Name == name })
}

// TakesType reports whether t is one of the op's types.
func (o OpDef) TakesType(t quant.Type) bool { return slices.Contains(o.Types, t) }

// DefaultDims returns the op's default sizes.
func (o OpDef) DefaultDims() Dims {
	d := make(Dims, len(o.Dims))
	for _, x := range o.Dims {
		d[x.Name] = x.Default
	}
	return d
}

// shapeError returns an error wrapping ops.ErrShape, for sizes a point of
// an op cannot take.
func shapeError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ops.ErrShape}, args...)...)
}

// opDefs holds the registered definitions in op order.
var opDefs []OpDef

// register adds an op's definition; each op_*.go file calls it from init.
// The definitions are complete once the package is initialized, so no
// package-level variable of this package may read them.
func register(d OpDef) {
	if d.point == nil || d.cases == nil || len(d.Dims) == 0 || len(d.Types) == 0 {
		panic(fmt.Sprintf("harness: definition of %v lacks a point, cases, sizes or types", d.Op))
	}
	if slices.ContainsFunc(opDefs, func(x OpDef) bool { return x.Op == d.Op }) {
		panic(fmt.Sprintf("harness: %v defined twice", d.Op))
	}
	d.Tolerances = slices.Clone(d.Tolerances)
	for i := range d.Tolerances {
		if t := &d.Tolerances[i]; t.Op == ops.OpNone {
			t.Op = d.Op
		} else if t.Op != d.Op {
			panic(fmt.Sprintf("harness: definition of %v has a tolerance of %v", d.Op, t.Op))
		}
	}
	opDefs = append(opDefs, d)
	slices.SortStableFunc(opDefs, func(a, b OpDef) int { return int(a.Op) - int(b.Op) })
}

// OpDefs returns the definition of every op, in ops.ComputeOps order.
func OpDefs() []OpDef { return slices.Clone(opDefs) }

// LookupOpDef returns the definition of op.
func LookupOpDef(op ops.Op) (OpDef, error) {
	for _, o := range opDefs {
		if o.Op == op {
			return o, nil
		}
	}
	return OpDef{}, fmt.Errorf("harness: no definition of op %v", op)
}

// lookupDef returns the definition of op, or nil.
func lookupDef(op ops.Op) *OpDef {
	for i := range opDefs {
		if opDefs[i].Op == op {
			return &opDefs[i]
		}
	}
	return nil
}
