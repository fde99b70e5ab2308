package metal

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/quant"
)

// CPY and CONT: kernels/cpy.metal.

func init() {
	kernelsByOp.Add(ops.OpCpy, supportsCpy, encodeCpy)
}

// cpyQuantTypes are the quantized destinations CPY writes: the legacy and
// K formats (not the activation formats q8_1 and q8_K, which ops.Cpy
// refuses) and the formats of issue 26 that quant encodes without
// importance weights (kernels/newquants.h; IQ4_NL has its own kernel,
// kb_cpy_iq4_nl, which reads the destination's row width).
var cpyQuantTypes = []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0,
	quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K,
	quant.MXFP4, quant.IQ4_NL, quant.IQ4_XS, quant.TQ1_0, quant.TQ2_0}

func isFloat(t quant.Type) bool { return t == quant.F32 || t == quant.F16 || t == quant.BF16 }

func supportsCpy(t *ops.Tensor) error {
	a, dst := t.Src[0], t.Src[1]
	if !isFloat(a.Type) {
		return fmt.Errorf("source type %v, want f32, f16 or bf16", a.Type)
	}
	if t.Type != dst.Type || t.Ne != dst.Ne || t.Nb != dst.Nb || a.NumElements() != t.NumElements() {
		return fmt.Errorf("node %v %v does not match its destination %v %v", t.Type, t.Ne, dst.Type, dst.Ne)
	}
	switch {
	case isFloat(t.Type):
	case isWeightType(t.Type):
		found := false
		for _, q := range cpyQuantTypes {
			found = found || q == t.Type
		}
		if !found {
			return fmt.Errorf("no quantizer for %v destinations (only %v)", t.Type, cpyQuantTypes)
		}
		if !t.IsContiguous() {
			return fmt.Errorf("quantized destination must be contiguous")
		}
	default:
		return fmt.Errorf("destination type %v", t.Type)
	}
	return nil
}

// gridStride is the geometry of a kernel whose threads stride over n
// items: 256 threads a threadgroup, at most 65535 threadgroups.
func gridStride(n int64) ([3]int, [3]int) {
	groups := min((n+255)/256, 65535)
	return [3]int{int(max(groups, 1)), 1, 1}, [3]int{256, 1, 1}
}

func encodeCpy(e *encoder, t *ops.Tensor) error {
	a := t.Src[0]
	ab, err := e.src(1, a)
	if err != nil {
		return err
	}
	d, err := e.out(2, t)
	if err != nil {
		return err
	}
	n := t.NumElements()
	var s gpu.CStruct
	s.Tensor(a).Tensor(t).I64(n).I32(int32(a.Type)).I32(int32(t.Type))
	if isFloat(t.Type) {
		groups, threads := gridStride(n)
		return e.dispatch("cpy.metal", "kb_cpy_float", groups, threads, nil, args(&s), ab, d)
	}
	groups, threads := gridStride(n / int64(t.Type.BlockSize()))
	return e.dispatch("cpy.metal", "kb_cpy_"+t.Type.String(), groups, threads, nil, args(&s), ab, d)
}
