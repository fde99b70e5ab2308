package quant

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"
)

// TestQuantizeKnownAnswers pins the scale choice, rounding and packing of
// the legacy quantizers with inputs small enough to work out by hand. Each
// input is built so that the scale is exact (1, 0.5 or -1), so every code
// follows from ggml's rounding rule alone:
//
//	q4_0, q5_0: q = min(2^b-1, trunc(x/d + 2^(b-1) + 0.5)), d = max/-2^(b-1)
//	q4_1, q5_1: q = trunc((x-min)/d + 0.5) (clamped to 15 for q4_1)
//	q8_0, q8_1: q = roundf(x/d), ties away from zero, d = amax/127
func TestQuantizeKnownAnswers(t *testing.T) {
	ramp := func(n int, f func(j int) float32) []float32 {
		x := make([]float32, n)
		for j := range x {
			x[j] = f(j)
		}
		return x
	}
	tests := []struct {
		name string
		typ  Type
		x    []float32
		want []byte
	}{
		{
			// amax 127: d = 1. roundf sends ±2.5 to ±3 and -0.5 to -1
			// (round-half-even would give ±2 and 0).
			name: "q8_0 d=1 ties away from zero",
			typ:  Q8_0,
			x: append([]float32{127, -2.5, 2.5, 0.49, -0.5, 1.5},
				ramp(26, func(j int) float32 { return float32(j - 10) })...),
			want: []byte{
				0x00, 0x3c, 0x7f, 0xfd, 0x03, 0x00, 0xff, 0x02, 0xf6, 0xf7, 0xf8, 0xf9,
				0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05,
				0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
			},
		},
		{
			// amax 63.5 (the negative last element): d = 0.5, 1/d = 2.
			// x = k/2 + 0.25 gives x/d = k + 0.5: up for k >= 0, down
			// (away from zero) for k < 0.
			name: "q8_0 d=0.5 ramp",
			typ:  Q8_0,
			x: append(ramp(31, func(j int) float32 { return float32(j-16) + 0.25 }),
				-63.5),
			want: []byte{
				0x00, 0x38, 0xe0, 0xe2, 0xe4, 0xe6, 0xe8, 0xea, 0xec, 0xee, 0xf0, 0xf2,
				0xf4, 0xf6, 0xf8, 0xfa, 0xfc, 0xfe, 0x01, 0x03, 0x05, 0x07, 0x09, 0x0b,
				0x0d, 0x0f, 0x11, 0x13, 0x15, 0x17, 0x19, 0x1b, 0x1d, 0x81,
			},
		},
		{
			// As the first q8_0 case; s = d * sum(q) = 193 (0x5a08).
			name: "q8_1 d=1",
			typ:  Q8_1,
			x: append([]float32{127, -2.5, 2.5, 0.49, -0.5, 1.5},
				ramp(26, func(j int) float32 { return float32(j - 10) })...),
			want: []byte{
				0x00, 0x3c, 0x08, 0x5a, 0x7f, 0xfd, 0x03, 0x00, 0xff, 0x02, 0xf6, 0xf7,
				0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff, 0x00, 0x01, 0x02, 0x03,
				0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
			},
		},
		{
			// max = -8: d = 1. Codes trunc(x + 8.5): 7 and 7.4 both give
			// 15, 0.5 gives 9, 0.49 gives 8, -7.5 gives 1, -7.51 gives 0.
			name: "q4_0 negative max",
			typ:  Q4_0,
			x: append([]float32{-8, 7, 7.4, 0, -0.6, -0.4, 0.5, 0.49, -7.5, -7.51, 6.5, 6.49},
				ramp(20, func(j int) float32 { return float32(j)*0.375 - 0.9 })...),
			want: []byte{
				0x00, 0x3c, 0x90, 0x9f, 0x9f, 0xa8, 0xa7, 0xa8, 0xb9, 0xb8, 0xc1, 0xc0,
				0xcf, 0xde, 0xd7, 0xd7, 0xe8, 0xe8,
			},
		},
		{
			// 8 and -8 tie in magnitude; the first one wins, so d = -1.
			// -8 would need code 16 and is clamped to 15 (it decodes
			// to -7: the one element q4_0 cannot represent to d/2).
			name: "q4_0 positive max, clamped extreme",
			typ:  Q4_0,
			x: append([]float32{8, -8},
				ramp(30, func(j int) float32 { return float32(j-14) * 0.5 })...),
			want: []byte{
				0x00, 0xbc, 0x80, 0x8f, 0x7f, 0x7f, 0x6e, 0x6e, 0x5d, 0x5d, 0x4c, 0x4c,
				0x3b, 0x3b, 0x2a, 0x2a, 0x19, 0x19,
			},
		},
		{
			// min -1, max 14: d = 1, m = -1 (0xbc00).
			name: "q4_1",
			typ:  Q4_1,
			x: append([]float32{-1, 14},
				ramp(30, func(j int) float32 { return float32(j+2)*0.4 - 1 })...),
			want: []byte{
				0x00, 0x3c, 0x00, 0xbc, 0x60, 0x7f, 0x71, 0x81, 0x82, 0x82, 0x92, 0x93,
				0xa3, 0xa4, 0xa4, 0xb4, 0xb5, 0xc5, 0xc6, 0xc6,
			},
		},
		{
			// max = -16: d = 1. 15.6 needs code 32 and is clamped to 31.
			// qh = 0xffff0006: elements 1, 2 and 16..31 have the fifth bit.
			name: "q5_0",
			typ:  Q5_0,
			x: append([]float32{-16, 15.4, 15.6},
				ramp(29, func(j int) float32 { return float32(j+3) - 16.3 })...),
			want: []byte{
				0x00, 0x3c, 0x06, 0x00, 0xff, 0xff, 0x00, 0x1f, 0x2f, 0x33, 0x44, 0x55,
				0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
			},
		},
		{
			// min 0, max 31: d = 1, m = 0; code = trunc(x + 0.5).
			name: "q5_1",
			typ:  Q5_1,
			x: append(append([]float32{0, 31},
				ramp(29, func(j int) float32 { return float32(j+2) + 0.4 })...), 30.6),
			want: []byte{
				0x00, 0x3c, 0x00, 0x00, 0x02, 0x00, 0xff, 0xff, 0x00, 0x1f, 0x22, 0x33,
				0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
			},
		},
	}
	for _, tt := range tests {
		if len(tt.x) != 32 {
			t.Fatalf("%s: test input has %d elements", tt.name, len(tt.x))
		}
		got := make([]byte, len(tt.want))
		if err := QuantizeRow(tt.typ, tt.x, got); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !bytes.Equal(got, tt.want) {
			t.Errorf("%s:\n got % x\nwant % x", tt.name, got, tt.want)
		}
	}
}

