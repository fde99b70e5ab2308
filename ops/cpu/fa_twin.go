package cpu

import (
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/vec"
	"github.com/kernbench/kernbench/quant"
)

// Go twins of FLASH_ATTN_EXT's block kernels (fa_amd64.s): the same float
// operations in the same order, element by element.

// faDotF16Twin is the block order of the f16 key scores: one 8-lane
// accumulator takes the runs of 8 elements of the f32 query row q and the
// f16 key row k in order (one FMA per lane), then hsum8. (dot2F16 keeps
// four accumulators over runs of 32; with one, the block kernels hold
// every accumulator of 3 rows x 4 keys in registers.) len(q) is a
// multiple of 8.
func faDotF16Twin(k []uint16, q []float32) float32 {
	var acc [8]float32
	for i := 0; i+8 <= len(q); i += 8 {
		for l := range acc {
			acc[l] = simd.FMA32(simd.HalfTable[k[i+l]], q[i+l], acc[l])
		}
	}
	return simd.Hsum8(&acc)
}

// faScoresTwin is the twin of faScoresAVX2: out[r][j] is the dot product
// of query row q[r] with the f16 key row at k[j*ks:] (j < nk) summed in
// the block order (faDotF16Twin), as the one-row kernel sums it too, so a
// row's scores do not depend on the rows it is grouped with.
func faScoresTwin(q [3][]float32, k []byte, ks, nk int, out [3][]float32, _ bool) {
	n := len(q[0])
	for j := range nk {
		kj := u16s(k, int64(j*ks), int64(n))
		for r := range 3 {
			out[r][j] = faDotF16Twin(kj, q[r][:n])
		}
	}
}

// faScores4Twin is the twin of faScores4AVX2: faScoresTwin for four
// rows.
func faScores4Twin(q [4][]float32, k []byte, ks, nk int, out [4][]float32, _ bool) {
	n := len(q[0])
	for j := range nk {
		kj := u16s(k, int64(j*ks), int64(n))
		for r := range 4 {
			out[r][j] = faDotF16Twin(kj, q[r][:n])
		}
	}
}

// faValuesTwin is the twin of faValuesAVX2: for each of the nk f16 value
// rows at v[t*vs:] in key order, acc[r] += p[r][t] * row as axpyF16 adds
// it (one FMA per element), for the three rows r.
func faValuesTwin(acc, p [3][]float32, v []byte, vs, nk int) {
	n := int64(len(acc[0]))
	for t := range nk {
		row := u16s(v, int64(t*vs), n)
		for r := range 3 {
			vec.AxpyF16Twin(acc[r][:n], row, p[r][t])
		}
	}
}

// faScores1Twin is the twin of faScores1AVX2: faScoresTwin for one row.
func faScores1Twin(q []float32, k []byte, ks, nk int, out []float32, _ bool) {
	n := len(q)
	for j := range nk {
		out[j] = faDotF16Twin(u16s(k, int64(j*ks), int64(n)), q)
	}
}

// faValues1Twin is the twin of faValues1AVX2: faValuesTwin for one row.
func faValues1Twin(acc, p []float32, v []byte, vs, nk int) {
	n := int64(len(acc))
	for t := range nk {
		vec.AxpyF16Twin(acc, u16s(v, int64(t*vs), n), p[t])
	}
}

// faScoresQ8Twin is the twin of faScoresQ8AVX2: out[r][j] is the q8_0 dot
// product of query row q[r] with the q8_0 key row at k[j*ks:] as
// dotQ8_0Q8_0AVX2 forms it (dot.Q8_0Twin); dq, the query scales
// widened, is not needed.
func faScoresQ8Twin(q [3][]byte, _ [3][]float32, k []byte, ks, nk int, out [3][]float32) {
	n := len(q[0]) / simd.BytesQ8_0 * 32
	for j := range nk {
		for r := range 3 {
			out[r][j] = dot.Q8_0Twin(n, k[j*ks:], q[r])
		}
	}
}

// faScores1Q8Twin is the twin of faScores1Q8AVX2: faScoresQ8Twin for one
// row.
func faScores1Q8Twin(q []byte, _ []float32, k []byte, ks, nk int, out []float32) {
	n := len(q) / simd.BytesQ8_0 * 32
	for j := range nk {
		out[j] = dot.Q8_0Twin(n, k[j*ks:], q)
	}
}

// faDequantQ8Twin is the twin of faDequantQ8VecAVX2: float32(code) * d
// per element.
func faDequantQ8Twin(dst []float32, src []byte) {
	for b := range len(dst) / 32 {
		blk := src[b*simd.BytesQ8_0:]
		d := simd.HalfAt(blk, 0)
		for j := range 32 {
			dst[b*32+j] = float32(int8(blk[2+j])) * d
		}
	}
}

// faValuesF32Twin is the twin of faValuesF32AVX2: for each of the nk
// float32 value rows at v[t*vs:] in key order, acc[r] += p[r][t] * row
// as axpy adds it, for r < 3.
func faValuesF32Twin(acc, p [3][]float32, v []float32, vs, nk int) {
	n := len(acc[0])
	for t := range nk {
		for r := range 3 {
			vec.AxpyTwin(acc[r][:n], v[t*vs:t*vs+n], p[r][t])
		}
	}
}

// faValues1F32Twin is the twin of faValues1F32AVX2: faValuesF32Twin for
// one row.
func faValues1F32Twin(acc, p []float32, v []float32, vs, nk int) {
	n := len(acc)
	for t := range nk {
		vec.AxpyTwin(acc, v[t*vs:t*vs+n], p[t])
	}
}

// faMaskF16Twin is the twin of faMaskF16VecAVX2: sc[t] = slope times the
// f16 mask value m[t], bit t of the result set where that is -Inf.
func faMaskF16Twin(sc []float32, m []uint16, slope float32) uint64 {
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

// faLogitsTwin is the twin of faLogitsVecAVX2: the logit of every key
// whose mask value sc[t] is not -Inf (faLogit without softcap), and the
// maximum of the logits as Go's max forms it (NaN when one is NaN; the
// sign of a zero maximum may differ from the assembly's, which no later
// step can tell apart).
func faLogitsTwin(sc, dots []float32, scale float32) float32 {
	mx := float32(math.Inf(-1))
	for t := range sc {
		if !math.IsInf(float64(sc[t]), -1) {
			sc[t] = faLogit(dots[t], scale, 0, sc[t])
			mx = max(mx, sc[t])
		}
	}
	return mx
}

// faRoundF16Twin is the twin of faRoundF16VecAVX2: each value rounded to
// binary16 by quant.FP32ToFP16 and widened back (a NaN stays a NaN; its
// payload may differ, which no later step can tell apart).
func faRoundF16Twin(dst, src []float32) {
	for i := range dst {
		dst[i] = simd.HalfTable[quant.FP32ToFP16(src[i])]
	}
}
