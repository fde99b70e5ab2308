package quant

import "math"

// Codecs for the ternary formats TQ1_0 and TQ2_0 (BitNet b1.58 and
// TriLM weights): each element is -1, 0 or 1 times one f16 scale per 256.

// lroundTrit returns lroundf(f) + 1 as ggml's ternary quantizers compute
// it on x86-64 with glibc and store it in an int: halves round away from
// zero; NaN and magnitudes of 2^63 or more give LONG_MIN, whose sum with 1
// truncated to int is 1.
func lroundTrit(f float32) int {
	a := math.Abs(float64(f))
	if f != f || a >= 1<<63 {
		return 1
	}
	return int(int32(int64(math.Round(float64(f))) + 1))
}

// ternaryScale returns the scale of a TQ block, its largest magnitude
// found as ggml's MAX macro finds it (a NaN is taken and then replaced by
// the next element), and the scale's inverse (0 for a zero scale).
func ternaryScale(x []float32) (d, id float32) {
	for _, v := range x {
		if a := abs32(v); !(d > a) {
			d = a
		}
	}
	if d != 0 {
		id = 1 / d
	}
	return d, id
}

// pow3 are the powers of 3 TQ1_0's decoder multiplies a byte by to bring
// trit n to the top.
var pow3 = [5]uint8{1, 3, 9, 27, 81}

// packTrits returns the byte holding the trits lroundTrit(x[k*stride]*id)
// for k < n, the first most significant, scaled to 256/243 of the base-3
// number (rounded up) so that the decoder reads trits by multiplication.
// Four trits (the qh bytes) take a zero fifth trit.
func packTrits(x []float32, stride, n int, id float32) uint8 {
	var q uint8
	for k := range n {
		q = q*3 + uint8(lroundTrit(float32(x[k*stride]*id)))
	}
	if n == 4 {
		q *= 3
	}
	return uint8((uint16(q)*256 + 242) / 243)
}

func quantizeTQ1_0(x []float32, y []byte) {
	for len(x) > 0 {
		xb, b := x[:QKK], y[:sizeTQ1_0]
		d, id := ternaryScale(xb)
		putF16(b[52:], d)
		for m := range 32 {
			b[m] = packTrits(xb[m:], 32, 5, id)
		}
		for m := range 16 {
			b[32+m] = packTrits(xb[160+m:], 16, 5, id)
		}
		for j := range 4 {
			b[48+j] = packTrits(xb[240+j:], 4, 4, id)
		}
		x, y = x[QKK:], y[sizeTQ1_0:]
	}
}

// Trit returns trit n (0..4, the first the most significant) of a TQ1_0
// code byte q: 0, 1 or 2 for -1, 0 and 1.
func Trit(q uint8, n int) int {
	return int(uint16(q*pow3[n])*3) >> 8
}

func dequantizeTQ1_0(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeTQ1_0], y[:QKK]
		d := getF16(b[52:])
		for n := range 5 {
			for m := range 32 {
				yb[32*n+m] = float32(Trit(b[m], n)-1) * d
			}
			for m := range 16 {
				yb[160+16*n+m] = float32(Trit(b[32+m], n)-1) * d
			}
		}
		for n := range 4 {
			for j := range 4 {
				yb[240+4*n+j] = float32(Trit(b[48+j], n)-1) * d
			}
		}
		x, y = x[sizeTQ1_0:], y[QKK:]
	}
}

func quantizeTQ2_0(x []float32, y []byte) {
	for len(x) > 0 {
		xb, b := x[:QKK], y[:sizeTQ2_0]
		d, id := ternaryScale(xb)
		putF16(b[64:], d)
		for h := range 2 {
			for m := range 32 {
				var q uint8
				for n := range 4 {
					q += uint8(lroundTrit(float32(xb[128*h+32*n+m]*id))&3) << (2 * n)
				}
				b[32*h+m] = q
			}
		}
		x, y = x[QKK:], y[sizeTQ2_0:]
	}
}

func dequantizeTQ2_0(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeTQ2_0], y[:QKK]
		d := getF16(b[64:])
		for h := range 2 {
			for n := range 4 {
				for m := range 32 {
					q := int(b[32*h+m]>>(2*n)) & 3
					yb[128*h+32*n+m] = float32(q-1) * d
				}
			}
		}
		x, y = x[sizeTQ2_0:], y[QKK:]
	}
}
