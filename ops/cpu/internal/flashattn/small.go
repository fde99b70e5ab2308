package flashattn

import (
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// The small-head kernels (head sizes up to 16; flashattn_small_amd64.s)
// put keys in lanes: a tile of f16 keys is widened and transposed once
// (KTTwin: element e of key t at kt[e*ts+t]) for all the query rows that
// take it, a query row scores eight keys per broadcast of each of its
// elements (ScoresSmallTwin: no horizontal sums), and the value rows,
// transposed once per tile as the keys are, are weighted by eight
// probabilities at a time (ValuesSmallTTwin: one FMA per element and
// eight keys, eight lane sums per element at the end of the tile). Each
// row is computed on its own, by the same operations whatever rows share
// the tile. The twins here are the kernels' float
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

// ValuesSmallTTwin adds to acc the value rows of the keys t < nk,
// transposed (element i of key t at vt[i*ts+t], as KTTwin lays out keys),
// weighted by p[t], with keys in lanes: element i has eight lane
// accumulators, lane l taking the keys t%8 == l by one FMA each, in
// groups of eight keys; in a group with a masked key (bit t of bits) or
// a key past nk, those keys' p and values are taken as zeros, and a
// group with every key masked or past nk is skipped. Then acc[i] +=
// ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)). p and the element rows of vt
// must hold nk rounded up to 8 keys (their values past nk are not used).
func ValuesSmallTTwin(acc, p, vt []float32, ts, nk int, bits []uint64) {
	for i := range acc {
		var lane [8]float32
		for t0 := 0; t0 < nk; t0 += 8 {
			var grp [8]bool
			all := true
			for l := range 8 {
				t := t0 + l
				grp[l] = t >= nk || bits[t/64]>>(t%64)&1 != 0
				all = all && grp[l]
			}
			if all {
				continue
			}
			for l := range 8 {
				pv, vv := float32(0), float32(0)
				if !grp[l] {
					pv, vv = p[t0+l], vt[i*ts+t0+l]
				}
				lane[l] = simd.FMA32(pv, vv, lane[l])
			}
		}
		acc[i] += ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]))
	}
}
