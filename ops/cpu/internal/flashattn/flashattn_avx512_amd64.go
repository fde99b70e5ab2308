//go:build amd64 && !purego

package flashattn

import (
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// FLASH_ATTN_EXT's block kernels on AVX-512 F/BW/VL (with the AVX2 tier's
// FMA and F16C): flashattn_pv_avx512_amd64.s (f16 values),
// flashattn_pvf32_avx512_amd64.s (float32 values),
// flashattn_qk_avx512_amd64.s and flashattn_qk4_avx512_amd64.s (f16 key
// scores for three and four rows), flashattn_q8_avx512_amd64.s and
// flashattn_q8_1_avx512_amd64.s (q8_0 key scores for three rows and one),
// sharing the table of flashattn_avx512_amd64.h. Each is its AVX2 kernel's sums bit for bit
// (the same twins, twin.go); the Go wrappers check the bounds the
// assembly relies on.

//go:noescape
func faPV3AVX512(a0, a1, a2, p0, p1, p2 *float32, v *uint16, vs, nk, n int)

//go:noescape
func faPV1AVX512(a, p *float32, v *uint16, vs, nk, n int)

//go:noescape
func faPVF3AVX512(a0, a1, a2, p0, p1, p2, v *float32, vs, nk, n int)

//go:noescape
func faPVF1AVX512(a, p, v *float32, vs, nk, n int)

// ValuesAVX512 is faBlockKernels.values (twin: ValuesTwin), ValuesAVX2
// with 16 elements of the head dimension to a zmm register.
func ValuesAVX512(acc, p [3][]float32, v []byte, vs, nk int) {
	n := len(acc[0])
	if n == 0 || n%8 != 0 || nk <= 0 || vs < 0 || vs%2 != 0 {
		panic("ValuesAVX512: bad row length, key count or stride")
	}
	a0, a1, a2 := acc[0][:n], acc[1][:n], acc[2][:n]
	p0, p1, p2 := p[0][:nk], p[1][:nk], p[2][:nk]
	vl := simd.U16s(v, 0, int64((nk-1)*vs/2+n)) // bounds: the last row's end
	n16 := n &^ 15                              // the zmm kernel's part; a last 8 is the AVX2 kernel's
	if n16 > 0 {
		faPV3AVX512(&a0[0], &a1[0], &a2[0], &p0[0], &p1[0], &p2[0], &vl[0], vs, nk, n16)
	}
	if n16 < n {
		faPV3AVX2(&a0[n16], &a1[n16], &a2[n16], &p0[0], &p1[0], &p2[0], &vl[n16], vs, nk, n-n16)
	}
}

// Values1AVX512 is faBlockKernels.values1 (twin: Values1Twin), Values1AVX2
// in zmm.
func Values1AVX512(acc, p []float32, v []byte, vs, nk int) {
	n := len(acc)
	if n == 0 || n%8 != 0 || nk <= 0 || vs < 0 || vs%2 != 0 {
		panic("Values1AVX512: bad row length, key count or stride")
	}
	p = p[:nk]
	vl := simd.U16s(v, 0, int64((nk-1)*vs/2+n)) // bounds: the last row's end
	n16 := n &^ 15                              // the zmm kernel's part; a last 8 is the AVX2 kernel's
	if n16 > 0 {
		faPV1AVX512(&acc[0], &p[0], &vl[0], vs, nk, n16)
	}
	if n16 < n {
		faPV1AVX2(&acc[n16], &p[0], &vl[n16], vs, nk, n-n16)
	}
}

// ValuesF32AVX512 is faBlockKernels.valuesF32 (twin: ValuesF32Twin),
// ValuesF32AVX2 in zmm.
func ValuesF32AVX512(acc, p [3][]float32, v []float32, vs, nk int) {
	n := len(acc[0])
	if n == 0 || n%8 != 0 || nk <= 0 || vs < 0 {
		panic("ValuesF32AVX512: bad row length, key count or stride")
	}
	a0, a1, a2 := acc[0][:n], acc[1][:n], acc[2][:n]
	p0, p1, p2 := p[0][:nk], p[1][:nk], p[2][:nk]
	v = v[:(nk-1)*vs+n] // bounds: the last row's end
	n16 := n &^ 15      // the zmm kernel's part; a last 8 is the AVX2 kernel's
	if n16 > 0 {
		faPVF3AVX512(&a0[0], &a1[0], &a2[0], &p0[0], &p1[0], &p2[0], &v[0], 4*vs, nk, n16)
	}
	if n16 < n {
		faPVF3AVX2(&a0[n16], &a1[n16], &a2[n16], &p0[0], &p1[0], &p2[0], &v[n16], 4*vs, nk, n-n16)
	}
}

// Values1F32AVX512 is faBlockKernels.values1F32 (twin: Values1F32Twin),
// Values1F32AVX2 in zmm.
func Values1F32AVX512(acc, p []float32, v []float32, vs, nk int) {
	n := len(acc)
	if n == 0 || n%8 != 0 || nk <= 0 || vs < 0 {
		panic("Values1F32AVX512: bad row length, key count or stride")
	}
	p = p[:nk]
	v = v[:(nk-1)*vs+n] // bounds: the last row's end
	n16 := n &^ 15      // the zmm kernel's part; a last 8 is the AVX2 kernel's
	if n16 > 0 {
		faPVF1AVX512(&acc[0], &p[0], &v[0], 4*vs, nk, n16)
	}
	if n16 < n {
		faPVF1AVX2(&acc[n16], &p[0], &v[n16], 4*vs, nk, n-n16)
	}
}

//go:noescape
func faQK3x8AVX512(q0, q1, q2 *float32, k *uint16, ks, nk, n int, o0, o1, o2 *float32, pf bool)

//go:noescape
func faQK4x8AVX512(q0, q1, q2, q3 *float32, k *uint16, ks, nk, n int, o0, o1, o2, o3 *float32, pf bool)

// ScoresAVX512 is faBlockKernels.scores (twin: ScoresTwin), ScoresAVX2
// with two keys to a zmm register (flashattn_qk_avx512_amd64.s).
func ScoresAVX512(q [3][]float32, k []byte, ks, nk int, out [3][]float32, pf bool) {
	n := len(q[0])
	if n == 0 || n%8 != 0 || nk <= 0 || nk%4 != 0 || ks < 0 || ks%2 != 0 {
		panic("ScoresAVX512: bad row length, key count or stride")
	}
	q0, q1, q2 := q[0][:n], q[1][:n], q[2][:n]
	kl := simd.U16s(k, 0, int64((nk-1)*ks/2+n)) // bounds: the last row's end
	o0, o1, o2 := out[0][:nk], out[1][:nk], out[2][:nk]
	faQK3x8AVX512(&q0[0], &q1[0], &q2[0], &kl[0], ks, nk, n, &o0[0], &o1[0], &o2[0], pf)
}

// Scores4AVX512 is faBlockKernels.scores4 (twin: Scores4Twin),
// Scores4AVX2 with two keys to a zmm register.
func Scores4AVX512(q [4][]float32, k []byte, ks, nk int, out [4][]float32, pf bool) {
	n := len(q[0])
	if n == 0 || n%8 != 0 || nk <= 0 || nk%2 != 0 || ks < 0 || ks%2 != 0 {
		panic("Scores4AVX512: bad row length, key count or stride")
	}
	q0, q1, q2, q3 := q[0][:n], q[1][:n], q[2][:n], q[3][:n]
	kl := simd.U16s(k, 0, int64((nk-1)*ks/2+n)) // bounds: the last row's end
	o0, o1, o2, o3 := out[0][:nk], out[1][:nk], out[2][:nk], out[3][:nk]
	faQK4x8AVX512(&q0[0], &q1[0], &q2[0], &q3[0], &kl[0], ks, nk, n, &o0[0], &o1[0], &o2[0], &o3[0], pf)
}

//go:noescape
func faScoresSmallAVX512(q *float32, d int, kt *float32, ts int, m *uint16, slope, scale float32, sc *float32, ng int, bits *uint64) (mx float32, nan bool)

// ScoresSmallAVX512 is ScoresSmallTwin for a row length that is a
// positive multiple of 4 (flashattn_small_avx512_amd64.s): the assembly
// takes the keys in groups of 64, and the last keys as one more group
// where kt's rows have room for it (ts at least n rounded up to 64) and
// slope is positive (so that padding mask values of -Inf stay -Inf);
// otherwise the twin takes them (the block path's tiles have room).
func ScoresSmallAVX512(q, kt []float32, ts int, m []uint16, slope, scale float32, sc []float32, bits []uint64) float32 {
	return scoresSmallGroups(64, "ScoresSmallAVX512", q, kt, ts, m, slope, scale, sc, bits)
}

//go:noescape
func faValuesSmallTAVX512(acc, p, vt *float32, ts, nk, n int, bits *uint64)

// ValuesSmallTAVX512 is ValuesSmallTTwin (len(acc) a positive multiple
// of 8): the zmm kernel takes the elements 16 at a time, the AVX2 kernel
// a last 8.
func ValuesSmallTAVX512(acc, p, vt []float32, ts, nk int, bits []uint64) {
	n, n8 := len(acc), (nk+7)&^7
	if n == 0 || n%8 != 0 || nk < 0 || ts < n8 {
		panic("ValuesSmallTAVX512: bad row length, key count or stride")
	}
	if nk == 0 {
		return
	}
	p = p[:n8]
	_ = vt[(n-1)*ts+n8-1] // bounds: the last element row's last group
	bits = bits[:(nk+63)/64]
	n16 := n &^ 15
	if n16 > 0 {
		faValuesSmallTAVX512(&acc[0], &p[0], &vt[0], ts, nk, n16, &bits[0])
	}
	if n16 < n {
		faValuesSmallTAVX2(&acc[n16], &p[0], &vt[n16*ts], ts, nk, n-n16, &bits[0])
	}
}

//go:noescape
func faMaskF16AVX512(sc *float32, m *uint16, n int, slope float32) uint64

//go:noescape
func faLogitsAVX512(sc, dots *float32, n int, scale float32) (mx float32, nan bool)

//go:noescape
func faRoundF16AVX512(dst, src *float32, n int)

//go:noescape
func faDequantQ8AVX512(dst *float32, src *byte, nb int)

// MaskF16AVX512 is faBlockKernels.maskF16 (twin: MaskF16Twin): the zmm
// kernel takes the keys 16 at a time, the AVX2 kernel a last 8, Go the
// rest.
func MaskF16AVX512(sc []float32, m []uint16, slope float32) uint64 {
	n := len(sc)
	if n > 64 {
		panic("MaskF16AVX512: more than 64 keys")
	}
	m = m[:n]
	n16, n8 := n&^15, n&^7
	var bits uint64
	if n16 > 0 {
		bits = faMaskF16AVX512(&sc[0], &m[0], n16, slope)
	}
	if n8 > n16 {
		bits |= faMaskF16AVX2(&sc[n16], &m[n16], 8, slope) << n16
	}
	for t := n8; t < n; t++ {
		mv := slope * simd.HalfTable[m[t]]
		sc[t] = mv
		if math.IsInf(float64(mv), -1) {
			bits |= 1 << t
		}
	}
	return bits
}

// LogitsAVX512 is faBlockKernels.logits (twin: LogitsTwin): the zmm
// kernel takes the keys 16 at a time, the AVX2 kernel a last 8, Go the
// rest.
func LogitsAVX512(sc, dots []float32, scale float32) float32 {
	n := len(sc)
	dots = dots[:n]
	n16, n8 := n&^15, n&^7
	mx, nan := float32(math.Inf(-1)), false
	if n16 > 0 {
		mx, nan = faLogitsAVX512(&sc[0], &dots[0], n16, scale)
	}
	if n8 > n16 {
		m8, nan8 := faLogitsAVX2(&sc[n16], &dots[n16], 8, scale)
		mx, nan = max(mx, m8), nan || nan8
	}
	for t := n8; t < n; t++ {
		if !math.IsInf(float64(sc[t]), -1) {
			sc[t] = Logit(dots[t], scale, 0, sc[t])
			mx = max(mx, sc[t])
		}
	}
	if nan {
		return float32(math.NaN())
	}
	return mx
}

// RoundF16AVX512 is faBlockKernels.roundF16 (twin: RoundF16Twin): the
// zmm kernel takes the values 16 at a time, the AVX2 kernel a last 8.
func RoundF16AVX512(dst, src []float32) {
	n := len(dst)
	if n%8 != 0 {
		panic("RoundF16AVX512: row length not a multiple of 8")
	}
	if n == 0 {
		return
	}
	src = src[:n]
	n16 := n &^ 15
	if n16 > 0 {
		faRoundF16AVX512(&dst[0], &src[0], n16)
	}
	if n16 < n {
		faRoundF16AVX2(&dst[n16], &src[n16], 8)
	}
}

// DequantQ8AVX512 is faBlockKernels.dequantQ8 (twin: DequantQ8Twin),
// DequantQ8AVX2 in zmm.
func DequantQ8AVX512(dst []float32, src []byte) {
	nb := len(dst) / 32
	if nb == 0 || len(dst)%32 != 0 {
		panic("DequantQ8AVX512: row length not a positive multiple of 32")
	}
	src = src[:nb*simd.BytesQ8_0]
	faDequantQ8AVX512(&dst[0], &src[0], nb)
}

//go:noescape
func faQ8QK3x4AVX512(q0, q1, q2 *byte, d0, d1, d2 *float32, k *byte, ks, nk, nb int, o0, o1, o2 *float32)

// ScoresQ8AVX512 is faBlockKernels.scoresQ8 (twin: ScoresQ8Twin),
// ScoresQ8AVX2 with two keys to a zmm register
// (flashattn_q8_avx512_amd64.s).
func ScoresQ8AVX512(q [3][]byte, dq [3][]float32, k []byte, ks, nk int, out [3][]float32) {
	nb := len(q[0]) / simd.BytesQ8_0
	if nb == 0 || nk <= 0 || nk%2 != 0 || ks < 0 {
		panic("ScoresQ8AVX512: bad row length, key count or stride")
	}
	q0, q1, q2 := q[0][:nb*simd.BytesQ8_0], q[1][:nb*simd.BytesQ8_0], q[2][:nb*simd.BytesQ8_0]
	d0, d1, d2 := dq[0][:8*nb], dq[1][:8*nb], dq[2][:8*nb]
	k = k[:(nk-1)*ks+nb*simd.BytesQ8_0] // bounds: the last row's end
	o0, o1, o2 := out[0][:nk], out[1][:nk], out[2][:nk]
	faQ8QK3x4AVX512(&q0[0], &q1[0], &q2[0], &d0[0], &d1[0], &d2[0], &k[0], ks, nk, nb, &o0[0], &o1[0], &o2[0])
}

//go:noescape
func faQ8QK1x8AVX512(q *byte, dq *float32, k *byte, ks, nk, nb int, o *float32)

// Scores1Q8AVX512 is faBlockKernels.scores1Q8 (twin: Scores1Q8Twin),
// Scores1Q8AVX2 with two keys to a zmm register.
func Scores1Q8AVX512(q []byte, dq []float32, k []byte, ks, nk int, out []float32) {
	nb := len(q) / simd.BytesQ8_0
	if nb == 0 || nk <= 0 || nk%4 != 0 || ks < 0 {
		panic("Scores1Q8AVX512: bad row length, key count or stride")
	}
	q, dq = q[:nb*simd.BytesQ8_0], dq[:8*nb]
	k = k[:(nk-1)*ks+nb*simd.BytesQ8_0] // bounds: the last row's end
	out = out[:nk]
	faQ8QK1x8AVX512(&q[0], &dq[0], &k[0], ks, nk, nb, &out[0])
}
