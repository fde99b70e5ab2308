//go:build amd64 && !purego

package flashattn

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
)

// faKern is a kernel of BenchmarkFAKernels512: its AVX2 and zmm calls.
type faKern struct {
	name      string
	avx2, zmm func()
}

// faBench is BenchmarkFAKernels512's data: an L1-resident tile of nk keys
// (f16 and float32 rows) with head size d, and four query rows.
type faBench struct {
	q, out, acc, p [4][]float32
	k              []byte
	vf             []float32
	d, nk          int
}

func newFABench(d, nk int) *faBench {
	rng := rand.New(rand.NewPCG(5, 6))
	b := &faBench{d: d, nk: nk, k: make([]byte, 2*d*nk), vf: make([]float32, d*nk)}
	for i := 0; i+1 < len(b.k); i += 2 {
		h := faRandHalf(rng, false)
		b.k[i], b.k[i+1] = byte(h), byte(h>>8)
	}
	for i := range b.vf {
		b.vf[i] = rng.Float32()
	}
	for r := range 4 {
		b.q[r], b.out[r], b.acc[r], b.p[r] = make([]float32, d), make([]float32, nk), make([]float32, d), make([]float32, nk)
		for i := range b.q[r] {
			b.q[r][i] = rng.Float32()
		}
		for i := range b.p[r] {
			b.p[r][i] = rng.Float32() * 1e-3
		}
	}
	return b
}

// BenchmarkFAKernels512 measures each block kernel that has a zmm version
// beside its AVX2 one (head sizes 64 and 128, a tile of 64 keys).
func BenchmarkFAKernels512(b *testing.B) {
	simdtest.NeedAVX512(b)
	for _, d := range []int{64, 128} {
		fb := newFABench(d, 64)
		q3 := [3][]float32{fb.q[0], fb.q[1], fb.q[2]}
		o3 := [3][]float32{fb.out[0], fb.out[1], fb.out[2]}
		a3 := [3][]float32{fb.acc[0], fb.acc[1], fb.acc[2]}
		p3 := [3][]float32{fb.p[0], fb.p[1], fb.p[2]}
		k, nk, ks := fb.k, fb.nk, 2*d
		kerns := []faKern{
			{"values", func() { ValuesAVX2(a3, p3, k, ks, nk) }, func() { ValuesAVX512(a3, p3, k, ks, nk) }},
			{"values1", func() { Values1AVX2(a3[0], p3[0], k, ks, nk) }, func() { Values1AVX512(a3[0], p3[0], k, ks, nk) }},
			{"valuesF32", func() { ValuesF32AVX2(a3, p3, fb.vf, d, nk) }, func() { ValuesF32AVX512(a3, p3, fb.vf, d, nk) }},
			{"values1F32", func() { Values1F32AVX2(a3[0], p3[0], fb.vf, d, nk) }, func() { Values1F32AVX512(a3[0], p3[0], fb.vf, d, nk) }},
		}
		kerns = append(kerns, faBench512Scores(fb, q3, o3)...)
		kerns = append(kerns, faBench512Softmax(fb)...)
		for _, kn := range kerns {
			for _, v := range []struct {
				tier string
				f    func()
			}{{"avx2", kn.avx2}, {"avx512", kn.zmm}} {
				if v.f == nil {
					continue
				}
				b.Run(fmt.Sprintf("%s/d=%d/%s", kn.name, d, v.tier), func(b *testing.B) {
					for b.Loop() {
						v.f()
					}
				})
			}
		}
	}
}

// faBench512Scores are the score kernels of BenchmarkFAKernels512.
func faBench512Scores(fb *faBench, q3, o3 [3][]float32) []faKern {
	k, nk, ks := fb.k, fb.nk, 2*fb.d
	return []faKern{
		{"scores", func() { ScoresAVX2(q3, k, ks, nk, o3, false) }, func() { ScoresAVX512(q3, k, ks, nk, o3, false) }},
		{"scores/pf", func() { ScoresAVX2(q3, k, ks, nk, o3, true) }, func() { ScoresAVX512(q3, k, ks, nk, o3, true) }},
		{"scores4", func() { Scores4AVX2(fb.q, k, ks, nk, fb.out, false) }, func() { Scores4AVX512(fb.q, k, ks, nk, fb.out, false) }},
		// No zmm version: one row's score is bound by widening its keys.
		{"scores1", func() { Scores1AVX2(q3[0], k, ks, nk-1, o3[0], false) }, nil},
	}
}