// TestQuantizeQ8_K pins Q8_K's scale rule: iscale = -127/max with max the
// signed element of largest magnitude, d = 1/iscale stored as float32, and
// bsums the sums of each 16 codes.
func TestQuantizeQ8_K(t *testing.T) {
	x := make([]float32, 256)
	for j := range x {
		x[j] = float32(j%16) - 8 // -8..7 in each group of 16
	}
	x[100] = -254 // max: iscale = 0.5, d = 2
	got := make([]byte, 292)
	if err := QuantizeRow(Q8_K, x, got); err != nil {
		t.Fatal(err)
	}
	want := cat(f32bytes(2))
	for j := range 256 {
		// codes nearest_int(x*0.5) with ties to even: -8..7 -> -4,-4,-3,-2,-2,-2,-1,0,0,0,1,2,2,2,3,4 in
		// order (-3.5 -> -4, -2.5 -> -2, -1.5 -> -2, -0.5 -> 0, 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, 3.5 -> 4).
		codes := []int8{-4, -4, -3, -2, -2, -2, -1, 0, 0, 0, 1, 2, 2, 2, 3, 4}
		c := codes[j%16]
		if j == 100 {
			c = -127 // -254 * 0.5
		}
		want = append(want, byte(c))
	}
	// Each group of 16 sums to -4; group 6 holds element 100 (code -127
	// instead of -2): -129.
	for j := range 16 {
		s := int16(-4)
		if j == 6 {
			s = -129
		}
		want = append(want, byte(s), byte(uint16(s)>>8))
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Q8_K:\n got % x\nwant % x", got, want)
	}
}

