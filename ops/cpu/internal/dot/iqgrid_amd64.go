//go:build amd64 && !purego

package dot

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// The AVX2 codebook kernels beside IQ2_XXS's (iq3xxs_amd64.s and the
// files like it, sharing iqgrid_amd64.h): the assembly reduces each
// super-block to exact integers, and the Go here scales them as the
// generic functions in iqgrid.go do, so each equals its generic kernel
// bit for bit. The twins of the integer kernels are in gridtwin.go.

// signs64 holds, per 7-bit sign code, the eight elements' signs of
// quant.KSignsIQ2XS's byte as a VPSIGNB operand: byte i is 0xff (-1)
// where bit i of the sign byte is set, 1 elsewhere.
var signs64 = func() (t [128]uint64) {
	for c, s := range quant.KSignsIQ2XS {
		for i := range 8 {
			b := uint64(1)
			if s>>i&1 != 0 {
				b = 0xff
			}
			t[c] |= b << (8 * i)
		}
	}
	return t
}()

// iq3xxsSumsAVX2 sets out[b], for b < nb, to the integer sum
// sum_j (2*ls_j+1) * sum(g*s*y) of the iq3_xxs block at x + 98b with the
// q8_K block at y + 292b (twin: iq3xxsSumsTwin).
//
//go:noescape
func iq3xxsSumsAVX2(grid *[256]uint32, signs *[128]uint64, x, y *byte, nb int, out *int32)

// iq3xxsSums is iq3xxsSumsAVX2 over len(out) blocks, with its reads
// checked against the slices.
func iq3xxsSums(x, y []byte, out []int32) {
	nb := len(out)
	if nb == 0 {
		return
	}
	_ = x[nb*bytesIQ3_XXS-1]
	_ = y[nb*simd.BytesQ8_K-1]
	iq3xxsSumsAVX2(&quant.IQ3XXSGrid, &signs64, &x[0], &y[0], nb, &out[0])
}

// gridRowAVX2 returns the sum over the super-blocks of a row of n
// elements (the weight blocks size bytes each) of d_x*d_y times the
// block's integer sum from sums, in the generic kernels' order.
func gridRowAVX2(n int, x, y []byte, size int, sums func(x, y []byte, out []int32)) float32 {
	var buf [tableChunk]int32
	var sum float32
	nb := n / quant.QKK
	for b0 := 0; b0 < nb; b0 += tableChunk {
		c := min(tableChunk, nb-b0)
		sums(x[b0*size:], y[b0*simd.BytesQ8_K:], buf[:c])
		for i, s := range buf[:c] {
			yd := simd.Float32At(y[(b0+i)*simd.BytesQ8_K:], 0)
			d := float32(simd.HalfAt(x[(b0+i)*size:], 0) * yd)
			sum += float32(d * float32(s))
		}
	}
	return sum
}

// IQ3_XXSAVX2 is IQ3_XXS with the integer sums in AVX2; it equals
// IQ3_XXS bit for bit.
func IQ3_XXSAVX2(n int, x, y []byte) float32 {
	return float32(0.25 * gridRowAVX2(n, x, y, bytesIQ3_XXS, iq3xxsSums))
}

// iq3sSumsAVX2 sets out[b], for b < nb, to the integer sum
// sum_j (2*ls_j+1) * sum(g*s*y) of the iq3_s block at x + 110b with the
// q8_K block at y + 292b (twin: iq3sSumsTwin).
//
//go:noescape
func iq3sSumsAVX2(grid *[512]uint32, x, y *byte, nb int, out *int32)

// iq3sSums is iq3sSumsAVX2 over len(out) blocks, with its reads checked
// against the slices.
func iq3sSums(x, y []byte, out []int32) {
	nb := len(out)
	if nb == 0 {
		return
	}
	_ = x[nb*bytesIQ3_S-1]
	_ = y[nb*simd.BytesQ8_K-1]
	iq3sSumsAVX2(&quant.IQ3SGrid, &x[0], &y[0], nb, &out[0])
}

// IQ3_SAVX2 is IQ3_S with the integer sums in AVX2; it equals IQ3_S bit
// for bit.
func IQ3_SAVX2(n int, x, y []byte) float32 {
	return gridRowAVX2(n, x, y, bytesIQ3_S, iq3sSums)
}

// iq2xsSumsAVX2 sets out[b], for b < nb, to the integer sum over the
// sub-blocks j of the iq2_xs block at x + 74b with the q8_K block at
// y + 292b of (2*lo_j+1) * sum(g*s*y) over elements 0..15 plus
// (2*hi_j+1) times that of 16..31 (twin: iq2xsSumsTwin).
//
//go:noescape
func iq2xsSumsAVX2(grid *[512]uint64, signs *[128]uint64, x, y *byte, nb int, out *int32)

// iq2xsSums is iq2xsSumsAVX2 over len(out) blocks, with its reads
// checked against the slices.
func iq2xsSums(x, y []byte, out []int32) {
	nb := len(out)
	if nb == 0 {
		return
	}
	_ = x[nb*bytesIQ2_XS-1]
	_ = y[nb*simd.BytesQ8_K-1]
	iq2xsSumsAVX2(&quant.IQ2XSGrid, &signs64, &x[0], &y[0], nb, &out[0])
}

