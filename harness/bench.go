package harness

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// A Dim is one named size of a benchmark op, such as MUL_MAT's "m", "n"
// and "k".
type Dim struct {
	Name    string
	Default int64
	// Doc says what the size is, for help texts.
	Doc string
}

// Dims are sizes by dimension name.
type Dims map[string]int64

// An Input is one leaf of a benchmark op: its name, type, distribution and
// shape.
type Input struct {
	Name string
	Type quant.Type
	Dist Dist
	Ne   []int64
}

// A BenchOp says how to benchmark one op: the sizes it takes, the types it
// runs with, and how to build its node from them. Benchmark points built
// from it are ordinary harness cases (see Point.Case), so every point that
// is measured can also be validated against the reference.
type BenchOp struct {
	Op ops.Op
	// Dims are the op's sizes, in display order.
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
	// Note says what the point builds, beyond the sizes (masks, modes).
	Note string

	inputs func(t quant.Type, d Dims) []Input
	build  func(in []*ops.Tensor, t quant.Type, d Dims) (*ops.Tensor, error)
	// caseTypes returns the case's Types for a point of type t (the
	// tolerance is looked up by the first); nil means {t}.
	caseTypes func(t quant.Type) []quant.Type
}

// Name returns the op's name in lower case, as flags spell it.
func (o BenchOp) Name() string { return strings.ToLower(o.Op.String()) }

// HasDim reports whether the op has a dimension called name.
func (o BenchOp) HasDim(name string) bool {
	return slices.ContainsFunc(o.Dims, func(d Dim) bool { return d.Name == name })
}

// TakesType reports whether t is one of the op's types.
func (o BenchOp) TakesType(t quant.Type) bool { return slices.Contains(o.Types, t) }

// DefaultDims returns the op's default sizes.
func (o BenchOp) DefaultDims() Dims {
	d := make(Dims, len(o.Dims))
	for _, x := range o.Dims {
		d[x.Name] = x.Default
	}
	return d
}

// BenchOps returns the benchmark description of every compute op, in
// ops.ComputeOps order.
func BenchOps() []BenchOp { return slices.Clone(benchOps) }

// LookupBenchOp returns the benchmark description of op.
func LookupBenchOp(op ops.Op) (BenchOp, error) {
	for _, o := range benchOps {
		if o.Op == op {
			return o, nil
		}
	}
	return BenchOp{}, fmt.Errorf("harness: no benchmark for op %v", op)
}

// A Point is one benchmark point: an op, a type and its sizes.
type Point struct {
	Op   ops.Op
	Type quant.Type
	Dims Dims
}

// NewPoint returns the point of op with type t and the given sizes; sizes
// not given take the op's defaults. A size the op does not have is an
// error.
func NewPoint(op ops.Op, t quant.Type, dims Dims) (Point, error) {
	o, err := LookupBenchOp(op)
	if err != nil {
		return Point{}, err
	}
	d := o.DefaultDims()
	for name, v := range dims {
		if !o.HasDim(name) {
			return Point{}, fmt.Errorf("harness: %s has no size %q (its sizes: %s)", o.Name(), name, dimNames(o))
		}
		d[name] = v
	}
	return Point{Op: op, Type: t, Dims: d}, nil
}

func dimNames(o BenchOp) string {
	s := make([]string, len(o.Dims))
	for i, d := range o.Dims {
		s[i] = d.Name
	}
	return strings.Join(s, ", ")
}

// Shape returns the sizes in the op's order, "m=4096,n=1,k=4096": the
// name of the point's case.
func (p Point) Shape() string { return p.format("=", ",") }

// BenchName returns the sizes as a benchmark name element,
// "m4096_n1_k4096".
func (p Point) BenchName() string { return p.format("", "_") }

func (p Point) format(eq, sep string) string {
	o, err := LookupBenchOp(p.Op)
	if err != nil {
		return "?"
	}
	parts := make([]string, 0, len(o.Dims))
	for _, d := range o.Dims {
		parts = append(parts, d.Name+eq+strconv.FormatInt(p.Dims[d.Name], 10))
	}
	return strings.Join(parts, sep)
}

// String returns "MUL_MAT/q4_0/m=4096,n=1,k=4096".
func (p Point) String() string { return p.Op.String() + "/" + p.Type.String() + "/" + p.Shape() }

