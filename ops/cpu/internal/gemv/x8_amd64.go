//go:build amd64 && !purego

package gemv

// q4_0x8AVX2 sets out[8g+r] to the dot product of nb blocks of row r of
// x8 group g (g < ng) with the q8_0 row y, given X8Q4_0Prep's side data
// (gemv_x8_amd64.s; twin: X8Q4_0Twin).
//
//go:noescape
func q4_0x8AVX2(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)

// q8_0x8AVX2 is q4_0x8AVX2 for q8_0 x8 groups, with X8Q8_0Prep's side
// data (twin: X8Q8_0Twin).
//
//go:noescape
func q8_0x8AVX2(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)

// X8Q4_0AVX2 runs q4_0x8AVX2 after checking the slice bounds it relies
// on; it is an X8Func (twin: X8Q4_0Twin).
func X8Q4_0AVX2(nb, ng int, x, y []byte, side []float32, out []float32, pfd int) {
	if nb <= 0 || ng <= 0 {
		clear(out[:8*max(ng, 0)])
		return
	}
	x8Check(nb, ng, X8BytesQ4_0, X8SlotsQ4_0, x, y, side, out)
	q4_0x8AVX2(&x[0], &y[0], &side[0], nb, ng, &out[0], pfd)
}

// X8Q8_0AVX2 runs q8_0x8AVX2 after checking the slice bounds it relies
// on; it is an X8Func (twin: X8Q8_0Twin).
func X8Q8_0AVX2(nb, ng int, x, y []byte, side []float32, out []float32, pfd int) {
	if nb <= 0 || ng <= 0 {
		clear(out[:8*max(ng, 0)])
		return
	}
	x8Check(nb, ng, X8BytesQ8_0, X8SlotsQ8_0, x, y, side, out)
	q8_0x8AVX2(&x[0], &y[0], &side[0], nb, ng, &out[0], pfd)
}

// q6_Kx8AVX2 is q4_0x8AVX2 for q6_K x8 groups against a q8_K row, with
// X8Q8_KPrep's side data (gemv_x8k_amd64.s; twin: X8Q6_KTwin).
//
//go:noescape
func q6_Kx8AVX2(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)

// q4_Kx8AVX2 is q6_Kx8AVX2 for q4_K x8 groups (twin: X8Q4_KTwin).
//
//go:noescape
func q4_Kx8AVX2(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)

// X8Q6_KAVX2 runs q6_Kx8AVX2 after checking the slice bounds it relies
// on; it is an X8Func over super-blocks (twin: X8Q6_KTwin).
func X8Q6_KAVX2(nb, ng int, x, y []byte, side []float32, out []float32, pfd int) {
	if nb <= 0 || ng <= 0 {
		clear(out[:8*max(ng, 0)])
		return
	}
	x8CheckK(nb, ng, X8BytesQ6_K, x, y, side, out)
	q6_Kx8AVX2(&x[0], &y[0], &side[0], nb, ng, &out[0], pfd)
}

// X8Q4_KAVX2 runs q4_Kx8AVX2 after checking the slice bounds it relies
// on; it is an X8Func over super-blocks (twin: X8Q4_KTwin).
func X8Q4_KAVX2(nb, ng int, x, y []byte, side []float32, out []float32, pfd int) {
	if nb <= 0 || ng <= 0 {
		clear(out[:8*max(ng, 0)])
		return
	}
	x8CheckK(nb, ng, X8BytesQ4_K, x, y, side, out)
	q4_Kx8AVX2(&x[0], &y[0], &side[0], nb, ng, &out[0], pfd)
}
