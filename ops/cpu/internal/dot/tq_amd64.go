//go:build amd64 && !purego

package dot

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// tq1SumsAVX2 sets out[b], for b < nb, to the integer sum
// sum((trit-1)*y) of the tq1_0 block at x + 54b with the q8_K block at
// y + 292b (twin: tq1SumsTwin).
//
//go:noescape
func tq1SumsAVX2(x, y *byte, nb int, out *int32)

// tq2SumsAVX2 is tq1SumsAVX2 for tq2_0 blocks, 66 bytes apart (twin:
// tq2SumsTwin).
//
//go:noescape
func tq2SumsAVX2(x, y *byte, nb int, out *int32)

// tqSums runs kernel, tq1SumsAVX2 or tq2SumsAVX2, over len(out) blocks of
// bytes bytes at x and q8_K blocks at y, with its reads checked against
// the slices.
func tqSums(kernel func(x, y *byte, nb int, out *int32), bytes int, x, y []byte, out []int32) {
	nb := len(out)
	if nb == 0 {
		return
	}
	_ = x[nb*bytes-1]
	_ = y[nb*simd.BytesQ8_K-1]
	kernel(&x[0], &y[0], nb, &out[0])
}

// TQ1_0AVX2 is TQ1_0 with the integer sums in AVX2; it equals TQ1_0 bit
// for bit.
func TQ1_0AVX2(n int, x, y []byte) float32 {
	var sums [tableChunk]int32
	var sum float32
	nb := n / quant.QKK
	for b0 := 0; b0 < nb; b0 += tableChunk {
		c := min(tableChunk, nb-b0)
		tqSums(tq1SumsAVX2, bytesTQ1_0, x[b0*bytesTQ1_0:], y[b0*simd.BytesQ8_K:], sums[:c])
		for i, s := range sums[:c] {
			yd := simd.Float32At(y[(b0+i)*simd.BytesQ8_K:], 0)
			d := float32(float32(simd.HalfAt(x[(b0+i)*bytesTQ1_0:], 52)) * yd)
			sum += float32(float32(s) * d)
		}
	}
	return sum
}

// TQ2_0AVX2 is TQ2_0 with the integer sums in AVX2; it equals TQ2_0 bit
// for bit.
func TQ2_0AVX2(n int, x, y []byte) float32 {
	var sums [tableChunk]int32
	var sum float32
	nb := n / quant.QKK
	for b0 := 0; b0 < nb; b0 += tableChunk {
		c := min(tableChunk, nb-b0)
		tqSums(tq2SumsAVX2, bytesTQ2_0, x[b0*bytesTQ2_0:], y[b0*simd.BytesQ8_K:], sums[:c])
		for i, s := range sums[:c] {
			yd := simd.Float32At(y[(b0+i)*simd.BytesQ8_K:], 0)
			d := float32(yd * simd.HalfAt(x[(b0+i)*bytesTQ2_0:], 64))
			sum += float32(float32(s) * d)
		}
	}
	return sum
}
