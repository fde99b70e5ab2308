package quant

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestTraits pins every type's number, name, block geometry and class to
// ggml's type table (ggml.c type_traits) and the block structs of
// ggml-common.h.
func TestTraits(t *testing.T) {
	tests := []struct {
		typ       Type
		num       uint32
		name      string
		blockSize int64
		typeSize  int64
		quantized bool
		float     bool
		vecDot    Type
	}{
		{F32, 0, "f32", 1, 4, false, true, F32},
		{F16, 1, "f16", 1, 2, false, true, F16},
		{Q4_0, 2, "q4_0", 32, 18, true, false, Q8_0},
		{Q4_1, 3, "q4_1", 32, 20, true, false, Q8_1},
		{Q5_0, 6, "q5_0", 32, 22, true, false, Q8_0},
		{Q5_1, 7, "q5_1", 32, 24, true, false, Q8_1},
		{Q8_0, 8, "q8_0", 32, 34, true, false, Q8_0},
		{Q8_1, 9, "q8_1", 32, 36, true, false, F32},
		{Q2_K, 10, "q2_K", 256, 84, true, false, Q8_K},
		{Q3_K, 11, "q3_K", 256, 110, true, false, Q8_K},
		{Q4_K, 12, "q4_K", 256, 144, true, false, Q8_K},
		{Q5_K, 13, "q5_K", 256, 176, true, false, Q8_K},
		{Q6_K, 14, "q6_K", 256, 210, true, false, Q8_K},
		{Q8_K, 15, "q8_K", 256, 292, true, false, F32},
		{I8, 24, "i8", 1, 1, false, false, F32},
		{I16, 25, "i16", 1, 2, false, false, F32},
		{I32, 26, "i32", 1, 4, false, false, F32},
		{BF16, 30, "bf16", 1, 2, false, true, BF16},
		{IQ2_XXS, 16, "iq2_xxs", 256, 66, true, false, Q8_K},
		{IQ2_XS, 17, "iq2_xs", 256, 74, true, false, Q8_K},
		{IQ3_XXS, 18, "iq3_xxs", 256, 98, true, false, Q8_K},
		{IQ1_S, 19, "iq1_s", 256, 50, true, false, Q8_K},
		{IQ3_S, 21, "iq3_s", 256, 110, true, false, Q8_K},
		{IQ2_S, 22, "iq2_s", 256, 82, true, false, Q8_K},
		{IQ1_M, 29, "iq1_m", 256, 56, true, false, Q8_K},
		{IQ4_NL, 20, "iq4_nl", 32, 18, true, false, Q8_0},
		{IQ4_XS, 23, "iq4_xs", 256, 136, true, false, Q8_K},
		{TQ1_0, 34, "tq1_0", 256, 54, true, false, Q8_K},
		{TQ2_0, 35, "tq2_0", 256, 66, true, false, Q8_K},
		{MXFP4, 39, "mxfp4", 32, 17, true, false, Q8_0},
	}
	var all []Type
	for _, tt := range tests {
		all = append(all, tt.typ)
		if uint32(tt.typ) != tt.num {
			t.Errorf("%s = %d, want %d", tt.name, uint32(tt.typ), tt.num)
		}
		if got := tt.typ.String(); got != tt.name {
			t.Errorf("Type(%d).String() = %q, want %q", tt.num, got, tt.name)
		}
		if !tt.typ.Valid() {
			t.Errorf("%v.Valid() = false", tt.typ)
		}
		if got := tt.typ.BlockSize(); got != tt.blockSize {
			t.Errorf("%v.BlockSize() = %d, want %d", tt.typ, got, tt.blockSize)
		}
		if got := tt.typ.TypeSize(); got != tt.typeSize {
			t.Errorf("%v.TypeSize() = %d, want %d", tt.typ, got, tt.typeSize)
		}
		if got := tt.typ.IsQuantized(); got != tt.quantized {
			t.Errorf("%v.IsQuantized() = %v, want %v", tt.typ, got, tt.quantized)
		}
		if got := tt.typ.IsFloat(); got != tt.float {
			t.Errorf("%v.IsFloat() = %v, want %v", tt.typ, got, tt.float)
		}
		if got := tt.typ.VecDotType(); got != tt.vecDot {
			t.Errorf("%v.VecDotType() = %v, want %v", tt.typ, got, tt.vecDot)
		}
	}
	slices.Sort(all)
	if got := Types(); !slices.Equal(got, all) {
		t.Errorf("Types() = %v, want %v", got, all)
	}
	if QK != 32 || QKK != 256 {
		t.Errorf("QK, QKK = %d, %d; want 32, 256", QK, QKK)
	}
}

