package gputest

import (
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// QuantizeRows returns vals quantized to typ by package quant, row by row
// (rows of ne0 values): the bytes a GPU's CPY into typ must write.
func QuantizeRows(tb testing.TB, typ quant.Type, vals []float32, ne0 int) []byte {
	tb.Helper()
	rowBytes, err := typ.RowSize(int64(ne0))
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]byte, int64(len(vals)/ne0)*rowBytes)
	for r := 0; r < len(vals)/ne0; r++ {
		if err := quant.QuantizeRow(typ, vals[r*ne0:(r+1)*ne0], out[int64(r)*rowBytes:int64(r+1)*rowBytes]); err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

// A QuantizerInput is a named set of rows for a quantizer test.
type QuantizerInput struct {
	Name string
	Vals []float32
}

// A QuantizerKind is a kind of input a test adds to QuantizerInputs':
// At gives element i of row r.
type QuantizerKind struct {
	Name string
	At   func(r, i int) float32
}

// QuantizerInputs returns rows rows of ne0 values (ne0 at least 512) of
// the kinds that test a GPU's quantizers against quant's: zeros, one
// large value among zeros, one among data, negative values only,
// gaussian, ternary, halves (a tie away from a code), tiny and huge
// magnitudes, then the extra kinds given, then zero blocks after data
// (IQ4_NL's reference keeps the codes of the block before, within a row
// only). Values are drawn from rng in that order.
func QuantizerInputs(rng *rand.Rand, ne0, rows int, extra ...QuantizerKind) []QuantizerInput {
	fill := func(f func(r, i int) float32) []float32 {
		x := make([]float32, ne0*rows)
		for r := range rows {
			for i := range ne0 {
				x[r*ne0+i] = f(r, i)
			}
		}
		return x
	}
	in := []QuantizerInput{
		{"zeros", fill(func(int, int) float32 { return 0 })},
		{"one large value", fill(func(r, i int) float32 {
			if i == 37+r {
				return 3e4
			}
			return 0
		})},
		{"one large among data", fill(func(r, i int) float32 {
			if i == 300 {
				return -1e5
			}
			return float32(rng.NormFloat64())
		})},
		{"negative", fill(func(int, int) float32 { return -float32(rng.Float64()) * 7 })},
		{"gaussian", fill(func(int, int) float32 { return float32(rng.NormFloat64()) })},
		{"ternary", fill(func(int, int) float32 { return float32(rng.IntN(3) - 1) })},
		{"halves", fill(func(_, i int) float32 { return float32(i%9-4) * 0.5 })},
		{"tiny", fill(func(int, int) float32 { return float32(rng.NormFloat64()) * 1e-20 })},
		{"huge", fill(func(int, int) float32 { return float32(rng.NormFloat64()) * 1e30 })},
	}
	for _, k := range extra {
		in = append(in, QuantizerInput{k.Name, fill(k.At)})
	}
	return append(in, QuantizerInput{"zero blocks after data", fill(func(r, i int) float32 {
		// Row 0: data, then zeros from element 200; row 1: zeros, then
		// data, then zeros (blocks below 1e-15 at both ends).
		if r == 0 && i < 200 || r == 1 && i >= 64 && i < 128 {
			return float32(rng.NormFloat64())
		}
		if i%3 == 0 {
			return 1e-16
		}
		return 0
	})})
}
