package getrows

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// tq2Codes holds, for every byte of TQ2_0 codes, its four values (code
// minus one, from the low two bits up) as float32.
var tq2Codes = func() (t [256][4]float32) {
	for b := range 256 {
		for n := range 4 {
			t[b][n] = float32(b>>(2*n)&3) - 1
		}
	}
	return t
}()

// tq2Block is the bytes of one TQ2_0 block: 64 bytes of 2-bit codes,
// then the f16 scale.
var tq2Block = int(quant.TQ2_0.TypeSize())

// DeqTQ2_0 decodes whole TQ2_0 blocks of src into dst (len(dst) =
// len(src) / 66 * 256), equal bit for bit to quant.DequantizeRow: each
// value is float32(code-1) * d, the codes looked up four at a time.
func DeqTQ2_0(src []byte, dst []float32) {
	for len(src) >= tq2Block {
		b, y := src[:tq2Block:tq2Block], dst[:quant.QKK:quant.QKK]
		d := simd.HalfAt(b, quant.QKK/4)
		for h := range 2 {
			codes := b[32*h : 32*h+32 : 32*h+32]
			out := y[128*h : 128*h+128 : 128*h+128]
			y0, y1, y2, y3 := out[0:32:32], out[32:64:64], out[64:96:96], out[96:128:128]
			for m, c := range codes {
				v := &tq2Codes[c]
				y0[m] = v[0] * d
				y1[m] = v[1] * d
				y2[m] = v[2] * d
				y3[m] = v[3] * d
			}
		}
		src, dst = src[tq2Block:], dst[quant.QKK:]
	}
}
