package quant

import (
	"encoding/binary"
	"math"
)

// This file holds the scalar helpers the block codecs share. The
// quantizers mirror ggml's C reference code, whose arithmetic is float32
// throughout with every product rounded before it is added (no fused
// multiply-add). Go may fuse x*y + z on some targets unless the product is
// explicitly converted, so the codecs write float32(x*y) wherever a product
// feeds an addition or subtraction.

// groupMaxEps is ggml's GROUP_MAX_EPS: a group whose largest magnitude is
// below it is treated as all zeros.
const groupMaxEps = float32(1e-15)

// abs32 returns |f| by clearing the sign bit, as C's fabsf does.
func abs32(f float32) float32 {
	return math.Float32frombits(math.Float32bits(f) &^ (1 << 31))
}

// sqrt32 returns the correctly rounded float32 square root of f, as C's
// sqrtf does. (Rounding the float64 root to float32 is exact here: the
// float64 result has more than twice float32's precision.)
func sqrt32(f float32) float32 {
	return float32(math.Sqrt(float64(f)))
}

// nearestInt rounds f to the nearest integer, ties to even, the way ggml's
// nearest_int does: by adding 1.5*2^23 in float32 and reading the low
// mantissa bits. For |f| < 2^22 that is exact rounding; outside that range
// (which ggml only asserts against in debug builds) it returns the same
// wrapped value ggml computes.
func nearestInt(f float32) int {
	// The conversion stops an inlined caller's product from being fused
	// with this addition.
	v := float32(f) + 12582912
	i := int32(math.Float32bits(v))
	return int(i&0x007fffff - 0x00400000)
}

// truncInt32 converts f to int32 rounding toward zero, the way C's float to
// integer conversion compiles on x86-64 (cvttss2si): NaN and values outside
// the int32 range give math.MinInt32. Go leaves such conversions
// implementation-defined, so this pins ggml's x86 results on every target.
func truncInt32(f float32) int32 {
	if !(f >= -2147483648 && f < 2147483648) {
		return math.MinInt32
	}
	return int32(f)
}

// clampInt returns l limited to [lo, hi].
func clampInt(l, lo, hi int) int {
	if l < lo {
		return lo
	}
	if l > hi {
		return hi
	}
	return l
}

// putF16 stores f as a little-endian binary16 at b[0:2].
func putF16(b []byte, f float32) {
	binary.LittleEndian.PutUint16(b, FP32ToFP16(f))
}

// getF16 reads a little-endian binary16 from b[0:2].
func getF16(b []byte) float32 {
	return FP16ToFP32(binary.LittleEndian.Uint16(b))
}
