//go:build amd64 && !purego

package flashattn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
)

// faPVLengths are row lengths for the zmm value kernels: each chunk size
// (256, 128, 64, 16 and the last 8) alone and after the others.
var faPVLengths = []int{8, 16, 24, 32, 40, 56, 64, 72, 80, 96, 104, 120, 128, 136, 144, 192, 200, 248, 256, 264, 320, 384, 392, 456, 520}

// TestFAValuesAVX512 compares ValuesAVX512 and Values1AVX512 with their
// twins (and so with ValuesAVX2) bit for bit over row lengths, key
// counts, strides, and value rows and weights with zeros, Inf and NaN.
func TestFAValuesAVX512(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(91, 92))
	for _, n := range faPVLengths {
		for _, nk := range []int{1, 2, 3, 7, 33, 64} {
			for trial := range 3 {
				special := trial == 2
				vs := 2*n + 2*rng.IntN(5)
				v := make([]byte, (nk-1)*vs+2*n)
				for i := 0; i+1 < len(v); i += 2 {
					h := faRandHalf(rng, special)
					v[i], v[i+1] = byte(h), byte(h>>8)
				}
				var got, want, p [3][]float32
				for r := range 3 {
					got[r], want[r], p[r] = make([]float32, n), make([]float32, n), make([]float32, nk)
					for i := range got[r] {
						got[r][i] = 2*rng.Float32() - 1
						want[r][i] = got[r][i]
					}
					for i := range p[r] {
						p[r][i] = rng.Float32()
						if rng.IntN(8) == 0 {
							p[r][i] = 0
						}
						if special && rng.IntN(16) == 0 {
							p[r][i] = [3]float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}[rng.IntN(3)]
						}
					}
				}
				acc1 := append([]float32(nil), got[0]...)
				ValuesAVX512(got, p, v, vs, nk)
				ValuesTwin(want, p, v, vs, nk)
				want1 := append([]float32(nil), acc1...)
				Values1AVX512(acc1, p[0], v, vs, nk)
				Values1Twin(want1, p[0], v, vs, nk)
				for i := range n {
					if !faSameBits(acc1[i], want1[i]) || !faSameBits(acc1[i], want[0][i]) {
						t.Fatalf("n=%d nk=%d vs=%d trial %d: one-row acc[%d] = %v, twin %v, three-row %v", n, nk, vs, trial, i, acc1[i], want1[i], want[0][i])
					}
				}
				for r := range 3 {
					for i := range n {
						if !faSameBits(got[r][i], want[r][i]) {
							t.Fatalf("n=%d nk=%d vs=%d trial %d: acc[%d][%d] = %v, twin %v", n, nk, vs, trial, r, i, got[r][i], want[r][i])
						}
					}
				}
			}
		}
	}
}

// TestFAValuesF32AVX512 compares ValuesF32AVX512 and Values1F32AVX512
// with their twins bit for bit over row lengths, key counts, strides,
// and values and weights with Inf and NaN.
func TestFAValuesF32AVX512(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(93, 94))
	specials := [3]float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	for _, n := range faPVLengths {
		for _, nk := range []int{1, 3, 17, 64} {
			for trial := range 2 {
				special := trial == 1
				vs := n + rng.IntN(3)
				v := make([]float32, (nk-1)*vs+n)
				for i := range v {
					v[i] = 4*rng.Float32() - 2
					if special && rng.IntN(64) == 0 {
						v[i] = specials[rng.IntN(3)]
					}
				}
				var got, want, p [3][]float32
				for r := range 3 {
					got[r], want[r], p[r] = make([]float32, n), make([]float32, n), make([]float32, nk)
					for i := range got[r] {
						got[r][i] = rng.Float32()
						want[r][i] = got[r][i]
					}
					for i := range p[r] {
						p[r][i] = rng.Float32()
						if special && rng.IntN(16) == 0 {
							p[r][i] = specials[rng.IntN(3)]
						}
					}
				}
				one := append([]float32(nil), got[0]...)
				ValuesF32AVX512(got, p, v, vs, nk)
				ValuesF32Twin(want, p, v, vs, nk)
				oneTwin := append([]float32(nil), one...)
				Values1F32AVX512(one, p[0], v, vs, nk)
				Values1F32Twin(oneTwin, p[0], v, vs, nk)
				for r := range 3 {
					for i := range n {
						if !faSameBits(got[r][i], want[r][i]) || r == 0 && (!faSameBits(one[i], want[0][i]) || !faSameBits(one[i], oneTwin[i])) {
							t.Fatalf("n=%d nk=%d trial %d: acc[%d][%d] = %v, twin %v (one row %v, twin %v)", n, nk, trial, r, i, got[r][i], want[r][i], one[i], oneTwin[i])
						}
					}
				}
			}
		}
	}
}
