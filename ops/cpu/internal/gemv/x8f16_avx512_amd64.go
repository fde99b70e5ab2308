//go:build amd64 && !purego

package gemv

// f16x8iAVX512 sets out[r] to the dot product of nb runs of 16 binary16
// values of row r of an f16 x8 group (half 0 at x, half 1 half bytes
// on) with the binary16 row y (gemv_x8f16_avx512_amd64.s; twin: F16Twin
// per row, bit for bit f16x4iAVX2 on each half).
//
//go:noescape
func f16x8iAVX512(x *byte, half uintptr, y *byte, nb int, out *[8]float32, pfd int)

// bf16x8iAVX512 is f16x8iAVX512 for bfloat16 rows and activations
// (twin: BF16Twin per row).
//
//go:noescape
func bf16x8iAVX512(x *byte, half uintptr, y *byte, nb int, out *[8]float32, pfd int)

// X8F16AVX512 is X8F16AVX2 with zmm: f16x8iAVX512 on each of ng groups,
// after the same bounds checks; it is an X8Func (twin: X8F16Twin, bit
// for bit X8F16AVX2). No tier installs it: on Zen 5 it matched
// X8F16AVX2 on a 4096x4096 matrix but was 13% slower inside a model's
// decode (see the avx512 table in package cpu); it is kept, tested, for
// whoever works on its streaming (prefetch distance, one half per pass).
func X8F16AVX512(nb, ng int, x, y []byte, _ []float32, out []float32, pfd int) {
	if nb <= 0 || ng <= 0 {
		clear(out[:8*max(ng, 0)])
		return
	}
	x8F16Check(nb, ng, x, y, out)
	half := X8BytesF16 / 2 * nb
	for g := range ng {
		f16x8iAVX512(&x[2*g*half], uintptr(half), &y[0], 2*nb, (*[8]float32)(out[8*g:8*g+8]), pfd)
	}
}

// X8BF16AVX512 is X8F16AVX512 for bfloat16 weights and activations
// (twin: X8BF16Twin, bit for bit X8BF16AVX2).
func X8BF16AVX512(nb, ng int, x, y []byte, _ []float32, out []float32, pfd int) {
	if nb <= 0 || ng <= 0 {
		clear(out[:8*max(ng, 0)])
		return
	}
	x8F16Check(nb, ng, x, y, out)
	half := X8BytesF16 / 2 * nb
	for g := range ng {
		bf16x8iAVX512(&x[2*g*half], uintptr(half), &y[0], 2*nb, (*[8]float32)(out[8*g:8*g+8]), pfd)
	}
}
