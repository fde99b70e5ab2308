//go:build amd64 && !purego

package dot

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// iq2xxsSumsAVX2 sets out[b], for b < nb, to the integer sum
// sum_j (2*ls_j+1) * sum(g*s*y) of the iq2_xxs block at x + 66b with the
// q8_K block at y + 292b (twin: iq2xxsSumsTwin).
//
//go:noescape
func iq2xxsSumsAVX2(grid *[256]uint64, signs *[128]uint64, x, y *byte, nb int, out *int32)

// iq2xxsSums is iq2xxsSumsAVX2 over len(out) blocks, with its reads
// checked against the slices.
func iq2xxsSums(x, y []byte, out []int32) {
	nb := len(out)
	if nb == 0 {
		return
	}
	_ = x[nb*bytesIQ2_XXS-1]
	_ = y[nb*simd.BytesQ8_K-1]
	iq2xxsSumsAVX2(&quant.IQ2XXSGrid, &signs64, &x[0], &y[0], nb, &out[0])
}

// IQ2_XXSAVX2 is IQ2_XXS with the integer sums in AVX2; it equals
// IQ2_XXS bit for bit.
func IQ2_XXSAVX2(n int, x, y []byte) float32 {
	var sums [tableChunk]int32
	var sum float32
	nb := n / quant.QKK
	for b0 := 0; b0 < nb; b0 += tableChunk {
		c := min(tableChunk, nb-b0)
		iq2xxsSums(x[b0*bytesIQ2_XXS:], y[b0*simd.BytesQ8_K:], sums[:c])
		for i, s := range sums[:c] {
			yd := simd.Float32At(y[(b0+i)*simd.BytesQ8_K:], 0)
			d := float32(simd.HalfAt(x[(b0+i)*bytesIQ2_XXS:], 0) * yd)
			sum += float32(d * float32(s))
		}
	}
	return float32(0.125 * sum)
}
