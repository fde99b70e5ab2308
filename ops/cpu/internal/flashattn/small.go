package flashattn

import (
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// The small-head kernels (head sizes up to 16; flashattn_small_amd64.s)
// put keys in lanes: a tile of f16 keys is widened and transposed once
// (KTTwin: element e of key t at kt[e*ts+t]) for all the query rows that
// take it, a query row scores eight keys per broadcast of each of its
// elements (ScoresSmallTwin: no horizontal sums), and the weighted value
// rows of up to 16 floats are added into four partial accumulators
// (ValuesSmallTwin), so that no chain of dependent FMAs runs through
// every key. Each row is computed on its own, by the same operations
// whatever rows share the tile. The twins here are the kernels' float
// operations in the same order, element by element.

// KTTwin sets dst[e*ts+t] to the f16 element e of key t (the key row at
// k[t*ks:], ks in bytes) widened, for e < d and t < nk.
func KTTwin(dst []float32, ts int, k []byte, ks, nk, d int) {
	for t := range nk {
		row := simd.U16s(k, int64(t*ks), int64(d))
		for e, h := range row {
			dst[e*ts+t] = simd.HalfTable[h]
		}
	}
}

// ScoresSmallTwin scores the len(sc) keys of a transposed tile kt (row
// stride ts) against the query row q (len(q) elements). For key t, mv =
// slope times the f16 mask value m[t]; where mv is -Inf the key is masked:
// sc[t] = -Inf and bit t of bits is set. Otherwise the dot product is one
// FMA chain over the elements in order, from zero (dot = fma(q[e],
// kt[e*ts+t], dot)), and sc[t] = Logit(dot, scale, 0, mv). bits (which
// must hold len(sc) bits) is cleared first. The result is the largest
// logit (-Inf when every key is masked, NaN when a logit is NaN).
func ScoresSmallTwin(q, kt []float32, ts int, m []uint16, slope, scale float32, sc []float32, bits []uint64) float32 {
	clear(bits[:(len(sc)+63)/64])
	return scoresSmallFrom(q, kt, ts, m, slope, scale, sc, bits, 0)
}

// scoresSmallFrom is ScoresSmallTwin for the keys from t0 on, bits not
// cleared; it returns the maximum of those keys' logits.
func scoresSmallFrom(q, kt []float32, ts int, m []uint16, slope, scale float32, sc []float32, bits []uint64, t0 int) float32 {
	mx := float32(math.Inf(-1))
	nan := false
	for t := t0; t < len(sc); t++ {
		mv := slope * simd.HalfTable[m[t]]
		if math.IsInf(float64(mv), -1) {
			sc[t] = mv
			bits[t/64] |= 1 << (t % 64)
			continue
		}
		var dot float32
		for e, qe := range q {
			dot = simd.FMA32(qe, kt[e*ts+t], dot)
		}
		sc[t] = Logit(dot, scale, 0, mv)
		nan = nan || sc[t] != sc[t]
		mx = max(mx, sc[t])
	}
	if nan {
		return float32(math.NaN())
	}
	return mx
}

// ValuesSmallTwin adds, for each key t < len(p) whose bit in bits is
// clear, p[t] times the f16 value row at v[t*vs:] (vs in bytes) to acc:
// element i of key t goes by one FMA into partial accumulator t%4 (the
// first starting from acc, the others from zero), and then acc =
// (P0+P1)+(P2+P3). len(acc) is 8 or 16 for the assembly.
func ValuesSmallTwin(acc, p []float32, v []byte, vs int, bits []uint64) {
	var part [4][16]float32
	n := len(acc)
	copy(part[0][:n], acc)
	for t := range p {
		if bits[t/64]>>(t%64)&1 != 0 {
			continue
		}
		row := simd.U16s(v, int64(t*vs), int64(n))
		for i, h := range row {
			part[t%4][i] = simd.FMA32(p[t], simd.HalfTable[h], part[t%4][i])
		}
	}
	for i := range acc {
		acc[i] = (part[0][i] + part[1][i]) + (part[2][i] + part[3][i])
	}
}
