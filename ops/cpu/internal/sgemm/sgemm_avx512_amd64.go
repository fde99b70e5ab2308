//go:build amd64 && !purego

package sgemm

// sgemm6x32AVX512 is the packed float path's two-panel micro-kernel
// (package cpu's mul_mat_sgemm.go; twin: Twin2), lda, bstride and ldc in
// elements; pf is where its prefetches go (PfLen(kc) floats).
//
//go:noescape
func sgemm6x32AVX512(kc int, a *float32, lda int, b *float32, bstride int, c *float32, ldc int, pf *float32)

// Micro2AVX512 checks the operands' bounds and runs sgemm6x32AVX512: the
// MR x 2*NR tile of weight rows a (row stride lda) by the two packed
// activation panels b and b[bstride:] (NR floats per k step each), added
// to c (row stride ldc; panel 0's columns at c[0:NR], panel 1's at
// c[NR:2*NR]). It equals Twin2 bit for bit. It needs AVX-512 F.
//
// While it computes, it prefetches the first PfLen(kc) floats of pf
// into L1 (the panels the caller's next calls read: a 6x32 tile reuses
// its panels for a whole block of weight rows, so each panel pair's first
// calls otherwise wait on L3). pf may be shorter (even nil): then the
// kernel prefetches its own panels, which costs little and changes
// nothing. The prefetches never change the result.
func Micro2AVX512(kc int, a []float32, lda int, b []float32, bstride int, c []float32, ldc int, pf []float32) {
	if kc <= 0 {
		return
	}
	_, _, _, _, _ = a[(MR-1)*lda+kc-1], b[bstride:], b[NR*kc-1], b[bstride+NR*kc-1], c[(MR-1)*ldc+2*NR-1]
	if len(pf) == 0 || len(pf) < PfLen(kc) {
		pf = b
	}
	sgemm6x32AVX512(kc, &a[0], lda, &b[0], bstride, &c[0], ldc, &pf[0])
}
