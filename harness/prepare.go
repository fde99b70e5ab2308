package harness

import (
	"fmt"
	"strconv"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

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
	// Weights marks the buffer of a MUL_MAT's or MUL_MAT_ID's weight
	// operand as holding weights, as a model's are, so that the backend
	// may run the path it runs for a model (the CPU's repacked x8
	// matrix-vector kernels, for instance), not the one for plain
	// buffers.
	Weights bool
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
		sample:  budget >= 0,
		weights: o.Weights,
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
