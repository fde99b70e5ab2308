//go:build amd64 && !purego

package sgemm

// sgemm6x32BF16 is the bfloat16 pair micro-kernel (twin: TwinBF16) on
// pairs pairs of k; lda and bstride in bfloat16 elements, ldc in
// float32 elements; its prefetches go to floor(pairs/4) lines at pf,
// pfstep bytes apart.
//
//go:noescape
func sgemm6x32BF16(pairs int, a *uint16, lda int, b *uint16, bstride int, c *float32, ldc int, pf *byte, pfstep int)

// MicroBF16AVX512 checks the operands' bounds and runs sgemm6x32BF16:
// the MR x 2*NR tile of bfloat16 weight rows a (row stride lda) by the
// two pair-packed bfloat16 panels b and b[bstride:] (2*NR elements per
// pair of k steps each; PairIndex), added to c (row stride ldc). kc
// must be even. It equals TwinBF16 bit for bit. It needs AVX-512 BF16
// (VDPBF16PS), which the caller checks.
//
// While it computes, it prefetches PfLinesBF16(kc) 64-byte lines into
// L1, at pf[i*pfStep]; as Micro2AVX512, a pf too short for them makes
// it prefetch its own panels, and the prefetches never change the
// result.
func MicroBF16AVX512(kc int, a []uint16, lda int, b []uint16, bstride int, c []float32, ldc int, pf []byte, pfStep int) {
	if kc <= 0 {
		return
	}
	if kc%2 != 0 {
		panic("sgemm: MicroBF16AVX512 with an odd kc")
	}
	_, _, _, _, _ = a[(MR-1)*lda+kc-1], b[bstride:], b[NR*kc-1], b[bstride+NR*kc-1], c[(MR-1)*ldc+2*NR-1]
	if len(pf) == 0 || pfStep <= 0 || len(pf) <= (PfLinesBF16(kc)-1)*pfStep {
		pf, pfStep = U16Bytes(b), 64 // (kc < 8 prefetches no line)
	}
	sgemm6x32BF16(kc/2, &a[0], lda, &b[0], bstride, &c[0], ldc, &pf[0], pfStep)
}
