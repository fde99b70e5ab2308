//go:build amd64 && !purego

package dot

import "unsafe"

// cvtF16F32AVX512 widens n > 0 binary16 values to float32.
//
//go:noescape
func cvtF16F32AVX512(x *uint16, y *float32, n int)

// cvtBF16F32AVX512 widens n > 0 bfloat16 values to float32.
//
//go:noescape
func cvtBF16F32AVX512(x *uint16, y *float32, n int)

// WidenF16AVX512 widens len(dst) binary16 values of src (little-endian)
// to float32 with 512-bit VCVTPH2PS, bit for bit WidenF16AVX2 (NaNs
// quieted the same way). It needs AVX-512 F.
func WidenF16AVX512(src []byte, dst []float32) {
	if n := len(dst); n > 0 {
		_ = src[2*n-1]
		cvtF16F32AVX512((*uint16)(unsafe.Pointer(&src[0])), &dst[0], n)
	}
}

// WidenBF16AVX512 widens len(dst) bfloat16 values of src (little-endian)
// to float32 in zmm registers, bit for bit WidenBF16AVX2. It needs
// AVX-512 F and BW.
func WidenBF16AVX512(src []byte, dst []float32) {
	if n := len(dst); n > 0 {
		_ = src[2*n-1]
		cvtBF16F32AVX512((*uint16)(unsafe.Pointer(&src[0])), &dst[0], n)
	}
}
