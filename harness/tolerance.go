package harness

import (
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// AnyType in a Tolerance matches every type.
const AnyType quant.Type = math.MaxUint32

// A Tolerance is how far a backend's output may be from the float64
// reference for one op and type, and why.
type Tolerance struct {
	Op   ops.Op     `json:"-"`
	Type quant.Type `json:"-"`
	// Tag, when set, applies the entry only to cases with that Tag.
	Tag string `json:"-"`
	// MaxNMSE bounds sum((got-want)²)/sum(want²).
	MaxNMSE float64 `json:"max_nmse"`
	// MaxRelErr, when > 0, bounds max|got-want| / max|want|: it catches a
	// few wrong elements that the average hides.
	MaxRelErr float64 `json:"max_rel_err,omitempty"`
	// Exact requires every element to equal the reference.
	Exact bool `json:"exact,omitempty"`
	// Reason says where the error comes from and why the limit is what
	// it is.
	Reason string `json:"reason"`
}

// The tolerance table is the union of every op definition's Tolerances
// (OpDef): each op's limits are set once, in its definition, each with its
// reason. Lookup takes the first entry matching (op, type, tag), then (op,
// any type, tag), then the same without the tag.
//
// Calibration: the CPU backend against the reference over Cases and
// LargeCases (go test ./harness -run TestCPU -calibrate -large). Each limit
// is about 10x the worst value observed (quoted in its reason), rounded up;
// where the result is plain f32 arithmetic the NMSE limit is at least 1e-13,
// the level at which f32 rounding in another order (FMA, tree sums, another
// backend) stays, far below any real bug (a transposed operand, a wrong
// position or block scale gives NMSE above 1e-3: faults_test.go proves the
// limits catch them).

// Tolerances returns a copy of the tolerance table, in op order.
func Tolerances() []Tolerance {
	var out []Tolerance
	for _, o := range opDefs {
		out = append(out, o.Tolerances...)
	}
	return out
}

// LookupTolerance returns the tolerance for op on type t in a case tagged
// tag.
func LookupTolerance(op ops.Op, t quant.Type, tag string) (Tolerance, error) {
	tags := []string{tag}
	if tag != "" {
		tags = append(tags, "")
	}
	if d := lookupDef(op); d != nil {
		for _, tg := range tags {
			for _, ty := range []quant.Type{t, AnyType} {
				for _, e := range d.Tolerances {
					if e.Type == ty && e.Tag == tg {
						return e, nil
					}
				}
			}
		}
	}
	return Tolerance{}, fmt.Errorf("harness: no tolerance for %v on %v (tag %q)", op, t, tag)
}

// judge returns why metrics m break the tolerance, or "" when they do not.
// ne, got and want locate the worst element for the message.
func (tol Tolerance) judge(m metrics, ne [4]int64, got, want []float64) string {
	if m.nanMismatch > 0 {
		i := m.firstNaN
		return fmt.Sprintf("%d NaN/Inf mismatches (first at %v: got %g, want %g)", m.nanMismatch, coords(i, ne), got[i], want[i])
	}
	where := ""
	if m.worst >= 0 {
		i := m.worst
		where = fmt.Sprintf(" (worst at %v: got %g, want %g)", coords(i, ne), got[i], want[i])
	}
	if tol.Exact {
		if m.maxErr != 0 {
			return fmt.Sprintf("not exact: max err %.3g%s", m.maxErr, where)
		}
		return ""
	}
	if !(m.nmse <= tol.MaxNMSE) {
		return fmt.Sprintf("NMSE %.3g > %.3g%s", m.nmse, tol.MaxNMSE, where)
	}
	if tol.MaxRelErr > 0 && m.maxErr > tol.MaxRelErr*m.refMax {
		return fmt.Sprintf("max err %.3g > %.3g x max|ref| %.3g%s", m.maxErr, tol.MaxRelErr, m.refMax, where)
	}
	return ""
}
