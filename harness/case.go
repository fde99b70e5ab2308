package harness

import (
	"hash/fnv"
	"strings"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// Expect is what a case expects of the op and the backend.
type Expect int

const (
	// ExpectMatch: the node builds, computes, and matches the reference
	// within the tolerance.
	ExpectMatch Expect = iota
	// ExpectRefuse: building fails with an error wrapping ops.ErrShape or
	// quant.ErrRowLength (a shape or type the op must not take).
	ExpectRefuse
	// ExpectReject: the node builds but Compute must return an error (data
	// the op must not take, such as an id out of range), without writing
	// out of bounds.
	ExpectReject
)

// A Case is one op on one set of shapes, types and parameters, declared
// once and run on any backend.
type Case struct {
	// Name describes the shapes and options, such as "m=16,n=1,k=256" or
	// "heads=8,kv=4,d=64,nq=7,nkv=33,mask,sinks". Op, Name and Types
	// together identify the case.
	Name string
	Op   ops.Op
	// Types are the element types the case exercises, for filtering.
	// Types[0] is the one the tolerance is looked up by: the weight type
	// of MUL_MAT and MUL_MAT_ID, the source type of GET_ROWS, the K/V type
	// of FLASH_ATTN_EXT, the destination type of CPY, the input type
	// otherwise.
	Types []quant.Type
	// Tag selects a tolerance entry for a variant of the op that needs its
	// own limit (for example "large-pos" for ROPE); usually empty.
	Tag string
	// Seed seeds the input draws; 0 derives one from Op, Name and Types.
	Seed   uint64
	Expect Expect
	// Large marks cases too big for the default set.
	Large bool
	// Build creates the leaves through b and returns the node to compute.
	Build func(b *Builder) (*ops.Tensor, error)
	// Plants set single elements of the named leaves to NaN or
	// infinities after the draw: a non-finite case, whose output must be
	// non-finite exactly where the reference's is, of the same kind (NaN,
	// +Inf, -Inf).
	Plants []Plant
	// Check, when set, makes extra assertions on the backend's output
	// (got) beyond the tolerance, such as rows that must be exactly zero.
	Check func(got []float64) error
}

// TypeString returns the case's types for display: "f32->q4_0" for CPY,
// else the types joined by commas.
func (c Case) TypeString() string {
	if c.Op == ops.OpCpy && len(c.Types) == 2 {
		return c.Types[1].String() + "->" + c.Types[0].String()
	}
	s := make([]string, len(c.Types))
	for i, t := range c.Types {
		s[i] = t.String()
	}
	return strings.Join(s, ",")
}

// ID returns "OP/types/name", unique within a case set.
func (c Case) ID() string {
	return c.Op.String() + "/" + c.TypeString() + "/" + c.Name
}

// seed returns the case's seed.
func (c Case) seed() uint64 {
	if c.Seed != 0 {
		return c.Seed
	}
	h := fnv.New64a()
	h.Write([]byte(c.ID()))
	return h.Sum64()
}
