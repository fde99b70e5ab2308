//go:build amd64 && !purego

package flashattn

import (
	"math"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// The small-head kernels on AVX2+FMA+F16C (flashattn_small_amd64.s); the
// Go wrappers check the bounds the assembly relies on. Twins: small.go.

//go:noescape
func faKTAVX2(dst *float32, ts int, k *uint16, ks, ng, d int)

//go:noescape
func faScoresSmallAVX2(q *float32, d int, kt *float32, ts int, m *uint16, slope, scale float32, sc *float32, ng int, bits *uint64) (mx float32, nan bool)

//go:noescape
func faValuesSmallTAVX2(acc, p, vt *float32, ts, nk, n int, bits *uint64)

// KTAVX2 is KTTwin (d a positive multiple of 8, ks even and not
// negative): the assembly takes the keys in groups of 8, the twin the
// rest.
func KTAVX2(dst []float32, ts int, k []byte, ks, nk, d int) {
	if d <= 0 || d%8 != 0 || nk < 0 || ks < 0 || ks%2 != 0 || ts < nk {
		panic("KTAVX2: bad row length, key count or stride")
	}
	if nk == 0 {
		return
	}
	_ = dst[(d-1)*ts+nk-1]                      // bounds: the last element's place
	kl := simd.U16s(k, 0, int64((nk-1)*ks/2+d)) // bounds: the last row's end
	n8 := nk &^ 7
	if n8 > 0 {
		faKTAVX2(&dst[0], ts, &kl[0], ks, n8/8, d)
	}
	for t := n8; t < nk; t++ {
		row := kl[t*ks/2 : t*ks/2+d]
		for e, h := range row {
			dst[e*ts+t] = simd.HalfTable[h]
		}
	}
}

// ScoresSmallAVX2 is ScoresSmallTwin for a row length that is a positive
// multiple of 4: the assembly takes the keys in groups of 32, and the
// last keys as one more group where kt's rows have room for it (ts at
// least n rounded up to 32) and slope is positive (so that padding mask
// values of -Inf stay -Inf); otherwise the twin takes them.
func ScoresSmallAVX2(q, kt []float32, ts int, m []uint16, slope, scale float32, sc []float32, bits []uint64) float32 {
	return scoresSmallGroups(32, "ScoresSmallAVX2", q, kt, ts, m, slope, scale, sc, bits)
}

// scoresSmallKernel runs the small-head score kernel whose group is g
// keys: faScoresSmallAVX2 (32) or faScoresSmallAVX512 (64). It calls
// them directly, not through a function value, so that the pointers to
// scoresSmallGroups' stack arrays do not escape (the kernels are
// noescape; a call through a value would move those arrays to the heap on
// every call).
func scoresSmallKernel(g int, q *float32, d int, kt *float32, ts int, m *uint16, slope, scale float32, sc *float32, ng int, bits *uint64) (mx float32, nan bool) {
	if g == 64 {
		return faScoresSmallAVX512(q, d, kt, ts, m, slope, scale, sc, ng, bits)
	}
	return faScoresSmallAVX2(q, d, kt, ts, m, slope, scale, sc, ng, bits)
}

// scoresSmallGroups is ScoresSmallTwin with the kernel of group g
// (scoresSmallKernel: 32 or 64 keys) on the whole groups, the last keys as one more group
// where kt's rows have room for it and slope is positive, and the twin
// otherwise; name is the caller's, for its panic.
func scoresSmallGroups(g int, name string, q, kt []float32, ts int, m []uint16, slope, scale float32, sc []float32, bits []uint64) float32 {
	n, d := len(sc), len(q)
	if d == 0 || d%4 != 0 || ts < n {
		panic(name + ": bad row length or stride")
	}
	nw := (n + 63) / 64
	bits = bits[:nw]
	clear(bits)
	if n == 0 {
		return float32(math.Inf(-1))
	}
	_ = kt[(d-1)*ts+n-1] // bounds: the last key's last element
	m = m[:n]
	ng := n &^ (g - 1)
	mx, nan := float32(math.Inf(-1)), false
	if ng > 0 {
		mx, nan = scoresSmallKernel(g, &q[0], d, &kt[0], ts, &m[0], slope, scale, &sc[0], ng/g, &bits[0])
	}
	if r := n - ng; r > 0 && slope > 0 && ts >= ng+g {
		// The last keys as a group of g, the mask values past n -Inf
		// (keys scored from kt's padding, then dropped); their logits
		// and mask bits are dropped.
		var (
			mt [64]uint16
			st [64]float32
			tb uint64
		)
		copy(mt[:g], m[ng:])
		for i := r; i < g; i++ {
			mt[i] = 0xfc00
		}
		_ = kt[(d-1)*ts+ng+g-1]
		tmx, tnan := scoresSmallKernel(g, &q[0], d, &kt[ng], ts, &mt[0], slope, scale, &st[0], 1, &tb)
		copy(sc[ng:], st[:r])
		bits[ng/64] |= (tb & (1<<r - 1)) << (ng % 64)
		mx, nan = max(mx, tmx), nan || tnan
	} else if r > 0 {
		mx = max(mx, scoresSmallFrom(q, kt, ts, m, slope, scale, sc, bits, ng))
	}
	if nan {
		return float32(math.NaN())
	}
	return mx
}

// ValuesSmallTAVX2 is ValuesSmallTTwin (len(acc) a positive multiple of
// 8).
func ValuesSmallTAVX2(acc, p, vt []float32, ts, nk int, bits []uint64) {
	n, n8 := len(acc), (nk+7)&^7
	if n == 0 || n%8 != 0 || nk < 0 || ts < n8 {
		panic("ValuesSmallTAVX2: bad row length, key count or stride")
	}
	if nk == 0 {
		return
	}
	p = p[:n8]
	_ = vt[(n-1)*ts+n8-1] // bounds: the last element row's last group
	bits = bits[:(nk+63)/64]
	faValuesSmallTAVX2(&acc[0], &p[0], &vt[0], ts, nk, n, &bits[0])
}
