//go:build amd64 && !purego

package dot

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// The AVX2 codebook kernels beside IQ2_XXS's (iq3xxs_amd64.s and the
// files like it, sharing iqgrid_amd64.h): the assembly reduces each
// super-block to exact integers, stores them (for the tests) and scales
// them in scalar float32 arithmetic as the generic functions in iqgrid.go
// do, multiplies and adds unfused and in the same order, so each equals
// its generic kernel bit for bit; the Go here only walks the row in
// chunks and applies the row's constant factor. The twins of the integer
// kernels are in gridtwin.go.

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
// q8_K block at y + 292b (twin: iq3xxsSumsTwin), and returns acc plus
// their float32 scaling as the generic kernel sums it.
//
//go:noescape
func iq3xxsSumsAVX2(grid *[256]uint32, signs *[128]uint64, x, y *byte, nb int, out *int32, acc float32) float32

// iq3xxsSums is iq3xxsSumsAVX2 over len(out) blocks, with its reads
// checked against the slices.
func iq3xxsSums(x, y []byte, out []int32, acc float32) float32 {
	nb := len(out)
	if nb == 0 {
		return acc
	}
	_ = x[nb*bytesIQ3_XXS-1]
	_ = y[nb*simd.BytesQ8_K-1]
	return iq3xxsSumsAVX2(&quant.IQ3XXSGrid, &signs64, &x[0], &y[0], nb, &out[0], acc)
}

// gridRowAVX2 returns the sum over the super-blocks of a row of n
// elements (the weight blocks size bytes each, per integer sums each) of
// their scaled sums, which sums accumulates over chunks of at most
// tableChunk blocks in the generic kernels' order.
func gridRowAVX2(n int, x, y []byte, size, per int, sums func(x, y []byte, out []int32, acc float32) float32) float32 {
	var buf [2 * tableChunk]int32
	var sum float32
	nb := n / quant.QKK
	for b0 := 0; b0 < nb; b0 += tableChunk {
		c := min(tableChunk, nb-b0)
		sum = sums(x[b0*size:], y[b0*simd.BytesQ8_K:], buf[:per*c], sum)
	}
	return sum
}

// IQ3_XXSAVX2 is IQ3_XXS in AVX2, the integer sums and their float32
// scaling in assembly; it equals IQ3_XXS bit for bit.
func IQ3_XXSAVX2(n int, x, y []byte) float32 {
	return float32(0.25 * gridRowAVX2(n, x, y, bytesIQ3_XXS, 1, iq3xxsSums))
}

// iq3sSumsAVX2 sets out[b], for b < nb, to the integer sum
// sum_j (2*ls_j+1) * sum(g*s*y) of the iq3_s block at x + 110b with the
// q8_K block at y + 292b (twin: iq3sSumsTwin), and returns acc plus
// their float32 scaling as the generic kernel sums it.
//
//go:noescape
func iq3sSumsAVX2(grid *[512]uint32, x, y *byte, nb int, out *int32, acc float32) float32

// iq3sSums is iq3sSumsAVX2 over len(out) blocks, with its reads checked
// against the slices.
func iq3sSums(x, y []byte, out []int32, acc float32) float32 {
	nb := len(out)
	if nb == 0 {
		return acc
	}
	_ = x[nb*bytesIQ3_S-1]
	_ = y[nb*simd.BytesQ8_K-1]
	return iq3sSumsAVX2(&quant.IQ3SGrid, &x[0], &y[0], nb, &out[0], acc)
}

// IQ3_SAVX2 is IQ3_S in AVX2, the integer sums and their float32
// scaling in assembly; it equals IQ3_S bit for bit.

func IQ3_SAVX2(n int, x, y []byte) float32 {
	return gridRowAVX2(n, x, y, bytesIQ3_S, 1, iq3sSums)
}

// iq2xsSumsAVX2 sets out[b], for b < nb, to the integer sum over the
// sub-blocks j of the iq2_xs block at x + 74b with the q8_K block at
// y + 292b of (2*lo_j+1) * sum(g*s*y) over elements 0..15 plus
// (2*hi_j+1) times that of 16..31 (twin: iq2xsSumsTwin), and returns
// acc plus their float32 scaling as the generic kernel sums it.
//
//go:noescape
func iq2xsSumsAVX2(grid *[512]uint64, signs *[128]uint64, x, y *byte, nb int, out *int32, acc float32) float32

