//go:build amd64 && !purego

package cpu

// sgemm6x16AVX2 is the packed float path's micro-kernel (sgemm.go; twin:
// sgemm6x16Twin), lda and ldc in elements.
//
//go:noescape
func sgemm6x16AVX2(kc int, a *float32, lda int, b *float32, c *float32, ldc int)

// sgemmMicroAVX2 checks the operands' bounds and runs sgemm6x16AVX2.
func sgemmMicroAVX2(kc int, a []float32, lda int, b []float32, c []float32, ldc int) {
	if kc <= 0 {
		return
	}
	_, _, _ = a[(sgemmMR-1)*lda+kc-1], b[sgemmNR*kc-1], c[(sgemmMR-1)*ldc+sgemmNR-1]
	sgemm6x16AVX2(kc, &a[0], lda, &b[0], &c[0], ldc)
}
