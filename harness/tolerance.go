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

// The tolerance table: the one place limits are set. Lookup takes the
// first entry matching (op, type, tag), then (op, any type, tag), then the
// same without the tag. Limits were calibrated on the CPU backend against
// the reference on the default case set and hold about 10x headroom over
// the worst NMSE observed; none is loose enough to pass a transposed
// operand, a wrong position or a wrong block scale (see harness_test.go).
var tolerances = []Tolerance{
	// Matrix products. The reference multiplies dequantized weights by the
	// activations in float64.
	{Op: ops.OpMulMat, Type: quant.F32, MaxNMSE: 1e-10,
		Reason: "f32 dot products of up to 512 terms: f32 rounding per multiply-add, NMSE ~1e-14"},
	{Op: ops.OpMulMat, Type: quant.F16, MaxNMSE: 5e-6,
		Reason: "f16 weights: activations are rounded to f16 (2^-11 relative) for the dot product"},
	{Op: ops.OpMulMat, Type: quant.BF16, MaxNMSE: 2e-4,
		Reason: "bf16 weights: activations are rounded to bf16 (2^-8 relative) for the dot product"},
	{Op: ops.OpMulMat, Type: quant.Q8_0, MaxNMSE: 2e-4,
		Reason: "activations quantized to q8_0 (8-bit, per-32 scale) for the integer dot product"},
	{Op: ops.OpMulMat, Type: quant.Q8_1, MaxNMSE: 2e-4,
		Reason: "q8_1 weights have no dot kernel in ggml: any activation rounding is at most q8-level"},
	{Op: ops.OpMulMat, Type: quant.Q8_K, MaxNMSE: 2e-4,
		Reason: "q8_K weights have no dot kernel in ggml: any activation rounding is at most q8-level"},
	{Op: ops.OpMulMat, Type: AnyType, MaxNMSE: 5e-4,
		Reason: "quantized weights: activations quantized to q8_0/q8_1/q8_K for the integer dot product, ~1e-4 relative error per row"},
	{Op: ops.OpMulMatID, Type: quant.F32, MaxNMSE: 1e-10,
		Reason: "f32 experts: f32 dot products, as MUL_MAT f32"},
	{Op: ops.OpMulMatID, Type: quant.F16, MaxNMSE: 5e-6,
		Reason: "f16 experts: activations rounded to f16, as MUL_MAT f16"},
	{Op: ops.OpMulMatID, Type: quant.BF16, MaxNMSE: 2e-4,
		Reason: "bf16 experts: activations rounded to bf16, as MUL_MAT bf16"},
	{Op: ops.OpMulMatID, Type: AnyType, MaxNMSE: 5e-4,
		Reason: "quantized experts: activations quantized for the integer dot product, as MUL_MAT"},

	// Attention.
	{Op: ops.OpSoftMax, Type: AnyType, MaxNMSE: 1e-10, MaxRelErr: 1e-5,
		Reason: "f32 exp and sums over rows of up to 256: f32 rounding only"},
	{Op: ops.OpFlashAttnExt, Type: quant.F32, MaxNMSE: 1e-9, MaxRelErr: 1e-4,
		Reason: "f32 K/V: online softmax and dot products in f32"},
	{Op: ops.OpFlashAttnExt, Type: quant.F16, MaxNMSE: 5e-6,
		Reason: "f16 K/V: q is rounded to f16 for q·k and the V accumulator may be f16, as ggml's CPU kernel does"},
	{Op: ops.OpFlashAttnExt, Type: AnyType, MaxNMSE: 5e-4,
		Reason: "quantized K/V: q is quantized to q8_0 for q·k, as in MUL_MAT"},

	// State space models.
	{Op: ops.OpSSMConv, Type: AnyType, MaxNMSE: 1e-10, MaxRelErr: 1e-5,
		Reason: "f32 sums of d_conv products"},
	{Op: ops.OpSSMScan, Type: AnyType, MaxNMSE: 1e-9, MaxRelErr: 1e-4,
		Reason: "f32 exp/softplus and a recurrence over a few tokens: rounding compounds per step"},

	// Positions and norms.
	{Op: ops.OpRope, Type: AnyType, Tag: "large-pos", MaxNMSE: 1e-5,
		Reason: "positions near 1e5: an f32 angle of 1e5 rad carries ~4e-3 rad of rounding, and theta is built by repeated f32 products"},
	{Op: ops.OpRope, Type: AnyType, MaxNMSE: 1e-9, MaxRelErr: 1e-4,
		Reason: "f32 sin/cos of angles below ~100 rad: rounding of the angle dominates"},
	{Op: ops.OpRMSNorm, Type: AnyType, MaxNMSE: 1e-10, MaxRelErr: 1e-5,
		Reason: "f32 sum of squares over rows of up to 512 and one sqrt"},

	// Data movement: values are copied or dequantized, never summed.
	{Op: ops.OpGetRows, Type: AnyType, MaxNMSE: 1e-12, MaxRelErr: 1e-6,
		Reason: "rows dequantized to f32 one element at a time: one f32 rounding at most"},
	{Op: ops.OpCpy, Type: AnyType, Exact: true,
		Reason: "compared with the source rounded through the destination type by quant.QuantizeRow (see expected): the rounding ops.Cpy specifies, so exact"},
	{Op: ops.OpCont, Type: AnyType, Exact: true,
		Reason: "a copy of the same type is exact"},
	{Op: ops.OpArgsort, Type: AnyType, Exact: true,
		Reason: "indices: a stable sort is fully defined"},

	// Element-wise and reductions in f32.
	{Op: ops.OpAdd, Type: AnyType, MaxNMSE: 1e-12, MaxRelErr: 1e-6,
		Reason: "one f32 rounding per element"},
	{Op: ops.OpMul, Type: AnyType, MaxNMSE: 1e-12, MaxRelErr: 1e-6,
		Reason: "one f32 rounding per element"},
	{Op: ops.OpScale, Type: AnyType, MaxNMSE: 1e-12, MaxRelErr: 1e-6,
		Reason: "one f32 multiply-add per element"},
	{Op: ops.OpSilu, Type: AnyType, MaxNMSE: 1e-10, MaxRelErr: 1e-5,
		Reason: "f32 exp and division"},
	{Op: ops.OpGelu, Type: AnyType, MaxNMSE: 1e-10, MaxRelErr: 1e-5,
		Reason: "f32 tanh approximation (ggml may use an f16 table: then 1e-6 would be needed)"},
	{Op: ops.OpSwiGLU, Type: AnyType, MaxNMSE: 1e-10, MaxRelErr: 1e-5,
		Reason: "f32 exp, division and product"},
	{Op: ops.OpSumRows, Type: AnyType, MaxNMSE: 1e-10, MaxRelErr: 1e-5,
		Reason: "f32 sums of up to 256 terms"},
}

// Tolerances returns a copy of the tolerance table.
func Tolerances() []Tolerance { return append([]Tolerance(nil), tolerances...) }

// LookupTolerance returns the tolerance for op on type t in a case tagged
// tag.
func LookupTolerance(op ops.Op, t quant.Type, tag string) (Tolerance, error) {
	tags := []string{tag}
	if tag != "" {
		tags = append(tags, "")
	}
	for _, tg := range tags {
		for _, ty := range []quant.Type{t, AnyType} {
			for _, e := range tolerances {
				if e.Op == op && e.Type == ty && e.Tag == tg {
					return e, nil
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