// TestRoundTripLegacy checks, block by block, the error bound that follows
// from each legacy format's definition. With u the ideal step (amax/127,
// |max|/8, |max|/16 or (max-min)/(2^b-1)) and d the step actually stored as
// binary16:
//
//	|x - x'| <= u/2 + qmax*|u - d| + |min - m| + slack
//
// u/2 is the rounding error of the code, qmax*|u-d| is what rounding the
// scale to binary16 can add at the largest code qmax, and |min - m| (only
// for the types with an offset) is the binary16 rounding of the offset.
// The one exception is the element of q4_0 or q5_0 that would need code
// 2^b and is clamped: it may be off by a whole step u.
func TestRoundTripLegacy(t *testing.T) {
	types := []struct {
		typ    Type
		div    float64 // u = |max| / div for symmetric types
		levels float64 // u = (max-min) / levels for offset types
		qmax   float64
	}{
		{typ: Q4_0, div: 8, qmax: 8},
		{typ: Q5_0, div: 16, qmax: 16},
		{typ: Q8_0, div: 127, qmax: 127},
		{typ: Q8_1, div: 127, qmax: 127},
		{typ: Q4_1, levels: 15, qmax: 15},
		{typ: Q5_1, levels: 31, qmax: 31},
	}
	for _, tc := range types {
		for di, d := range dists {
			r := &rng{s: uint64(1000*di + 1)}
			x := make([]float32, 32*64)
			d.gen(r, x)
			q, y := roundTrip(t, tc.typ, x)
			bs := int(tc.typ.TypeSize())
			for b := range len(x) / 32 {
				xb, yb, qb := x[32*b:32*b+32], y[32*b:32*b+32], q[bs*b:bs*b+bs]
				stored := math.Abs(float64(FP16ToFP32(uint16(qb[0]) | uint16(qb[1])<<8)))
				var u, minErr, maxSigned float64
				if tc.levels == 0 {
					for _, v := range xb {
						if math.Abs(float64(v)) > math.Abs(maxSigned) {
							maxSigned = float64(v)
						}
					}
					u = math.Abs(maxSigned) / tc.div
				} else {
					lo, hi := math.Inf(1), math.Inf(-1)
					for _, v := range xb {
						lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
					}
					u = (hi - lo) / tc.levels
					m := float64(FP16ToFP32(uint16(qb[2]) | uint16(qb[3])<<8))
					minErr = math.Abs(lo - m)
				}
				slack := 1e-5*u + 1e-6*math.Abs(maxSigned)
				bound := u/2 + tc.qmax*math.Abs(u-stored) + minErr + slack
				for i, v := range xb {
					lim := bound
					if tc.levels == 0 && tc.qmax <= 16 && -float64(v)/maxSigned*tc.div >= tc.div-0.5 {
						lim += u / 2 // the clamped extreme
					}
					if e := math.Abs(float64(v) - float64(yb[i])); e > lim {
						t.Errorf("%v %s block %d element %d: x=%g decoded %g, error %g > bound %g (u=%g d=%g)",
							tc.typ, d.name, b, i, v, yb[i], e, lim, u, stored)
					}
				}
			}
		}
	}
}

// TestRoundTripK checks the K formats against the plain uniform quantizer
// of the same width. A quantizer with step s has |error| <= s/2, so its
// RMS error is at most s/2. For each super-block, s is the step of the
// simplest fit of its bit width to the whole super-block:
//
//	Q2_K, Q4_K, Q5_K (scale and min): s = (max(x,0) - min(x,0)) / (2^b-1)
//	Q3_K, Q6_K (signed codes -2^(b-1)..2^(b-1)-1): s = amax / 2^(b-1)
//
// The K quantizers fit every 16 or 32 elements with their own scale (and
// min) and search for the scales with the least weighted squared error, so
// their RMS error should stay below s/2 despite quantizing those scales to
// 4, 6 or 8 bits. This is a quality bar rather than a theorem (single
// elements may exceed s/2: the search may clamp outliers). Q8_K, which is
// a plain uniform quantizer with a float32 step d, is held to the exact
// per-element bound |error| <= d/2.
func TestRoundTripK(t *testing.T) {
	for _, typ := range []Type{Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K} {
		for di, d := range dists {
			r := &rng{s: uint64(1000*di + 2)}
			x := make([]float32, 256*16)
			d.gen(r, x)
			q, y := roundTrip(t, typ, x)
			for b := range len(x) / 256 {
				xb, yb := x[256*b:256*b+256], y[256*b:256*b+256]
				var lo, hi, amax, se, maxErr float64
				for i, v := range xb {
					f := float64(v)
					lo, hi, amax = math.Min(lo, f), math.Max(hi, f), math.Max(amax, math.Abs(f))
					e := math.Abs(f - float64(yb[i]))
					se += e * e
					maxErr = math.Max(maxErr, e)
				}
				var s float64
				switch typ {
				case Q2_K:
					s = (hi - lo) / 3
				case Q4_K:
					s = (hi - lo) / 15
				case Q5_K:
					s = (hi - lo) / 31
				case Q3_K:
					s = amax / 4
				case Q6_K:
					s = amax / 32
				case Q8_K:
					qb := q[292*b : 292*b+292]
					step := float64(math.Float32frombits(uint32(qb[0]) | uint32(qb[1])<<8 | uint32(qb[2])<<16 | uint32(qb[3])<<24))
					if lim := math.Abs(step)/2*(1+1e-6) + 1e-30; maxErr > lim {
						t.Errorf("%v %s block %d: max error %g > d/2 = %g", typ, d.name, b, maxErr, lim)
					}
					continue
				}
				rmse := math.Sqrt(se / 256)
				if rmse > s/2 {
					t.Errorf("%v %s block %d: RMS error %g > s/2 = %g", typ, d.name, b, rmse, s/2)
				}
			}
		}
	}
}

