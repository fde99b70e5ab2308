package quant

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// codec converts whole rows of one type. Either function may be nil.
type codec struct {
	quantize   func(src []float32, dst []byte)
	dequantize func(src []byte, dst []float32)
}

var codecs = map[Type]codec{
	F32:  {quantizeF32, dequantizeF32},
	F16:  {quantizeF16, dequantizeF16},
	BF16: {quantizeBF16, dequantizeBF16},
	Q4_0: {quantizeQ4_0, dequantizeQ4_0},
	Q4_1: {quantizeQ4_1, dequantizeQ4_1},
	Q5_0: {quantizeQ5_0, dequantizeQ5_0},
	Q5_1: {quantizeQ5_1, dequantizeQ5_1},
	Q8_0: {quantizeQ8_0, dequantizeQ8_0},
	Q8_1: {quantizeQ8_1, dequantizeQ8_1},
	Q2_K: {quantizeQ2_K, dequantizeQ2_K},
	Q3_K: {quantizeQ3_K, dequantizeQ3_K},
	Q4_K: {quantizeQ4_K, dequantizeQ4_K},
	Q5_K: {quantizeQ5_K, dequantizeQ5_K},
	Q6_K: {quantizeQ6_K, dequantizeQ6_K},
	Q8_K: {quantizeQ8_K, dequantizeQ8_K},

	// IQ2_XXS, IQ2_XS, IQ1_S and IQ1_M decode only: their quantizers
	// (ggml's quantize_iq*, with a search of the grids; llama-quantize
	// asks an importance matrix for them) are not written yet.
	IQ2_XXS: {nil, dequantizeIQ2_XXS},
	IQ2_XS:  {nil, dequantizeIQ2_XS},
	IQ2_S:   {quantizeIQ2_S, dequantizeIQ2_S},
	IQ3_XXS: {quantizeIQ3_XXS, dequantizeIQ3_XXS},
	IQ3_S:   {quantizeIQ3_S, dequantizeIQ3_S},
	IQ1_S:   {nil, dequantizeIQ1_S},
	IQ1_M:   {nil, dequantizeIQ1_M},

	IQ4_NL: {quantizeIQ4_NL, dequantizeIQ4_NL},
	IQ4_XS: {quantizeIQ4_XS, dequantizeIQ4_XS},
	TQ1_0:  {quantizeTQ1_0, dequantizeTQ1_0},
	TQ2_0:  {quantizeTQ2_0, dequantizeTQ2_0},
	MXFP4:  {quantizeMXFP4, dequantizeMXFP4},
	I8:     {nil, dequantizeI8},
	I16:    {nil, dequantizeI16},
	I32:    {nil, dequantizeI32},
}

// ErrNoQuantizer reports a type QuantizeRow cannot encode (see
// CanQuantize).
var ErrNoQuantizer = errors.New("no quantizer for this type")

// checkRow validates a row of n elements of type t stored in nbytes bytes.
func checkRow(op string, t Type, n, nbytes int) error {
	want, err := t.rowSize(int64(n))
	if err != nil {
		return fmt.Errorf("quant: %s: %w", op, err)
	}
	if int64(nbytes) != want {
		return fmt.Errorf("quant: %s: %v row of %d elements takes %d bytes, got %d", op, t, n, want, nbytes)
	}
	return nil
}

// DequantizeRow decodes one row of type t from src into dst, one float32
// per element. len(dst) is the element count: it must be a multiple of
// t.BlockSize(), and len(src) must be exactly t.RowSize(len(dst)); any
// other lengths or an invalid type give an error and leave dst untouched.
// Every type can be decoded, the integer types by conversion to float32.
// Arbitrary bytes never cause a panic (though they may decode to NaN or
// Inf).
func DequantizeRow(t Type, src []byte, dst []float32) error {
	if err := checkRow("dequantize", t, len(dst), len(src)); err != nil {
		return err
	}
	codecs[t].dequantize(src, dst)
	return nil
}

// CanQuantize reports whether QuantizeRow encodes type t: every valid
// type but the integer types and the codebook formats IQ2_XXS, IQ2_XS,
// IQ1_S and IQ1_M, which only decode so far (IQ2_S, IQ3_XXS and IQ3_S
// encode).
func CanQuantize(t Type) bool {
	return t.Valid() && codecs[t].quantize != nil
}

// QuantizeRow encodes the row src as type t into dst. len(src) must be a
// multiple of t.BlockSize() and len(dst) exactly t.RowSize(len(src));
// other lengths, an invalid type or a type CanQuantize refuses give an
// error and leave dst untouched. Quantized types use ggml's reference algorithms
// and produce the bytes ggml's quantize_row_*_ref functions produce; F16
// and BF16 round to nearest even; F32 is copied.
func QuantizeRow(t Type, src []float32, dst []byte) error {
	if err := checkRow("quantize", t, len(src), len(dst)); err != nil {
		return err
	}
	q := codecs[t].quantize
	if q == nil {
		return fmt.Errorf("quant: quantize: cannot quantize to %v (%w)", t, ErrNoQuantizer)
	}
	q(src, dst)
	return nil
}

func quantizeF32(x []float32, y []byte) {
	for i, v := range x {
		binary.LittleEndian.PutUint32(y[4*i:], math.Float32bits(v))
	}
}

func dequantizeF32(x []byte, y []float32) {
	for i := range y {
		y[i] = math.Float32frombits(binary.LittleEndian.Uint32(x[4*i:]))
	}
}

func quantizeF16(x []float32, y []byte) {
	for i, v := range x {
		binary.LittleEndian.PutUint16(y[2*i:], FP32ToFP16(v))
	}
}

func dequantizeF16(x []byte, y []float32) {
	for i := range y {
		y[i] = FP16ToFP32(binary.LittleEndian.Uint16(x[2*i:]))
	}
}

func quantizeBF16(x []float32, y []byte) {
	for i, v := range x {
		binary.LittleEndian.PutUint16(y[2*i:], FP32ToBF16(v))
	}
}

func dequantizeBF16(x []byte, y []float32) {
	for i := range y {
		y[i] = BF16ToFP32(binary.LittleEndian.Uint16(x[2*i:]))
	}
}

func dequantizeI8(x []byte, y []float32) {
	for i := range y {
		y[i] = float32(int8(x[i]))
	}
}

func dequantizeI16(x []byte, y []float32) {
	for i := range y {
		y[i] = float32(int16(binary.LittleEndian.Uint16(x[2*i:])))
	}
}

// dequantizeI32 rounds values beyond 2^24 in magnitude to the nearest
// float32.
func dequantizeI32(x []byte, y []float32) {
	for i := range y {
		y[i] = float32(int32(binary.LittleEndian.Uint32(x[4*i:])))
	}
}
