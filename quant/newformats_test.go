package quant

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// newTypes are the formats of issue 26 this package codes so far.
var newTypes = []Type{IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, MXFP4}

// gridTypes are the codebook formats of issue 26, which decode only.
var gridTypes = []Type{IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M}

// decodedTypes are every format decodeElement knows.
var decodedTypes = append(append([]Type{}, newTypes...), gridTypes...)

// decodeElement returns element e of block b of type t as the layout
// comments in layout.go describe it, written independently of the codecs
// (no shared helpers but the binary16 decoder), in float64.
func decodeElement(t Type, b []byte, e int) float64 {
	f16 := func(off int) float64 { return float64(FP16ToFP32(binary.LittleEndian.Uint16(b[off:]))) }
	nibble := func(qs []byte, e int) int { // Q4_0's arrangement
		if e < 16 {
			return int(qs[e] & 15)
		}
		return int(qs[e-16] >> 4)
	}
	iq4 := []float64{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	switch t {
	case IQ4_NL:
		return f16(0) * iq4[nibble(b[2:], e)]
	case IQ4_XS:
		j := e / 32
		lo := int(b[4+j/2]) >> (4 * (j % 2)) & 15
		hi := int(binary.LittleEndian.Uint16(b[2:])) >> (2 * j) & 3
		return f16(0) * float64(lo+16*hi-32) * iq4[nibble(b[8+16*j:], e%32)]
	case MXFP4:
		e2m1 := []float64{0, 0.5, 1, 1.5, 2, 3, 4, 6}
		q := nibble(b[1:], e)
		v := e2m1[q&7]
		if q >= 8 {
			v = -v
		}
		// ggml's table holds 0 for code 8, not -0: adding +0 makes -0 +0.
		return v*math.Ldexp(1, int(b[0])-127) + 0
	case TQ1_0:
		var byt uint8
		var n int
		switch {
		case e < 160:
			byt, n = b[e%32], e/32
		case e < 240:
			byt, n = b[32+(e-160)%16], (e-160)/16
		default:
			byt, n = b[48+(e-240)%4], (e-240)/4
		}
		// Trit n of the byte: multiply by 3^n modulo 256, then take the
		// top trit of the 8-bit fraction.
		p := uint8(1)
		for range n {
			p *= 3
		}
		trit := int(uint8(byt*p)) * 3 / 256
		return float64(trit-1) * f16(52)
	case TQ2_0:
		h, r := e/128, e%128
		q := int(b[32*h+r%32]) >> (2 * (r / 32)) & 3
		return float64(q-1) * f16(64)
	}
	u16 := func(off int) int { return int(binary.LittleEndian.Uint16(b[off:])) }
	u32 := func(off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
	// gridByte is byte i of entry idx of a grid of 8- or 4-byte entries.
	gridByte := func(entry uint64, i int) float64 { return float64(uint8(entry >> (8 * i))) }
	// signed negates v when bit i of the sign byte s is set.
	signed := func(v float64, s uint8, i int) float64 {
		if s>>i&1 == 1 {
			return -v
		}
		return v
	}
	// Sign codes: seven bits, the eighth sign the parity that makes the
	// count of negative elements even.
	ksign := func(code uint32) uint8 {
		c := uint8(code & 127)
		n := 0
		for i := range 7 {
			n += int(c >> i & 1)
		}
		return c | uint8(n%2)<<7
	}
	j, g, i := e/32, e%32/8, e%8 // sub-block, group of 8, element in it
	iq1 := func(d, ls float64, idx int, neg bool) float64 {
		delta := 0.125
		if neg {
			delta = -delta
		}
		return d * (2*ls + 1) * (float64(int8(IQ1SGrid[idx]>>(8*i))) + delta)
	}
	switch t {
	case IQ2_XXS:
		w := u32(2 + 8*j + 4)
		idx := b[2+8*j+g]
		return signed(f16(0)*(0.5+float64(w>>28))/4*gridByte(IQ2XXSGrid[idx], i), ksign(w>>(7*g)), i)
	case IQ2_XS:
		q := u16(2 + 2*(4*j+g))
		ls := float64(int(b[66+j]) >> (4 * (g / 2)) & 15)
		return signed(f16(0)*(0.5+ls)/4*gridByte(IQ2XSGrid[q%512], i), ksign(uint32(q>>9)), i)
	case IQ2_S:
		idx := int(b[2+4*j+g]) + 256*(int(b[66+j])>>(2*g)&3)
		ls := float64(int(b[74+j]) >> (4 * (g / 2)) & 15)
		return signed(f16(0)*(0.5+ls)/4*gridByte(IQ2SGrid[idx], i), b[34+4*j+g], i)
	case IQ3_XXS:
		w := u32(66 + 4*j)
		idx := b[2+e/4]
		return signed(f16(0)*(0.5+float64(w>>28))/2*gridByte(uint64(IQ3XXSGrid[idx]), e%4), ksign(w>>(7*g)), i)
	case IQ3_S:
		k := e % 32 / 4 // group of 4 in the sub-block
		idx := int(b[2+e/4]) + 256*(int(b[66+j])>>k&1)
		ls := float64(int(b[106+j/2]) >> (4 * (j % 2)) & 15)
		return signed(f16(0)*(1+2*ls)*gridByte(uint64(IQ3SGrid[idx]), e%4), b[74+e/8], i)
	case IQ1_S:
		h := u16(34 + 2*j)
		return iq1(f16(0), float64(h>>12&7), int(b[2+e/8])+256*(h>>(3*g)&7), h>>15 == 1)
	case IQ1_M:
		var dbits uint16
		for n := range 4 {
			dbits |= uint16(u16(48+2*n)>>12) << (4 * n)
		}
		d := float64(FP16ToFP32(dbits))
		sc := u16(48+2*(j/2)) >> (6*(j%2) + 3*(g/2)) & 7
		h := int(b[32+e/16]) >> (4 * (g % 2))
		return iq1(d, float64(sc), int(b[e/8])+256*(h&7), h&8 != 0)
	}
	panic("decodeElement: " + t.String())
}

// FuzzDequantizeNew decodes arbitrary blocks of the new formats and
// compares every element with decodeElement. Every product involved is
// exact in float32 (binary16 or power-of-two scales times small
// integers), so the two agree bit for bit, signed zeros included.
func FuzzDequantizeNew(f *testing.F) {
	f.Add(bytes.Repeat([]byte{0xff}, 300), uint8(0))
	f.Add(bytes.Repeat([]byte{0x7c, 0x00, 0x13}, 100), uint8(4))
	f.Add(seq(300, 37, 11), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, ti uint8) {
		typ := decodedTypes[int(ti)%len(decodedTypes)]
		ts, bs := int(typ.TypeSize()), int(typ.BlockSize())
		for len(data) < ts {
			data = append(data, byte(len(data)*29+7))
		}
		b := data[:ts]
		y := make([]float32, bs)
		if err := DequantizeRow(typ, b, y); err != nil {
			t.Fatal(err)
		}
		for e, v := range y {
			want := float32(decodeElement(typ, b, e))
			if math.Float32bits(v) != math.Float32bits(want) && !(v != v && want != want) {
				t.Fatalf("%v block %x: element %d = %g, want %g", typ, b, e, v, want)
			}
		}
	})
}

// TestDequantizeNewFormats runs FuzzDequantizeNew's check on fixed
// blocks: a byte ramp, all ones and all zeros, per type.
func TestDequantizeNewFormats(t *testing.T) {
	for _, typ := range decodedTypes {
		ts, bs := int(typ.TypeSize()), int(typ.BlockSize())
		for _, b := range [][]byte{seq(ts, 37, 11), seq(ts, 0, 0x3c), bytes.Repeat([]byte{0x55}, ts), make([]byte, ts)} {
			y := make([]float32, bs)
			if err := DequantizeRow(typ, b, y); err != nil {
				t.Fatal(err)
			}
			for e, v := range y {
				if want := float32(decodeElement(typ, b, e)); v != want && !(v != v && want != want) {
					t.Fatalf("%v block %x: element %d = %g, want %g", typ, b, e, v, want)
				}
			}
		}
	}
}

// TestDequantizeNewKnownAnswers decodes hand-built blocks whose values are
// worked out from ggml's definitions.
func TestDequantizeNewKnownAnswers(t *testing.T) {
	codes := seq(16, 0x11, 0x10) // low nibbles 0..15, high nibbles 1..15,0
	t.Run("mxfp4", func(t *testing.T) {
		// e = 128: the scale is 2, so element j < 16 is 2*E2M1(j).
		b := cat([]byte{128}, codes)
		y := make([]float32, 32)
		if err := DequantizeRow(MXFP4, b, y); err != nil {
			t.Fatal(err)
		}
		want := []float32{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}
		for j, w := range want {
			if y[j] != w {
				t.Errorf("element %d = %g, want %g", j, y[j], w)
			}
		}
		if y[16] != 1 || y[31] != 0 {
			t.Errorf("elements 16, 31 = %g, %g; want 1, 0", y[16], y[31])
		}
		if math.Signbit(float64(y[8])) {
			t.Errorf("code 8 decodes to -0, want +0 (ggml's table holds 0)")
		}
	})
	t.Run("iq4_nl", func(t *testing.T) {
		b := cat(h16(f16Half), codes)
		y := make([]float32, 32)
		if err := DequantizeRow(IQ4_NL, b, y); err != nil {
			t.Fatal(err)
		}
		if y[0] != -63.5 || y[8] != 0.5 || y[15] != 56.5 || y[16] != -52 {
			t.Errorf("elements 0, 8, 15, 16 = %g, %g, %g, %g; want -63.5, 0.5, 56.5, -52", y[0], y[8], y[15], y[16])
		}
	})
	t.Run("iq4_xs", func(t *testing.T) {
		// d = 0.25; sub-block 0 has code 33 (scale 0.25), sub-block 7
		// code 0 (scale -8), the others 32 (scale 0).
		b := make([]byte, sizeIQ4_XS)
		binary.LittleEndian.PutUint16(b, f16Quarter)
		h := uint16(2)<<0 | uint16(2)<<(2*1) | uint16(2)<<(2*2) | uint16(2)<<(2*3) |
			uint16(2)<<(2*4) | uint16(2)<<(2*5) | uint16(2)<<(2*6)
		binary.LittleEndian.PutUint16(b[2:], h)
		b[4] = 0x01 // sub-block 0 low bits 1, sub-block 1 low bits 0
		copy(b[8:], codes)
		copy(b[8+16*7:], codes)
		y := make([]float32, 256)
		if err := DequantizeRow(IQ4_XS, b, y); err != nil {
			t.Fatal(err)
		}
		if y[0] != -127*0.25 || y[15] != 113*0.25 || y[32] != 0 || y[224] != -127*-8 || y[239] != 113*-8 {
			t.Errorf("elements 0, 15, 32, 224, 239 = %g, %g, %g, %g, %g", y[0], y[15], y[32], y[224], y[239])
		}
	})
	t.Run("tq1_0", func(t *testing.T) {
		// Byte 0 holds trits 2,1,0,1,2 (1, 0, -1, 0, 1): base 3 value
		// 2*81+27+0+3+2 = 194, stored as ceil(194*256/243) = 205.
		b := make([]byte, sizeTQ1_0)
		b[0] = 205
		b[48] = 255 // trits 2,2,2,2 (and a fifth, unused)
		binary.LittleEndian.PutUint16(b[52:], f16Two)
		y := make([]float32, 256)
		if err := DequantizeRow(TQ1_0, b, y); err != nil {
			t.Fatal(err)
		}
		for n, w := range []float32{2, 0, -2, 0, 2} {
			if y[32*n] != w {
				t.Errorf("element %d = %g, want %g", 32*n, y[32*n], w)
			}
		}
		for n := range 4 {
			if y[240+4*n] != 2 {
				t.Errorf("element %d = %g, want 2", 240+4*n, y[240+4*n])
			}
		}
		if y[1] != -2 {
			t.Errorf("element 1 (byte 0, trit 0) = %g, want -2", y[1])
		}
	})
	t.Run("tq2_0", func(t *testing.T) {
		b := make([]byte, sizeTQ2_0)
		b[0] = 0b11_10_01_00 // elements 0, 32, 64, 96: codes 0, 1, 2, 3
		binary.LittleEndian.PutUint16(b[64:], f16MinusTwo)
		y := make([]float32, 256)
		if err := DequantizeRow(TQ2_0, b, y); err != nil {
			t.Fatal(err)
		}
		if y[0] != 2 || y[32] != 0 || y[64] != -2 || y[96] != -4 || y[128] != 2 {
			t.Errorf("elements 0, 32, 64, 96, 128 = %g, %g, %g, %g, %g; want 2, 0, -2, -4, 2", y[0], y[32], y[64], y[96], y[128])
		}
	})
}

// TestQuantizeNewKnownAnswers quantizes inputs whose bytes follow from
// ggml's algorithms by hand (and were checked against ggml's reference
// functions).
func TestQuantizeNewKnownAnswers(t *testing.T) {
	t.Run("mxfp4", func(t *testing.T) {
		// amax 6: floor(log2 6) = 2, e = 127, scale 1/2, so every E2M1
		// value is its own code.
		x := make([]float32, 32)
		copy(x, []float32{0, 0.5, 1, 1.5, 2, 3, 4, 6, 0, -0.5, -1, -1.5, -2, -3, -4, -6})
		x[16], x[17] = 0.74, 0.76 // between 0.5 and 1: nearest
		q := make([]byte, sizeMXFP4)
		if err := QuantizeRow(MXFP4, x, q); err != nil {
			t.Fatal(err)
		}
		want := cat([]byte{127}, []byte{0x10, 0x21, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15})
		if !bytes.Equal(q, want) {
			t.Errorf("bytes = %x, want %x", q, want)
		}
	})
	t.Run("tq2_0", func(t *testing.T) {
		// Elements -3, 0, 3 repeating: d = 3 and codes 0, 1, 2; 1.4 and
		// 1.6 round to 0 and 1 (of 3).
		x := make([]float32, 256)
		for i := range x {
			x[i] = float32(i%3-1) * 3
		}
		x[1], x[4] = 1.4, 1.6
		q := make([]byte, sizeTQ2_0)
		if err := QuantizeRow(TQ2_0, x, q); err != nil {
			t.Fatal(err)
		}
		_, y := roundTrip(t, TQ2_0, x)
		for i := range x {
			want := x[i]
			switch i {
			case 1:
				want = 0
			case 4:
				want = 3
			}
			if y[i] != want {
				t.Fatalf("element %d (%g) decodes to %g, want %g", i, x[i], y[i], want)
			}
		}
		if got := binary.LittleEndian.Uint16(q[64:]); got != 0x4200 {
			t.Errorf("d = %#04x, want 0x4200 (3)", got)
		}
		if q[0] != 0<<0|2<<2|1<<4|0<<6 { // elements 0, 32, 64, 96: -3, 3, 0, -3
			t.Errorf("qs[0] = %#08b", q[0])
		}
	})
	t.Run("iq4_nl", func(t *testing.T) {
		// Values on the table's grid times -0.5 (the largest magnitude
		// is negative): the scale -(-63.5)/-127... = max/values[0] =
		// 0.5, no refinement changes it, and every code is exact.
		x := make([]float32, 32)
		for j := range x {
			x[j] = 0.5 * float32(IQ4NLValues[j%16])
		}
		q, y := roundTrip(t, IQ4_NL, x)
		if got := binary.LittleEndian.Uint16(q); got != f16Half {
			t.Errorf("d = %#04x, want %#04x", got, f16Half)
		}
		for j := range x {
			if y[j] != x[j] {
				t.Errorf("element %d = %g, want %g", j, y[j], x[j])
			}
		}
		if !bytes.Equal(q[2:], seq(16, 0x11, 0)) {
			t.Errorf("codes = %x", q[2:])
		}
	})
}

// TestRoundTripNew bounds the round-trip error of the new formats per
// block, over every input distribution:
//   - IQ4_XS: RMS error at most amax/20 (the table's widest gap, between
//     -127 and -104, is 23 of 254 steps across the range: a half gap is
//     amax/11 at worst, the RMS over a block far less); IQ4_NL's
//     reference quantizer tries no other scale than the largest
//     magnitude's and its least-squares refit, and blocks of seven
//     levels ("steps") reach amax/16.6: its bound is amax/14;
//   - TQ1_0, TQ2_0: every element within amax/2 (plus binary16 rounding
//     of the scale), since -d, 0 and d are the only values;
//   - MXFP4: every element within amax/4 (see TestRoundTripSpecialRows);
//   - IQ2_S: RMS error per super-block at most amax/4 (three levels a
//     sub-block of 16, fewer where a group of 8 falls off the grid;
//     ggml's output reaches amax/5.3 on "steps");
//   - IQ3_S, IQ3_XXS: RMS error per super-block at most amax/5 (levels
//     2/15 of a sub-block's range apart, coarser where a group of 4 falls
//     off the grid, sub-block scales 4-bit against the super-block's:
//     ggml's IQ3_S output reaches amax/6.3 on constant rows, amax/8.5 on
//     "steps", IQ3_XXS amax/5.8 on constant rows).
func TestRoundTripNew(t *testing.T) {
	for _, typ := range append(slices.Clone(newTypes), IQ2_S, IQ3_S, IQ3_XXS) {
		bs := int(typ.BlockSize())
		for di, d := range dists {
			r := &rng{s: uint64(77*di + 5)}
			x := make([]float32, 256*16)
			d.gen(r, x)
			_, y := roundTrip(t, typ, x)
			for b := 0; b < len(x)/bs; b++ {
				xb, yb := x[bs*b:bs*b+bs], y[bs*b:bs*b+bs]
				var amax, se, maxErr float64
				for i, v := range xb {
					amax = math.Max(amax, math.Abs(float64(v)))
					e := math.Abs(float64(v) - float64(yb[i]))
					se += e * e
					maxErr = math.Max(maxErr, e)
				}
				switch typ {
				case IQ4_NL, IQ4_XS:
					lim := amax / 20
					if typ == IQ4_NL {
						lim = amax / 14
					}
					if rmse := math.Sqrt(se / float64(bs)); rmse > lim {
						t.Errorf("%v %s block %d: RMS error %g > %g", typ, d.name, b, rmse, lim)
					}
				case TQ1_0, TQ2_0:
					if lim := amax/2 + amax*0x1p-11; maxErr > lim {
						t.Errorf("%v %s block %d: max error %g > %g", typ, d.name, b, maxErr, lim)
					}
				case IQ2_S:
					if rmse := math.Sqrt(se / float64(bs)); rmse > amax/4 {
						t.Errorf("%v %s block %d: RMS error %g > amax/4 = %g", typ, d.name, b, rmse, amax/4)
					}
				case IQ3_S, IQ3_XXS:
					if rmse := math.Sqrt(se / float64(bs)); rmse > amax/5 {
						t.Errorf("%v %s block %d: RMS error %g > amax/5 = %g", typ, d.name, b, rmse, amax/5)
					}
				case MXFP4:
					if maxErr > amax/4 {
						t.Errorf("%v %s block %d: max error %g > amax/4 = %g", typ, d.name, b, maxErr, amax/4)
					}
				}
			}
		}
	}
}

// TestTernaryExact checks that TQ1_0 and TQ2_0 keep ternary rows exactly:
// every element -s, 0 or s with s a binary16 value.
func TestTernaryExact(t *testing.T) {
	r := &rng{s: 3}
	for _, typ := range []Type{TQ1_0, TQ2_0} {
		for _, s := range []float32{1, 0.0625, -3.5, 1024} {
			x := make([]float32, 512)
			for i := range x {
				x[i] = float32(int(r.next()%3)-1) * s
			}
			x[7] = s // the largest magnitude is s in each block
			x[300] = -s
			_, y := roundTrip(t, typ, x)
			for i := range x {
				if y[i] != x[i] {
					t.Fatalf("%v s=%g: element %d = %g decodes to %g", typ, s, i, x[i], y[i])
				}
			}
		}
	}
}

// TestE8M0Half checks the MXFP4 scale decoder at its ends and in between.
func TestE8M0Half(t *testing.T) {
	for _, tc := range []struct {
		e    uint8
		want float64
	}{{0, 0x1p-128}, {1, 0x1p-127}, {2, 0x1p-126}, {127, 0.5}, {128, 1}, {200, 0x1p72}, {255, 0x1p127}} {
		if got := E8M0Half(tc.e); float64(got) != tc.want {
			t.Errorf("E8M0Half(%d) = %g, want %g", tc.e, got, tc.want)
		}
	}
}

// TestMXFP4Exponent pins the scale choice at powers of two, where ggml's
// float32 log2 rounds a value a few ulps below 2^k up to k (checked
// against glibc's log2f for the 300 floats below every power of two).
func TestMXFP4Exponent(t *testing.T) {
	below := func(k int, ulps uint32) float32 {
		return math.Float32frombits(math.Float32bits(float32(math.Ldexp(1, k))) - ulps)
	}
	for _, tc := range []struct {
		amax float32
		want uint8
	}{
		{0, 0}, {6, 127}, {8, 128}, {below(3, 1), 128}, {below(3, 2), 127},
		{below(-10, 5), 115}, {below(-10, 6), 114},
		{1, 125}, {below(0, 1), 124}, {math.MaxFloat32, 253}, {0x1p-149, 232},
		{float32(math.Inf(1)), 0},
	} {
		if got := mxfp4Exponent(tc.amax); got != tc.want {
			t.Errorf("mxfp4Exponent(%g) = %d, want %d", tc.amax, got, tc.want)
		}
	}
}
