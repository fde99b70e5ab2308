package quant

import "math"

// Codecs for MXFP4: 32 E2M1 codes sharing one E8M0 scale.

// E8M0Half returns half the value of the E8M0 scale e, 2^(e-128): the
// factor MXFP4's doubled code values (MXFP4Values) are multiplied by.
// e = 0 and 1 give the subnormals 2^-128 and 2^-127; e = 255 gives 2^127
// (ggml's decoders do not treat it as NaN).
func E8M0Half(e uint8) float32 {
	if e < 2 {
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

// mxfp4Exponent returns the E8M0 code ggml's quantizer picks for a block
// whose largest magnitude is amax: floor(log2(amax)) - 2 + 127 computed as
// ggml does, with a float32 log2 (so a value a few ulps below a power of
// two counts as that power) and C's conversion to uint8 as x86-64
// compiles it (the low byte of the truncated int32).
func mxfp4Exponent(amax float32) uint8 {
	if !(amax > 0) {
		return 0
	}
	l := float32(math.Floor(float64(float32(math.Log2(float64(amax))))))
	return uint8(truncInt32(l - 2 + 127))
}

// bestIndexMXFP4 returns the code whose value times d is nearest to x, the
// first one on ties (so +0 before -0), as ggml's best_index_mxfp4.
func bestIndexMXFP4(x, d float32) uint8 {
	best := 0
	bestErr := abs32(float32(float32(MXFP4Values[0])*d) - x)
	for i := 1; i < 16; i++ {
		if err := abs32(float32(float32(MXFP4Values[i])*d) - x); err < bestErr {
			best, bestErr = i, err
		}
	}
	return uint8(best)
}

func quantizeMXFP4(x []float32, y []byte) {
	for len(x) > 0 {
		xb, b := x[:QK], y[:sizeMXFP4]
		var amax float32
		for _, v := range xb {
			if a := abs32(v); amax < a {
				amax = a
			}
		}
		e := mxfp4Exponent(amax)
		d := E8M0Half(e)
		b[0] = e
		for j := range QK / 2 {
			b[1+j] = bestIndexMXFP4(xb[j], d) | bestIndexMXFP4(xb[j+QK/2], d)<<4
		}
		x, y = x[QK:], y[sizeMXFP4:]
	}
}

func dequantizeMXFP4(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeMXFP4], y[:QK]
		d := E8M0Half(b[0])
		for j := range QK / 2 {
			yb[j] = float32(MXFP4Values[b[1+j]&0x0f]) * d
			yb[j+QK/2] = float32(MXFP4Values[b[1+j]>>4]) * d
		}
		x, y = x[sizeMXFP4:], y[QK:]
	}
}