// IQ2_XSAVX2 is IQ2_XS with the integer sums in AVX2; it equals IQ2_XS
// bit for bit.
func IQ2_XSAVX2(n int, x, y []byte) float32 {
	return float32(0.125 * gridRowAVX2(n, x, y, bytesIQ2_XS, iq2xsSums))
}

// iq2sSumsAVX2 sets out[b], for b < nb, to the integer sum of the iq2_s
// block at x + 82b with the q8_K block at y + 292b, scaled per half
// sub-block as iq2xsSumsAVX2 (twin: iq2sSumsTwin).
//
//go:noescape
func iq2sSumsAVX2(grid *[1024]uint64, x, y *byte, nb int, out *int32)

// iq2sSums is iq2sSumsAVX2 over len(out) blocks, with its reads checked
// against the slices.
func iq2sSums(x, y []byte, out []int32) {
	nb := len(out)
	if nb == 0 {
		return
	}
	_ = x[nb*bytesIQ2_S-1]
	_ = y[nb*simd.BytesQ8_K-1]
	iq2sSumsAVX2(&quant.IQ2SGrid, &x[0], &y[0], nb, &out[0])
}

// IQ2_SAVX2 is IQ2_S with the integer sums in AVX2; it equals IQ2_S bit
// for bit.
func IQ2_SAVX2(n int, x, y []byte) float32 {
	return float32(0.125 * gridRowAVX2(n, x, y, bytesIQ2_S, iq2sSums))
}

// iq1sSumsAVX2 sets out[2b] and out[2b+1], for b < nb, to the integer
// sums sum_j (2*ls_j+1) * sum(g*y) and sum_j (2*ls_j+1) * delta_j *
// sum(y) of the iq1_s block at x + 50b with the q8_K block at y + 292b
// (twin: iq1sSumsTwin).
//
//go:noescape
func iq1sSumsAVX2(grid *[2048]uint64, x, y *byte, nb int, out *int32)

// iq1sSums is iq1sSumsAVX2 over len(out)/2 blocks, with its reads
// checked against the slices.
func iq1sSums(x, y []byte, out []int32) {
	nb := len(out) / 2
	if nb == 0 {
		return
	}
	_ = x[nb*bytesIQ1_S-1]
	_ = y[nb*simd.BytesQ8_K-1]
	iq1sSumsAVX2(&quant.IQ1SGrid, &x[0], &y[0], nb, &out[0])
}

// IQ1_SAVX2 is IQ1_S with the integer sums in AVX2; it equals IQ1_S bit
// for bit.
func IQ1_SAVX2(n int, x, y []byte) float32 {
	var buf [2 * tableChunk]int32
	var sum float32
	nb := n / quant.QKK
	for b0 := 0; b0 < nb; b0 += tableChunk {
		c := min(tableChunk, nb-b0)
		iq1sSums(x[b0*bytesIQ1_S:], y[b0*simd.BytesQ8_K:], buf[:2*c])
		for i := range c {
			sumi, sumi1 := buf[2*i], buf[2*i+1]
			yd := simd.Float32At(y[(b0+i)*simd.BytesQ8_K:], 0)
			d := float32(simd.HalfAt(x[(b0+i)*bytesIQ1_S:], 0) * yd)
			sum += float32(d * float32(float32(sumi)+float32(0.125*float32(sumi1))))
		}
	}
	return sum
}

// iq1mSumsAVX2 sets out[2b] and out[2b+1], for b < nb, to the integer
// sums sum(ls * sum(g*y)) and sum(ls * delta * sum(y)) of the iq1_m
// block at x + 56b with the q8_K block at y + 292b (twin: iq1mSumsTwin).
//
//go:noescape
func iq1mSumsAVX2(grid *[2048]uint64, x, y *byte, nb int, out *int32)

// iq1mSums is iq1mSumsAVX2 over len(out)/2 blocks, with its reads
// checked against the slices.
func iq1mSums(x, y []byte, out []int32) {
	nb := len(out) / 2
	if nb == 0 {
		return
	}
	_ = x[nb*bytesIQ1_M-1]
	_ = y[nb*simd.BytesQ8_K-1]
	iq1mSumsAVX2(&quant.IQ1SGrid, &x[0], &y[0], nb, &out[0])
}

// IQ1_MAVX2 is IQ1_M with the integer sums in AVX2; it equals IQ1_M bit
// for bit.
func IQ1_MAVX2(n int, x, y []byte) float32 {
	var buf [2 * tableChunk]int32
	var sum float32
	nb := n / quant.QKK
	for b0 := 0; b0 < nb; b0 += tableChunk {
		c := min(tableChunk, nb-b0)
		iq1mSums(x[b0*bytesIQ1_M:], y[b0*simd.BytesQ8_K:], buf[:2*c])
		for i := range c {
			sumi1, sumi2 := buf[2*i], buf[2*i+1]
			yd := simd.Float32At(y[(b0+i)*simd.BytesQ8_K:], 0)
			d := float32(quant.FP16ToFP32(quant.IQ1MScale(x[(b0+i)*bytesIQ1_M:])) * yd)
			sum += float32(d * float32(float32(sumi1)+float32(0.125*float32(sumi2))))
		}
	}
	return sum
}
