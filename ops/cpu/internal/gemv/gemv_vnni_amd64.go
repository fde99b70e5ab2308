//go:build amd64 && !purego

package gemv

import "github.com/kernbench/kernbench/ops/cpu/internal/simd"

// The vnni tier's four-row kernels and q4_0 side kernel
// (gemv_k_vnni_amd64.s, gemv_q2k_q3k_vnni_amd64.s, gemv_q_vnni_amd64.s,
// gemv_side_vnni_amd64.s): the AVX2 ones with VPDPBUSD on zmm registers
// (AVX-512 F/BW/VL and AVX512_VNNI), each equal to its AVX2 kernel bit
// for bit (tests: gemv_vnni_amd64_test.go).

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

// The vnni tier's four-row kernels of q4_0, q5_0, q8_0, q4_1 and q5_1
// (gemv_q_vnni_amd64.s): the AVX2 ones two rows a zmm register with
// VPDPBUSD, equal to them bit for bit.

// q4_0x4VNNI is q4_0x4AVX2 with VPDPBUSD (twin: Q4_0Twin).
//
//go:noescape
func q4_0x4VNNI(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)

// q5_0x4VNNI is q5_0x4AVX2 with VPDPBUSD (twin: Q5_0Twin).
//
//go:noescape
func q5_0x4VNNI(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)

// q4_1x4VNNI is q4_1x4AVX2 with VPDPBUSD (twin: Q4_1Twin).
//
//go:noescape
func q4_1x4VNNI(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// q5_1x4VNNI is q5_1x4AVX2 with VPDPBUSD (twin: Q5_1Twin).
//
//go:noescape
func q5_1x4VNNI(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// Q4_0VNNI runs q4_0x4VNNI; a Func for the vnni tier, equal to Q4_0AVX2
// bit for bit (twin: Q4_0Twin).
func Q4_0VNNI(nb int, x []byte, ldx int, y []byte, dy []float32, out *[4]float32) {
	scaled(q4_0x4VNNI, simd.BytesQ4_0, nb, x, ldx, y, dy, out)
}

// Q5_0VNNI runs q5_0x4VNNI; a Func for the vnni tier, equal to Q5_0AVX2
// bit for bit (twin: Q5_0Twin).
func Q5_0VNNI(nb int, x []byte, ldx int, y []byte, dy []float32, out *[4]float32) {
	scaled(q5_0x4VNNI, simd.BytesQ5_0, nb, x, ldx, y, dy, out)
}

// Q4_1VNNI runs q4_1x4VNNI; a Func for the vnni tier, equal to Q4_1AVX2
// bit for bit (twin: Q4_1Twin).
func Q4_1VNNI(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(q4_1x4VNNI, simd.BytesQ4_1, simd.BytesQ8_1, nb, x, ldx, y, out)
}

// Q5_1VNNI runs q5_1x4VNNI; a Func for the vnni tier, equal to Q5_1AVX2
// bit for bit (twin: Q5_1Twin).
func Q5_1VNNI(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(q5_1x4VNNI, simd.BytesQ5_1, simd.BytesQ8_1, nb, x, ldx, y, out)
}

// q8_0x4VNNI is q8_0x4AVX2 with VPDPBUSD (twin: Q8_0Twin).
//
//go:noescape
func q8_0x4VNNI(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)

// Q8_0VNNI runs q8_0x4VNNI; a Func for the vnni tier, equal to Q8_0AVX2
// bit for bit (twin: Q8_0Twin).
func Q8_0VNNI(nb int, x []byte, ldx int, y []byte, dy []float32, out *[4]float32) {
	scaled(q8_0x4VNNI, simd.BytesQ8_0, nb, x, ldx, y, dy, out)
}

// q2_Kx4VNNI is q2_Kx4AVX2 with VPDPBUSD (gemv_q2k_q3k_vnni_amd64.s;
// twin: the q2_K dot product).
//
//go:noescape
func q2_Kx4VNNI(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// q3_Kx4VNNI is q3_Kx4AVX2 with VPDPBUSD (twin: the q3_K dot product).
//
//go:noescape
func q3_Kx4VNNI(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// Q2_KVNNI runs q2_Kx4VNNI; a Func for the vnni tier, equal to Q2_KAVX2
// bit for bit (twin: the q2_K dot product).
func Q2_KVNNI(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(q2_Kx4VNNI, simd.BytesQ2_K, simd.BytesQ8_K, nb, x, ldx, y, out)
}

// Q3_KVNNI runs q3_Kx4VNNI; a Func for the vnni tier, equal to Q3_KAVX2
// bit for bit (twin: the q3_K dot product).
func Q3_KVNNI(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(q3_Kx4VNNI, simd.BytesQ3_K, simd.BytesQ8_K, nb, x, ldx, y, out)
}

// sideQ4_0x4VNNI is sideQ4_0x4AVX2 with the four rows in one zmm
// register and VPDPBUSD (gemv_side_vnni_amd64.s; twin: SideQ4_0Twin).
//
//go:noescape
func sideQ4_0x4VNNI(x *byte, ldx int, y *byte, side *float32, nb int, out *[4]float32)

// SideQ4_0VNNI runs sideQ4_0x4VNNI with side, Q4_0Prep's data of y, as
// its dy; the vnni tier's q4_0 side kernel, equal to SideQ4_0AVX2 bit
// for bit (twin: SideQ4_0Twin).
func SideQ4_0VNNI(nb int, x []byte, ldx int, y []byte, side []float32, out *[4]float32) {
	if nb <= 0 {
		*out = [4]float32{}
		return
	}
	_, _, _ = x[3*ldx+nb*simd.BytesQ4_0-1], y[nb*simd.BytesQ8_0-1], side[nb*SideSlots-1]
	sideQ4_0x4VNNI(&x[0], ldx, &y[0], &side[0], nb, out)
}
