package cpu

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// GET_ROWS gathers rows of any float or quantized type into f32 (each row
// decoded with quant.DequantizeRow, f32 rows copied) and i32 rows as they
// are. Every id is checked before any row is written.

func init() {
	register(ops.OpGetRows, supportsGetRows, computeGetRows)
}

func supportsGetRows(t *ops.Tensor) error {
	if len(t.Src) != 2 {
		return fmt.Errorf("want 2 sources, got %d", len(t.Src))
	}
	want, err := ops.GetRows(t.Src[0], t.Src[1])
	if err != nil {
		return err
	}
	return sameNode(t, want)
}

// computeGetRows computes dst[:, i, j, k] = a[:, ids[i, j, k], j, k].
func computeGetRows(b *Backend, t *ops.Tensor) error {
	a, ids := t.Src[0], t.Src[1]
	n, n2, n3 := ids.Ne[0], ids.Ne[1], ids.Ne[2]
	idMem := mem(ids)
	rows := make([]int64, n*n2*n3)
	for r := range rows {
		i, j, k := int64(r)%n, int64(r)/n%n2, int64(r)/(n*n2)
		id := int64(i32s(idMem, i*ids.Nb[0]+j*ids.Nb[1]+k*ids.Nb[2], 1)[0])
		if id < 0 || id >= a.Ne[1] {
			return fmt.Errorf("ids[%d, %d, %d] = %d is outside [0, %d)", i, j, k, id, a.Ne[1])
		}
		rows[r] = id
	}
	if t.NumElements() == 0 {
		return nil
	}
	ne0 := a.Ne[0]
	rowBytes, err := a.Type.RowSize(ne0)
	if err != nil {
		return err
	}
	src, dst := mem(a), mem(t)
	outRowBytes := ne0 * 4 // f32 and i32 results
	errs := make(workerErrors, b.pool.threads)
	b.pool.parallelFor(len(rows), 8, func(w, lo, hi int) {
		for r := lo; r < hi && !errs.failed(w); r++ {
			j, k := int64(r)/n%n2, int64(r)/(n*n2)
			off := at(a, 0, rows[r], j, k)
			in := src[off : off+rowBytes]
			out := dst[int64(r)*outRowBytes : int64(r+1)*outRowBytes]
			switch a.Type {
			case quant.F32, quant.I32:
				copy(out, in)
			default:
				errs.set(w, quant.DequantizeRow(a.Type, in, f32s(out, 0, ne0)))
			}
		}
	})
	return errs.err()
}
