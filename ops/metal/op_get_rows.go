package metal

import (
	"fmt"
	"slices"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/quant"
)

// GET_ROWS: kernels/get_rows.metal.

func init() {
	kernelsByOp.AddChecked(ops.OpGetRows, supportsGetRows, encodeGetRows, func(t *ops.Tensor, _, id int32) error {
		return fmt.Errorf("GET_ROWS: row id %d outside the table's %d rows", id, t.Src[0].Ne[1])
	})
}

// weightTypes are the table and weight types the kernels take (quants.h's
// KB_FOR_WEIGHT_TYPES), newWeightTypes among them.
var weightTypes = append([]quant.Type{quant.F32, quant.F16, quant.BF16, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1,
	quant.Q8_0, quant.Q8_1, quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.Q8_K}, newWeightTypes...)

// newWeightTypes are the formats of issue 26 (quants.h's
// KB_FOR_NEW_WEIGHT_TYPES), which the kernels decode with their
// whole-block decoders (dequant.h) and the codebooks of iqgrids.h.
var newWeightTypes = []quant.Type{quant.MXFP4, quant.IQ4_NL, quant.IQ4_XS, quant.TQ2_0, quant.TQ1_0,
	quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S, quant.IQ1_S, quant.IQ1_M}

func isWeightType(t quant.Type) bool { return slices.Contains(weightTypes, t) }

func supportsGetRows(t *ops.Tensor) error {
	a, ids := t.Src[0], t.Src[1]
	if ids.Type != quant.I32 {
		return fmt.Errorf("ids type %v, want i32", ids.Type)
	}
	if !isWeightType(a.Type) && a.Type != quant.I32 {
		return fmt.Errorf("table type %v", a.Type)
	}
	if a.Type.BlockSize() > 1 && a.Nb[0] != a.Type.TypeSize() {
		return fmt.Errorf("%v table rows are not packed blocks", a.Type)
	}
	return nil
}

func encodeGetRows(e *encoder, t *ops.Tensor) error {
	a, err := e.src(1, t.Src[0])
	if err != nil {
		return err
	}
	ids, err := e.src(2, t.Src[1])
	if err != nil {
		return err
	}
	d, err := e.out(3, t)
	if err != nil {
		return err
	}
	var s gpu.CStruct
	s.Tensor(t.Src[0]).Tensor(t.Src[1]).Tensor(t)
	return e.dispatch("get_rows.metal", "kb_get_rows_"+t.Src[0].Type.String(), rowGrid(t), [3]int{rowThreads(t.Ne[0], 256), 1, 1}, nil,
		args(&s), a, ids, d, e.statusAt(4))
}
