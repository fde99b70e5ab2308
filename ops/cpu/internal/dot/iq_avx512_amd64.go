//go:build amd64 && !purego

package dot

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// iq1Biased holds, per 12-bit index (an IQ1 grid index in bits 0..10, a
// delta sign in bit 11), the grid entry's eight values g as the bytes
// 8g+9+delta, delta -1 where bit 11 is set and +1 elsewhere: 0 to 18,
// unsigned operands of VPMADDUBSW whose products with q8_K codes give
// 8*grid + shift of IQ1_M (and, with bit 11 clear, 8*grid of IQ1_S) plus
// a bias that the q8_K bsums remove (iq1_avx512_amd64.s).
var iq1Biased = func() (t [4096]uint64) {
	for i := range t {
		e := quant.IQ1SGrid[i&0x7ff]
		delta := 1
		if i&0x800 != 0 {
			delta = -1
		}
		for k := range 8 {
			g := int(int8(uint8(e >> (8 * k))))
			t[i] |= uint64(uint8(8*g+9+delta)) << (8 * k)
		}
	}
	return t
}()

// iq1mSumsAVX512 sets out[b], for b < nb, to 8*grid + shift of the
// iq1_m block at x + 56b with the q8_K block at y + 292b (the two sums
// of iq1mSumsTwin joined), and returns acc plus their float32 scaling as
// the generic kernel sums it (iq1_avx512_amd64.s).
//
//go:noescape
func iq1mSumsAVX512(grid *[4096]uint64, x, y *byte, nb int, out *int32, acc float32) float32

// iq1sSumsAVX512 is iq1mSumsAVX512 for iq1_s blocks (50 bytes).
//
//go:noescape
func iq1sSumsAVX512(grid *[4096]uint64, x, y *byte, nb int, out *int32, acc float32) float32

// iq1mSums512 is iq1mSumsAVX512 over len(out) blocks, with its reads
// checked against the slices. It and the wrappers like it are named
// functions, not closures made by one generic function: gridRowAVX2's
// sums buffer then stays on the stack (a closure made it escape, 64
// allocations a row in TestNoAllocs).
func iq1mSums512(x, y []byte, out []int32, acc float32) float32 {
	nb := len(out)
	if nb == 0 {
		return acc
	}
	_ = x[nb*bytesIQ1_M-1]
	_ = y[nb*simd.BytesQ8_K-1]
	return iq1mSumsAVX512(&iq1Biased, &x[0], &y[0], nb, &out[0], acc)
}

// iq1sSums512 is iq1sSumsAVX512 over len(out) blocks, with its reads
// checked against the slices.
func iq1sSums512(x, y []byte, out []int32, acc float32) float32 {
	nb := len(out)
	if nb == 0 {
		return acc
	}
	_ = x[nb*bytesIQ1_S-1]
	_ = y[nb*simd.BytesQ8_K-1]
	return iq1sSumsAVX512(&iq1Biased, &x[0], &y[0], nb, &out[0], acc)
}

// IQ1_MAVX512 is IQ1_M in AVX-512 (F, BW, VL) and BMI2, two sub-blocks
// a step; it equals IQ1_M bit for bit.
func IQ1_MAVX512(n int, x, y []byte) float32 {
	return gridRowAVX2(n, x, y, bytesIQ1_M, 1, iq1mSums512)
}

// IQ1_SAVX512 is IQ1_S in AVX-512 (F, BW, VL) and BMI2, two sub-blocks
// a step; it equals IQ1_S bit for bit.
func IQ1_SAVX512(n int, x, y []byte) float32 {
	return gridRowAVX2(n, x, y, bytesIQ1_S, 1, iq1sSums512)
}

// iq2sSumsAVX512 sets out[b], for b < nb, to the integer sum of the
// iq2_s block at x + 82b with the q8_K block at y + 292b (twin:
// iq2sSumsTwin), and returns acc plus their float32 scaling as the
// generic kernel sums it (iq2s_avx512_amd64.s).
//
//go:noescape
func iq2sSumsAVX512(grid *[1024]uint64, x, y *byte, nb int, out *int32, acc float32) float32

// iq2sSums512 is iq2sSumsAVX512 over len(out) blocks, with its reads
// checked against the slices.
func iq2sSums512(x, y []byte, out []int32, acc float32) float32 {
	nb := len(out)
	if nb == 0 {
		return acc
	}
	_ = x[nb*bytesIQ2_S-1]
	_ = y[nb*simd.BytesQ8_K-1]
	return iq2sSumsAVX512(&quant.IQ2SGrid, &x[0], &y[0], nb, &out[0], acc)
}

// IQ2_SAVX512 is IQ2_S in AVX-512 (F, BW, VL) and BMI2, two sub-blocks
// a step; it equals IQ2_S bit for bit.
func IQ2_SAVX512(n int, x, y []byte) float32 {
	return float32(0.125 * gridRowAVX2(n, x, y, bytesIQ2_S, 1, iq2sSums512))
}

