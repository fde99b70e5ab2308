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
