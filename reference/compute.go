package reference

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
)

// An opFunc computes one op's node from its sources.
type opFunc func(t *ops.Tensor) ([]float64, error)

// opFuncs holds the reference implementation of every compute op.
var opFuncs = map[ops.Op]opFunc{
	ops.OpMulMat:       mulMat,
	ops.OpMulMatID:     mulMatID,
	ops.OpSoftMax:      softMax,
	ops.OpFlashAttnExt: flashAttnExt,
	ops.OpSSMConv:      ssmConv,
	ops.OpSSMScan:      ssmScan,
	ops.OpRope:         rope,
	ops.OpRMSNorm:      rmsNorm,
	ops.OpGetRows:      getRows,
	ops.OpAdd:          add,
	ops.OpMul:          mul,
	ops.OpScale:        scale,
	ops.OpCpy:          cpy,
	ops.OpCont:         cont,
	ops.OpSilu:         silu,
	ops.OpGelu:         gelu,
	ops.OpSwiGLU:       swiGLU,
	ops.OpArgsort:      argsort,
	ops.OpSumRows:      sumRows,
	ops.OpSwiGLUOAI:    swiGLUOAI,
}

// Compute returns the float64 value of every element of node t, in
// logical row-major order (as Read orders them), computed from its sources'
// data, which it reads with Read.
//
// Integer results (ARGSORT, GET_ROWS of i32) come back as their values.
// SSM_SCAN returns its flat result: y followed by the final states. CPY
// returns the exact source values in the source's logical order, which is
// the destination's logical order; rounding to the destination type is the
// backend's and is judged by tolerance. Leaves and view nodes compute
// nothing: their value is their storage, and Compute returns Read(t).
//
// Compute checks the node as its ops constructor would (operand types,
// shapes, parameters) and returns an error, never panics, for an
// unsupported op, a node whose shape its operands do not give, an
// unallocated source, or an index (row, expert or state slot id) out of
// range.
func Compute(t *ops.Tensor) ([]float64, error) {
	if t == nil {
		return nil, fmt.Errorf("reference: compute of a nil tensor")
	}
	if t.Op == ops.OpNone || t.Op.IsView() {
		return Read(t)
	}
	f, ok := opFuncs[t.Op]
	if !ok {
		return nil, fmt.Errorf("reference: %v: op not supported", t.Op)
	}
	n, err := numElements(t)
	if err != nil {
		return nil, err
	}
	out, err := f(t)
	if err != nil {
		return nil, fmt.Errorf("reference: %v %s: %w", t.Op, t.Label(), err)
	}
	if int64(len(out)) != n {
		return nil, fmt.Errorf("reference: %v %s: computed %d values for %d elements", t.Op, t.Label(), len(out), n)
	}
	return out, nil
}

// src returns t's source i, or nil when it has none at that position.
func src(t *ops.Tensor, i int) *ops.Tensor {
	if i < len(t.Src) {
		return t.Src[i]
	}
	return nil
}

// paramsOf returns t's parameters as a P, or an error when they are
// missing or of another type.
func paramsOf[P any](t *ops.Tensor) (P, error) {
	p, ok := t.Params.(P)
	if !ok {
		var zero P
		return zero, fmt.Errorf("parameters are %T, want %T", t.Params, zero)
	}
	return p, nil
}

// check compares node t with the node its constructor builds from the same
// operands (r, err): the operands must be valid and give t's shape. Every
// op function calls it first, so its loops may trust the shapes the
// constructor checked.
func check(t *ops.Tensor, r *ops.Tensor, err error) error {
	if err != nil {
		return fmt.Errorf("operands: %w", err)
	}
	if r.Ne != t.Ne {
		return fmt.Errorf("node has shape %v but its operands give %v", t.Ne, r.Ne)
	}
	return nil
}

// array is a tensor's values in logical order with its shape.
type array struct {
	v  []float64
	ne [ops.MaxDims]int64
}

// load reads source s, named what in errors.
func load(s *ops.Tensor, what string) (array, error) {
	v, err := Read(s)
	if err != nil {
		return array{}, fmt.Errorf("%s: %w", what, err)
	}
	return array{v: v, ne: s.Ne}, nil
}

// at returns element (i0, i1, i2, i3).
func (a array) at(i0, i1, i2, i3 int64) float64 {
	return a.v[index(a.ne, i0, i1, i2, i3)]
}

// row returns the Ne[0] elements of row (i1, i2, i3).
func (a array) row(i1, i2, i3 int64) []float64 {
	start := index(a.ne, 0, i1, i2, i3)
	return a.v[start : start+a.ne[0]]
}

// index returns the logical row-major index of element (i0, i1, i2, i3) of
// a tensor of shape ne.
func index(ne [ops.MaxDims]int64, i0, i1, i2, i3 int64) int64 {
	return i0 + ne[0]*(i1+ne[1]*(i2+ne[2]*i3))
}

// intAt converts an index value read from an i32 tensor and checks that
// it lies in [0, n).
func intAt(v float64, n int64, what string) (int64, error) {
	i := int64(v)
	if float64(i) != v || i < 0 || i >= n {
		return 0, fmt.Errorf("%s %v out of range [0, %d)", what, v, n)
	}
	return i, nil
}