// TestRoundTripSpecialRows checks rows every type must handle exactly or
// nearly so: all zeros decode to zeros, and a constant row decodes to
// that constant up to binary16 rounding of the scales (2^-11 relative)
// compounded at most a few times (bound 2^-8). The constants keep every
// stored scale a normal binary16 number (Q6_K's super-block scale is about
// amax/4096; below about 0.25 it becomes subnormal and coarse).
func TestRoundTripSpecialRows(t *testing.T) {
	for _, typ := range quantTypes {
		n := int(typ.BlockSize()) * 2
		if n < 512 {
			n = 512
		}
		zeros := make([]float32, n)
		_, y := roundTrip(t, typ, zeros)
		for i, v := range y {
			if v != 0 {
				t.Errorf("%v: zero row element %d decodes to %g", typ, i, v)
				break
			}
		}
		// MXFP4 has no per-block mantissa: ggml's scale puts the largest
		// magnitude at 4 to 8 times it, where the codes are 4 and 6, so
		// a constant is off by up to a quarter (-250 decodes to -192).
		rel := 1.0 / 256
		switch typ {
		case MXFP4:
			rel = 1.0 / 4
		case IQ3_S:
			// No grid entry has four equal levels near the top (level
			// 7, value 15, has none): a constant group of 4 is coded by
			// a neighbour such as (15, 15, 15, 13), least-squares scaled,
			// and ggml multiplies the super-block scale by 1.033: the
			// largest value lands 25% high.
			rel = 0.26
		case IQ3_XXS, IQ2_S:
			// As IQ3_S, and the search fits the odd values 2l+1 while
			// the decoder reads other magnitudes (IQ3_XXS: 8l+4, 62 for
			// level 7; IQ2_S: 8, 25, 43), not proportional to them: a
			// constant lands from 11.5% low to 28% high.
			rel = 0.3
		}
		for _, c := range []float32{1, -1, 0.3, -0.3, 3.5, -250} {
			x := make([]float32, n)
			for i := range x {
				x[i] = c
			}
			_, y := roundTrip(t, typ, x)
			for i, v := range y {
				if e := math.Abs(float64(v - c)); e > math.Abs(float64(c))*rel {
					t.Errorf("%v: constant %g decodes to %g at %d", typ, c, v, i)
					break
				}
			}
		}
	}
}

// TestRoundTripFloatRows checks the float types: F32 is exact, F16 and
// BF16 are correctly rounded (relative error at most 2^-11 and 2^-8 in
// their normal ranges).
func TestRoundTripFloatRows(t *testing.T) {
	r := &rng{s: 9}
	x := make([]float32, 4096)
	for i := range x {
		x[i] = r.gauss() * 100
	}
	for _, tc := range []struct {
		typ Type
		rel float64
	}{{F32, 0}, {F16, 0x1p-11}, {BF16, 0x1p-8}} {
		_, y := roundTrip(t, tc.typ, x)
		for i := range x {
			if e := math.Abs(float64(x[i] - y[i])); e > tc.rel*math.Abs(float64(x[i]))+0x1p-24 {
				t.Errorf("%v: %g decodes to %g", tc.typ, x[i], y[i])
			}
		}
	}
}