// BenchmarkFASmall512 measures the small-head scores and value sums, AVX2
// and zmm, on a tile of 256 keys (the block path's faSmallTile) at head
// sizes 8 and 16, without a mask.
func BenchmarkFASmall512(b *testing.B) {
	simdtest.NeedAVX512(b)
	const ts = 256
	rng := rand.New(rand.NewPCG(7, 8))
	for _, d := range []int{8, 16} {
		kt := make([]float32, d*ts)
		for i := range kt {
			kt[i] = 2*rng.Float32() - 1
		}
		q := make([]float32, d)
		for i := range q {
			q[i] = 2*rng.Float32() - 1
		}
		m, sc, bits := make([]uint16, ts), make([]float32, ts), make([]uint64, ts/64)
		for _, v := range []struct {
			tier string
			f    func(q, kt []float32, ts int, m []uint16, slope, scale float32, sc []float32, bits []uint64) float32
		}{{"avx2", ScoresSmallAVX2}, {"avx512", ScoresSmallAVX512}} {
			b.Run(fmt.Sprintf("scores/d=%d/%s", d, v.tier), func(b *testing.B) {
				for b.Loop() {
					v.f(q, kt, ts, m, 1, 0.125, sc, bits)
				}
			})
		}
		acc := make([]float32, d)
		clear(bits)
		for i := range sc {
			sc[i] = rng.Float32()
		}
		for _, v := range []struct {
			tier string
			f    func(acc, p, vt []float32, ts, nk int, bits []uint64)
		}{{"avx2", ValuesSmallTAVX2}, {"avx512", ValuesSmallTAVX512}} {
			b.Run(fmt.Sprintf("values/d=%d/%s", d, v.tier), func(b *testing.B) {
				for b.Loop() {
					v.f(acc, sc, kt, ts, ts, bits)
				}
			})
		}
	}
}

// faBench512Softmax are the mask, logits, query rounding, q8_0 value tile
// widening and q8_0 key scores kernels of BenchmarkFAKernels512 (a tile
// of nk keys).
func faBench512Softmax(fb *faBench) []faKern {
	rng := rand.New(rand.NewPCG(9, 10))
	nk, d := fb.nk, fb.d
	m := make([]uint16, nk)
	for i := range m {
		m[i] = uint16(rng.IntN(0x3c00))
	}
	sc, dots, qr := make([]float32, nk), make([]float32, nk), make([]float32, d)
	for i := range dots {
		dots[i] = rng.Float32()
	}
	q8 := faRandQ8(rng, nk*d/32, false, false)
	wide := make([]float32, nk*d)
	nb, ks8 := d/32, d/32*simd.BytesQ8_0
	var q8q [3][]byte
	var q8d, o3 [3][]float32
	for r := range 3 {
		q8q[r], q8d[r], o3[r] = faRandQ8(rng, nb, false, false), make([]float32, 8*nb), make([]float32, nk)
		for b := range nb {
			for l := range 8 {
				q8d[r][8*b+l] = simd.HalfAt(q8q[r], b*simd.BytesQ8_0)
			}
		}
	}
	return []faKern{
		{"maskF16", func() { MaskF16AVX2(sc, m, 1) }, func() { MaskF16AVX512(sc, m, 1) }},
		{"logits", func() { MaskF16AVX2(sc, m, 1); LogitsAVX2(sc, dots, 0.125) }, func() { MaskF16AVX512(sc, m, 1); LogitsAVX512(sc, dots, 0.125) }},
		{"roundF16", func() { RoundF16AVX2(qr, fb.q[0]) }, func() { RoundF16AVX512(qr, fb.q[0]) }},
		{"dequantQ8", func() { DequantQ8AVX2(wide, q8) }, func() { DequantQ8AVX512(wide, q8) }},
		{"scoresQ8", func() { ScoresQ8AVX2(q8q, q8d, q8, ks8, nk, o3) }, func() { ScoresQ8AVX512(q8q, q8d, q8, ks8, nk, o3) }},
		{"scores1Q8", func() { Scores1Q8AVX2(q8q[0], q8d[0], q8, ks8, nk, o3[0]) }, func() { Scores1Q8AVX512(q8q[0], q8d[0], q8, ks8, nk, o3[0]) }},
	}
}
