//go:build amd64 && !purego

package flashattn

import (
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// FLASH_ATTN_EXT's block kernels on AVX2+FMA+F16C (flashattn_qk_amd64.s,
// flashattn_pv_amd64.s, flashattn_q8_amd64.s, flashattn_logits_amd64.s);
// the Go wrappers check the bounds the assembly relies on. Twins: twin.go.

//go:noescape
func faQK3x4AVX2(q0, q1, q2 *float32, k *uint16, ks, ng, n int, o0, o1, o2 *float32, pf bool)

//go:noescape
func faQK4x2AVX2(q0, q1, q2, q3 *float32, k *uint16, ks, ng, n int, o0, o1, o2, o3 *float32, pf bool)

//go:noescape
func faPV3AVX2(a0, a1, a2, p0, p1, p2 *float32, v *uint16, vs, nk, n int)

//go:noescape
func faQK1x3AVX2(q *float32, k *uint16, ks, ng, n int, o *float32, pf bool)

//go:noescape
func faPV1AVX2(a, p *float32, v *uint16, vs, nk, n int)

//go:noescape
func faQ8QK3x2AVX2(q0, q1, q2 *byte, d0, d1, d2 *float32, k *byte, ks, ng, nb int, o0, o1, o2 *float32)

//go:noescape
func faQ8QK1x4AVX2(q *byte, dq *float32, k *byte, ks, ng, nb int, o *float32)

//go:noescape
func faDequantQ8AVX2(dst *float32, src *byte, nb int)

//go:noescape
func faPVF3AVX2(a0, a1, a2, p0, p1, p2, v *float32, vs, nk, n int)

//go:noescape
func faPVF1AVX2(a, p, v *float32, vs, nk, n int)

//go:noescape
func faMaskF16AVX2(sc *float32, m *uint16, n int, slope float32) uint64

//go:noescape
func faRoundF16AVX2(dst, src *float32, n int)

//go:noescape
func faLogitsAVX2(sc, dots *float32, n int, scale float32) (mx float32, nan bool)

// Scores1AVX2 is faBlockKernels.scores1 (twin: Scores1Twin).
func Scores1AVX2(q []float32, k []byte, ks, nk int, out []float32, pf bool) {
	n := len(q)
	if n == 0 || n%8 != 0 || nk <= 0 || nk%3 != 0 || ks < 0 || ks%2 != 0 {
		panic("Scores1AVX2: bad row length, key count or stride")
	}
	kl := simd.U16s(k, 0, int64((nk-1)*ks/2+n)) // bounds: the last row's end
	out = out[:nk]
	faQK1x3AVX2(&q[0], &kl[0], ks, nk/3, n, &out[0], pf)
}

// Values1AVX2 is faBlockKernels.values1 (twin: Values1Twin).
func Values1AVX2(acc, p []float32, v []byte, vs, nk int) {
	n := len(acc)
	if n == 0 || n%8 != 0 || nk <= 0 || vs < 0 || vs%2 != 0 {
		panic("Values1AVX2: bad row length, key count or stride")
	}
	p = p[:nk]
	vl := simd.U16s(v, 0, int64((nk-1)*vs/2+n)) // bounds: the last row's end
	faPV1AVX2(&acc[0], &p[0], &vl[0], vs, nk, n)
}

// ScoresQ8AVX2 is faBlockKernels.scoresQ8 (twin: ScoresQ8Twin).
func ScoresQ8AVX2(q [3][]byte, dq [3][]float32, k []byte, ks, nk int, out [3][]float32) {
	nb := len(q[0]) / simd.BytesQ8_0
	if nb == 0 || nk <= 0 || nk%2 != 0 || ks < 0 {
		panic("ScoresQ8AVX2: bad row length, key count or stride")
	}
	q0, q1, q2 := q[0][:nb*simd.BytesQ8_0], q[1][:nb*simd.BytesQ8_0], q[2][:nb*simd.BytesQ8_0]
	d0, d1, d2 := dq[0][:8*nb], dq[1][:8*nb], dq[2][:8*nb]
	k = k[:(nk-1)*ks+nb*simd.BytesQ8_0] // bounds: the last row's end
	o0, o1, o2 := out[0][:nk], out[1][:nk], out[2][:nk]
	faQ8QK3x2AVX2(&q0[0], &q1[0], &q2[0], &d0[0], &d1[0], &d2[0], &k[0], ks, nk/2, nb, &o0[0], &o1[0], &o2[0])
}

// Scores1Q8AVX2 is faBlockKernels.scores1Q8 (twin: Scores1Q8Twin).
func Scores1Q8AVX2(q []byte, dq []float32, k []byte, ks, nk int, out []float32) {
	nb := len(q) / simd.BytesQ8_0
	if nb == 0 || nk <= 0 || nk%4 != 0 || ks < 0 {
		panic("Scores1Q8AVX2: bad row length, key count or stride")
	}
	q, dq = q[:nb*simd.BytesQ8_0], dq[:8*nb]
	k = k[:(nk-1)*ks+nb*simd.BytesQ8_0] // bounds: the last row's end
	out = out[:nk]
	faQ8QK1x4AVX2(&q[0], &dq[0], &k[0], ks, nk/4, nb, &out[0])
}

// DequantQ8AVX2 is faBlockKernels.dequantQ8 (twin: DequantQ8Twin).
func DequantQ8AVX2(dst []float32, src []byte) {
	nb := len(dst) / 32
	if nb == 0 || len(dst)%32 != 0 {
		panic("DequantQ8AVX2: row length not a positive multiple of 32")
	}
	src = src[:nb*simd.BytesQ8_0]
	faDequantQ8AVX2(&dst[0], &src[0], nb)
}

// ValuesF32AVX2 is faBlockKernels.valuesF32 (twin: ValuesF32Twin).
func ValuesF32AVX2(acc, p [3][]float32, v []float32, vs, nk int) {
	n := len(acc[0])
	if n == 0 || n%8 != 0 || nk <= 0 || vs < 0 {
		panic("ValuesF32AVX2: bad row length, key count or stride")
	}
	a0, a1, a2 := acc[0][:n], acc[1][:n], acc[2][:n]
	p0, p1, p2 := p[0][:nk], p[1][:nk], p[2][:nk]
	v = v[:(nk-1)*vs+n] // bounds: the last row's end
	faPVF3AVX2(&a0[0], &a1[0], &a2[0], &p0[0], &p1[0], &p2[0], &v[0], 4*vs, nk, n)
}

// Values1F32AVX2 is faBlockKernels.values1F32 (twin: Values1F32Twin).
func Values1F32AVX2(acc, p []float32, v []float32, vs, nk int) {
	n := len(acc)
	if n == 0 || n%8 != 0 || nk <= 0 || vs < 0 {
		panic("Values1F32AVX2: bad row length, key count or stride")
	}
	p = p[:nk]
	v = v[:(nk-1)*vs+n] // bounds: the last row's end
	faPVF1AVX2(&acc[0], &p[0], &v[0], 4*vs, nk, n)
}

// MaskF16AVX2 is faBlockKernels.maskF16 (twin: MaskF16Twin).
func MaskF16AVX2(sc []float32, m []uint16, slope float32) uint64 {
	n := len(sc)
	if n > 64 {
		panic("MaskF16AVX2: more than 64 keys")
	}
	m = m[:n]
	n8 := n &^ 7
	var bits uint64
	if n8 > 0 {
		bits = faMaskF16AVX2(&sc[0], &m[0], n8, slope)
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

// LogitsAVX2 is faBlockKernels.logits (twin: LogitsTwin).
func LogitsAVX2(sc, dots []float32, scale float32) float32 {
	n := len(sc)
	dots = dots[:n]
	n8 := n &^ 7
	mx, nan := float32(math.Inf(-1)), false
	if n8 > 0 {
		mx, nan = faLogitsAVX2(&sc[0], &dots[0], n8, scale)
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

// ScoresAVX2 is faBlockKernels.scores (twin: ScoresTwin).
func ScoresAVX2(q [3][]float32, k []byte, ks, nk int, out [3][]float32, pf bool) {
	n := len(q[0])
	if n == 0 || n%8 != 0 || nk <= 0 || nk%4 != 0 || ks < 0 || ks%2 != 0 {
		panic("ScoresAVX2: bad row length, key count or stride")
	}
	q0, q1, q2 := q[0][:n], q[1][:n], q[2][:n]
	kl := simd.U16s(k, 0, int64((nk-1)*ks/2+n)) // bounds: the last row's end
	o0, o1, o2 := out[0][:nk], out[1][:nk], out[2][:nk]
	faQK3x4AVX2(&q0[0], &q1[0], &q2[0], &kl[0], ks, nk/4, n, &o0[0], &o1[0], &o2[0], pf)
}

// ValuesAVX2 is faBlockKernels.values (twin: ValuesTwin).
func ValuesAVX2(acc, p [3][]float32, v []byte, vs, nk int) {
	n := len(acc[0])
	if n == 0 || n%8 != 0 || nk <= 0 || vs < 0 || vs%2 != 0 {
		panic("ValuesAVX2: bad row length, key count or stride")
	}
	a0, a1, a2 := acc[0][:n], acc[1][:n], acc[2][:n]
	p0, p1, p2 := p[0][:nk], p[1][:nk], p[2][:nk]
	vl := simd.U16s(v, 0, int64((nk-1)*vs/2+n)) // bounds: the last row's end
	faPV3AVX2(&a0[0], &a1[0], &a2[0], &p0[0], &p1[0], &p2[0], &vl[0], vs, nk, n)
}

// RoundF16AVX2 is faBlockKernels.roundF16 (twin: RoundF16Twin).
func RoundF16AVX2(dst, src []float32) {
	n := len(dst)
	if n%8 != 0 {
		panic("RoundF16AVX2: row length not a multiple of 8")
	}
	if n == 0 {
		return
	}
	src = src[:n]
	faRoundF16AVX2(&dst[0], &src[0], n)
}

// Scores4AVX2 is faBlockKernels.scores4 (twin: Scores4Twin).
func Scores4AVX2(q [4][]float32, k []byte, ks, nk int, out [4][]float32, pf bool) {
	n := len(q[0])
	if n == 0 || n%8 != 0 || nk <= 0 || nk%2 != 0 || ks < 0 || ks%2 != 0 {
		panic("Scores4AVX2: bad row length, key count or stride")
	}
	q0, q1, q2, q3 := q[0][:n], q[1][:n], q[2][:n], q[3][:n]
	kl := simd.U16s(k, 0, int64((nk-1)*ks/2+n)) // bounds: the last row's end
	o0, o1, o2, o3 := out[0][:nk], out[1][:nk], out[2][:nk], out[3][:nk]
	faQK4x2AVX2(&q0[0], &q1[0], &q2[0], &q3[0], &kl[0], ks, nk/2, n, &o0[0], &o1[0], &o2[0], &o3[0], pf)
}
