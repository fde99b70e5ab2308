//go:build amd64 && !purego

package gemv

import "github.com/kernbench/kernbench/ops/cpu/internal/simd"

// The vnni tier's K-format four-row kernels (gemv_k_vnni_amd64.s): the
// AVX2 ones with VPDPBUSD on zmm registers (AVX-512 F/BW/VL and
// AVX512_VNNI), equal to them bit for bit.

// q4_Kx4VNNI is q4_Kx4AVX2 with VPDPBUSD (twin: the q4_K dot product).
//
//go:noescape
func q4_Kx4VNNI(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// q5_Kx4VNNI is q5_Kx4AVX2 with VPDPBUSD (twin: the q5_K dot product).
//
//go:noescape
func q5_Kx4VNNI(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// q6_Kx4VNNI is q6_Kx4AVX2 with VPDPBUSD (twin: the q6_K dot product).
//
//go:noescape
func q6_Kx4VNNI(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// Q4_KVNNI runs q4_Kx4VNNI; a Func for the vnni tier, equal to Q4_KAVX2
// bit for bit (twin: the q4_K dot product).
func Q4_KVNNI(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(q4_Kx4VNNI, simd.BytesQ4_K, simd.BytesQ8_K, nb, x, ldx, y, out)
}

// Q5_KVNNI runs q5_Kx4VNNI; a Func for the vnni tier, equal to Q5_KAVX2
// bit for bit (twin: the q5_K dot product).
func Q5_KVNNI(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(q5_Kx4VNNI, simd.BytesQ5_K, simd.BytesQ8_K, nb, x, ldx, y, out)
}

// Q6_KVNNI runs q6_Kx4VNNI; a Func for the vnni tier, equal to Q6_KAVX2
// bit for bit (twin: the q6_K dot product).
func Q6_KVNNI(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(q6_Kx4VNNI, simd.BytesQ6_K, simd.BytesQ8_K, nb, x, ldx, y, out)
}
