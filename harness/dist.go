package harness

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// DistKind is the family of a Dist.
type DistKind int

// The distributions a leaf's values are drawn from.
const (
	// DistUniform draws uniformly from [Lo, Hi).
	DistUniform DistKind = iota
	// DistNormal draws from a normal distribution of mean Mean and
	// standard deviation Std.
	DistNormal
	// DistInts draws integers uniformly from [Lo, Hi): ids, slots, and
	// floats with many ties. With Distinct, the values within each row
	// (dimension 0) differ, which needs Hi-Lo >= the row length.
	DistInts
	// DistPositions counts up from Lo along the flattened tensor: Lo,
	// Lo+1, ... (token positions).
	DistPositions
	// DistCausal is an attention mask of shape [n_kv, n_q, ...]: 0 where
	// key j may be seen by query i (j <= i + n_kv - n_q), -Inf elsewhere.
	DistCausal
	// DistMask is a random attention mask: each element is -Inf with
	// probability P, else uniform in [Lo, Hi).
	DistMask
	// DistPoison fills the bytes with 0xFF (NaN in every float format,
	// -1 as an integer): for destinations a kernel must overwrite.
	DistPoison
)

// A Dist describes how a leaf's values are drawn. Build it with one of the
// constructors (Uniform, Normal, Ints, ...) rather than by hand.
type Dist struct {
	Kind      DistKind
	Lo, Hi    float64
	Mean, Std float64
	// P is DistMask's probability of -Inf.
	P float64
	// Distinct makes DistInts values differ within each row.
	Distinct bool
	// MaskedRows lists rows (indices in dimension 1) set to -Inf entirely
	// in every plane, whatever the kind: fully masked softmax rows.
	MaskedRows []int64
	// Plants set single elements after the draw (and after MaskedRows):
	// the NaN and infinities of the non-finite cases. Their Leaf is not
	// read here.
	Plants []Plant
}

// A Plant sets one element of a case's leaf to a value after its draw: a
// NaN or an infinity planted in an input (see Case.Plants).
type Plant struct {
	// Leaf names the leaf, as the case's Build names it ("q", "sinks").
	Leaf string
	// At is the element's coordinates in the leaf's own shape (before
	// any view the case takes of it), innermost first.
	At    [4]int64
	Value float64
}

// String describes the plant as "NaN at k[0,3,1,0]".
func (p Plant) String() string {
	return fmt.Sprintf("%g at %s%s", p.Value, p.Leaf, shapeName(p.At[:]...))
}

// WithPlants returns d with ps set after the draw.
func (d Dist) WithPlants(ps ...Plant) Dist {
	d.Plants = append(append([]Plant(nil), d.Plants...), ps...)
	return d
}

// Uniform draws uniformly from [lo, hi).
func Uniform(lo, hi float64) Dist { return Dist{Kind: DistUniform, Lo: lo, Hi: hi} }

// Normal draws from N(mean, std²).
func Normal(mean, std float64) Dist { return Dist{Kind: DistNormal, Mean: mean, Std: std} }

// Ints draws integers uniformly from [lo, hi).
func Ints(lo, hi int64) Dist { return Dist{Kind: DistInts, Lo: float64(lo), Hi: float64(hi)} }

// DistinctInts draws integers from [lo, hi), distinct within each row.
func DistinctInts(lo, hi int64) Dist {
	d := Ints(lo, hi)
	d.Distinct = true
	return d
}

// Positions counts up from start.
func Positions(start int64) Dist { return Dist{Kind: DistPositions, Lo: float64(start)} }

// Causal is a causal attention mask (0 or -Inf).
func Causal() Dist { return Dist{Kind: DistCausal} }

// Mask is a random mask: -Inf with probability p, else uniform in [lo, hi).
func Mask(p, lo, hi float64) Dist { return Dist{Kind: DistMask, P: p, Lo: lo, Hi: hi} }

// Poison fills the bytes with 0xFF.
func Poison() Dist { return Dist{Kind: DistPoison} }

// WithMaskedRows returns d with the given rows (dimension 1) set to -Inf.
func (d Dist) WithMaskedRows(rows ...int64) Dist {
	d.MaskedRows = append(append([]int64(nil), d.MaskedRows...), rows...)
	return d
}

// String describes the distribution, such as "uniform[-1,1)".
func (d Dist) String() string {
	var s string
	switch d.Kind {
	case DistUniform:
		s = fmt.Sprintf("uniform[%g,%g)", d.Lo, d.Hi)
	case DistNormal:
		s = fmt.Sprintf("normal(%g,%g)", d.Mean, d.Std)
	case DistInts:
		s = fmt.Sprintf("ints[%g,%g)", d.Lo, d.Hi)
		if d.Distinct {
			s += " distinct"
		}
	case DistPositions:
		s = fmt.Sprintf("positions from %g", d.Lo)
	case DistCausal:
		s = "causal mask"
	case DistMask:
		s = fmt.Sprintf("mask(p=%g, [%g,%g))", d.P, d.Lo, d.Hi)
	case DistPoison:
		s = "poison"
	default:
		s = fmt.Sprintf("dist(%d)", int(d.Kind))
	}
	if len(d.MaskedRows) > 0 {
		rows := make([]string, len(d.MaskedRows))
		for i, r := range d.MaskedRows {
			rows[i] = fmt.Sprint(r)
		}
		s += ", rows " + strings.Join(rows, ",") + " masked"
	}
	for _, p := range d.Plants {
		s += fmt.Sprintf(", %g at %s", p.Value, shapeName(p.At[:]...))
	}
	return s
}

