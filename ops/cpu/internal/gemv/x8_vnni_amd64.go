//go:build amd64 && !purego

package gemv

// q4_0x8VNNI is q4_0x8AVX2 with VPDPBUSD on zmm registers, two code
// vectors a register (gemv_x8_vnni_amd64.s; AVX-512 F/BW/VL and
// AVX512_VNNI; twin: X8Q4_0Twin).
//
//go:noescape
func q4_0x8VNNI(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)

// q8_0x8VNNI is q8_0x8AVX2 with VPDPBUSD on zmm registers (twin:
// X8Q8_0Twin).
//
//go:noescape
func q8_0x8VNNI(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)

// X8Q4_0VNNI runs q4_0x8VNNI after checking the slice bounds it relies
// on; it is an X8Func for the vnni tier, equal to X8Q4_0AVX2 bit for bit
// with the same side data (Q4_0Prep's; twin: X8Q4_0Twin).
func X8Q4_0VNNI(nb, ng int, x, y []byte, side []float32, out []float32, pfd int) {
	x8ShapeQ4_0.run(q4_0x8VNNI, nb, ng, x, y, side, out, pfd)
}

// X8Q8_0VNNI runs q8_0x8VNNI after checking the slice bounds it relies
// on; it is an X8Func for the vnni tier, equal to X8Q8_0AVX2 bit for bit
// with the same side data (X8Q8_0Prep's; twin: X8Q8_0Twin).
func X8Q8_0VNNI(nb, ng int, x, y []byte, side []float32, out []float32, pfd int) {
	x8ShapeQ8_0.run(q8_0x8VNNI, nb, ng, x, y, side, out, pfd)
}

// q4_Kx8VNNI is q4_Kx8AVX2 with VPDPBUSD on zmm registers, two code
// vectors a register, and VPMULLD by the scales (gemv_x8k_vnni_amd64.s;
// twin: X8Q4_KTwin).
//
//go:noescape
func q4_Kx8VNNI(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)

// X8Q4_KVNNI runs q4_Kx8VNNI after checking the slice bounds it relies
// on; it is an X8Func over super-blocks for the vnni tier, equal to
// X8Q4_KAVX2 bit for bit (twin: X8Q4_KTwin).
func X8Q4_KVNNI(nb, ng int, x, y []byte, side []float32, out []float32, pfd int) {
	x8ShapeQ4_K.run(q4_Kx8VNNI, nb, ng, x, y, side, out, pfd)
}

// q6_Kx8VNNI is q6_Kx8AVX2 with VPDPBUSD on ymm registers (the
// activation codes as its embedded broadcast) and VPMULLD by the scales
// (gemv_x8k_vnni_amd64.s; twin: X8Q6_KTwin).
//
//go:noescape
func q6_Kx8VNNI(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)

// X8Q6_KVNNI runs q6_Kx8VNNI after checking the slice bounds it relies
// on; it is an X8Func over super-blocks for the vnni tier, equal to
// X8Q6_KAVX2 bit for bit (twin: X8Q6_KTwin).
func X8Q6_KVNNI(nb, ng int, x, y []byte, side []float32, out []float32, pfd int) {
	x8ShapeQ6_K.run(q6_Kx8VNNI, nb, ng, x, y, side, out, pfd)
}
