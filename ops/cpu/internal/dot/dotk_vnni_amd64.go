//go:build amd64 && !purego

package dot

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// The vnni tier's K-format dot products (dotk_vnni_amd64.s): the AVX2
// ones with VPDPBUSD on zmm registers (AVX-512 F/BW/VL and
// AVX512_VNNI), equal to them and to the generic functions bit for bit.

//go:noescape
func dotQ4_KQ8_KVNNI(x, y *byte, nb int) float32

//go:noescape
func dotQ5_KQ8_KVNNI(x, y *byte, nb int) float32

//go:noescape
func dotQ6_KQ8_KVNNI(x, y *byte, nb int) float32

// Q4_KVNNI is dotQ4_KQ8_KVNNI as a Func (twin: Q4_K; equal to Q4_KAVX2).
func Q4_KVNNI(n int, x, y []byte) float32 {
	return blocks(dotQ4_KQ8_KVNNI, simd.BytesQ4_K, simd.BytesQ8_K, quant.QKK, n, x, y)
}

// Q5_KVNNI is dotQ5_KQ8_KVNNI as a Func (twin: Q5_K; equal to Q5_KAVX2).
func Q5_KVNNI(n int, x, y []byte) float32 {
	return blocks(dotQ5_KQ8_KVNNI, simd.BytesQ5_K, simd.BytesQ8_K, quant.QKK, n, x, y)
}

// Q6_KVNNI is dotQ6_KQ8_KVNNI as a Func (twin: Q6_K; equal to Q6_KAVX2).
func Q6_KVNNI(n int, x, y []byte) float32 {
	return blocks(dotQ6_KQ8_KVNNI, simd.BytesQ6_K, simd.BytesQ8_K, quant.QKK, n, x, y)
}

// The vnni tier's q4_0 and q8_0 dot products (dot_q_vnni_amd64.s): two
// blocks a zmm register with VPDPBUSD, equal to the AVX2 ones bit for
// bit (the same lanes and float32 steps).

//go:noescape
func dotQ8_0Q8_0VNNI(x, y *byte, nb int) float32

//go:noescape
func dotQ4_0Q8_0VNNI(x, y *byte, nb int) float32

// Q8_0VNNI is dotQ8_0Q8_0VNNI as a Func (twin: Q8_0Twin; equal to
// Q8_0AVX2).
func Q8_0VNNI(n int, x, y []byte) float32 {
	return blocks(dotQ8_0Q8_0VNNI, simd.BytesQ8_0, simd.BytesQ8_0, quant.QK, n, x, y)
}

// Q4_0VNNI is dotQ4_0Q8_0VNNI as a Func (twin: Q4_0Twin; equal to
// Q4_0AVX2).
func Q4_0VNNI(n int, x, y []byte) float32 {
	return blocks(dotQ4_0Q8_0VNNI, simd.BytesQ4_0, simd.BytesQ8_0, quant.QK, n, x, y)
}

// gemmQ2_Kx4VNNI is gemmQ2_Kx4AVX2 with VPDPBUSD (gemmk_vnni_amd64.s;
// twin: Q2_K per column).
//
//go:noescape
func gemmQ2_Kx4VNNI(x, y *byte, ldy int, nb int, out *[4]float32)

// gemmQ3_Kx4VNNI is gemmQ3_Kx4AVX2 with VPDPBUSD (twin: Q3_K per
// column).
//
//go:noescape
func gemmQ3_Kx4VNNI(x, y *byte, ldy int, nb int, out *[4]float32)

// QuadQ2_KVNNI runs gemmQ2_Kx4VNNI; the vnni tier's q2_K quad kernel,
// equal to QuadQ2_KAVX2 bit for bit (twin: Q2_K per column).
func QuadQ2_KVNNI(nb int, x, y []byte, ldy int, out *[4]float32) {
	quadK(gemmQ2_Kx4VNNI, simd.BytesQ2_K, nb, x, y, ldy, out)
}

// QuadQ3_KVNNI runs gemmQ3_Kx4VNNI; the vnni tier's q3_K quad kernel,
// equal to QuadQ3_KAVX2 bit for bit (twin: Q3_K per column).
func QuadQ3_KVNNI(nb int, x, y []byte, ldy int, out *[4]float32) {
	quadK(gemmQ3_Kx4VNNI, simd.BytesQ3_K, nb, x, y, ldy, out)
}
