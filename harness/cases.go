package harness

import (
	"fmt"
	"math"
	"slices"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// AllCases returns every case, default and large: the validation cases of
// every op's definition, in op order.
func AllCases() []Case {
	var out []Case
	for _, o := range opDefs {
		out = append(out, o.cases()...)
	}
	return out
}

// Cases returns the default case set: every compute op and type with its
// edge shapes, sized to run in seconds on a CPU.
func Cases() []Case {
	return slices.DeleteFunc(AllCases(), func(c Case) bool { return c.Large })
}

// LargeCases returns the model-sized cases left out of Cases.
func LargeCases() []Case {
	return slices.DeleteFunc(AllCases(), func(c Case) bool { return !c.Large })
}

// uni is the default input distribution.
var uni = Uniform(-1, 1)

// weightTypes are the types MUL_MAT and GET_ROWS take as weights: every
// float and block-quantized type.
func weightTypes() []quant.Type {
	var out []quant.Type
	for _, t := range quant.Types() {
		if t.IsFloat() || t.IsQuantized() {
			out = append(out, t)
		}
	}
	return out
}

// f32Only is the type list of the ops that compute in f32 only.
var f32Only = []quant.Type{quant.F32}

// leafOrPermuted allocates a leaf of shape ne, or when permuted one with
// dims 1 and 2 swapped, permuted back to ne (non-contiguous).
func leafOrPermuted(b *Builder, name string, t quant.Type, d Dist, permuted bool, ne []int64) *ops.Tensor {
	if !permuted {
		return b.Leaf(name, t, d, ne...)
	}
	full := []int64{1, 1, 1, 1}
	copy(full, ne)
	full[1], full[2] = full[2], full[1]
	return b.Permute(b.Leaf(name, t, d, full...), 0, 2, 1, 3)
}

// rowLen returns a row length for type t: n blocks for block types; for
// element types (block size 1) the length odd, which they allow.
func rowLen(t quant.Type, blocks int64) int64 {
	if bs := t.BlockSize(); bs > 1 {
		return blocks * bs
	}
	return 32*blocks + 1
}

func types(ts ...quant.Type) []quant.Type { return ts }

// refuse marks a case as one the op must refuse at build time.
func refuse(c Case) Case {
	c.Expect = ExpectRefuse
	return c
}

// reject marks a case whose Compute must fail.
func reject(c Case) Case {
	c.Expect = ExpectReject
	return c
}

// named returns c under another name: a variant whose generated name
// would not say what the case is about.
func named(c Case, name string) Case {
	c.Name = name
	return c
}

// suffixed returns c with suffix added to its name.
func suffixed(c Case, suffix string) Case {
	c.Name += suffix
	return c
}

// large marks a case as part of the large set.
func large(c Case) Case {
	c.Large = true
	return c
}

// zeroAt returns a Check that elements whose coordinate in dimension dim is
// one of idx are exactly zero, in an output of shape ne: the rows of a
// fully masked softmax or attention query, zeros by definition.
func zeroAt(ne [4]int64, dim int, idx ...int64) func(got []float64) error {
	return func(got []float64) error {
		for i, g := range got {
			c := coords(int64(i), ne)
			if slices.Contains(idx, c[dim]) && g != 0 {
				return fmt.Errorf("fully masked row: element %v is %g, want 0", c, g)
			}
		}
		return nil
	}
}

// shapeName formats a shape as "[64,7,4,1]" for case names.
func shapeName(ne ...int64) string {
	s := "["
	for i, n := range ne {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(n)
	}
	return s + "]"
}

// opTypes returns t, then u when u is not f32: the types of an op whose
// second operand is usually f32.
func opTypes(t, u quant.Type) []quant.Type {
	if u == quant.F32 {
		return []quant.Type{t}
	}
	return []quant.Type{t, u}
}

// The values non-finite cases plant.
var (
	nan  = math.NaN()
	pinf = math.Inf(1)
	ninf = math.Inf(-1)
)

// at returns a Plant of v at coords (up to four, the rest 0) of leaf.
func at(leaf string, v float64, coords ...int64) Plant {
	p := Plant{Leaf: leaf, Value: v}
	copy(p.At[:], coords)
	return p
}

// planted returns c with ps planted in its leaves and named after them:
// a non-finite case, whose output must be non-finite where the
// reference's is, of the same kind. Its Check (added to c's) asserts
// that the output has a non-finite element, so that a plant reached it.
func planted(c Case, ps ...Plant) Case {
	return withPlants(c, func(got []float64) error {
		if !slices.ContainsFunc(got, isNonFinite) {
			return fmt.Errorf("every output is finite, though NaN or Inf was planted where it is read")
		}
		return nil
	}, ps)
}

// plantedFinite is planted for a case whose output must stay finite,
// where the op defines what a NaN or infinity becomes: keys whose mask is
// -Inf never contribute, a -Inf logit's probability is 0, SWIGLU_OAI
// clamps its inputs.
func plantedFinite(c Case, ps ...Plant) Case {
	return withPlants(c, func(got []float64) error {
		if i := slices.IndexFunc(got, isNonFinite); i >= 0 {
			return fmt.Errorf("element %d is %g, want every output finite", i, got[i])
		}
		return nil
	}, ps)
}

// withPlants returns c with ps planted, named after them, and check (if
// any) added to c's Check.
func withPlants(c Case, check func(got []float64) error, ps []Plant) Case {
	c.Plants = append(slices.Clone(c.Plants), ps...)
	for _, p := range ps {
		c.Name += "," + p.String()
	}
	prev := c.Check
	if check == nil {
		return c
	}
	c.Check = func(got []float64) error {
		if err := check(got); err != nil {
			return err
		}
		if prev != nil {
			return prev(got)
		}
		return nil
	}
	return c
}

func isNonFinite(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }
