//go:build amd64 && !purego

package sgemm

// sgemm6x32AVX512 is the packed float path's two-panel micro-kernel
// (package cpu's mul_mat_sgemm.go; twin: Twin2), lda, bstride and ldc in
// elements; its prefetches go to PfLines(kc) lines at pf, pfstep bytes
// apart.
//
//go:noescape
func sgemm6x32AVX512(kc int, a *float32, lda int, b *float32, bstride int, c *float32, ldc int, pf *byte, pfstep int)

// Micro2AVX512 checks the operands' bounds and runs sgemm6x32AVX512: the
// MR x 2*NR tile of weight rows a (row stride lda) by the two packed
// activation panels b and b[bstride:] (NR floats per k step each), added
// to c (row stride ldc; panel 0's columns at c[0:NR], panel 1's at
// c[NR:2*NR]). It equals Twin2 bit for bit. It needs AVX-512 F.
//
// While it computes, it prefetches PfLines(kc) 64-byte lines into L1:
// the line at pf[i*pfStep] for each i < PfLines(kc). The caller points
// them at what its next calls read: the next panel pair (pf the pair's
// floats as bytes, F32Bytes, pfStep 64: a 6x32 tile reuses its panels
// for a whole block of weight rows, so each pair's first calls otherwise
// wait on L3), or a column of lines down the weight rows it widens next
// (pfStep the row stride: rows a few hundred bytes long, scattered
// through DRAM, which the hardware prefetchers do not follow). A pf too
// short for its lines (even nil) makes the kernel prefetch its own
// panels, which costs little and changes nothing. The prefetches never
// change the result.
func Micro2AVX512(kc int, a []float32, lda int, b []float32, bstride int, c []float32, ldc int, pf []byte, pfStep int) {
	if kc <= 0 {
		return
	}
	_, _, _, _, _ = a[(MR-1)*lda+kc-1], b[bstride:], b[NR*kc-1], b[bstride+NR*kc-1], c[(MR-1)*ldc+2*NR-1]
	if len(pf) == 0 || pfStep <= 0 || len(pf) <= (PfLines(kc)-1)*pfStep {
		pf, pfStep = F32Bytes(b), 64 // (kc < 4 prefetches no line)
	}
	sgemm6x32AVX512(kc, &a[0], lda, &b[0], bstride, &c[0], ldc, &pf[0], pfStep)
}