// maxElements bounds the elements of any one input, far above anything a
// machine can hold, so that size arithmetic cannot overflow.
const maxElements = 1 << 48

// A Plan is what a point will cost, known before anything is allocated.
type Plan struct {
	// Cost is the op's cost model for the point.
	Cost ops.Cost
	// Memory estimates the host memory preparing the point takes at its
	// peak: the inputs as drawn (float64), packed, and written to the
	// backend, and the output.
	Memory int64
	// RefWork estimates the float64 reference's work (FLOPs plus the
	// elements it reads), to decide whether validating is affordable.
	RefWork int64
}

// Plan builds the point's node without allocating or drawing anything, so
// that a bad size or type is an error before any work, and returns what
// the point will cost.
func (p Point) Plan() (Plan, error) {
	o, err := LookupBenchOp(p.Op)
	if err != nil {
		return Plan{}, err
	}
	if !o.TakesType(p.Type) {
		return Plan{}, fmt.Errorf("harness: %s does not take type %v as its %s (it takes %s)", o.Name(), p.Type, o.TypeRole, typeList(o.Types))
	}
	for _, d := range o.Dims {
		v, ok := p.Dims[d.Name]
		if !ok {
			return Plan{}, fmt.Errorf("harness: %s: size %s is missing", o.Name(), d.Name)
		}
		if v < 1 {
			return Plan{}, fmt.Errorf("harness: %s: size %s=%d must be at least 1", o.Name(), d.Name, v)
		}
	}
	var pl Plan
	var leaves []*ops.Tensor
	for _, in := range o.inputs(p.Type, p.Dims) {
		elems := 1.0
		for _, n := range in.Ne {
			elems *= float64(n)
		}
		if elems > maxElements {
			return Plan{}, fmt.Errorf("harness: %s: input %s %v has %.3g elements, too many", o.Name(), in.Name, in.Ne, elems)
		}
		t, err := ops.NewTensor(in.Name, in.Type, in.Ne...)
		if err != nil {
			return Plan{}, fmt.Errorf("harness: %s: %w", o.Name(), err)
		}
		if err := in.Dist.check(t.Ne); err != nil {
			return Plan{}, fmt.Errorf("harness: %s: input %s: %w", o.Name(), in.Name, err)
		}
		leaves = append(leaves, t)
		pl.Memory += 8*t.NumElements() + 2*t.Bytes()
		pl.RefWork += t.NumElements()
	}
	node, err := o.build(leaves, p.Type, p.Dims)
	if err != nil {
		return Plan{}, fmt.Errorf("harness: %s %s: %w", o.Name(), p.Shape(), err)
	}
	pl.Cost = ops.CostOf(node)
	pl.Memory += node.Bytes() + 8*node.NumElements()
	pl.RefWork += pl.Cost.Flops
	return pl, nil
}

func typeList(ts []quant.Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}

// Case returns the point as a harness case: its leaves drawn as Inputs
// describes, its name the point's Shape.
func (p Point) Case() (Case, error) {
	o, err := LookupBenchOp(p.Op)
	if err != nil {
		return Case{}, err
	}
	ts := []quant.Type{p.Type}
	if o.caseTypes != nil {
		ts = o.caseTypes(p.Type)
	}
	dims := cloneDims(p.Dims)
	t := p.Type
	return Case{
		Name: p.Shape(), Op: p.Op, Types: ts,
		Build: func(b *Builder) (*ops.Tensor, error) {
			var leaves []*ops.Tensor
			for _, in := range o.inputs(t, dims) {
				leaves = append(leaves, b.Leaf(in.Name, in.Type, in.Dist, in.Ne...))
			}
			if b.Err() != nil {
				return nil, b.Err()
			}
			return o.build(leaves, t, dims)
		},
	}, nil
}

func cloneDims(d Dims) Dims {
	out := make(Dims, len(d))
	for k, v := range d {
		out[k] = v
	}
	return out
}

// DefaultRefBudget is the reference work (see Plan.RefWork) above which
// Prepare skips the float64 reference: about a second of the reference's
// plain loops.
const DefaultRefBudget = 1e9

