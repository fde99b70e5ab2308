package cpu

import (
	"fmt"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/quant"
)

// A vecDotFunc is a dot product (see dot.Func).
type vecDotFunc = dot.Func

// dotKernel pairs a weight type's dot product with the type its
// activations are converted to.
type dotKernel struct {
	dot     vecDotFunc
	actType quant.Type
}

// dotKernels lists the dot product of every weight type MUL_MAT accepts.
// The activation type is quant.VecDotType of the weight type, which for
// Q8_1 and Q8_K weights is F32: ggml has no dot product for them, and we
// dot their blocks with float32 activations directly (dequantizing each
// block on the fly).
var dotKernels = map[quant.Type]dotKernel{
	quant.F32:  {dot.F32, quant.F32},
	quant.F16:  {dot.F16, quant.F16},
	quant.BF16: {dot.BF16, quant.BF16},
	quant.Q4_0: {dot.Q4_0, quant.Q8_0},
	quant.Q4_1: {dot.Q4_1, quant.Q8_1},
	quant.Q5_0: {dot.Q5_0, quant.Q8_0},
	quant.Q5_1: {dot.Q5_1, quant.Q8_1},
	quant.Q8_0: {dot.Q8_0, quant.Q8_0},
	quant.Q8_1: {dot.Q8_1, quant.F32},
	quant.Q2_K: {dot.Q2_K, quant.Q8_K},
	quant.Q3_K: {dot.Q3_K, quant.Q8_K},
	quant.Q4_K: {dot.Q4_K, quant.Q8_K},
	quant.Q5_K: {dot.Q5_K, quant.Q8_K},
	quant.Q6_K: {dot.Q6_K, quant.Q8_K},
	quant.Q8_K: {dot.Q8_K, quant.F32},

	quant.IQ4_NL: {dot.IQ4_NL, quant.Q8_0},
	quant.IQ4_XS: {dot.IQ4_XS, quant.Q8_K},
	quant.TQ1_0:  {dot.TQ1_0, quant.Q8_K},
	quant.TQ2_0:  {dot.TQ2_0, quant.Q8_K},
	quant.MXFP4:  {dot.MXFP4, quant.Q8_0},

	quant.IQ2_XXS: {dot.IQ2_XXS, quant.Q8_K},
	quant.IQ2_XS:  {dot.IQ2_XS, quant.Q8_K},
	quant.IQ2_S:   {dot.IQ2_S, quant.Q8_K},
	quant.IQ3_XXS: {dot.IQ3_XXS, quant.Q8_K},
	quant.IQ3_S:   {dot.IQ3_S, quant.Q8_K},
	quant.IQ1_S:   {dot.IQ1_S, quant.Q8_K},
	quant.IQ1_M:   {dot.IQ1_M, quant.Q8_K},
}

// dotKernelFor returns the dot kernel for weight type t.
func dotKernelFor(t quant.Type) (dotKernel, error) {
	k, ok := dotKernels[t]
	if !ok {
		return dotKernel{}, fmt.Errorf("no dot product for weight type %v", t)
	}
	if k.actType != t.VecDotType() {
		// The table and quant's traits must agree; a mismatch is a bug
		// we report rather than compute wrongly.
		return dotKernel{}, fmt.Errorf("dot product for %v expects %v activations, quant says %v", t, k.actType, t.VecDotType())
	}
	return k, nil
}