// iq2xxsSumsAVX512 sets out[b], for b < nb, to the integer sum of the
// iq2_xxs block at x + 66b with the q8_K block at y + 292b (twin:
// iq2xxsSumsTwin), and returns acc plus their float32 scaling as the
// generic kernel sums it (iq2_avx512_amd64.s).
//
//go:noescape
func iq2xxsSumsAVX512(grid *[256]uint64, x, y *byte, nb int, out *int32, acc float32) float32

// iq2xsSumsAVX512 is iq2xxsSumsAVX512 for iq2_xs blocks (74 bytes;
// twin: iq2xsSumsTwin).
//
//go:noescape
func iq2xsSumsAVX512(grid *[512]uint64, x, y *byte, nb int, out *int32, acc float32) float32

// iq2xxsSums512 is iq2xxsSumsAVX512 over len(out) blocks, with its reads
// checked against the slices.
func iq2xxsSums512(x, y []byte, out []int32, acc float32) float32 {
	nb := len(out)
	if nb == 0 {
		return acc
	}
	_ = x[nb*bytesIQ2_XXS-1]
	_ = y[nb*simd.BytesQ8_K-1]
	return iq2xxsSumsAVX512(&quant.IQ2XXSGrid, &x[0], &y[0], nb, &out[0], acc)
}

// iq2xsSums512 is iq2xsSumsAVX512 over len(out) blocks, with its reads
// checked against the slices.
func iq2xsSums512(x, y []byte, out []int32, acc float32) float32 {
	nb := len(out)
	if nb == 0 {
		return acc
	}
	_ = x[nb*bytesIQ2_XS-1]
	_ = y[nb*simd.BytesQ8_K-1]
	return iq2xsSumsAVX512(&quant.IQ2XSGrid, &x[0], &y[0], nb, &out[0], acc)
}

// IQ2_XXSAVX512 is IQ2_XXS in AVX-512 (F, BW, VL) and BMI2, two
// sub-blocks a step; it equals IQ2_XXS bit for bit.
func IQ2_XXSAVX512(n int, x, y []byte) float32 {
	return float32(0.125 * gridRowAVX2(n, x, y, bytesIQ2_XXS, 1, iq2xxsSums512))
}

// IQ2_XSAVX512 is IQ2_XS in AVX-512 (F, BW, VL) and BMI2, two
// sub-blocks a step; it equals IQ2_XS bit for bit.
func IQ2_XSAVX512(n int, x, y []byte) float32 {
	return float32(0.125 * gridRowAVX2(n, x, y, bytesIQ2_XS, 1, iq2xsSums512))
}

// iq3xxsSumsAVX512 sets out[b], for b < nb, to the integer sum of the
// iq3_xxs block at x + 98b with the q8_K block at y + 292b (twin:
// iq3xxsSumsTwin), and returns acc plus their float32 scaling as the
// generic kernel sums it (iq3_avx512_amd64.s).
//
//go:noescape
func iq3xxsSumsAVX512(grid *[256]uint32, x, y *byte, nb int, out *int32, acc float32) float32

// iq3xxsSums512 is iq3xxsSumsAVX512 over len(out) blocks, with its reads
// checked against the slices.
func iq3xxsSums512(x, y []byte, out []int32, acc float32) float32 {
	nb := len(out)
	if nb == 0 {
		return acc
	}
	_ = x[nb*bytesIQ3_XXS-1]
	_ = y[nb*simd.BytesQ8_K-1]
	return iq3xxsSumsAVX512(&quant.IQ3XXSGrid, &x[0], &y[0], nb, &out[0], acc)
}

// IQ3_XXSAVX512 is IQ3_XXS in AVX-512 (F, BW, VL) and BMI2, two
// sub-blocks a step; it equals IQ3_XXS bit for bit.
func IQ3_XXSAVX512(n int, x, y []byte) float32 {
	return float32(0.25 * gridRowAVX2(n, x, y, bytesIQ3_XXS, 1, iq3xxsSums512))
}

// iq3sSumsAVX512 is iq3xxsSumsAVX512 for iq3_s blocks (110 bytes; twin:
// iq3sSumsTwin).
//
//go:noescape
func iq3sSumsAVX512(grid *[512]uint32, x, y *byte, nb int, out *int32, acc float32) float32

// iq3sSums512 is iq3sSumsAVX512 over len(out) blocks, with its reads
// checked against the slices.
func iq3sSums512(x, y []byte, out []int32, acc float32) float32 {
	nb := len(out)
	if nb == 0 {
		return acc
	}
	_ = x[nb*bytesIQ3_S-1]
	_ = y[nb*simd.BytesQ8_K-1]
	return iq3sSumsAVX512(&quant.IQ3SGrid, &x[0], &y[0], nb, &out[0], acc)
}

// IQ3_SAVX512 is IQ3_S in AVX-512 (F, BW, VL) and BMI2, two sub-blocks
// a step; it equals IQ3_S bit for bit.
func IQ3_SAVX512(n int, x, y []byte) float32 {
	return gridRowAVX2(n, x, y, bytesIQ3_S, 1, iq3sSums512)
}
