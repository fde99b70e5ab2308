package harness

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/kernbench/kernbench/quant"
)

// encode stores values (logical row-major order, rows of ne0 elements) as
// packed rows of type t: float and quantized types through
// quant.QuantizeRow, integer types directly. Types quant cannot encode
// (the IQ1, IQ2 and IQ3 codebook formats, quant.CanQuantize) get random
// valid blocks instead (quant.RandomBlocks), seeded from the row's values
// and index: a case's weights are then not its distribution's values,
// but the reference reads the bytes stored, so what is validated (the
// backend's result against the reference's on the same bytes) is not
// changed.
func encode(t quant.Type, ne0 int64, values []float64) ([]byte, error) {
	if ne0 <= 0 {
		return nil, nil
	}
	rowBytes, err := t.RowSize(ne0)
	if err != nil {
		return nil, fmt.Errorf("harness: encode: %w", err)
	}
	rows := int64(len(values)) / ne0
	out := make([]byte, rows*rowBytes)
	row := make([]float32, ne0)
	for r := int64(0); r < rows; r++ {
		src := values[r*ne0 : (r+1)*ne0]
		dst := out[r*rowBytes : (r+1)*rowBytes]
		switch t {
		case quant.I8, quant.I16, quant.I32:
			if err := encodeInts(t, src, dst); err != nil {
				return nil, err
			}
			continue
		}
		if t.IsQuantized() && !quant.CanQuantize(t) {
			seed := uint64(r) * 0x9e3779b97f4a7c15
			for _, v := range src {
				seed = (seed ^ math.Float64bits(v)) * 0x100000001b3
			}
			if err := quant.RandomBlocks(t, dst, seed); err != nil {
				return nil, fmt.Errorf("harness: encode row %d as %v: %w", r, t, err)
			}
			continue
		}
		for i, v := range src {
			row[i] = float32(v)
		}
		if err := quant.QuantizeRow(t, row, dst); err != nil {
			return nil, fmt.Errorf("harness: encode row %d as %v: %w", r, t, err)
		}
	}
	return out, nil
}

func encodeInts(t quant.Type, src []float64, dst []byte) error {
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	switch t {
	case quant.I8:
		lo, hi = math.MinInt8, math.MaxInt8
	case quant.I16:
		lo, hi = math.MinInt16, math.MaxInt16
	}
	for i, v := range src {
		x := int64(v)
		if float64(x) != v || x < lo || x > hi {
			return fmt.Errorf("harness: encode: %v is not a %v value", v, t)
		}
		switch t {
		case quant.I8:
			dst[i] = byte(int8(x))
		case quant.I16:
			binary.LittleEndian.PutUint16(dst[2*i:], uint16(int16(x)))
		default:
			binary.LittleEndian.PutUint32(dst[4*i:], uint32(int32(x)))
		}
	}
	return nil
}
