package sgemm

import (
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// The bfloat16 pair micro-kernel (MicroBF16AVX512, AVX-512 BF16's
// VDPBF16PS) takes its weight rows as bfloat16 in place and its
// activation panels packed in pairs of k: element (i, j) of a panel
// (k index i, column j < NR) at PairIndex(i, j). Each lane of a
// VDPBF16PS adds one column's two products of a pair, so a panel's pair
// of k steps is one 64-byte line.

// PairIndex returns where element (i, j) of a bfloat16 pair panel
// lies, in bfloat16 elements: 2*NR per pair of k steps, the pair's two
// values of each column side by side.
func PairIndex(i, j int) int { return 2*NR*(i/2) + 2*j + i%2 }

// DotBF16Pair is one lane of VDPBF16PS, as the AVX-512 BF16 instruction
// computes it: acc plus the product of the pair's odd elements, rounded,
// plus the product of its even elements, rounded; each product exact
// before its addition; denormal operands read as zero and denormal
// results written as zero (of the same sign), round to nearest even
// whatever MXCSR says.
func DotBF16Pair(acc float32, x0, x1, y0, y1 uint16) float32 {
	acc = flushDenormal(acc)
	acc = flushDenormal(simd.FMA32(bf16Operand(x1), bf16Operand(y1), acc))
	return flushDenormal(simd.FMA32(bf16Operand(x0), bf16Operand(y0), acc))
}

// bf16Operand widens a bfloat16 operand of VDPBF16PS, a denormal read
// as zero.
func bf16Operand(h uint16) float32 { return flushDenormal(math.Float32frombits(uint32(h) << 16)) }

// flushDenormal returns f, or a zero of f's sign when f is denormal.
func flushDenormal(f float32) float32 {
	if b := math.Float32bits(f); b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return f
}

// TwinBF16 is the bfloat16 pair micro-kernel in Go, bit for bit
// MicroBF16AVX512: for r < MR and j < 2*NR, c[r*ldc + j] plus the sum
// over the kc/2 pairs of k (kc even), in order, by DotBF16Pair from
// zero, of weight row r's pair (a[r*lda + 2p], a[r*lda + 2p + 1]) and
// the pair of column j of panel j/NR (panel 1 bstride elements after
// panel 0, each laid out by PairIndex). A kc of 0 leaves c as it is.
func TwinBF16(kc int, a []uint16, lda int, b []uint16, bstride int, c []float32, ldc int) {
	if kc <= 0 {
		return
	}
	for r := range MR {
		for j := range 2 * NR {
			pb := b[j/NR*bstride:]
			var acc float32
			for i := 0; i < kc; i += 2 {
				w := a[r*lda+i:]
				acc = DotBF16Pair(acc, w[0], w[1], pb[PairIndex(i, j%NR)], pb[PairIndex(i+1, j%NR)])
			}
			c[r*ldc+j] += acc
		}
	}
}

// PfLinesBF16 is how many 64-byte lines the bfloat16 pair micro-kernel
// prefetches for a chunk of kc: one for every eight k steps.
func PfLinesBF16(kc int) int { return kc / 8 }
