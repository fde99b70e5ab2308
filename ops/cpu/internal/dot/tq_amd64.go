//go:build amd64 && !purego

package dot

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// dotTQ1_0Q8_KAVX2 dots nb tq1_0 blocks (54 bytes) with q8_K blocks (292
// bytes) as TQ1_0 does (tq_amd64.s).
//
//go:noescape
func dotTQ1_0Q8_KAVX2(x, y *byte, nb int) float32

// dotTQ2_0Q8_KAVX2 is dotTQ1_0Q8_KAVX2 for tq2_0 blocks (66 bytes).
//
//go:noescape
func dotTQ2_0Q8_KAVX2(x, y *byte, nb int) float32

// tqBlocks runs a ternary kernel f over the whole super-blocks of n
// elements after checking the slice bounds it relies on.
func tqBlocks(f func(x, y *byte, nb int) float32, xs, n int, x, y []byte) float32 {
	nb := n / quant.QKK
	if nb <= 0 {
		return 0
	}
	_, _ = x[nb*xs-1], y[nb*simd.BytesQ8_K-1]
	return f(&x[0], &y[0], nb)
}

// TQ1_0AVX2 is TQ1_0 in AVX2, the trits decoded by byte comparisons and
// 16-bit multiplies, sum(y) taken from q8_K's bsums and the float32
// scaling per super-block in registers; it equals TQ1_0 bit for bit on
// q8_K rows whose bsums are the sums of their codes.
func TQ1_0AVX2(n int, x, y []byte) float32 {
	return tqBlocks(dotTQ1_0Q8_KAVX2, bytesTQ1_0, n, x, y)
}

// TQ2_0AVX2 is TQ1_0AVX2 for TQ2_0 rows.
func TQ2_0AVX2(n int, x, y []byte) float32 {
	return tqBlocks(dotTQ2_0Q8_KAVX2, bytesTQ2_0, n, x, y)
}

// dotTQ2_0Q8_KAVX512 is dotTQ2_0Q8_KAVX2 in AVX-512 (tq_avx512_amd64.s).
//
//go:noescape
func dotTQ2_0Q8_KAVX512(x, y *byte, nb int) float32

// TQ2_0AVX512 is TQ2_0AVX2 with two of its steps in one zmm register; it
// equals TQ2_0 (and TQ2_0AVX2) bit for bit on q8_K rows whose bsums are
// the sums of their codes.
func TQ2_0AVX512(n int, x, y []byte) float32 {
	return tqBlocks(dotTQ2_0Q8_KAVX512, bytesTQ2_0, n, x, y)
}

// dotTQ1_0Q8_KAVX512 is dotTQ1_0Q8_KAVX2 in AVX-512 (tq_avx512_amd64.s).
//
//go:noescape
func dotTQ1_0Q8_KAVX512(x, y *byte, nb int) float32

// TQ1_0AVX512 is TQ1_0AVX2 with two trit levels in one zmm register
// where the codes allow it; it equals TQ1_0 (and TQ1_0AVX2) bit for bit
// on q8_K rows whose bsums are the sums of their codes.
func TQ1_0AVX512(n int, x, y []byte) float32 {
	return tqBlocks(dotTQ1_0Q8_KAVX512, bytesTQ1_0, n, x, y)
}
