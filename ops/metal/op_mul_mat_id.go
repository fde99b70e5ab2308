package metal

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/quant"
)

// MUL_MAT_ID: kernels/mul_mat_id.metal.

func init() {
	kernelsByOp.AddChecked(ops.OpMulMatID, supportsMulMatID, encodeMulMatID, func(t *ops.Tensor, _, id int32) error {
		return fmt.Errorf("MUL_MAT_ID: expert id %d outside the %d experts", id, t.Src[ops.MMIDExperts].Ne[2])
	})
}

// mvIDMaxTokens is the most tokens the matrix-vector kernel takes; more
// are grouped by expert.
const mvIDMaxTokens = 4

func supportsMulMatID(t *ops.Tensor) error {
	w, b, ids := t.Src[ops.MMIDExperts], t.Src[ops.MMIDInput], t.Src[ops.MMIDIDs]
	if !isWeightType(w.Type) {
		return fmt.Errorf("expert type %v", w.Type)
	}
	if !w.HasContiguousRows() {
		return fmt.Errorf("expert rows are not packed")
	}
	if _, err := actType(b.Type); err != nil {
		return err
	}
	if ids.Type != quant.I32 || t.Type != quant.F32 {
		return fmt.Errorf("ids %v and output %v, want i32 and f32", ids.Type, t.Type)
	}
	if pairs := ids.Ne[0] * ids.Ne[1]; pairs > 1<<30 || w.Ne[2] > 1<<20 {
		return fmt.Errorf("%d pairs of %d experts: too many", pairs, w.Ne[2])
	}
	return nil
}

func encodeMulMatID(e *encoder, t *ops.Tensor) error {
	w, b, ids := t.Src[ops.MMIDExperts], t.Src[ops.MMIDInput], t.Src[ops.MMIDIDs]
	wb, err := e.src(1, w)
	if err != nil {
		return err
	}
	bb, err := e.src(2, b)
	if err != nil {
		return err
	}
	ib, err := e.src(3, ids)
	if err != nil {
		return err
	}
	d, err := e.out(4, t)
	if err != nil {
		return err
	}
	bt, _ := actType(b.Type)
	used, tokens, nexp := ids.Ne[0], ids.Ne[1], w.Ne[2]
	pairs := used * tokens
	var s gpu.CStruct
	s.Tensor(w).Tensor(b).Tensor(ids).Tensor(t).I32(bt).I32(int32(used)).I32(int32(b.Ne[1])).I32(int32(pairs)).I32(mmActVector(b, bb.off)).I32(int32(wb.off % 16))
	m := w.Ne[1]
	if tokens <= mvIDMaxTokens {
		rows := int64(mvSimdgroups * mvRows)
		return e.dispatch("mul_mat_id.metal", "kb_mul_mv_id_"+w.Type.String(),
			[3]int{int((m + rows - 1) / rows), int(pairs), 1}, [3]int{32 * mvSimdgroups, 1, 1}, nil,
			args(&s), wb, bb, ib, d, e.statusAt(5))
	}
	// The map: a count per expert, then each expert's pairs.
	mapBuf, err := e.scratch(4 * (nexp + nexp*pairs))
	if err != nil {
		return err
	}
	ib1 := ib
	ib1.index = 1
	mapBuf.index = 2
	if err := e.dispatch("mul_mat_id.metal", "kb_mmid_map", [3]int{int(nexp), 1, 1}, [3]int{32, 1, 1}, nil,
		args(&s), ib1, mapBuf, e.statusAt(3)); err != nil {
		return err
	}
	mapBuf.index = 3
	return e.dispatch("mul_mat_id.metal", "kb_mul_mm_id_"+w.Type.String(),
		[3]int{int((m + mmRows - 1) / mmRows), int((pairs + mmCols - 1) / mmCols), int(nexp)}, [3]int{mmThreads, 1, 1},
		[]int{mmShared(w.Type)}, args(&s), wb, bb, mapBuf, d)
}