// TestQuantizeIgnoresDst checks that every byte of the output is written:
// the result must not depend on what dst held before.
func TestQuantizeIgnoresDst(t *testing.T) {
	r := &rng{s: 3}
	x := make([]float32, 512)
	for i := range x {
		x[i] = r.gauss()
	}
	x[7] = 0
	for _, typ := range quantTypes {
		size, _ := typ.RowSize(int64(len(x)))
		a := make([]byte, size)
		b := bytes.Repeat([]byte{0xff}, int(size))
		if err := QuantizeRow(typ, x, a); err != nil {
			t.Fatal(err)
		}
		if err := QuantizeRow(typ, x, b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%v: output depends on dst's previous contents", typ)
		}
	}
	// The all-zero paths (which return early) too.
	zeros := make([]float32, 512)
	for _, typ := range quantTypes {
		size, _ := typ.RowSize(int64(len(zeros)))
		a := make([]byte, size)
		b := bytes.Repeat([]byte{0xff}, int(size))
		QuantizeRow(typ, zeros, a)
		QuantizeRow(typ, zeros, b)
		if !bytes.Equal(a, b) {
			t.Errorf("%v: zero-row output depends on dst's previous contents", typ)
		}
	}
}

func TestRowErrors(t *testing.T) {
	type call struct {
		name      string
		typ       Type
		n         int // elements
		nbytes    int
		rowLength bool // error wraps ErrRowLength
	}
	calls := []call{
		{"invalid type 4", Type(4), 32, 18, false},
		{"invalid type 100", Type(100), 32, 18, false},
		{"q4_0 n not a multiple", Q4_0, 33, 18, true},
		{"q4_K n not a multiple", Q4_K, 32, 18, true},
		{"q8_K n not a multiple", Q8_K, 300, 292, true},
		{"q4_0 bytes short", Q4_0, 32, 17, false},
		{"q4_0 bytes long", Q4_0, 32, 19, false},
		{"q6_K bytes for two blocks", Q6_K, 256, 420, false},
		{"f16 bytes short", F16, 3, 5, false},
		{"f32 bytes long", F32, 2, 9, false},
	}
	for _, c := range calls {
		src := make([]byte, c.nbytes)
		dst := make([]float32, c.n)
		for i := range dst {
			dst[i] = 42
		}
		err := DequantizeRow(c.typ, src, dst)
		checkRowErr(t, "DequantizeRow "+c.name, err, c.rowLength)
		for i := range dst {
			if dst[i] != 42 {
				t.Errorf("DequantizeRow %s: dst modified on error", c.name)
				break
			}
		}

		x := make([]float32, c.n)
		out := bytes.Repeat([]byte{0xab}, c.nbytes)
		err = QuantizeRow(c.typ, x, out)
		checkRowErr(t, "QuantizeRow "+c.name, err, c.rowLength)
		if !bytes.Equal(out, bytes.Repeat([]byte{0xab}, c.nbytes)) {
			t.Errorf("QuantizeRow %s: dst modified on error", c.name)
		}
	}

	for _, typ := range []Type{I8, I16, I32, IQ2_XXS, IQ2_XS, IQ1_S, IQ1_M} {
		n := int(typ.BlockSize())
		size, _ := typ.RowSize(int64(n))
		if err := QuantizeRow(typ, make([]float32, n), make([]byte, size)); !errors.Is(err, ErrNoQuantizer) {
			t.Errorf("QuantizeRow(%v) = %v, want ErrNoQuantizer", typ, err)
		}
		if CanQuantize(typ) {
			t.Errorf("CanQuantize(%v) = true", typ)
		}
	}
	for _, typ := range quantTypes {
		if !CanQuantize(typ) {
			t.Errorf("CanQuantize(%v) = false", typ)
		}
	}

	// Empty rows are valid for every type.
	for _, typ := range Types() {
		if err := DequantizeRow(typ, nil, nil); err != nil {
			t.Errorf("DequantizeRow(%v) of an empty row: %v", typ, err)
		}
	}
}

func checkRowErr(t *testing.T, name string, err error, rowLength bool) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", name)
		return
	}
	if got := errors.Is(err, ErrRowLength); got != rowLength {
		t.Errorf("%s: errors.Is(err, ErrRowLength) = %v, want %v (%v)", name, got, rowLength, err)
	}
}

