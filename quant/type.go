package quant

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Type is a tensor element type, numbered as GGUF and ggml number it
// (enum ggml_type).
type Type uint32

// ErrRowLength reports a row whose element count is not a multiple of its
// type's block size. Errors returned by RowSize, DequantizeRow and
// QuantizeRow for such rows wrap it.
var ErrRowLength = errors.New("row length is not a multiple of the block size")

// traits describes one element type.
type traits struct {
	name      string
	blockSize int64 // elements per block
	typeSize  int64 // bytes per block
	quantized bool  // block-quantized with a scale
	float     bool  // f32, f16 or bf16
	vecDot    Type  // type ggml converts the activation to for dot products
}

// traitTable is indexed by Type; entries with an empty name are invalid.
var traitTable = [...]traits{
	F32:  {name: "f32", blockSize: 1, typeSize: 4, float: true, vecDot: F32},
	F16:  {name: "f16", blockSize: 1, typeSize: 2, float: true, vecDot: F16},
	Q4_0: {name: "q4_0", blockSize: QK, typeSize: sizeQ4_0, quantized: true, vecDot: Q8_0},
	Q4_1: {name: "q4_1", blockSize: QK, typeSize: sizeQ4_1, quantized: true, vecDot: Q8_1},
	Q5_0: {name: "q5_0", blockSize: QK, typeSize: sizeQ5_0, quantized: true, vecDot: Q8_0},
	Q5_1: {name: "q5_1", blockSize: QK, typeSize: sizeQ5_1, quantized: true, vecDot: Q8_1},
	Q8_0: {name: "q8_0", blockSize: QK, typeSize: sizeQ8_0, quantized: true, vecDot: Q8_0},
	Q8_1: {name: "q8_1", blockSize: QK, typeSize: sizeQ8_1, quantized: true, vecDot: F32},
	Q2_K: {name: "q2_K", blockSize: QKK, typeSize: sizeQ2_K, quantized: true, vecDot: Q8_K},
	Q3_K: {name: "q3_K", blockSize: QKK, typeSize: sizeQ3_K, quantized: true, vecDot: Q8_K},
	Q4_K: {name: "q4_K", blockSize: QKK, typeSize: sizeQ4_K, quantized: true, vecDot: Q8_K},
	Q5_K: {name: "q5_K", blockSize: QKK, typeSize: sizeQ5_K, quantized: true, vecDot: Q8_K},
	Q6_K: {name: "q6_K", blockSize: QKK, typeSize: sizeQ6_K, quantized: true, vecDot: Q8_K},
	Q8_K: {name: "q8_K", blockSize: QKK, typeSize: sizeQ8_K, quantized: true, vecDot: F32},
	I8:   {name: "i8", blockSize: 1, typeSize: 1, vecDot: F32},
	I16:  {name: "i16", blockSize: 1, typeSize: 2, vecDot: F32},
	I32:  {name: "i32", blockSize: 1, typeSize: 4, vecDot: F32},
	BF16: {name: "bf16", blockSize: 1, typeSize: 2, float: true, vecDot: BF16},

	IQ2_XXS: {name: "iq2_xxs", blockSize: QKK, typeSize: sizeIQ2_XXS, quantized: true, vecDot: Q8_K},
	IQ2_XS:  {name: "iq2_xs", blockSize: QKK, typeSize: sizeIQ2_XS, quantized: true, vecDot: Q8_K},
	IQ3_XXS: {name: "iq3_xxs", blockSize: QKK, typeSize: sizeIQ3_XXS, quantized: true, vecDot: Q8_K},
	IQ1_S:   {name: "iq1_s", blockSize: QKK, typeSize: sizeIQ1_S, quantized: true, vecDot: Q8_K},
	IQ3_S:   {name: "iq3_s", blockSize: QKK, typeSize: sizeIQ3_S, quantized: true, vecDot: Q8_K},
	IQ2_S:   {name: "iq2_s", blockSize: QKK, typeSize: sizeIQ2_S, quantized: true, vecDot: Q8_K},
	IQ1_M:   {name: "iq1_m", blockSize: QKK, typeSize: sizeIQ1_M, quantized: true, vecDot: Q8_K},
	IQ4_NL:  {name: "iq4_nl", blockSize: QK, typeSize: sizeIQ4_NL, quantized: true, vecDot: Q8_0},
	IQ4_XS:  {name: "iq4_xs", blockSize: QKK, typeSize: sizeIQ4_XS, quantized: true, vecDot: Q8_K},
	TQ1_0:   {name: "tq1_0", blockSize: QKK, typeSize: sizeTQ1_0, quantized: true, vecDot: Q8_K},
	TQ2_0:   {name: "tq2_0", blockSize: QKK, typeSize: sizeTQ2_0, quantized: true, vecDot: Q8_K},
	MXFP4:   {name: "mxfp4", blockSize: QK, typeSize: sizeMXFP4, quantized: true, vecDot: Q8_0},
}

