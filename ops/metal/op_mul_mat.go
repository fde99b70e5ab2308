package metal

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/quant"
)

// MUL_MAT: kernels/mul_mat.metal.

func init() {
	kernelsByOp.Add(ops.OpMulMat, supportsMulMat, encodeMulMat)
}

// Launch geometry of mul_mat.metal's kernels.
const (
	mvSimdgroups = 2  // MV_NSG
	mvRows       = 4  // MV_R: weight rows per simdgroup
	mmTile       = 32 // MM_BM = MM_BN = MM_BK
	mmThreads    = 128
	// mvMaxCols is the most activation columns the matrix-vector kernel
	// takes; more go to the simdgroup-matrix kernel.
	mvMaxCols = 4
)

// actType is the kernels' number for an activation type.
func actType(t quant.Type) (int32, error) {
	switch t {
	case quant.F32:
		return 0, nil
	case quant.F16:
		return 1, nil
	case quant.BF16:
		return 30, nil
	}
	return 0, fmt.Errorf("activation type %v, want f32, f16 or bf16", t)
}

func supportsMulMat(t *ops.Tensor) error {
	a, b := t.Src[0], t.Src[1]
	if !isWeightType(a.Type) {
		return fmt.Errorf("weight type %v", a.Type)
	}
	if !a.HasContiguousRows() {
		return fmt.Errorf("weight rows are not packed")
	}
	if _, err := actType(b.Type); err != nil {
		return err
	}
	if t.Type != quant.F32 {
		return fmt.Errorf("output type %v, want f32", t.Type)
	}
	return nil
}

func encodeMulMat(e *encoder, t *ops.Tensor) error {
	a, b := t.Src[0], t.Src[1]
	ab, err := e.src(1, a)
	if err != nil {
		return err
	}
	bb, err := e.src(2, b)
	if err != nil {
		return err
	}
	d, err := e.out(3, t)
	if err != nil {
		return err
	}
	bt, _ := actType(b.Type)
	var s gpu.CStruct
	s.Tensor(a).Tensor(b).Tensor(t).I64(b.Ne[2] / a.Ne[2]).I64(b.Ne[3] / a.Ne[3]).I32(bt)
	m, n, batches := t.Ne[0], t.Ne[1], int(t.Ne[2]*t.Ne[3])
	if n <= mvMaxCols {
		rows := int64(mvSimdgroups * mvRows)
		return e.dispatch("mul_mat.metal", "kb_mul_mv_"+a.Type.String(),
			[3]int{int((m + rows - 1) / rows), int(n), batches}, [3]int{32 * mvSimdgroups, 1, 1}, nil, args(&s), ab, bb, d)
	}
	return e.dispatch("mul_mat.metal", "kb_mul_mm_"+a.Type.String(),
		[3]int{int((m + mmTile - 1) / mmTile), int((n + mmTile - 1) / mmTile), batches}, [3]int{mmThreads, 1, 1},
		[]int{3 * mmTile * mmTile * 4}, args(&s), ab, bb, d)
}
