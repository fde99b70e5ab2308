package reference

import (
	"encoding/binary"
	"math"

	"github.com/kernbench/kernbench/quant"
)

// blockDecoders decode one block of a type to float64 from its layout
// (quant's layout.go), independently of quant's float32 decoders, for the
// formats whose scales and tables the reference reads itself. Each
// product is exact in float64; the tests compare the results with
// quant.DequantizeRow's.
var blockDecoders = map[quant.Type]func(b []byte, out []float64){
	quant.MXFP4:  decodeMXFP4,
	quant.IQ4_NL: decodeIQ4_NL,
	quant.IQ4_XS: decodeIQ4_XS,
	quant.TQ1_0:  decodeTQ1_0,
	quant.TQ2_0:  decodeTQ2_0,

	quant.IQ2_XXS: decodeIQ2_XXS,
	quant.IQ2_XS:  decodeIQ2_XS,
	quant.IQ2_S:   decodeIQ2_S,
	quant.IQ3_XXS: decodeIQ3_XXS,
	quant.IQ3_S:   decodeIQ3_S,
	quant.IQ1_S:   decodeIQ1_S,
	quant.IQ1_M:   decodeIQ1_M,
}

// f16At returns the binary16 at b[off:off+2] as float64.
func f16At(b []byte, off int) float64 {
	return float64(quant.FP16ToFP32(binary.LittleEndian.Uint16(b[off:])))
}

// nibbleCodes returns the 32 4-bit codes of qs in element order: the low
// nibbles of qs[0:16], then the high nibbles.
func nibbleCodes(qs []byte) (codes [32]uint8) {
	for j := range 16 {
		codes[j] = qs[j] & 15
		codes[j+16] = qs[j] >> 4
	}
	return codes
}

// decodeMXFP4: E2M1 codes (1 sign, 2 exponent, 1 mantissa bit) times
// 2^(e-127); e = 0 is 2^-127 as in ggml, e = 255 is 2^128 (not NaN).
func decodeMXFP4(b []byte, out []float64) {
	scale := math.Ldexp(1, int(b[0])-127)
	for j, q := range nibbleCodes(b[1:]) {
		exp, man := int(q>>1&3), float64(q&1)
		v := man / 2 // subnormal: 0 or 0.5
		if exp > 0 {
			v = math.Ldexp(1+man/2, exp-1)
		}
		if q&8 != 0 && v != 0 {
			v = -v // code 8 is +0 in ggml's table
		}
		out[j] = v * scale
	}
}

func decodeIQ4_NL(b []byte, out []float64) {
	d := f16At(b, 0)
	for j, q := range nibbleCodes(b[2:]) {
		out[j] = d * float64(quant.IQ4NLValues[q])
	}
}

func decodeIQ4_XS(b []byte, out []float64) {
	d := f16At(b, 0)
	h := binary.LittleEndian.Uint16(b[2:])
	for ib := range 8 {
		ls := int(b[4+ib/2]>>(4*(ib%2))&15) | int(h>>(2*ib)&3)<<4
		for j, q := range nibbleCodes(b[8+16*ib:]) {
			out[32*ib+j] = d * float64(ls-32) * float64(quant.IQ4NLValues[q])
		}
	}
}

// trit returns trit n (the first the most significant) of a TQ1_0 byte:
// the byte is ceil(v*256/243) for a base-3 number v of five trits, so
// trit n is the integer part of 3 * frac(byte * 3^n / 256).
func trit(q uint8, n int) int {
	v := int(q)
	for range n {
		v = v * 3 % 256
	}
	return v * 3 / 256
}

func decodeTQ1_0(b []byte, out []float64) {
	d := f16At(b, 52)
	for e := range 256 {
		var q uint8
		var n int
		switch {
		case e < 160:
			q, n = b[e%32], e/32
		case e < 240:
			q, n = b[32+(e-160)%16], (e-160)/16
		default:
			q, n = b[48+(e-240)%4], (e-240)/4
		}
		out[e] = float64(trit(q, n)-1) * d
	}
}

func decodeTQ2_0(b []byte, out []float64) {
	d := f16At(b, 64)
	for e := range 256 {
		h, r := e/128, e%128
		q := int(b[32*h+r%32]>>(2*(r/32))) & 3
		out[e] = float64(q-1) * d
	}
}

// The codebook formats: groups of 8 (or 4) elements are one entry of a
// grid (quant's tables, one byte an element), signs are bits, scales are
// codes against one f16 super-block scale.

// signs7 expands a 7-bit sign code: the eighth sign is the parity that
// makes the number of negative elements even.
func signs7(code uint32) uint8 {
	c := uint8(code & 127)
	par := uint8(0)
	for i := range 7 {
		par ^= c >> i & 1
	}
	return c | par<<7
}