// info returns t's traits and whether t is valid.
func (t Type) info() (traits, bool) {
	if uint64(t) >= uint64(len(traitTable)) || traitTable[t].name == "" {
		return traits{}, false
	}
	return traitTable[t], true
}

// String returns ggml's name for t ("f32", "q4_0", "q4_K", ...), or
// "type(N)" for a number that is not a valid Type.
func (t Type) String() string {
	if tr, ok := t.info(); ok {
		return tr.name
	}
	return "type(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// Valid reports whether t is one of the types this package knows.
func (t Type) Valid() bool {
	_, ok := t.info()
	return ok
}

// BlockSize returns the number of elements in one block of t: 1 for the
// float and integer types, QK for the legacy quantized types, IQ4_NL and
// MXFP4, and QKK for the K types, the IQ1, IQ2 and IQ3 types, IQ4_XS,
// TQ1_0 and TQ2_0. It returns 0
// for an invalid type.
func (t Type) BlockSize() int64 {
	// Indexed in place rather than through info, which copies the
	// traits: every kernel call asks, several times. Entries of invalid
	// types are zero.
	if uint64(t) < uint64(len(traitTable)) {
		return traitTable[t].blockSize
	}
	return 0
}

// TypeSize returns the number of bytes in one block of t, or 0 for an
// invalid type.
func (t Type) TypeSize() int64 {
	if uint64(t) < uint64(len(traitTable)) {
		return traitTable[t].typeSize
	}
	return 0
}

// IsQuantized reports whether t is a block-quantized type.
func (t Type) IsQuantized() bool {
	tr, _ := t.info()
	return tr.quantized
}

// IsFloat reports whether t is F32, F16 or BF16.
func (t Type) IsFloat() bool {
	tr, _ := t.info()
	return tr.float
}

// RowSize returns the number of bytes of a row of n elements of type t.
// It fails for an invalid type, for n < 0, and, with an error wrapping
// ErrRowLength, when n is not a multiple of t's block size.
func (t Type) RowSize(n int64) (int64, error) {
	size, err := t.rowSize(n)
	if err != nil {
		return 0, fmt.Errorf("quant: %w", err)
	}
	return size, nil
}

// rowSize is RowSize with errors that lack the package prefix.
func (t Type) rowSize(n int64) (int64, error) {
	tr, ok := t.info()
	if !ok {
		return 0, fmt.Errorf("invalid type %v", t)
	}
	if n < 0 {
		return 0, fmt.Errorf("%v row of %d elements: negative length", t, n)
	}
	if n%tr.blockSize != 0 {
		return 0, fmt.Errorf("%v row of %d elements: %w (block size %d)", t, n, ErrRowLength, tr.blockSize)
	}
	return n / tr.blockSize * tr.typeSize, nil
}

// VecDotType returns the type ggml converts the activation (src1) of a
// matrix multiplication to when the weight has type t: Q8_0 for Q4_0, Q5_0,
// Q8_0, IQ4_NL and MXFP4; Q8_1 for Q4_1 and Q5_1; Q8_K for Q2_K through Q6_K; t itself
// for F32, F16 and BF16. Q8_1, Q8_K and the integer types have no dot
// kernel in ggml, whose type table then leaves the field at its zero
// value, F32; VecDotType returns F32 for them too. IQ4_NL and MXFP4 pair
// with Q8_0; IQ4_XS, TQ1_0, TQ2_0 and the IQ1, IQ2 and IQ3 types with
// Q8_K. For an invalid type it
// returns t.
func (t Type) VecDotType() Type {
	tr, ok := t.info()
	if !ok {
		return t
	}
	return tr.vecDot
}

// Types returns every valid Type in increasing numeric order.
func Types() []Type {
	var ts []Type
	for i := range traitTable {
		if t := Type(i); t.Valid() {
			ts = append(ts, t)
		}
	}
	return ts
}

// ParseType returns the Type named s. Matching ignores case, so "Q4_K",
// "q4_k" and "q4_K" all name Q4_K.
func ParseType(s string) (Type, error) {
	for _, t := range Types() {
		if strings.EqualFold(s, t.String()) {
			return t, nil
		}
	}
	names := make([]string, 0, len(traitTable))
	for _, t := range Types() {
		names = append(names, t.String())
	}
	return 0, fmt.Errorf("quant: unknown type %q (valid types: %s)", s, strings.Join(names, ", "))
}
