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
	addKernel(ops.OpGetRows, supportsGetRows, computeGetRows)
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
	b.scratch.ids = growI64(b.scratch.ids, n*n2*n3)
	rows := b.scratch.ids
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
	rowBytes, err := a.Type.RowSize(a.Ne[0])
	if err != nil {
		return err
	}
	j := &b.gr
	*j = getRowsJob{a: a, rows: rows, n: n, n2: n2, src: mem(a), dst: mem(t), rowBytes: rowBytes,
		deq: b.kern.deq[a.Type], errs: b.workerErrs()}
	b.pool.run(len(rows), 8, j)
	return j.errs.err()
}

// getRowsJob gathers rows for GET_ROWS, one output row per item; it is
// kept in the backend so that a call allocates nothing.
type getRowsJob struct {
	a        *ops.Tensor
	rows     []int64 // source row of each output row
	n, n2    int64   // ids' dims 0 and 1
	src, dst []byte
	rowBytes int64
	// deq is the tier's decoder for a's type, nil for
	// quant.DequantizeRow.
	deq  func(src []byte, dst []float32)
	errs workerErrors
}

func (j *getRowsJob) do(w, lo, hi int) {
	a := j.a
	ne0 := a.Ne[0]
	outRowBytes := ne0 * 4 // f32 and i32 results
	for r := lo; r < hi && !j.errs.failed(w); r++ {
		i2, i3 := int64(r)/j.n%j.n2, int64(r)/(j.n*j.n2)
		off := at(a, 0, j.rows[r], i2, i3)
		in := j.src[off : off+j.rowBytes]
		out := j.dst[int64(r)*outRowBytes : int64(r+1)*outRowBytes]
		switch {
		case a.Type == quant.F32 || a.Type == quant.I32:
			copy(out, in)
		case j.deq != nil:
			j.deq(in, f32s(out, 0, ne0))
		default:
			j.errs.set(w, quant.DequantizeRow(a.Type, in, f32s(out, 0, ne0)))
		}
	}
}