// PrepareOptions configure Prepare.
type PrepareOptions struct {
	// RefBudget bounds the float64 reference's work (Plan.RefWork) spent
	// on validating a point: above it, the point is computed once and
	// validated on a sample of its outputs where its op allows it
	// (MUL_MAT, MUL_MAT_ID, FLASH_ATTN_EXT: see Sampled), else checked
	// for memory safety only, and its result says "unvalidated".
	// Zero means DefaultRefBudget; negative means never validate.
	RefBudget int64
	// Cache, when set, carries a point's drawn inputs and reference
	// output from one backend's Prepare to the next, so a point run on
	// several backends is drawn and referenced once.
	Cache *PointCache
}

// A PointCache holds one case's drawn inputs and reference output across
// calls to Prepare on several backends. It holds a single case: preparing
// another case empties it.
type PointCache struct {
	c pointCache
}

// pointCache is the cache behind PointCache and runOptions; a nil
// *pointCache caches nothing.
type pointCache struct {
	id    string
	draws map[drawKey][]byte
	want  []float64
}

// drawKey identifies one leaf of a case.
type drawKey struct {
	index int
	name  string
	typ   quant.Type
	ne    [4]int64
	dist  string
}

func (c *pointCache) forCase(id string) {
	if c.id != id {
		*c = pointCache{id: id, draws: map[drawKey][]byte{}}
	}
}

func (c *pointCache) draw(k drawKey) []byte {
	if c == nil {
		return nil
	}
	return c.draws[k]
}

func (c *pointCache) keepDraw(k drawKey, data []byte) {
	if c != nil && data != nil {
		c.draws[k] = data
	}
}

func (c *pointCache) reference() []float64 {
	if c == nil {
		return nil
	}
	return c.want
}

func (c *pointCache) setReference(want []float64) {
	if c != nil {
		c.want = want
	}
}

// A Prepared point is a case built on a backend and computed once (and
// validated when affordable), ready to be timed: its inputs stay as drawn
// for every repetition.
type Prepared struct {
	// Node is the computed node, allocated in the backend's memory.
	Node *ops.Tensor
	// Cost is the node's cost model.
	Cost ops.Cost
	// Result is the validation: StatusOK, or StatusSkipped with a reason
	// starting "unvalidated" when the reference was too costly.
	Result Result
	b      *Builder
}

// Validated reports whether the point was compared with the reference
// (and passed).
func (p *Prepared) Validated() bool { return p.Result.Status == StatusOK }

// Unvalidated reports whether the reference comparison was skipped.
func Unvalidated(r Result) bool {
	return r.Status == StatusSkipped && r.Reason == unvalidatedReason
}

// CheckMemory checks again that nothing was written past the node or its
// inputs and that the inputs are unchanged: run it after timing, since a
// race may show only over many repetitions.
func (p *Prepared) CheckMemory() error {
	reason, err := checkMemory(p.b, p.Node)
	if err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	if reason != "" {
		return fmt.Errorf("harness: after timing: %s", reason)
	}
	return nil
}

// Prepare builds case c on be (drawing its inputs, or taking them from
// o.Cache), computes it once and validates the output as Run does, unless
// the reference's work exceeds o.RefBudget. It returns the prepared node
// when the case passed or was left unvalidated, and nil otherwise; the
// result says what happened either way.
func Prepare(be ops.Backend, c Case, o PrepareOptions) (*Prepared, Result) {
	budget := o.RefBudget
	if budget == 0 {
		budget = DefaultRefBudget
	}
	var cache *pointCache
	if o.Cache != nil {
		cache = &o.Cache.c
		cache.forCase(c.ID() + "#" + strconv.FormatUint(c.seed(), 16))
	}
	var p *Prepared
	res := run(be, c, runOptions{
		cache: cache,
		skipReference: func(node *ops.Tensor) bool {
			return budget < 0 || refWork(node) > budget
		},
		sample: budget >= 0,
		keep: func(node *ops.Tensor, b *Builder) {
			p = &Prepared{Node: node, Cost: ops.CostOf(node), b: b}
		},
	})
	if p == nil {
		return nil, res
	}
	p.Result = res
	return p, res
}

// refWork is Plan.RefWork for a built node.
func refWork(node *ops.Tensor) int64 {
	w := ops.CostOf(node).Flops
	for _, s := range node.Src {
		if s != nil {
			w += s.NumElements()
		}
	}
	return w
}

// shapeError returns an error wrapping ops.ErrShape, for sizes a benchmark
// op cannot take.
func shapeError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ops.ErrShape}, args...)...)
}
