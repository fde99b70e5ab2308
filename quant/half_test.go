package quant

import (
	"math"
	"testing"
)

func f32(b uint32) float32 { return math.Float32frombits(b) }

func TestFP32ToFP16(t *testing.T) {
	tests := []struct {
		name string
		in   float32
		want uint16
	}{
		{"zero", 0, 0x0000},
		{"negative zero", f32(0x80000000), 0x8000},
		{"one", 1, 0x3c00},
		{"minus two", -2, 0xc000},
		{"one third", 1.0 / 3, 0x3555},
		{"max finite", 65504, 0x7bff},
		{"just below the overflow midpoint", f32(0x477fefff), 0x7bff},
		{"overflow midpoint 65520 ties to Inf", 65520, 0x7c00},
		{"overflow", 1e6, 0x7c00},
		{"negative overflow", -1e6, 0xfc00},
		{"max float32", math.MaxFloat32, 0x7c00},
		{"+Inf", float32(math.Inf(1)), 0x7c00},
		{"-Inf", float32(math.Inf(-1)), 0xfc00},
		{"tie 1+2^-11 to even (down)", 1 + 0x1p-11, 0x3c00},
		{"tie 1+3*2^-11 to even (up)", 1 + 3*0x1p-11, 0x3c02},
		{"just above tie rounds up", f32(0x3f801001), 0x3c01},
		{"just below tie rounds down", f32(0x3f800fff), 0x3c00},
		{"tie 2049 to even 2048", 2049, 0x6800},
		{"tie 2051 to even 2052", 2051, 0x6802},
		{"smallest normal", 0x1p-14, 0x0400},
		{"largest subnormal", 1023 * 0x1p-24, 0x03ff},
		{"tie between largest subnormal and smallest normal", 1023.5 * 0x1p-24, 0x0400},
		{"smallest subnormal", 0x1p-24, 0x0001},
		{"negative smallest subnormal", -0x1p-24, 0x8001},
		{"half the smallest subnormal ties to zero", 0x1p-25, 0x0000},
		{"just above half the smallest subnormal", f32(0x33000001), 0x0001},
		{"1.5 subnormal units tie to 2", 3 * 0x1p-25, 0x0002},
		{"2.5 subnormal units tie to 2", 5 * 0x1p-25, 0x0002},
		{"subnormal rounding down", 0x1p-24 * 2.25, 0x0002},
		{"subnormal rounding up", 0x1p-24 * 2.75, 0x0003},
		{"far below subnormals", 1e-10, 0x0000},
		{"negative far below subnormals", -1e-10, 0x8000},
		{"float32 subnormal", f32(0x00000001), 0x0000},
		{"quiet NaN", f32(0x7fc00000), 0x7e00},
		{"negative NaN", f32(0xffc00001), 0xfe00},
		{"signaling NaN is quieted", f32(0x7f800001), 0x7e00},
		{"NaN with payload", f32(0x7fd12345), 0x7e00},
	}
	for _, tt := range tests {
		if got := FP32ToFP16(tt.in); got != tt.want {
			t.Errorf("%s: FP32ToFP16(%g [%#08x]) = %#04x, want %#04x", tt.name, tt.in, math.Float32bits(tt.in), got, tt.want)
		}
	}
}

func TestFP16ToFP32(t *testing.T) {
	tests := []struct {
		in   uint16
		want uint32 // float32 bits
	}{
		{0x0000, 0x00000000},
		{0x8000, 0x80000000},
		{0x3c00, math.Float32bits(1)},
		{0xc000, math.Float32bits(-2)},
		{0x3555, math.Float32bits(0.333251953125)},
		{0x7bff, math.Float32bits(65504)},
		{0x0400, math.Float32bits(0x1p-14)},
		{0x03ff, math.Float32bits(1023 * 0x1p-24)},
		{0x0001, math.Float32bits(0x1p-24)},
		{0x8001, math.Float32bits(-0x1p-24)},
		{0x7c00, 0x7f800000},
		{0xfc00, 0xff800000},
		{0x7e00, 0x7fc00000},
		{0xfe00, 0xffc00000},
		{0x7c01, 0x7fc02000}, // signaling NaN comes back quiet, payload kept
		{0x7dff, 0x7fffe000},
	}
	for _, tt := range tests {
		if got := math.Float32bits(FP16ToFP32(tt.in)); got != tt.want {
			t.Errorf("FP16ToFP32(%#04x) = %#08x, want %#08x", tt.in, got, tt.want)
		}
	}
}

func isNaN16(h uint16) bool { return h&0x7c00 == 0x7c00 && h&0x03ff != 0 }

// TestFP16RoundTripExhaustive checks every binary16 bit pattern:
// FP32ToFP16(FP16ToFP32(h)) == h for all non-NaN h, and NaNs stay NaNs of
// the same sign.
func TestFP16RoundTripExhaustive(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		f := FP16ToFP32(h)
		got := FP32ToFP16(f)
		if isNaN16(h) {
			if f == f || !isNaN16(got) || got&0x8000 != h&0x8000 {
				t.Errorf("NaN %#04x -> %g -> %#04x", h, f, got)
			}
			continue
		}
		if got != h {
			t.Errorf("%#04x -> %g -> %#04x", h, f, got)
		}
	}
}

