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
// same without the tag.
//
// Calibration: the CPU backend against the reference over Cases and
// LargeCases (go test ./harness -run TestCPU -calibrate -large). Each limit
// is about 10x the worst value observed (quoted in its reason), rounded up;
// where the result is plain f32 arithmetic the NMSE limit is at least 1e-13,
// the level at which f32 rounding in another order (FMA, tree sums, another
// backend) stays, far below any real bug (a transposed operand, a wrong
// position or block scale gives NMSE above 1e-3: harness_test.go proves the
// limits catch them).
var tolerances = []Tolerance{
	// Matrix products. The reference multiplies dequantized weights by the
	// activations in float64; the backend converts the activations to the
	// weight type's VecDotType first, as ggml does.
	{Op: ops.OpMulMat, Type: quant.F32, MaxNMSE: 1e-11, MaxRelErr: 5e-6,
		Reason: "f32 dot products: f32 rounding only, growing with k (float32 accumulators over k terms in 8 lanes: NMSE up to ~(k/8)*eps^2 = 6e-12 at k=14336); observed NMSE 1.6e-15 (k<=4096), 1.4e-13 (k=14336, avx2); a dropped block at that k is ~2e-3"},
	{Op: ops.OpMulMat, Type: quant.F16, MaxNMSE: 1e-6, MaxRelErr: 3e-3,
		Reason: "f16 weights: activations rounded to f16 (2^-11 relative) for the dot product; observed NMSE 6.4e-8, rel 2.7e-4"},
	{Op: ops.OpMulMat, Type: quant.BF16, MaxNMSE: 3e-5, MaxRelErr: 2e-2,
		Reason: "bf16 weights: activations rounded to bf16 (2^-8 relative) for the dot product; observed NMSE 2.9e-6, rel 2e-3"},
	{Op: ops.OpMulMat, Type: quant.Q8_0, MaxNMSE: 3e-4, MaxRelErr: 6e-2,
		Reason: "q8_0 weights: activations quantized to q8_0 (8 bits per 32) for the integer dot product; observed NMSE 3.1e-5, rel 5.7e-3"},
	{Op: ops.OpMulMat, Type: quant.Q8_1, MaxNMSE: 1e-12, MaxRelErr: 1e-5,
		Reason: "q8_1 weights: VecDotType is f32, so dequantized weights meet f32 activations; observed NMSE 5.7e-14, rel 4.9e-7"},
	{Op: ops.OpMulMat, Type: quant.Q8_K, MaxNMSE: 1e-12, MaxRelErr: 1e-5,
		Reason: "q8_K weights: VecDotType is f32, so dequantized weights meet f32 activations; observed NMSE 1.2e-13, rel 6.3e-7"},
	{Op: ops.OpMulMat, Type: AnyType, MaxNMSE: 4e-4, MaxRelErr: 8e-2,
		Reason: "2- to 6-bit weights: activations quantized to q8_0, q8_1 or q8_K for the integer dot product, ~1e-4 relative error per row; observed NMSE 4e-5 (q4_0), rel 7.3e-3"},
	{Op: ops.OpMulMatID, Type: quant.F32, MaxNMSE: 1e-11, MaxRelErr: 5e-6,
		Reason: "f32 experts: f32 dot products, as MUL_MAT (the bound grows with k); observed NMSE 1.8e-15, rel 5e-8 at k<=4096"},
	{Op: ops.OpMulMatID, Type: quant.F16, MaxNMSE: 1e-6, MaxRelErr: 3e-3,
		Reason: "f16 experts: activations rounded to f16, as MUL_MAT; observed NMSE 6.4e-8, rel 2.7e-4"},
	{Op: ops.OpMulMatID, Type: quant.BF16, MaxNMSE: 3e-5, MaxRelErr: 2e-2,
		Reason: "bf16 experts: activations rounded to bf16, as MUL_MAT; observed NMSE 2.9e-6, rel 2e-3"},
	{Op: ops.OpMulMatID, Type: AnyType, MaxNMSE: 4e-4, MaxRelErr: 8e-2,
		Reason: "quantized experts: activations quantized for the integer dot product, as MUL_MAT; observed NMSE 3.1e-5 (q8_0), rel 5.8e-3"},

	// Attention.
	{Op: ops.OpSoftMax, Type: AnyType, MaxNMSE: 1e-13, MaxRelErr: 2e-6,
		Reason: "f32 exp and row sums: f32 rounding only; observed NMSE 8.6e-15, rel 1.3e-7"},
	{Op: ops.OpFlashAttnExt, Type: quant.F32, MaxNMSE: 2e-11, MaxRelErr: 3e-5,
		Reason: "f32 K/V: online softmax over up to 4096 keys in f32; observed NMSE 2.1e-12 (nkv=4096), rel 2.5e-6"},
	{Op: ops.OpFlashAttnExt, Type: quant.F16, MaxNMSE: 4e-6, MaxRelErr: 3e-2,
		Reason: "f16 K/V: q rounded to f16 for q·k and f16 values, as ggml's CPU kernel; observed NMSE 4.2e-7 (softcap, sharp softmax), rel 2.5e-3"},
	{Op: ops.OpFlashAttnExt, Type: AnyType, MaxNMSE: 8e-4, MaxRelErr: 0.2,
		Reason: "q8_0/q4_0 K/V: q quantized to q8_0 for q·k, amplified by sharp softmaxes; observed NMSE 8e-5 (q8_0, softcap with scale 4), rel 1.9e-2"},

	// State space models.
	{Op: ops.OpSSMConv, Type: AnyType, MaxNMSE: 1e-13, MaxRelErr: 1e-6,
		Reason: "f32 sums of d_conv products; observed NMSE 2.5e-15, rel 1e-7"},
	{Op: ops.OpSSMScan, Type: AnyType, MaxNMSE: 5e-13, MaxRelErr: 4e-6,
		Reason: "f32 exp/softplus and a recurrence over up to 64 tokens: rounding compounds per step; observed NMSE 4.4e-14, rel 3.9e-7"},

	// Positions and norms.
	{Op: ops.OpRope, Type: AnyType, Tag: "large-pos", MaxNMSE: 1e-5, MaxRelErr: 2e-2,
		Reason: "positions near 1e5: observed NMSE 1.7e-15 (angles in float64), but an angle of 1e5 rad in f32, as ggml computes it, is off by ~6e-3 rad, NMSE ~2e-6 at d=128; an off-by-one position gives ~6e-2"},
	{Op: ops.OpRope, Type: AnyType, MaxNMSE: 1e-13, MaxRelErr: 2e-6,
		Reason: "f32 sin/cos of angles up to ~16000 rad; observed NMSE 2.1e-15, rel 1.2e-7"},
	{Op: ops.OpRMSNorm, Type: AnyType, MaxNMSE: 1e-13, MaxRelErr: 1e-6,
		Reason: "f32 sum of squares and one sqrt per row; observed NMSE 1.6e-15, rel 1.1e-7"},

	// Data movement: values are copied or dequantized, never summed.
	{Op: ops.OpGetRows, Type: AnyType, MaxNMSE: 1e-14, MaxRelErr: 1e-6,
		Reason: "dequantization is one or two f32 operations per element; observed exact, one rounding (FMA contraction on another backend) allowed"},
	{Op: ops.OpCpy, Type: AnyType, Exact: true,
		Reason: "compared with the source rounded through the destination type by quant.QuantizeRow (see expected), the rounding ops.Cpy specifies; observed exact"},
	{Op: ops.OpCont, Type: AnyType, Exact: true,
		Reason: "a copy to the same type; observed exact"},
	{Op: ops.OpArgsort, Type: AnyType, Exact: true,
		Reason: "indices of a stable sort are fully defined; observed exact"},

	// Element-wise and reductions in f32.
	{Op: ops.OpAdd, Type: AnyType, MaxNMSE: 1e-14, MaxRelErr: 2e-7,
		Reason: "one f32 rounding per element (NMSE at most 3.6e-15); observed NMSE 7.9e-16, rel 4.1e-8"},
	{Op: ops.OpMul, Type: AnyType, MaxNMSE: 1e-14, MaxRelErr: 2e-7,
		Reason: "one f32 rounding per element (NMSE at most 3.6e-15); observed NMSE 6.5e-16, rel 3.4e-8"},
	{Op: ops.OpScale, Type: AnyType, MaxNMSE: 1e-14, MaxRelErr: 2e-7,
		Reason: "one f32 multiply-add per element; observed NMSE 2.4e-16, rel 4.4e-8"},
	{Op: ops.OpSilu, Type: AnyType, MaxNMSE: 1e-13, MaxRelErr: 1e-6,
		Reason: "f32 exp and division (a 2-ulp exp elsewhere gives ~1e-14); observed NMSE 1.8e-15, rel 1.1e-7"},
	{Op: ops.OpGelu, Type: AnyType, MaxNMSE: 1e-13, MaxRelErr: 1e-6,
		Reason: "f32 tanh approximation computed directly (ggml's f16 lookup table would need ~1e-6); observed NMSE 1.4e-15, rel 8.7e-8"},
	{Op: ops.OpSwiGLU, Type: AnyType, MaxNMSE: 1e-13, MaxRelErr: 1e-6,
		Reason: "f32 exp, division and product; observed NMSE 2.2e-15, rel 1.1e-7"},
	{Op: ops.OpSumRows, Type: AnyType, MaxNMSE: 1e-14, MaxRelErr: 5e-7,
		Reason: "f32 sums of up to 4096 terms; observed NMSE 9.7e-16, rel 3.6e-8"},
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
