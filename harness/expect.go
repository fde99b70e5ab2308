package harness

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// expected turns the reference's values for node into the values the
// backend must produce. For CPY, reference.Compute returns the exact
// source values, while ops.Cpy specifies rounding to the destination type
// as quant.QuantizeRow does; the harness rounds the reference's values
// through the destination type (QuantizeRow then DequantizeRow, row by
// row), so a CPY is judged against the reference quantizer itself rather
// than against quantization noise. Other ops are compared as computed.
func expected(node *ops.Tensor, want []float64) ([]float64, error) {
	if node.Op != ops.OpCpy {
		return want, nil
	}
	return roundThrough(node.Type, node.Ne[0], want)
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
