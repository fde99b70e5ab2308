package quant

import (
	"encoding/binary"
	"math"
	"testing"
)

// The blocks below are built byte by byte, and the expected values come
// from the format definitions (ggml-common.h and ggml's dequantize_row_*),
// written out independently of the code under test. Every scale is a
// binary16 constant with an exact value, so all expected values are exact.

const (
	f16Quarter  = 0x3400 // 0.25
	f16Half     = 0x3800 // 0.5
	f16One      = 0x3c00 // 1
	f16Two      = 0x4000 // 2
	f16MinusOne = 0xbc00
	f16MinusTwo = 0xc000
	f16Inf      = 0x7c00
)

// seq returns n bytes b[k] = byte(k*mul + add).
func seq(n, mul, add int) []byte {
	b := make([]byte, n)
	for k := range b {
		b[k] = byte(k*mul + add)
	}
	return b
}

func TestDequantizeLegacyBlocks(t *testing.T) {
	// Nibble pattern shared by the 4- and 5-bit blocks: qs[j] holds j in
	// its low nibble and 15-j in its high nibble.
	nibbles := make([]byte, 16)
	for j := range nibbles {
		nibbles[j] = byte(j) | byte(15-j)<<4
	}

	tests := []struct {
		name string
		typ  Type
		src  []byte
		want func(e int) float32
	}{
		{
			name: "q4_0 two blocks",
			typ:  Q4_0,
			src: cat(
				h16(f16Half), nibbles,
				h16(f16MinusTwo), []byte{0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f},
			),
			want: func(e int) float32 {
				switch {
				case e < 16: // low nibble j, value (j-8)*0.5
					return float32(e-8) * 0.5
				case e < 32: // high nibble 15-j, value (7-j)*0.5
					return float32(7-(e-16)) * 0.5
				case e < 48: // (15-8) * -2
					return -14
				default: // (0-8) * -2
					return 16
				}
			},
		},
		{
			name: "q4_1",
			typ:  Q4_1,
			src:  cat(h16(f16Quarter), h16(f16MinusOne), nibbles),
			want: func(e int) float32 {
				if e < 16 {
					return float32(e)*0.25 - 1
				}
				return float32(15-(e-16))*0.25 - 1
			},
		},
		{
			name: "q5_0",
			typ:  Q5_0,
			// qh = 0xaaaa5555: fifth bit set for even elements 0..15
			// and odd elements 16..31.
			src: cat(h16(f16One), []byte{0x55, 0x55, 0xaa, 0xaa}, nibbles),
			want: func(e int) float32 {
				return []float32{
					0, -15, 2, -13, 4, -11, 6, -9, 8, -7, 10, -5, 12, -3, 14, -1,
					-1, 14, -3, 12, -5, 10, -7, 8, -9, 6, -11, 4, -13, 2, -15, 0,
				}[e]
			},
		},
		{
			name: "q5_1",
			typ:  Q5_1,
			// qh = 0x0000ffff: fifth bit set for elements 0..15.
			src: cat(h16(f16Half), h16(f16Two), []byte{0xff, 0xff, 0x00, 0x00}, nibbles),
			want: func(e int) float32 {
				if e < 16 {
					return float32(e+16)*0.5 + 2
				}
				return float32(15-(e-16))*0.5 + 2
			},
		},
		{
			name: "q8_0",
			typ:  Q8_0,
			src: func() []byte {
				qs := make([]byte, 32)
				for j := range qs {
					qs[j] = byte(int8(4*j - 64))
				}
				qs[0], qs[31] = 0x80, 0x7f // -128 and 127
				return cat(h16(f16Quarter), qs)
			}(),
			want: func(e int) float32 {
				switch e {
				case 0:
					return -32
				case 31:
					return 31.75
				}
				return float32(4*e-64) * 0.25
			},
		},
		{
			name: "q8_1 ignores s",
			typ:  Q8_1,
			src: func() []byte {
				qs := make([]byte, 32)
				for j := range qs {
					qs[j] = byte(int8(j - 16))
				}
				return cat(h16(f16Half), h16(f16Inf), qs)
			}(),
			want: func(e int) float32 { return float32(e-16) * 0.5 },
		},
	}
	for _, tt := range tests {
		checkDequant(t, tt.name, tt.typ, tt.src, tt.want)
	}
}