// iq2xsSums is iq2xsSumsAVX2 over len(out) blocks, with its reads
// checked against the slices.
func iq2xsSums(x, y []byte, out []int32, acc float32) float32 {
	nb := len(out)
	if nb == 0 {
		return acc
	}
	_ = x[nb*bytesIQ2_XS-1]
	_ = y[nb*simd.BytesQ8_K-1]
	return iq2xsSumsAVX2(&quant.IQ2XSGrid, &signs64, &x[0], &y[0], nb, &out[0], acc)
}

// IQ2_XSAVX2 is IQ2_XS in AVX2, the integer sums and their float32
// scaling in assembly; it equals IQ2_XS bit for bit.
func IQ2_XSAVX2(n int, x, y []byte) float32 {
	return float32(0.125 * gridRowAVX2(n, x, y, bytesIQ2_XS, 1, iq2xsSums))
}

// iq2sSumsAVX2 sets out[b], for b < nb, to the integer sum of the iq2_s
// block at x + 82b with the q8_K block at y + 292b, scaled per half
// sub-block as iq2xsSumsAVX2 (twin: iq2sSumsTwin), and returns acc plus
// their float32 scaling as the generic kernel sums it.
//
//go:noescape
func iq2sSumsAVX2(grid *[1024]uint64, x, y *byte, nb int, out *int32, acc float32) float32

// iq2sSums is iq2sSumsAVX2 over len(out) blocks, with its reads checked
// against the slices.
func iq2sSums(x, y []byte, out []int32, acc float32) float32 {
	nb := len(out)
	if nb == 0 {
		return acc
	}
	_ = x[nb*bytesIQ2_S-1]
	_ = y[nb*simd.BytesQ8_K-1]
	return iq2sSumsAVX2(&quant.IQ2SGrid, &x[0], &y[0], nb, &out[0], acc)
}

// IQ2_SAVX2 is IQ2_S in AVX2, the integer sums and their float32
// scaling in assembly; it equals IQ2_S bit for bit.

func IQ2_SAVX2(n int, x, y []byte) float32 {
	return float32(0.125 * gridRowAVX2(n, x, y, bytesIQ2_S, 1, iq2sSums))
}

// iq1sSumsAVX2 sets out[2b] and out[2b+1], for b < nb, to the integer
// sums sum_j (2*ls_j+1) * sum(g*y) and sum_j (2*ls_j+1) * delta_j *
// sum(y) of the iq1_s block at x + 50b with the q8_K block at y + 292b
// (twin: iq1sSumsTwin), and returns acc plus their float32 scaling as
// the generic kernel sums it.
//
//go:noescape
func iq1sSumsAVX2(grid *[2048]uint64, x, y *byte, nb int, out *int32, acc float32) float32

// iq1sSums is iq1sSumsAVX2 over len(out)/2 blocks, with its reads
// checked against the slices.
func iq1sSums(x, y []byte, out []int32, acc float32) float32 {
	nb := len(out) / 2
	if nb == 0 {
		return acc
	}
	_ = x[nb*bytesIQ1_S-1]
	_ = y[nb*simd.BytesQ8_K-1]
	return iq1sSumsAVX2(&quant.IQ1SGrid, &x[0], &y[0], nb, &out[0], acc)
}

// IQ1_SAVX2 is IQ1_S in AVX2, the integer sums and their float32
// scaling in assembly; it equals IQ1_S bit for bit.

func IQ1_SAVX2(n int, x, y []byte) float32 {
	return gridRowAVX2(n, x, y, bytesIQ1_S, 2, iq1sSums)
}

// iq1mSumsAVX2 sets out[2b] and out[2b+1], for b < nb, to the integer
// sums sum(ls * sum(g*y)) and sum(ls * delta * sum(y)) of the iq1_m
// block at x + 56b with the q8_K block at y + 292b (twin: iq1mSumsTwin),
// and returns acc plus their float32 scaling as the generic kernel sums
// it.
//
//go:noescape
func iq1mSumsAVX2(grid *[2048]uint64, x, y *byte, nb int, out *int32, acc float32) float32

// iq1mSums is iq1mSumsAVX2 over len(out)/2 blocks, with its reads
// checked against the slices.
func iq1mSums(x, y []byte, out []int32, acc float32) float32 {
	nb := len(out) / 2
	if nb == 0 {
		return acc
	}
	_ = x[nb*bytesIQ1_M-1]
	_ = y[nb*simd.BytesQ8_K-1]
	return iq1mSumsAVX2(&quant.IQ1SGrid, &x[0], &y[0], nb, &out[0], acc)
}

// IQ1_MAVX2 is IQ1_M in AVX2, the integer sums and their float32
// scaling in assembly; it equals IQ1_M bit for bit.

func IQ1_MAVX2(n int, x, y []byte) float32 {
	return gridRowAVX2(n, x, y, bytesIQ1_M, 2, iq1mSums)
}