// TestFP16RoundingExhaustive checks rounding at every pair of adjacent
// finite binary16 values a < b of either sign: their exact midpoint (which
// float32 represents exactly) goes to the one with the even mantissa, and
// the float32 neighbors of the midpoint go to the nearer one. The pair
// (65504, 65536) covers overflow: its midpoint 65520 and above become Inf.
func TestFP16RoundingExhaustive(t *testing.T) {
	for h := uint16(0); h <= 0x7bff; h++ {
		lo, hi := h, h+1 // hi == 0x7c00 (Inf) for the last pair
		a, b := float64(FP16ToFP32(lo)), float64(FP16ToFP32(hi))
		if hi == 0x7c00 {
			b = 65536
		}
		mid := float32((a + b) / 2)
		if float64(mid) != (a+b)/2 {
			t.Fatalf("midpoint of %#04x and %#04x not exact in float32", lo, hi)
		}
		even := lo
		if lo&1 == 1 {
			even = hi
		}
		below := math.Nextafter32(mid, 0)
		above := math.Nextafter32(mid, math.MaxFloat32)
		for _, sign := range []uint16{0, 0x8000} {
			m, bl, ab := mid, below, above
			if sign != 0 {
				m, bl, ab = -m, -bl, -ab
			}
			if got := FP32ToFP16(m); got != even|sign {
				t.Errorf("FP32ToFP16(%g) = %#04x, want %#04x (tie to even)", m, got, even|sign)
			}
			if got := FP32ToFP16(bl); got != lo|sign {
				t.Errorf("FP32ToFP16(%g) = %#04x, want %#04x", bl, got, lo|sign)
			}
			if got := FP32ToFP16(ab); got != hi|sign {
				t.Errorf("FP32ToFP16(%g) = %#04x, want %#04x", ab, got, hi|sign)
			}
		}
	}
}

func TestFP32ToBF16(t *testing.T) {
	tests := []struct {
		name string
		in   uint32 // float32 bits
		want uint16
	}{
		{"zero", 0x00000000, 0x0000},
		{"negative zero", 0x80000000, 0x8000},
		{"one", 0x3f800000, 0x3f80},
		{"minus one", 0xbf800000, 0xbf80},
		{"tie to even (down)", 0x3f808000, 0x3f80},
		{"tie to even (up)", 0x3f818000, 0x3f82},
		{"above tie", 0x3f808001, 0x3f81},
		{"below tie", 0x3f807fff, 0x3f80},
		{"max finite bf16", 0x7f7f0000, 0x7f7f},
		{"below max finite overflow tie", 0x7f7f7fff, 0x7f7f},
		{"overflow tie to Inf", 0x7f7f8000, 0x7f80},
		{"max float32 overflows", 0x7f7fffff, 0x7f80},
		{"negative overflow", 0xff7fffff, 0xff80},
		{"+Inf", 0x7f800000, 0x7f80},
		{"-Inf", 0xff800000, 0xff80},
		{"subnormal rounds down", 0x00000001, 0x0000},
		{"subnormal tie to even zero", 0x00008000, 0x0000},
		{"subnormal above tie is kept", 0x00008001, 0x0001},
		{"subnormal tie to even 2", 0x00018000, 0x0002},
		{"smallest normal", 0x00800000, 0x0080},
		{"quiet NaN", 0x7fc00000, 0x7fc0},
		{"signaling NaN quieted", 0x7f800001, 0x7fc0},
		{"NaN payload high bits kept", 0x7fa00000, 0x7fe0},
		{"negative NaN with payload", 0xff812345, 0xffc1},
	}
	for _, tt := range tests {
		if got := FP32ToBF16(f32(tt.in)); got != tt.want {
			t.Errorf("%s: FP32ToBF16(%#08x) = %#04x, want %#04x", tt.name, tt.in, got, tt.want)
		}
	}
}

// TestBF16Exhaustive checks every bfloat16 bit pattern: conversion to
// float32 puts the bits in the top half, and converting back is the
// identity except that NaNs come back quiet.
func TestBF16Exhaustive(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		f := BF16ToFP32(h)
		if got := math.Float32bits(f); got != uint32(h)<<16 {
			t.Fatalf("BF16ToFP32(%#04x) bits = %#08x, want %#08x", h, got, uint32(h)<<16)
		}
		want := h
		if h&0x7f80 == 0x7f80 && h&0x7f != 0 {
			want |= 0x40
		}
		if got := FP32ToBF16(f); got != want {
			t.Errorf("FP32ToBF16(BF16ToFP32(%#04x)) = %#04x, want %#04x", h, got, want)
		}
	}
}