func TestInvalidType(t *testing.T) {
	for _, typ := range []Type{4, 5, 27, 28, 31, 36, 40, 1000, 1 << 31} {
		if typ.Valid() {
			t.Errorf("Type(%d).Valid() = true", uint32(typ))
		}
		if got, want := typ.String(), fmt.Sprintf("type(%d)", uint32(typ)); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
		if typ.BlockSize() != 0 || typ.TypeSize() != 0 || typ.IsQuantized() || typ.IsFloat() {
			t.Errorf("%v: invalid type reports traits", typ)
		}
		if got := typ.VecDotType(); got != typ {
			t.Errorf("%v.VecDotType() = %v, want itself", typ, got)
		}
		if _, err := typ.RowSize(32); err == nil {
			t.Errorf("%v.RowSize(32): no error", typ)
		}
	}
}

func TestRowSize(t *testing.T) {
	tests := []struct {
		typ  Type
		n    int64
		want int64
	}{
		{F32, 0, 0},
		{F32, 7, 28},
		{F16, 3, 6},
		{BF16, 5, 10},
		{I8, 9, 9},
		{I16, 9, 18},
		{I32, 9, 36},
		{Q4_0, 32, 18},
		{Q4_0, 4096, 128 * 18},
		{Q4_1, 64, 40},
		{Q5_0, 96, 66},
		{Q5_1, 32, 24},
		{Q8_0, 4096, 128 * 34},
		{Q8_1, 64, 72},
		{Q2_K, 256, 84},
		{Q3_K, 512, 220},
		{Q4_K, 4096, 16 * 144},
		{Q5_K, 256, 176},
		{Q6_K, 768, 630},
		{Q8_K, 256, 292},
	}
	for _, tt := range tests {
		got, err := tt.typ.RowSize(tt.n)
		if err != nil || got != tt.want {
			t.Errorf("%v.RowSize(%d) = %d, %v; want %d, nil", tt.typ, tt.n, got, err, tt.want)
		}
	}
}

func TestRowSizeErrors(t *testing.T) {
	tests := []struct {
		typ       Type
		n         int64
		rowLength bool     // error wraps ErrRowLength
		mention   []string // substrings the message must contain
	}{
		{Q4_0, 33, true, []string{"q4_0", "33", "32"}},
		{Q4_K, 32, true, []string{"q4_K", "32", "256"}},
		{Q8_K, 257, true, []string{"q8_K", "257", "256"}},
		{Q5_1, 1, true, []string{"q5_1", "1", "32"}},
		{F32, -1, false, []string{"f32", "-1"}},
		{Q4_0, -32, false, []string{"q4_0", "-32"}},
		{Type(5), 32, false, []string{"type(5)"}},
	}
	for _, tt := range tests {
		_, err := tt.typ.RowSize(tt.n)
		if err == nil {
			t.Errorf("%v.RowSize(%d): no error", tt.typ, tt.n)
			continue
		}
		if got := errors.Is(err, ErrRowLength); got != tt.rowLength {
			t.Errorf("%v.RowSize(%d): errors.Is(err, ErrRowLength) = %v, want %v (%v)", tt.typ, tt.n, got, tt.rowLength, err)
		}
		for _, s := range tt.mention {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%v.RowSize(%d) error %q does not mention %q", tt.typ, tt.n, err, s)
			}
		}
	}
}

func TestParseType(t *testing.T) {
	tests := []struct {
		in   string
		want Type
	}{
		{"f32", F32}, {"F32", F32}, {"f16", F16}, {"BF16", BF16}, {"bf16", BF16},
		{"q4_0", Q4_0}, {"Q4_0", Q4_0}, {"q4_1", Q4_1}, {"q5_0", Q5_0}, {"Q5_1", Q5_1},
		{"q8_0", Q8_0}, {"q8_1", Q8_1}, {"q2_K", Q2_K}, {"Q3_K", Q3_K}, {"q4_k", Q4_K},
		{"Q4_K", Q4_K}, {"q5_K", Q5_K}, {"q6_k", Q6_K}, {"Q8_K", Q8_K},
		{"i8", I8}, {"I16", I16}, {"i32", I32},
	}
	for _, tt := range tests {
		got, err := ParseType(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseType(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, typ := range Types() {
		if got, err := ParseType(typ.String()); err != nil || got != typ {
			t.Errorf("ParseType(%q) = %v, %v; want %v", typ.String(), got, err, typ)
		}
	}
	for _, in := range []string{"", "q4", "q4_2", "f64", "type(5)", " q4_0", "q4_0 "} {
		_, err := ParseType(in)
		if err == nil {
			t.Errorf("ParseType(%q): no error", in)
			continue
		}
		msg := err.Error()
		for _, name := range []string{"f32", "q4_0", "q6_K", "bf16", "i32"} {
			if !strings.Contains(msg, name) {
				t.Errorf("ParseType(%q) error %q does not list %q", in, msg, name)
			}
		}
	}
}
