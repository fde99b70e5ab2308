//go:build amd64 && !purego

package dot

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// iq2xxsSumsAVX2 sets out[b], for b < nb, to the integer sum
// sum_j (2*ls_j+1) * sum(g*s*y) of the iq2_xxs block at x + 66b with the
// q8_K block at y + 292b (twin: iq2xxsSumsTwin), and returns acc plus
// the sum over b of float32(d_x*d_y) * float32(out[b]) in the generic
// kernel's order and rounding.
//
//go:noescape
func iq2xxsSumsAVX2(grid *[256]uint64, signs *[128]uint64, x, y *byte, nb int, out *int32, acc float32) float32

// iq2xxsSums is iq2xxsSumsAVX2 over len(out) blocks, with its reads
// checked against the slices.
func iq2xxsSums(x, y []byte, out []int32, acc float32) float32 {
	nb := len(out)
	if nb == 0 {
		return acc
	}
	_ = x[nb*bytesIQ2_XXS-1]
	_ = y[nb*simd.BytesQ8_K-1]
	return iq2xxsSumsAVX2(&quant.IQ2XXSGrid, &signs64, &x[0], &y[0], nb, &out[0], acc)
}

// IQ2_XXSAVX2 is IQ2_XXS in AVX2, the integer sums and their float32
// scaling in assembly; it equals IQ2_XXS bit for bit.
func IQ2_XXSAVX2(n int, x, y []byte) float32 {
	return float32(0.125 * gridRowAVX2(n, x, y, bytesIQ2_XXS, 1, iq2xxsSums))
}
