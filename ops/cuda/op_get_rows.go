package cuda

import (
	"fmt"
	"slices"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// GET_ROWS: kernels/get_rows.cu.

func init() {
	kernelsByOp.Add(ops.OpGetRows, supportsGetRows, launchGetRows)
}

// weightTypes are the table and weight types of get_rows.cu and the
// mul_mat kernels (quants.cuh's KB_FOR_WEIGHT_TYPES); iqTypes are
// kernels/mul_mat_iq.cu's (op_mul_mat_iq.go).
var weightTypes = []quant.Type{quant.F32, quant.F16, quant.BF16, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1,
	quant.Q8_0, quant.Q8_1, quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.Q8_K}

func isWeightType(t quant.Type) bool {
	return slices.Contains(weightTypes, t) || isIQType(t)
}

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
	if rows := t.Ne[1] * t.Ne[2] * t.Ne[3]; rows > 1<<31-1 {
		return fmt.Errorf("%d rows, more than a grid takes", rows)
	}
	return nil
}

func launchGetRows(b *Backend, t *ops.Tensor) error {
	src, dst, err := b.pointers(t)
	if err != nil {
		return err
	}
	status, err := b.statusFor(t, func(code, v int32) error {
		return fmt.Errorf("GET_ROWS: row id %d outside the table's %d rows", v, t.Src[0].Ne[1])
	})
	if err != nil {
		return err
	}
	rows := t.Ne[1] * t.Ne[2] * t.Ne[3]
	file, threads := "get_rows.cu", rowBlock(t.Ne[0])
	if isIQType(t.Src[0].Type) {
		file, threads = "mul_mat_iq.cu", rowBlock(t.Ne[0]/8) // a thread per 8 elements
	}
	return b.launch(file, "kb_get_rows_"+t.Src[0].Type.String(), dim3{uint32(rows), 1, 1}, dim3{threads, 1, 1}, 0,
		u64(src[0]), tensorArg(t.Src[0]), u64(src[1]), tensorArg(t.Src[1]), u64(dst), tensorArg(t), u64(status))
}
