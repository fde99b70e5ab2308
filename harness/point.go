package harness

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// A Point is one benchmark point: an op, a type and its sizes. It becomes
// an ordinary case (Case), the op's variant at those sizes, so every point
// that is measured can also be validated against the reference.
type Point struct {
	Op   ops.Op
	Type quant.Type
	Dims Dims
}

// NewPoint returns the point of op with type t and the given sizes; sizes
// not given take the op's defaults. A size the op does not have is an
// error.
func NewPoint(op ops.Op, t quant.Type, dims Dims) (Point, error) {
	o, err := LookupOpDef(op)
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

func dimNames(o OpDef) string {
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
	o, err := LookupOpDef(p.Op)
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

// Plan builds the point's node without allocating or drawing anything (a
// Builder that only shapes its leaves), so that a bad size or type is an
// error before any work, and returns what the point will cost.
func (p Point) Plan() (Plan, error) {
	o, c, err := p.lookup()
	if err != nil {
		return Plan{}, err
	}
	return c.plan(o.Name(), p.Shape())
}

// Plan builds the case's node as Point.Plan does, without data, and
// returns what running it will cost (opbench validate -shard balances its
// shards by it).
func (c Case) Plan() (Plan, error) {
	return c.plan(c.Op.String(), c.Name)
}

func (c Case) plan(op, shape string) (Plan, error) {
	b := newPlanBuilder()
	node, err := build(c, b)
	if b.Err() != nil {
		return Plan{}, fmt.Errorf("harness: %s: %w", op, err) // names the input
	}
	if err != nil {
		return Plan{}, fmt.Errorf("harness: %s %s: %w", op, shape, err)
	}
	pl := Plan{Cost: ops.CostOf(node), Memory: b.plan.memory, RefWork: b.plan.elements}
	pl.Memory += node.Bytes() + 8*node.NumElements()
	pl.RefWork += pl.Cost.Flops
	return pl, nil
}

// Node builds the point's node as Plan does, with shapes, strides, types
// and parameters but no data: the form another program's description of
// the same computation is derived from (see bench/ggmlperf).
func (p Point) Node() (*ops.Tensor, error) {
	o, c, err := p.lookup()
	if err != nil {
		return nil, err
	}
	b := newPlanBuilder()
	node, err := build(c, b)
	if err != nil {
		return nil, fmt.Errorf("harness: %s %s: %w", o.Name(), p.Shape(), err)
	}
	return node, nil
}

// Case returns the point as a harness case: the op's variant at the
// point's type and sizes, named by its Shape.
func (p Point) Case() (Case, error) {
	_, c, err := p.lookup()
	if err != nil {
		return Case{}, err
	}
	c.Name = p.Shape()
	return c, nil
}

// lookup checks the point's type and sizes and returns its op's
// definition and the case of its variant.
func (p Point) lookup() (OpDef, Case, error) {
	o, err := LookupOpDef(p.Op)
	if err != nil {
		return o, Case{}, err
	}
	if !o.TakesType(p.Type) {
		return o, Case{}, fmt.Errorf("harness: %s does not take type %v as its %s (it takes %s)", o.Name(), p.Type, o.TypeRole, typeList(o.Types))
	}
	d := make(Dims, len(o.Dims))
	for _, x := range o.Dims {
		v, ok := p.Dims[x.Name]
		if !ok {
			return o, Case{}, fmt.Errorf("harness: %s: size %s is missing", o.Name(), x.Name)
		}
		if v < 1 {
			return o, Case{}, fmt.Errorf("harness: %s: size %s=%d must be at least 1", o.Name(), x.Name, v)
		}
		d[x.Name] = v
	}
	c, err := o.point(p.Type, d)
	if err != nil {
		return o, Case{}, fmt.Errorf("harness: %s %s: %w", o.Name(), p.Shape(), err)
	}
	return o, c, nil
}

func typeList(ts []quant.Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}