// check reports a distribution that cannot fill a tensor of shape ne.
func (d Dist) check(ne [4]int64) error {
	switch d.Kind {
	case DistUniform, DistMask:
		if !(d.Lo <= d.Hi) || math.IsInf(d.Lo, 0) || math.IsInf(d.Hi, 0) {
			return fmt.Errorf("harness: %v: bad range", d)
		}
		if d.P < 0 || d.P > 1 {
			return fmt.Errorf("harness: %v: probability out of [0,1]", d)
		}
	case DistNormal:
		if d.Std < 0 || math.IsNaN(d.Std) || math.IsNaN(d.Mean) {
			return fmt.Errorf("harness: %v: bad parameters", d)
		}
	case DistInts:
		if d.Lo != math.Trunc(d.Lo) || d.Hi != math.Trunc(d.Hi) || d.Hi <= d.Lo {
			return fmt.Errorf("harness: %v: need integer bounds lo < hi", d)
		}
		if d.Distinct && int64(d.Hi-d.Lo) < ne[0] {
			return fmt.Errorf("harness: %v: %d distinct values per row do not fit", d, ne[0])
		}
	case DistPositions, DistCausal, DistPoison:
	default:
		return fmt.Errorf("harness: unknown distribution kind %d", int(d.Kind))
	}
	for _, r := range d.MaskedRows {
		if r < 0 || r >= ne[1] {
			return fmt.Errorf("harness: %v: row %d outside %d rows", d, r, ne[1])
		}
	}
	for _, p := range d.Plants {
		if d.Kind == DistPoison {
			return fmt.Errorf("harness: %v: a poisoned leaf takes no plants", d)
		}
		for i, c := range p.At {
			if c < 0 || c >= ne[i] {
				return fmt.Errorf("harness: %v: plant at %v outside shape %v", d, p.At, ne)
			}
		}
	}
	return nil
}

// values draws the tensor's values in logical row-major order (dimension 0
// fastest). DistPoison has no values; its bytes are set directly.
func (d Dist) values(r *rand.Rand, ne [4]int64) []float64 {
	n := ne[0] * ne[1] * ne[2] * ne[3]
	v := make([]float64, n)
	switch d.Kind {
	case DistUniform:
		for i := range v {
			v[i] = d.Lo + (d.Hi-d.Lo)*r.Float64()
		}
	case DistNormal:
		for i := range v {
			v[i] = d.Mean + d.Std*r.NormFloat64()
		}
	case DistInts:
		span := int64(d.Hi - d.Lo)
		if !d.Distinct {
			for i := range v {
				v[i] = d.Lo + float64(r.Int64N(span))
			}
			break
		}
		pick := make([]int64, span)
		for row := int64(0); row < n/max(ne[0], 1); row++ {
			for i := range pick {
				pick[i] = int64(i)
			}
			for i := int64(0); i < ne[0]; i++ { // partial Fisher-Yates
				j := i + r.Int64N(span-i)
				pick[i], pick[j] = pick[j], pick[i]
				v[row*ne[0]+i] = d.Lo + float64(pick[i])
			}
		}
	case DistPositions:
		for i := range v {
			v[i] = d.Lo + float64(i)
		}
	case DistCausal:
		nkv, nq := ne[0], ne[1]
		for i := range v {
			j, q := int64(i)%nkv, int64(i)/nkv%nq
			if j > q+nkv-nq {
				v[i] = math.Inf(-1)
			}
		}
	case DistMask:
		for i := range v {
			if r.Float64() < d.P {
				v[i] = math.Inf(-1)
			} else {
				v[i] = d.Lo + (d.Hi-d.Lo)*r.Float64()
			}
		}
	}
	for _, row := range d.MaskedRows {
		for plane := int64(0); plane < ne[2]*ne[3]; plane++ {
			base := (plane*ne[1] + row) * ne[0]
			for j := int64(0); j < ne[0]; j++ {
				v[base+j] = math.Inf(-1)
			}
		}
	}
	for _, p := range d.Plants {
		v[p.At[0]+ne[0]*(p.At[1]+ne[1]*(p.At[2]+ne[2]*p.At[3]))] = p.Value
	}
	return v
}

// isZero reports whether d is the zero Dist, which a variant's field
// uses to mean "the op's default distribution".
func (d Dist) isZero() bool {
	return d.Kind == DistUniform && d.Lo == 0 && d.Hi == 0 && d.Mean == 0 && d.Std == 0 &&
		d.P == 0 && !d.Distinct && d.MaskedRows == nil && d.Plants == nil
}
