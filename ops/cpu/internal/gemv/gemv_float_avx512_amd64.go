//go:build amd64 && !purego

package gemv

// bf16x4DP sets out[r] to the dot product of nb runs of 16 bfloat16
// values of row x + r*ldx with the bfloat16 row y, a 64-byte line of each
// row a VDPBF16PS and a last odd run a half line (gemv_bf16dp_amd64.s;
// twin: BF16PairTwin). It needs AVX-512 BF16.
//
//go:noescape
func bf16x4DP(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// BF16DP runs bf16x4DP over nb runs of F16Run elements: the vnni tier's
// bf16 four-row kernel where the CPU has AVX-512 BF16, which the caller
// checks (twin: BF16PairTwin). Its lanes take pairs of elements by
// VDPBF16PS, so it rounds differently from BF16AVX2 and flushes
// denormal operands and sums, as the tier's bf16 pair micro-kernel does.
func BF16DP(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(bf16x4DP, 2*F16Run, 2*F16Run, nb, x, ldx, y, out)
}

// bf16x4DPPF is bf16x4DP prefetching the next four rows (GV2_PFN),
// equal to it bit for bit (gemv_bf16dp_amd64.s; twin: BF16PairTwin).
//
//go:noescape
func bf16x4DPPF(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// BF16DPPF runs bf16x4DPPF over nb runs of F16Run elements: BF16DP, bit
// for bit, asking for the next four rows' lines into L2 as it streams
// (cpu.mulmat.gemv_prefetch 1); the caller checks for AVX-512 BF16.
func BF16DPPF(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(bf16x4DPPF, 2*F16Run, 2*F16Run, nb, x, ldx, y, out)
}

// The avx512 tier's float four-row kernels (gemv_float_avx512_amd64.s):
// the AVX2 ones in zmm, prefetching ahead in their own rows, each equal
// to its AVX2 kernel bit for bit.

// f16x4AVX512 is f16x4AVX2 in zmm (twin: F16Twin).
//
//go:noescape
func f16x4AVX512(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// bf16x4AVX512 is bf16x4AVX2 in zmm (twin: BF16Twin).
//
//go:noescape
func bf16x4AVX512(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// f32x4AVX512 is f32x4AVX2 in zmm (twin: F32Twin).
//
//go:noescape
func f32x4AVX512(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// F16AVX512 runs f16x4AVX512 over nb runs of F16Run elements (twin:
// F16Twin); the caller checks for AVX-512 F.
func F16AVX512(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(f16x4AVX512, 2*F16Run, 2*F16Run, nb, x, ldx, y, out)
}

// BF16AVX512 runs bf16x4AVX512 over nb runs of F16Run elements (twin:
// BF16Twin); the caller checks for AVX-512 F/BW.
func BF16AVX512(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(bf16x4AVX512, 2*F16Run, 2*F16Run, nb, x, ldx, y, out)
}

// F32AVX512 runs f32x4AVX512 over nb runs of F16Run elements (twin:
// F32Twin); the caller checks for AVX-512 F.
func F32AVX512(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(f32x4AVX512, 4*F16Run, 4*F16Run, nb, x, ldx, y, out)
}

// f32x4AVX512PF is f32x4AVX512 prefetching the next four rows
// (GV2_PFN), equal to it bit for bit (twin: F32Twin).
//
//go:noescape
func f32x4AVX512PF(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// F32AVX512PF runs f32x4AVX512PF over nb runs of F16Run elements:
// F32AVX512, bit for bit, asking for the next four rows' lines into L2
// as it streams (cpu.mulmat.gemv_prefetch 1); the caller checks for
// AVX-512 F.
func F32AVX512PF(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(f32x4AVX512PF, 4*F16Run, 4*F16Run, nb, x, ldx, y, out)
}

// bf16x4iDP is bf16x4DP over four rows interleaved run by run, a half of
// a bf16 x8 group (gemv_bf16dp_amd64.s; twin: BF16PairTwin per row).
//
//go:noescape
func bf16x4iDP(x *byte, y *byte, nb int, out *[4]float32, pfd int)

// X8BF16DP is the bf16 x8 kernel of the vnni tier where the CPU has
// AVX-512 BF16, which the caller checks: bf16x4iDP on each half of each
// of ng groups (twin: X8BF16PairTwin). Each output equals BF16DP's for
// the plain row, bit for bit.
func X8BF16DP(nb, ng int, x, y []byte, _ []float32, out []float32, pfd int) {
	x8HalvesRun(bf16x4iDP, nb, ng, x, y, out, pfd)
}
