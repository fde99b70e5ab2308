//go:build amd64 && !purego

package sgemm

// sgemm6x16AVX2 is the packed float path's micro-kernel (package cpu's mul_mat_sgemm.go; twin:
// Twin), lda and ldc in elements.
//
//go:noescape
func sgemm6x16AVX2(kc int, a *float32, lda int, b *float32, c *float32, ldc int)

// MicroAVX2 checks the operands' bounds and runs sgemm6x16AVX2.
func MicroAVX2(kc int, a []float32, lda int, b []float32, c []float32, ldc int) {
	if kc <= 0 {
		return
	}
	_, _, _ = a[(MR-1)*lda+kc-1], b[NR*kc-1], c[(MR-1)*ldc+NR-1]
	sgemm6x16AVX2(kc, &a[0], lda, &b[0], &c[0], ldc)
}
