package harness

import (
	"fmt"
	"math/rand/v2"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// guardBytes is the number of sentinel bytes placed past every tensor the
// harness allocates, on a backend that does not check bounds itself (see
// BoundsChecker).
const guardBytes = 64

// BoundsChecker is implemented by backends whose kernels fault on any
// access outside a device buffer (the SIMT emulator's checked builds,
// with red zones around every buffer). The harness gives their tensors
// no guard bytes: sentinel bytes inside the buffer would sit between a
// tensor's end and the red zone, where a short read past an input's end
// goes unnoticed (the sentinels only show writes). Without them, a read
// or write of even one byte past a tensor is the backend's fault.
type BoundsChecker interface {
	// ChecksBounds reports whether the bounds checks are on.
	ChecksBounds() bool
}

// guardFor returns the guard bytes to place past each tensor on be.
func guardFor(be ops.Backend) int64 {
	if c, ok := be.(BoundsChecker); ok && c.ChecksBounds() {
		return 0
	}
	return guardBytes
}

// A Builder creates the leaves of one case on one backend: it allocates
// each leaf (plus guard bytes where the backend does not check bounds), draws its values from a Dist with a seed
// derived from the case's, and uploads them with Buffer.WriteAt. The same
// case and seed give bit-identical inputs on every backend.
//
// The first error a Builder meets is kept (see Err) and every later call
// returns nil, so a Build function may chain calls and check once: Run
// reports the Builder's error ahead of the one Build returns.
type Builder struct {
	backend ops.Backend
	// guard is the sentinel bytes past each tensor: guardFor(backend).
	guard  int64
	seed   uint64
	leaves []*leaf
	err    error
	// cache, when set, supplies and keeps the drawn bytes of each leaf.
	cache *pointCache
	// plan, when set, makes the builder allocate and draw nothing: it
	// shapes and checks each leaf and tallies its size (see Point.Plan).
	plan *planTally
	// plants are the case's planted elements (Case.Plants), added to
	// the Dist of the leaf each names; used counts those that found it.
	plants []Plant
	used   []bool
}

// planTally is what a planning Builder's leaves add up to.
type planTally struct {
	// memory is the host memory the leaves take while being prepared:
	// drawn as float64, packed, and written to the backend.
	memory int64
	// elements counts the leaves' elements, which the reference reads.
	elements int64
}

// leaf is one allocated input and what was written to it.
type leaf struct {
	t    *ops.Tensor
	dist Dist
	data []byte // the bytes written at [0, extent)
}

func newBuilder(b ops.Backend, seed uint64) *Builder {
	return &Builder{backend: b, guard: guardFor(b), seed: seed}
}

// newPlanBuilder returns a Builder that allocates and draws nothing.
func newPlanBuilder() *Builder { return &Builder{plan: &planTally{}} }

// Err returns the first error the builder met, or nil.
func (b *Builder) Err() error { return b.err }

// Leaf allocates a contiguous leaf tensor of type t and shape ne (innermost
// first) and fills it from d. Float and quantized leaves are drawn as f32
// and stored with quant.QuantizeRow; integer leaves take the values as
// drawn (use Ints or Positions for them).
func (b *Builder) Leaf(name string, t quant.Type, d Dist, ne ...int64) *ops.Tensor {
	if b.err != nil {
		return nil
	}
	if b.plan != nil {
		elems := 1.0
		for _, n := range ne {
			elems *= float64(n)
		}
		if elems > maxElements {
			b.err = fmt.Errorf("input %s %v has %.3g elements, too many", name, ne, elems)
			return nil
		}
	}
	x, err := ops.NewTensor(name, t, ne...)
	if err != nil {
		b.err = b.leafError(name, err)
		return nil
	}
	d = b.plant(name, d)
	if err := d.check(x.Ne); err != nil {
		b.err = b.leafError(name, err)
		return nil
	}
	if b.plan != nil {
		b.plan.memory += 8*x.NumElements() + 2*x.Bytes()
		b.plan.elements += x.NumElements()
		b.leaves = append(b.leaves, &leaf{t: x, dist: d})
		return x
	}
	key := drawKey{index: len(b.leaves), name: name, typ: t, ne: x.Ne, dist: d.String()}
	data := b.cache.draw(key) // nil unless drawn for another backend
	if data == nil && d.Kind == DistPoison {
		data = poisonBytes(x.Extent())
	} else if data == nil {
		r := rand.New(rand.NewPCG(b.seed, uint64(len(b.leaves))+1))
		data, err = encode(t, x.Ne[0], d.values(r, x.Ne))
		if err != nil {
			b.err = fmt.Errorf("harness: leaf %s: %w", name, err)
			return nil
		}
	}
	b.cache.keepDraw(key, data)
	if err := ops.AllocTensor(b.backend, x, b.guard); err != nil {
		b.err = fmt.Errorf("harness: leaf %s: alloc %d bytes: %w", name, x.Extent()+b.guard, err)
		return nil
	}
	if err := writeGuarded(x, data, b.guard); err != nil {
		b.err = fmt.Errorf("harness: leaf %s: %w", name, err)
		return nil
	}
	b.leaves = append(b.leaves, &leaf{t: x, dist: d, data: data})
	return x
}

// plant returns d with the case's plants of leaf name added.
func (b *Builder) plant(name string, d Dist) Dist {
	for i, p := range b.plants {
		if p.Leaf == name {
			d = d.WithPlants(p)
			b.used[i] = true
		}
	}
	return d
}

// unusedPlant returns an error for the first plant whose leaf the case
// did not make, or nil.
func (b *Builder) unusedPlant() error {
	for i, p := range b.plants {
		if !b.used[i] {
			return fmt.Errorf("harness: the case has no leaf %q to plant %v in", p.Leaf, p.Value)
		}
	}
	return nil
}

// leafError describes a leaf the builder could not make.
func (b *Builder) leafError(name string, err error) error {
	if b.plan != nil {
		return fmt.Errorf("input %s: %w", name, err)
	}
	return fmt.Errorf("harness: leaf %s: %w", name, err)
}

// Permute returns ops.Permute(a, axes...), keeping the first error.
func (b *Builder) Permute(a *ops.Tensor, axes ...int) *ops.Tensor {
	return b.view(func() (*ops.Tensor, error) { return ops.Permute(a, axes...) }, a)
}

// Transpose returns ops.Transpose(a), keeping the first error.
func (b *Builder) Transpose(a *ops.Tensor) *ops.Tensor {
	return b.view(func() (*ops.Tensor, error) { return ops.Transpose(a) }, a)
}

// View returns ops.View(a, ne, nb, offset), keeping the first error.
func (b *Builder) View(a *ops.Tensor, ne, nb []int64, offset int64) *ops.Tensor {
	return b.view(func() (*ops.Tensor, error) { return ops.View(a, ne, nb, offset) }, a)
}

// Reshape returns ops.Reshape(a, ne...), keeping the first error.
func (b *Builder) Reshape(a *ops.Tensor, ne ...int64) *ops.Tensor {
	return b.view(func() (*ops.Tensor, error) { return ops.Reshape(a, ne...) }, a)
}

func (b *Builder) view(f func() (*ops.Tensor, error), a *ops.Tensor) *ops.Tensor {
	if b.err != nil {
		return nil
	}
	if a == nil {
		b.err = fmt.Errorf("harness: view of a nil tensor")
		return nil
	}
	v, err := f()
	if err != nil {
		b.err = fmt.Errorf("harness: view of %s: %w", a.Label(), err)
		return nil
	}
	return v
}

// inputs describes the leaves, one line each: name, type, shape, values.
func (b *Builder) inputs() []string {
	out := make([]string, len(b.leaves))
	for i, l := range b.leaves {
		out[i] = fmt.Sprintf("%s %v %v: %v", l.t.Name, l.t.Type, l.t.Ne, l.dist)
	}
	return out
}

func poisonBytes(n int64) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = 0xFF
	}
	return p
}
