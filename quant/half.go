package quant

import "math"

// FP32ToFP16 converts f to IEEE binary16 bits, rounding to nearest with
// ties to even. Values too large for binary16 become ±Inf; values below
// its normal range become subnormals (or ±0), correctly rounded. A NaN
// becomes the quiet NaN 0x7e00 with f's sign bit, which is what ggml's
// portable converter produces (its payload is not kept).
func FP32ToFP16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff

	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	// e is the binary16 biased exponent the value would have.
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal or zero in binary16. Below half the smallest
		// subnormal (2^-25) everything rounds to zero; this also covers
		// float32 zeros and subnormals.
		if e < -10 {
			return sign
		}
		m := mant | 0x800000
		shift := uint32(14 - e) // 14..24: units of 2^-24
		q := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || rem == half && q&1 == 1 {
			q++ // may carry into the smallest normal, which is still correct
		}
		return sign | uint16(q)
	}
	q := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && q&1 == 1 {
		q++ // a carry out of the mantissa bumps the exponent, up to Inf
	}
	return sign | uint16(q)
}

// FP16ToFP32 converts IEEE binary16 bits to float32. Every binary16 value
// is exactly representable; a NaN keeps its payload and comes back quiet,
// as it does from ggml's converter and from hardware conversion.
func FP16ToFP32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f && mant == 0:
		return math.Float32frombits(sign | 0x7f800000)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7fc00000 | mant<<13)
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		// Subnormal: value = mant * 2^-24. Normalize so that bit 10 is the
		// implicit leading one.
		e := uint32(127 - 14)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
	default:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	}
}

// FP32ToBF16 converts f to bfloat16 bits, rounding to nearest with ties to
// even. Infinities are kept, subnormals are rounded (not flushed), and a
// NaN keeps its sign and top payload bits with the quiet bit forced on,
// exactly as ggml's ggml_compute_fp32_to_bf16 does.
func FP32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	// Adding 0x7fff plus the lowest kept bit rounds to nearest even; a
	// finite value that rounds past the largest bfloat16 carries into the
	// exponent and becomes Inf.
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// BF16ToFP32 converts bfloat16 bits to float32 (exactly: the bits become
// the top half of the float32).
func BF16ToFP32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}