// FuzzDequantizeRow feeds arbitrary bytes to every type's decoder, with
// both consistent and inconsistent lengths. It must never panic; NaN and
// Inf outputs are fine.
func FuzzDequantizeRow(f *testing.F) {
	f.Add([]byte{0x00, 0x7c, 0xff, 0xfe}, uint8(0), uint16(0))
	f.Add(bytes.Repeat([]byte{0xff}, 300), uint8(9), uint16(256))
	f.Add(bytes.Repeat([]byte{0x7c, 0x00}, 200), uint8(13), uint16(3))
	types := Types()
	f.Fuzz(func(t *testing.T, data []byte, ti uint8, n uint16) {
		typ := types[int(ti)%len(types)]
		bs, ts := int(typ.BlockSize()), int(typ.TypeSize())
		// A consistent row: as many whole blocks as data holds.
		nb := len(data) / ts
		dst := make([]float32, nb*bs)
		if err := DequantizeRow(typ, data[:nb*ts], dst); err != nil {
			t.Fatalf("DequantizeRow(%v, %d bytes, %d elements): %v", typ, nb*ts, len(dst), err)
		}
		// An arbitrary element count: an error unless it happens to fit.
		dst = make([]float32, int(n))
		err := DequantizeRow(typ, data, dst)
		want, _ := typ.RowSize(int64(n))
		if fits := int(n)%bs == 0 && int64(len(data)) == want; fits != (err == nil) {
			t.Fatalf("DequantizeRow(%v, %d bytes, %d elements): err = %v", typ, len(data), n, err)
		}
	})
}

// FuzzQuantizeRow quantizes arbitrary float32 bit patterns (NaN, Inf,
// subnormals, huge values) with every type. It must never panic.
func FuzzQuantizeRow(f *testing.F) {
	f.Add([]byte{0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0x7f, 1, 0, 0, 0}, uint8(0))
	f.Add(bytes.Repeat([]byte{0xff, 0xff, 0x7f, 0x7f}, 256), uint8(11))
	// IQ2_S, IQ3_S and IQ3_XXS (the last types): NaN and infinities
	// among ordinary values.
	nanInf := bytes.Repeat([]byte{0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0x7f, 0, 0, 0x80, 0x3f, 0, 0, 0x80, 0xff}, 64)
	f.Add(nanInf, uint8(len(quantTypes)-3))
	f.Add(nanInf, uint8(len(quantTypes)-2))
	f.Add(nanInf, uint8(len(quantTypes)-1))
	f.Fuzz(func(t *testing.T, data []byte, ti uint8) {
		typ := quantTypes[int(ti)%len(quantTypes)]
		bs := int(typ.BlockSize())
		x := make([]float32, len(data)/4)
		for i := range x {
			x[i] = math.Float32frombits(uint32(data[4*i]) | uint32(data[4*i+1])<<8 | uint32(data[4*i+2])<<16 | uint32(data[4*i+3])<<24)
		}
		if len(x) < bs {
			x = append(x, make([]float32, bs-len(x))...)
		}
		x = x[:len(x)/bs*bs]
		size, err := typ.RowSize(int64(len(x)))
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, size)
		if err := QuantizeRow(typ, x, dst); err != nil {
			t.Fatalf("QuantizeRow(%v): %v", typ, err)
		}
		if err := DequantizeRow(typ, dst, x); err != nil {
			t.Fatalf("DequantizeRow(%v): %v", typ, err)
		}
	})
}

func BenchmarkQuantizeRow(b *testing.B) {
	r := &rng{s: 5}
	x := make([]float32, 4096)
	for i := range x {
		x[i] = r.gauss()
	}
	for _, typ := range quantTypes {
		size, _ := typ.RowSize(int64(len(x)))
		dst := make([]byte, size)
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				if err := QuantizeRow(typ, x, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDequantizeRow(b *testing.B) {
	r := &rng{s: 5}
	x := make([]float32, 4096)
	for i := range x {
		x[i] = r.gauss()
	}
	for _, typ := range quantTypes {
		q, _ := roundTrip(b, typ, x)
		y := make([]float32, len(x))
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				if err := DequantizeRow(typ, q, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// ExampleQuantizeRow shows a round trip through Q8_0.
func ExampleQuantizeRow() {
	x := make([]float32, QK)
	for i := range x {
		x[i] = float32(i) / 4
	}
	size, err := Q8_0.RowSize(int64(len(x)))
	if err != nil {
		panic(err)
	}
	q := make([]byte, size)
	if err := QuantizeRow(Q8_0, x, q); err != nil {
		panic(err)
	}
	y := make([]float32, len(x))
	if err := DequantizeRow(Q8_0, q, y); err != nil {
		panic(err)
	}
	fmt.Println(size, y[4], y[31])
	// Output: 34 0.9765625 7.751465
}
