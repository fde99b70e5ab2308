package cpu

import (
	"fmt"

	"github.com/kernbench/kernbench/quant"
)

// A vecDotFunc returns the dot product of n elements of a weight row x
// (packed blocks of the weight type) and an activation row y (packed
// blocks of the weight type's quant.VecDotType). n is a multiple of the
// weight type's block size and x and y hold at least that many elements.
//
// Each weight type has one such function in this file family, written in
// generic Go; SIMD tiers replace them one at a time.
type vecDotFunc func(n int, x, y []byte) float32

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
	quant.F32:  {vecDotF32, quant.F32},
	quant.F16:  {vecDotF16, quant.F16},
	quant.BF16: {vecDotBF16, quant.BF16},
	quant.Q4_0: {vecDotQ4_0Q8_0, quant.Q8_0},
	quant.Q4_1: {vecDotQ4_1Q8_1, quant.Q8_1},
	quant.Q5_0: {vecDotQ5_0Q8_0, quant.Q8_0},
	quant.Q5_1: {vecDotQ5_1Q8_1, quant.Q8_1},
	quant.Q8_0: {vecDotQ8_0Q8_0, quant.Q8_0},
	quant.Q8_1: {vecDotQ8_1F32, quant.F32},
	quant.Q2_K: {vecDotQ2_KQ8_K, quant.Q8_K},
	quant.Q3_K: {vecDotQ3_KQ8_K, quant.Q8_K},
	quant.Q4_K: {vecDotQ4_KQ8_K, quant.Q8_K},
	quant.Q5_K: {vecDotQ5_KQ8_K, quant.Q8_K},
	quant.Q6_K: {vecDotQ6_KQ8_K, quant.Q8_K},
	quant.Q8_K: {vecDotQ8_KF32, quant.F32},
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