func checkDequant(t *testing.T, name string, typ Type, src []byte, want func(e int) float32) {
	t.Helper()
	n := len(src) / int(typ.TypeSize()) * int(typ.BlockSize())
	if len(src)%int(typ.TypeSize()) != 0 {
		t.Fatalf("%s: test block has %d bytes, not a multiple of %d", name, len(src), typ.TypeSize())
	}
	got := make([]float32, n)
	if err := DequantizeRow(typ, src, got); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	bad := 0
	for e, g := range got {
		if w := want(e); g != w {
			if bad < 5 {
				t.Errorf("%s: element %d = %g, want %g", name, e, g, w)
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d elements wrong in all", name, bad)
	}
}

// kTestQs is the 2-bit code area shared by the Q2_K and Q3_K tests: even
// bytes hold codes 0,1,2,3 in bit pairs 0,2,4,6 (0xe4) and odd bytes hold
// 3,2,1,0 (0x1b).
func kTestQs() []byte {
	qs := make([]byte, 64)
	for k := range qs {
		if k%2 == 0 {
			qs[k] = 0xe4
		} else {
			qs[k] = 0x1b
		}
	}
	return qs
}

// kTestCode2 is the 2-bit code of element e in kTestQs, per the layout:
// byte 32*(e/128) + e%32, bit pair (e%128)/32.
func kTestCode2(e int) int {
	pair := (e % 128) / 32
	if (32*(e/128)+e%32)%2 == 0 {
		return pair
	}
	return 3 - pair
}

func TestDequantizeQ2_K(t *testing.T) {
	// Scale byte j: scale code j in the low nibble, min code 15-j in the
	// high nibble.
	scales := make([]byte, 16)
	for j := range scales {
		scales[j] = byte(j) | byte(15-j)<<4
	}
	src := cat(scales, kTestQs(), h16(f16One), h16(f16Half))
	want := func(e int) float32 {
		j := e / 16
		return float32(j*kTestCode2(e)) - 0.5*float32(15-j)
	}
	checkDequant(t, "q2_K", Q2_K, src, want)

	// Spot checks worked out by hand: element 0 is code 0 in sub-block 0
	// (scale 0, min 15): 0 - 7.5. Element 255 is in byte 63 (odd), pair 3,
	// code 0, sub-block 15 (scale 15, min 0): 0. Element 100 is in byte 4
	// (even), pair 3, code 3, sub-block 6 (scale 6, min 9): 18 - 4.5.
	for _, c := range []struct {
		e    int
		want float32
	}{{0, -7.5}, {255, 0}, {100, 13.5}} {
		if got := want(c.e); got != c.want {
			t.Errorf("q2_K test expectation for element %d = %g, hand value %g", c.e, got, c.want)
		}
	}
}

func TestDequantizeQ3_K(t *testing.T) {
	// Sixteen 6-bit scale codes 8, 11, ..., 53 (signed scales -24, -21,
	// ..., 21) packed by hand: low nibbles of codes 0..7 and, above them,
	// of codes 8..15 in bytes 0..7; the top two bits of code j in bits
	// 2*(j/4) of byte 8+j%4.
	scales := []byte{0x08, 0x3b, 0x6e, 0x91, 0xc4, 0xf7, 0x2a, 0x5d, 0xa4, 0xa4, 0xe4, 0xe5}
	// High-bit mask: even bytes 0x0f (set for elements below 128), odd
	// bytes 0xf0 (set for elements 128 and up).
	hmask := make([]byte, 32)
	for l := range hmask {
		if l%2 == 0 {
			hmask[l] = 0x0f
		} else {
			hmask[l] = 0xf0
		}
	}
	src := cat(hmask, kTestQs(), scales, h16(f16Half))
	want := func(e int) float32 {
		sc := -24 + 3*(e/16)
		q := kTestCode2(e)
		high := (e%32)%2 == 0 && e < 128 || (e%32)%2 == 1 && e >= 128
		if !high {
			q -= 4
		}
		return 0.5 * float32(sc*q)
	}
	checkDequant(t, "q3_K", Q3_K, src, want)

	// By hand: element 0: code 0, high bit set, scale -24: 0.
	// Element 33: byte 1 (odd), pair 1 -> code 2; hmask[1] = 0xf0, bit 1
	// clear -> q = -2; sub-block 2 has scale -18: 0.5*-18*-2 = 18.
	// Element 200: byte 32+8 = 40 (even), pair 2 -> code 2; hmask[8] =
	// 0x0f, bit 6 clear -> q = -2; sub-block 12 scale 12: -12.
	for _, c := range []struct {
		e    int
		want float32
	}{{0, 0}, {33, 18}, {200, -12}} {
		if got := want(c.e); got != c.want {
			t.Errorf("q3_K test expectation for element %d = %g, hand value %g", c.e, got, c.want)
		}
	}
}

// k4Scales packs, by hand, scale codes 1, 2, 3, 4, 17, 33, 50, 63 and min
// codes 0, 5, 10, 63, 16, 1, 2, 40 in the Q4_K/Q5_K 12-byte layout.
var (
	k4Scales = []byte{65, 130, 195, 196, 64, 5, 10, 191, 1, 17, 34, 143}
	k4Sc     = []int{1, 2, 3, 4, 17, 33, 50, 63}
	k4Min    = []int{0, 5, 10, 63, 16, 1, 2, 40}
)

// k4Code is the 4-bit code of element e in a 128-byte nibble area qs:
// byte 32*(e/64) + e%32, low nibble for the first 32 of each 64.
func k4Code(qs []byte, e int) int {
	b := qs[32*(e/64)+e%32]
	if e%64 < 32 {
		return int(b & 15)
	}
	return int(b >> 4)
}

func TestDequantizeQ4_K(t *testing.T) {
	qs := seq(128, 37, 11)
	src := cat(h16(f16Half), h16(f16Quarter), k4Scales, qs)
	want := func(e int) float32 {
		j := e / 32
		return 0.5*float32(k4Sc[j]*k4Code(qs, e)) - 0.25*float32(k4Min[j])
	}
	checkDequant(t, "q4_K", Q4_K, src, want)

	// By hand: element 0: qs[0] = 11, low nibble 11; sub-block 0 (1, 0):
	// 5.5. Element 255: qs[127] = 127*37+11 = 4710 = 0x1266 -> 0x66, high
	// nibble 6; sub-block 7 (63, 40): 189 - 10 = 179.
	for _, c := range []struct {
		e    int
		want float32
	}{{0, 5.5}, {255, 179}} {
		if got := want(c.e); got != c.want {
			t.Errorf("q4_K test expectation for element %d = %g, hand value %g", c.e, got, c.want)
		}
	}
}

func TestDequantizeQ5_K(t *testing.T) {
	qh := seq(32, 73, 5)
	qs := seq(128, 37, 11)
	src := cat(h16(f16Half), h16(f16Quarter), k4Scales, qh, qs)
	want := func(e int) float32 {
		j := e / 32
		q := k4Code(qs, e)
		if qh[e%32]>>(e/32)&1 == 1 {
			q += 16
		}
		return 0.5*float32(k4Sc[j]*q) - 0.25*float32(k4Min[j])
	}
	checkDequant(t, "q5_K", Q5_K, src, want)

	// By hand: element 0: qh[0] = 5, bit 0 set -> 11+16 = 27; 13.5.
	// Element 255: qh[31] = 31*73+5 = 2268 = 0x8dc -> 0xdc, bit 7 set
	// -> 6+16 = 22; 0.5*63*22 - 10 = 683.
	for _, c := range []struct {
		e    int
		want float32
	}{{0, 13.5}, {255, 683}} {
		if got := want(c.e); got != c.want {
			t.Errorf("q5_K test expectation for element %d = %g, hand value %g", c.e, got, c.want)
		}
	}
}

func TestDequantizeQ6_K(t *testing.T) {
	ql := seq(128, 29, 7)
	qh := seq(64, 53, 3)
	sc := []int8{-128, -100, -64, -1, 0, 1, 2, 3, 50, 64, 100, 127, -5, -7, 9, 11}
	scb := make([]byte, 16)
	for j, s := range sc {
		scb[j] = byte(s)
	}
	src := cat(ql, qh, scb, h16(f16Quarter))
	want := func(e int) float32 {
		h, r := e/128, e%128
		l, g := r%32, r/32
		low := ql[64*h+l+32*(g%2)]
		if g < 2 {
			low &= 15
		} else {
			low >>= 4
		}
		high := qh[32*h+l] >> (2 * g) & 3
		q := (int(low) | int(high)<<4) - 32
		return 0.25 * float32(int(sc[e/16])*q)
	}
	checkDequant(t, "q6_K", Q6_K, src, want)

	// By hand: element 0: ql[0] = 7 (low 7), qh[0] = 3 (bits 0-1: 3)
	// -> 7|48 - 32 = 23; scale -128: 0.25*-128*23 = -736.
	// Element 200: h=1, r=72, l=8, g=2: ql[64+8] = 72*29+7 = 2095 =
	// 0x82f -> 0x2f, high nibble 2; qh[40] = 40*53+3 = 2123 = 0x84b ->
	// 0x4b, bits 4-5: 0; q = 2 - 32 = -30; scale sc[12] = -5: 37.5.
	for _, c := range []struct {
		e    int
		want float32
	}{{0, -736}, {200, 37.5}} {
		if got := want(c.e); got != c.want {
			t.Errorf("q6_K test expectation for element %d = %g, hand value %g", c.e, got, c.want)
		}
	}
}

func TestDequantizeQ8_K(t *testing.T) {
	qs := make([]byte, 256)
	for j := range qs {
		qs[j] = byte(int8(j - 128))
	}
	// bsums are not used by dequantization; fill them with junk.
	src := cat(f32bytes(0.125), qs, seq(32, 7, 1))
	checkDequant(t, "q8_K", Q8_K, src, func(e int) float32 { return float32(e-128) * 0.125 })
}

func TestDequantizeFloatAndIntRows(t *testing.T) {
	tests := []struct {
		name string
		typ  Type
		src  []byte
		want []float32
	}{
		{"f32", F32, cat(f32bytes(1.5), f32bytes(-2), f32bytes(float32(math.Inf(1)))), []float32{1.5, -2, float32(math.Inf(1))}},
		{"f16", F16, cat(h16(f16One), h16(f16MinusTwo), h16(0x0001), h16(0x7bff)), []float32{1, -2, 0x1p-24, 65504}},
		{"bf16", BF16, cat(h16(0x3f80), h16(0xc040), h16(0x7f7f)), []float32{1, -3, f32(0x7f7f0000)}},
		{"i8", I8, []byte{0, 1, 0x7f, 0x80, 0xff}, []float32{0, 1, 127, -128, -1}},
		{"i16", I16, []byte{0x01, 0x00, 0xff, 0x7f, 0x00, 0x80, 0xff, 0xff}, []float32{1, 32767, -32768, -1}},
		{"i32", I32, binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 0x80000000), 16777217), []float32{-2147483648, 16777216}},
	}
	for _, tt := range tests {
		got := make([]float32, len(tt.want))
		if err := DequantizeRow(tt.typ, tt.src, got); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s: element %d = %g, want %g", tt.name, i, got[i], tt.want[i])
			}
		}
	}
}