// gridEntry writes n magnitudes of a grid entry times scale into out,
// negating element i where bit i of signs is set.
func gridEntry(out []float64, entry uint64, n int, scale float64, signs uint8) {
	for i := range n {
		v := scale * float64(uint8(entry>>(8*i)))
		if signs>>i&1 == 1 {
			v = -v
		}
		out[i] = v
	}
}

func decodeIQ2_XXS(b []byte, out []float64) {
	d := f16At(b, 0)
	for j := range 8 {
		w := binary.LittleEndian.Uint32(b[2+8*j+4:])
		scale := d * (float64(w>>28) + 0.5) / 4
		for g := range 4 {
			gridEntry(out[32*j+8*g:], quant.IQ2XXSGrid[b[2+8*j+g]], 8, scale, signs7(w>>(7*g)))
		}
	}
}

func decodeIQ2_XS(b []byte, out []float64) {
	d := f16At(b, 0)
	for j := range 8 {
		for g := range 4 {
			q := binary.LittleEndian.Uint16(b[2+8*j+2*g:])
			ls := float64(b[66+j] >> (4 * (g / 2)) & 15)
			gridEntry(out[32*j+8*g:], quant.IQ2XSGrid[q&511], 8, d*(ls+0.5)/4, signs7(uint32(q>>9)))
		}
	}
}

func decodeIQ2_S(b []byte, out []float64) {
	d := f16At(b, 0)
	for j := range 8 {
		for g := range 4 {
			idx := int(b[2+4*j+g]) + 256*int(b[66+j]>>(2*g)&3)
			ls := float64(b[74+j] >> (4 * (g / 2)) & 15)
			gridEntry(out[32*j+8*g:], quant.IQ2SGrid[idx], 8, d*(ls+0.5)/4, b[34+4*j+g])
		}
	}
}

func decodeIQ3_XXS(b []byte, out []float64) {
	d := f16At(b, 0)
	for j := range 8 {
		w := binary.LittleEndian.Uint32(b[66+4*j:])
		scale := d * (float64(w>>28) + 0.5) / 2
		for g := range 4 {
			s := signs7(w >> (7 * g))
			e := 32*j + 8*g
			gridEntry(out[e:], uint64(quant.IQ3XXSGrid[b[2+e/4]]), 4, scale, s)
			gridEntry(out[e+4:], uint64(quant.IQ3XXSGrid[b[2+e/4+1]]), 4, scale, s>>4)
		}
	}
}

func decodeIQ3_S(b []byte, out []float64) {
	d := f16At(b, 0)
	for j := range 8 {
		scale := d * float64(1+2*int(b[106+j/2]>>(4*(j%2))&15))
		for k := range 8 {
			e := 32*j + 4*k
			idx := int(b[2+e/4]) + 256*int(b[66+j]>>k&1)
			gridEntry(out[e:], uint64(quant.IQ3SGrid[idx]), 4, scale, b[74+e/8]>>(4*(k%2)))
		}
	}
}

// iq1Group writes the eight values scale * (g + delta) of IQ1SGrid entry
// idx, delta = -1/8 when neg, else 1/8.
func iq1Group(out []float64, idx int, scale float64, neg bool) {
	delta := 0.125
	if neg {
		delta = -0.125
	}
	entry := quant.IQ1SGrid[idx]
	for i := range 8 {
		out[i] = scale * (float64(int8(entry>>(8*i))) + delta)
	}
}

func decodeIQ1_S(b []byte, out []float64) {
	d := f16At(b, 0)
	for j := range 8 {
		h := int(binary.LittleEndian.Uint16(b[34+2*j:]))
		scale := d * float64(2*(h>>12&7)+1)
		for g := range 4 {
			iq1Group(out[32*j+8*g:], int(b[2+4*j+g])+256*(h>>(3*g)&7), scale, h&0x8000 != 0)
		}
	}
}

func decodeIQ1_M(b []byte, out []float64) {
	var sc [4]int
	var dbits uint16
	for n := range 4 {
		sc[n] = int(binary.LittleEndian.Uint16(b[48+2*n:]))
		dbits |= uint16(sc[n]>>12) << (4 * n)
	}
	d := float64(quant.FP16ToFP32(dbits))
	for j := range 8 {
		for g := range 4 {
			ls := sc[j/2] >> (6*(j%2) + 3*(g/2)) & 7
			h := int(b[32+2*j+g/2]) >> (4 * (g % 2))
			iq1Group(out[32*j+8*g:], int(b[4*j+g])+256*(h&7), d*float64(2*ls+1), h&8 != 0)
		}
	}
}
