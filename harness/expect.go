package harness

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// expected turns the reference's values for node into the values the
// backend must produce: as computed, unless the op's definition says
// otherwise (CPY rounds them through its destination type, see
// expectCpy).
func expected(node *ops.Tensor, want []float64) ([]float64, error) {
	if d := lookupDef(node.Op); d != nil && d.expect != nil {
		return d.expect(node, want)
	}
	return want, nil
}

// roundThrough rounds values (rows of ne0) to type t and back.
func roundThrough(t quant.Type, ne0 int64, values []float64) ([]float64, error) {
	if ne0 <= 0 || len(values) == 0 {
		return values, nil
	}
	rowBytes, err := t.RowSize(ne0)
	if err != nil {
		return nil, fmt.Errorf("harness: round through %v: %w", t, err)
	}
	out := make([]float64, len(values))
	row := make([]float32, ne0)
	q := make([]byte, rowBytes)
	for r := int64(0); r < int64(len(values))/ne0; r++ {
		for i := range row {
			row[i] = float32(values[r*ne0+int64(i)])
		}
		if err := quant.QuantizeRow(t, row, q); err != nil {
			return nil, fmt.Errorf("harness: round through %v: %w", t, err)
		}
		if err := quant.DequantizeRow(t, q, row); err != nil {
			return nil, fmt.Errorf("harness: round through %v: %w", t, err)
		}
		for i, v := range row {
			out[r*ne0+int64(i)] = float64(v)
		}
	}
	return out, nil
}
