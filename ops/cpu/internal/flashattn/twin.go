package flashattn

import (
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/vec"
	"github.com/kernbench/kernbench/quant"
)

// Go twins of FLASH_ATTN_EXT's block kernels (flashattn_*_amd64.s): the
// same float operations in the same order, element by element.

// DotF16Twin is the block order of the f16 key scores: one 8-lane
// accumulator takes the runs of 8 elements of the f32 query row q and the
// f16 key row k in order (one FMA per lane), then hsum8. (dot2F16 keeps
// four accumulators over runs of 32; with one, the block kernels hold
// every accumulator of 3 rows x 4 keys in registers.) len(q) is a
// multiple of 8.
func DotF16Twin(k []uint16, q []float32) float32 {
	var acc [8]float32
	for i := 0; i+8 <= len(q); i += 8 {
		for l := range acc {
			acc[l] = simd.FMA32(simd.HalfTable[k[i+l]], q[i+l], acc[l])
		}
	}
	return simd.Hsum8(&acc)
}

// ScoresTwin is the twin of ScoresAVX2: out[r][j] is the dot product
// of query row q[r] with the f16 key row at k[j*ks:] (j < nk) summed in
// the block order (DotF16Twin), as the one-row kernel sums it too, so a
// row's scores do not depend on the rows it is grouped with.
func ScoresTwin(q [3][]float32, k []byte, ks, nk int, out [3][]float32, _ bool) {
	n := len(q[0])
	for j := range nk {
		kj := simd.U16s(k, int64(j*ks), int64(n))
		for r := range 3 {
			out[r][j] = DotF16Twin(kj, q[r][:n])
		}
	}
}

// Scores4Twin is the twin of Scores4AVX2: ScoresTwin for four
// rows.
func Scores4Twin(q [4][]float32, k []byte, ks, nk int, out [4][]float32, _ bool) {
	n := len(q[0])
	for j := range nk {
		kj := simd.U16s(k, int64(j*ks), int64(n))
		for r := range 4 {
			out[r][j] = DotF16Twin(kj, q[r][:n])
		}
	}
}

// ValuesTwin is the twin of ValuesAVX2: for each of the nk f16 value
// rows at v[t*vs:] in key order, acc[r] += p[r][t] * row as axpyF16 adds
// it (one FMA per element), for the three rows r.
func ValuesTwin(acc, p [3][]float32, v []byte, vs, nk int) {
	n := int64(len(acc[0]))
	for t := range nk {
		row := simd.U16s(v, int64(t*vs), n)
		for r := range 3 {
			vec.AxpyF16Twin(acc[r][:n], row, p[r][t])
		}
	}
}

// Scores1Twin is the twin of Scores1AVX2: ScoresTwin for one row.
func Scores1Twin(q []float32, k []byte, ks, nk int, out []float32, _ bool) {
	n := len(q)
	for j := range nk {
		out[j] = DotF16Twin(simd.U16s(k, int64(j*ks), int64(n)), q)
	}
}

// Values1Twin is the twin of Values1AVX2: ValuesTwin for one row.
func Values1Twin(acc, p []float32, v []byte, vs, nk int) {
	n := int64(len(acc))
	for t := range nk {
		vec.AxpyF16Twin(acc, simd.U16s(v, int64(t*vs), n), p[t])
	}
}

// ScoresQ8Twin is the twin of ScoresQ8AVX2: out[r][j] is the q8_0 dot
// product of query row q[r] with the q8_0 key row at k[j*ks:] as
// dotQ8_0Q8_0AVX2 forms it (dot.Q8_0Twin); dq, the query scales
// widened, is not needed.
func ScoresQ8Twin(q [3][]byte, _ [3][]float32, k []byte, ks, nk int, out [3][]float32) {
	n := len(q[0]) / simd.BytesQ8_0 * 32
	for j := range nk {
		for r := range 3 {
			out[r][j] = dot.Q8_0Twin(n, k[j*ks:], q[r])
		}
	}
}

// Scores1Q8Twin is the twin of Scores1Q8AVX2: ScoresQ8Twin for one
// row.
func Scores1Q8Twin(q []byte, _ []float32, k []byte, ks, nk int, out []float32) {
	n := len(q) / simd.BytesQ8_0 * 32
	for j := range nk {
		out[j] = dot.Q8_0Twin(n, k[j*ks:], q)
	}
}

// DequantQ8Twin is the twin of DequantQ8AVX2: float32(code) * d
// per element.
func DequantQ8Twin(dst []float32, src []byte) {
	for b := range len(dst) / 32 {
		blk := src[b*simd.BytesQ8_0:]
		d := simd.HalfAt(blk, 0)
		for j := range 32 {
			dst[b*32+j] = float32(int8(blk[2+j])) * d
		}
	}
}

// ValuesF32Twin is the twin of ValuesF32AVX2: for each of the nk
// float32 value rows at v[t*vs:] in key order, acc[r] += p[r][t] * row
// as axpy adds it, for r < 3.
func ValuesF32Twin(acc, p [3][]float32, v []float32, vs, nk int) {
	n := len(acc[0])
	for t := range nk {
		for r := range 3 {
			vec.AxpyTwin(acc[r][:n], v[t*vs:t*vs+n], p[r][t])
		}
	}
}

// Values1F32Twin is the twin of Values1F32AVX2: ValuesF32Twin for
// one row.
func Values1F32Twin(acc, p []float32, v []float32, vs, nk int) {
	n := len(acc)
	for t := range nk {
		vec.AxpyTwin(acc, v[t*vs:t*vs+n], p[t])
	}
}

// MaskF16Twin is the twin of MaskF16AVX2: sc[t] = slope times the
// f16 mask value m[t], bit t of the result set where that is -Inf.
func MaskF16Twin(sc []float32, m []uint16, slope float32) uint64 {
	var bits uint64
	for t := range sc {
		mv := slope * simd.HalfTable[m[t]]
		sc[t] = mv
		if math.IsInf(float64(mv), -1) {
			bits |= 1 << t
		}
	}
	return bits
}

// LogitsTwin is the twin of LogitsAVX2: the logit of every key
// whose mask value sc[t] is not -Inf (Logit without softcap), and the
// maximum of the logits as Go's max forms it (NaN when one is NaN; the
// sign of a zero maximum may differ from the assembly's, which no later
// step can tell apart).
func LogitsTwin(sc, dots []float32, scale float32) float32 {
	mx := float32(math.Inf(-1))
	for t := range sc {
		if !math.IsInf(float64(sc[t]), -1) {
			sc[t] = Logit(dots[t], scale, 0, sc[t])
			mx = max(mx, sc[t])
		}
	}
	return mx
}

// RoundF16Twin is the twin of RoundF16AVX2: each value rounded to
// binary16 by quant.FP32ToFP16 and widened back (a NaN stays a NaN; its
// payload may differ, which no later step can tell apart).
func RoundF16Twin(dst, src []float32) {
	for i := range dst {
		dst[i] = simd.HalfTable[quant.FP32ToFP16(src[i])]
	}
}

// Logit returns the logit of a key whose dot product with the query is
// dot and whose slope-scaled mask value is mv.
//
// The product is rounded on its own (no fused multiply-add), as the
// block kernels' vector form of it rounds it.
func Logit(dot, scale, softcap, mv float32) float32 {
	s := float32(dot * scale)
	if softcap != 0 {
		s = softcap * float32(math.Tanh(float64(s)))
	}
	return s + mv
}
