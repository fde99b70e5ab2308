//go:build amd64 && !purego

package flashattn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
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

// TestFAScoresAVX512 compares ScoresAVX512 and Scores4AVX512 with their
// twins (and so with the AVX2 kernels) bit for bit over row lengths that
// exercise the runs of 32, the runs of 8 past them and both, key counts
// that take the blocks of 8 keys and the groups of 4 (three rows) or the
// pairs (four rows) after them, padded and zero strides, with and without
// prefetching, and keys with Inf and NaN.
func TestFAScoresAVX512(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(95, 96))
	for _, n := range []int{8, 16, 24, 32, 40, 56, 64, 72, 96, 120, 128, 136, 192, 256, 264} {
		for trial := range 12 {
			special := trial >= 8
			nk := []int{64, 2, 4, 6, 8, 10, 12, 14}[trial%8] // the blocks and each tail
			if trial >= 8 {
				nk = 2 * (1 + rng.IntN(34))
			}
			nk3 := nk &^ 3
			ks := 2*n + 2*rng.IntN(4)
			if trial == 3 {
				ks = 0
			}
			var q [4][]float32
			for r := range q {
				q[r] = make([]float32, n)
				for i := range q[r] {
					q[r][i] = simd.HalfTable[faRandHalf(rng, false)]
				}
			}
			k := make([]byte, (nk-1)*ks+2*n)
			for i := 0; i+1 < len(k); i += 2 {
				h := faRandHalf(rng, special)
				k[i], k[i+1] = byte(h), byte(h>>8)
			}
			pf := trial%2 == 0
			var got4, want4 [4][]float32
			for r := range 4 {
				got4[r], want4[r] = make([]float32, nk), make([]float32, nk)
			}
			Scores4AVX512(q, k, ks, nk, got4, pf)
			Scores4Twin(q, k, ks, nk, want4, pf)
			for r := range 4 {
				for j := range nk {
					if !faSameBits(got4[r][j], want4[r][j]) {
						t.Fatalf("n=%d nk=%d trial %d: four-row score[%d][%d] = %v, twin %v", n, nk, trial, r, j, got4[r][j], want4[r][j])
					}
				}
			}
			if nk3 == 0 {
				continue
			}
			q3 := [3][]float32{q[0], q[1], q[2]}
			var got, want [3][]float32
			for r := range 3 {
				got[r], want[r] = make([]float32, nk3), make([]float32, nk3)
			}
			ScoresAVX512(q3, k, ks, nk3, got, pf)
			ScoresTwin(q3, k, ks, nk3, want, pf)
			for r := range 3 {
				for j := range nk3 {
					if !faSameBits(got[r][j], want[r][j]) {
						t.Fatalf("n=%d nk=%d trial %d: score[%d][%d] = %v, twin %v", n, nk3, trial, r, j, got[r][j], want[r][j])
					}
				}
			}
		}
	}
}

// TestFAScoresSmallAVX512 compares ScoresSmallAVX512 with ScoresSmallTwin
// (and ScoresSmallAVX2) bit for bit (logits, mask bits, maximum) over
// head sizes, key counts around the groups of 64 (the last keys taken as
// a group of 64 or by the twin),
// masks with whole groups masked, ALiBi slopes (and a zero slope) and
// Inf/NaN keys and queries.
func TestFAScoresSmallAVX512(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(97, 98))
	for _, d := range []int{8, 16, 4, 12, 32} {
		for _, n := range []int{1, 31, 32, 33, 63, 64, 65, 96, 100, 127, 128, 129, 192, 200, 255, 256} {
			for trial := range 12 {
				special := trial >= 9
				var ts int
				switch trial % 3 {
				case 0:
					ts = (n+63)&^63 + rng.IntN(3) // as a group of 64
				case 1:
					ts = (n+31)&^31 + rng.IntN(3) // as a group of 64 or by the twin
				default:
					ts = n + rng.IntN(5) // the last keys by the twin, if no group fits
				}
				kt := make([]float32, d*ts)
				for i := range kt {
					kt[i] = simd.HalfTable[faRandHalf(rng, special)]
				}
				q := make([]float32, d)
				for i := range q {
					q[i] = simd.HalfTable[faRandHalf(rng, special && trial == 11)]
				}
				m := make([]uint16, n)
				kind := trial % 4
				for i := range m {
					m[i] = faRandHalf(rng, false)
					if kind == 1 && i >= n/3 || kind == 2 && (i/64 == 1 || rng.IntN(4) == 0) || kind == 3 && i == n-1 {
						m[i] = 0xfc00
					}
				}
				slope := [4]float32{1, 0.5, 0.25, 1}[trial%4]
				if trial == 5 {
					slope = 0
				}
				scale := 0.35 * float32(1+trial)
				gsc, wsc, asc := make([]float32, n), make([]float32, n), make([]float32, n)
				gb, wb, ab := make([]uint64, 5), make([]uint64, 5), make([]uint64, 5)
				for i := range gb {
					gb[i], wb[i], ab[i] = ^uint64(0), 12345, 678 // cleared by each
				}
				gmx := ScoresSmallAVX512(q, kt, ts, m, slope, scale, gsc, gb)
				wmx := ScoresSmallTwin(q, kt, ts, m, slope, scale, wsc, wb)
				amx := ScoresSmallAVX2(q, kt, ts, m, slope, scale, asc, ab)
				where := fmt.Sprintf("d %d n %d ts %d trial %d", d, n, ts, trial)
				if gmx != wmx && !(gmx != gmx && wmx != wmx) || gmx != amx && !(gmx != gmx && amx != amx) {
					t.Fatalf("%s: max asm %g, twin %g, avx2 %g", where, gmx, wmx, amx)
				}
				for i := range (n + 63) / 64 {
					if gb[i] != wb[i] || gb[i] != ab[i] {
						t.Fatalf("%s: bits word %d: asm %#x, twin %#x, avx2 %#x", where, i, gb[i], wb[i], ab[i])
					}
				}
				for i := range n {
					if !faSameBits(gsc[i], wsc[i]) || !faSameBits(gsc[i], asc[i]) {
						t.Fatalf("%s: key %d: asm %g, twin %g, avx2 %g", where, i, gsc[i], wsc[i], asc[i])
					}
				}
			}
		}
	}
}

// TestFAValuesSmallTAVX512 compares ValuesSmallTAVX512 with
// ValuesSmallTTwin (and ValuesSmallTAVX2) bit for bit over value sizes 8
// to 40 (the passes of 16 and a last 8), key counts around the groups of
// 8, masks of every kind (none, all, causal, scattered) and padded
// strides; the masked keys' values and p, and those past nk, are NaN or
// Inf, which must not reach the accumulator.
func TestFAValuesSmallTAVX512(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(99, 100))
	nan := float32(math.NaN())
	for _, n := range []int{8, 16, 24, 32, 40} {
		for _, nk := range []int{1, 2, 3, 5, 7, 8, 9, 31, 43, 64, 65, 100, 130, 256} {
			for kind := range 4 {
				n8 := (nk + 7) &^ 7
				ts := n8 + 8*rng.IntN(2)
				bits := faRandMaskBits(rng, nk, kind)
				masked := func(t int) bool { return t >= nk || bits[t/64]>>(t%64)&1 != 0 }
				vt := make([]float32, n*ts)
				for i := range vt {
					vt[i] = 4*rng.Float32() - 2
					if masked(i % ts) {
						vt[i] = nan
					}
				}
				p := make([]float32, ts)
				for i := range p {
					p[i] = rng.Float32()
					if masked(i) {
						p[i] = float32(math.Inf(-1 + 2*(i%2)))
					}
				}
				got, want, avx2 := make([]float32, n), make([]float32, n), make([]float32, n)
				for i := range got {
					got[i] = 4*rng.Float32() - 2
					want[i], avx2[i] = got[i], got[i]
				}
				ValuesSmallTAVX512(got, p, vt, ts, nk, bits)
				ValuesSmallTTwin(want, p, vt, ts, nk, bits)
				ValuesSmallTAVX2(avx2, p, vt, ts, nk, bits)
				for i := range got {
					if !faSameBits(got[i], want[i]) || !faSameBits(got[i], avx2[i]) {
						t.Fatalf("n %d nk %d kind %d ts %d: element %d: asm %g, twin %g, avx2 %g", n, nk, kind, ts, i, got[i], want[i], avx2[i])
					}
				}
			}
		}
	}
}

// TestFAMaskLogitsAVX512 compares MaskF16AVX512 and LogitsAVX512 with
// their twins (and the AVX2 kernels) over tile lengths 1..64, mask values
// with -Inf runs (causal), scattered -Inf, NaN and +Inf, ALiBi slopes and
// dot products with +Inf; the logits' maximum must match too (NaN for
// NaN).
func TestFAMaskLogitsAVX512(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(101, 102))
	for n := 1; n <= 64; n++ {
		for trial := range 4 {
			m := make([]uint16, n)
			cut := rng.IntN(n + 1)
			for i := range m {
				switch {
				case trial == 0 && i >= cut, trial > 0 && rng.IntN(4) == 0:
					m[i] = 0xfc00 // -Inf
				case trial == 3 && rng.IntN(8) == 0:
					m[i] = [2]uint16{0x7e00, 0x7c00}[rng.IntN(2)] // NaN, +Inf
				default:
					m[i] = quant.FP32ToFP16(-2 * rng.Float32())
				}
			}
			slope := float32(1)
			if trial == 2 {
				slope = 0.0625
			}
			got, want, avx2 := make([]float32, n), make([]float32, n), make([]float32, n)
			gb, wb, ab := MaskF16AVX512(got, m, slope), MaskF16Twin(want, m, slope), MaskF16AVX2(avx2, m, slope)
			if gb != wb || gb != ab {
				t.Fatalf("n=%d trial %d: mask bits %x, twin %x, avx2 %x", n, trial, gb, wb, ab)
			}
			for i := range n {
				if !faSameBits(got[i], want[i]) || !faSameBits(got[i], avx2[i]) {
					t.Fatalf("n=%d trial %d: mask[%d] = %v, twin %v, avx2 %v", n, trial, i, got[i], want[i], avx2[i])
				}
			}
			dots := make([]float32, n)
			for i := range dots {
				dots[i] = 8*rng.Float32() - 4
				if trial == 3 && rng.IntN(16) == 0 {
					dots[i] = float32(math.Inf(1))
				}
			}
			gm, wm, am := LogitsAVX512(got, dots, 0.125), LogitsTwin(want, dots, 0.125), LogitsAVX2(avx2, dots, 0.125)
			if gm != wm && !(gm != gm && wm != wm) || gm != am && !(gm != gm && am != am) {
				t.Fatalf("n=%d trial %d: logits max %v, twin %v, avx2 %v", n, trial, gm, wm, am)
			}
			for i := range n {
				if !faSameBits(got[i], want[i]) || !faSameBits(got[i], avx2[i]) {
					t.Fatalf("n=%d trial %d: logit[%d] = %v, twin %v, avx2 %v", n, trial, i, got[i], want[i], avx2[i])
				}
			}
		}
	}
}

// TestFARoundF16AVX512 compares RoundF16AVX512 with its twin and
// RoundF16AVX2 over random values of every magnitude, halfway cases
// between binary16 neighbours (ties to even), binary16 subnormals and
// values past its range, zeros, Inf and NaN, at lengths that take the
// runs of 16 and a last 8.
func TestFARoundF16AVX512(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(103, 104))
	const n = 8 * 64
	src := make([]float32, n)
	for trial := range 30 {
		for i := range src {
			switch rng.IntN(6) {
			case 0:
				src[i] = math.Float32frombits(rng.Uint32())
			case 1:
				h := simd.HalfTable[faRandHalf(rng, false)]
				src[i] = math.Float32frombits(math.Float32bits(h) | 1<<12)
			case 2:
				src[i] = float32(rng.NormFloat64() * 1e-6)
			case 3:
				src[i] = float32(rng.NormFloat64() * 65520)
			case 4:
				src[i] = [...]float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 65504, 65519.996, 65520}[rng.IntN(8)]
			default:
				src[i] = float32(rng.NormFloat64())
			}
		}
		m := 8 * (trial%64 + 1)
		got, want, avx2 := make([]float32, m), make([]float32, m), make([]float32, m)
		RoundF16AVX512(got, src[:m])
		RoundF16Twin(want, src[:m])
		RoundF16AVX2(avx2, src[:m])
		for i := range got {
			if !faSameBits(got[i], want[i]) || math.Float32bits(got[i]) != math.Float32bits(avx2[i]) {
				t.Fatalf("%v (%#x): got %v, twin %v, avx2 %v", src[i], math.Float32bits(src[i]), got[i], want[i], avx2[i])
			}
		}
	}
}

// TestFADequantQ8AVX512 compares DequantQ8AVX512 with its twin,
// DequantQ8AVX2 and quant.DequantizeRow over block counts, scales with
// Inf and NaN, and codes with -128.
func TestFADequantQ8AVX512(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(105, 106))
	for _, nb := range []int{1, 2, 3, 4, 5, 8} {
		for trial := range 4 {
			n := 32 * nb
			src := faRandQ8(rng, nb, trial >= 2, true)
			got, want, avx2, deq := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
			DequantQ8AVX512(got, src)
			DequantQ8Twin(want, src)
			DequantQ8AVX2(avx2, src)
			if err := quant.DequantizeRow(quant.Q8_0, src, deq); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if !faSameBits(got[i], want[i]) || !faSameBits(got[i], avx2[i]) || !faSameBits(got[i], deq[i]) {
					t.Fatalf("nb=%d trial %d: widened[%d] = %v, twin %v, avx2 %v, DequantizeRow %v", nb, trial, i, got[i], want[i], avx2[i], deq[i])
				}
			}
		}
	}
}

// TestFAScoresQ8AVX512 compares ScoresQ8AVX512 with its twin, with
// ScoresQ8AVX2 and with the AVX2 q8_0 dot kernel bit for bit, and
// Scores1Q8AVX512 with its twin, over block counts (odd and even: the two
// block parities), key counts that take the groups of 4 (8 for one row)
// and a pair (4) after them, padded and zero strides, key
// codes with -128 and scales with Inf and NaN.
func TestFAScoresQ8AVX512(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(107, 108))
	for _, nb := range []int{1, 2, 3, 4, 5, 8} {
		n := 32 * nb
		for trial := range 10 {
			special := trial >= 6
			nk := []int{2, 4, 6, 8, 12, 64}[trial%6] // the groups and each tail
			if trial >= 6 {
				nk = 2 * (1 + rng.IntN(33))
			}
			ks := nb*simd.BytesQ8_0 + rng.IntN(5)
			if trial == 2 {
				ks = 0
			}
			k := faRandQ8(rng, (nk-1)*ks/simd.BytesQ8_0+nb+1, special, true)[:(nk-1)*ks+nb*simd.BytesQ8_0]
			var q [3][]byte
			var dq, got, want, avx2 [3][]float32
			for r := range 3 {
				q[r] = faRandQ8(rng, nb, false, false)
				dq[r] = make([]float32, 8*nb)
				for b := range nb {
					for l := range 8 {
						dq[r][8*b+l] = simd.HalfAt(q[r], b*simd.BytesQ8_0)
					}
				}
				got[r], want[r], avx2[r] = make([]float32, nk), make([]float32, nk), make([]float32, nk)
			}
			ScoresQ8AVX512(q, dq, k, ks, nk, got)
			// The one-row kernel on row 0, in groups of four keys.
			if nk1 := nk &^ 3; nk1 > 0 {
				got1, want1 := make([]float32, nk1), make([]float32, nk1)
				Scores1Q8AVX512(q[0], dq[0], k, ks, nk1, got1)
				Scores1Q8Twin(q[0], dq[0], k, ks, nk1, want1)
				for j := range nk1 {
					if !faSameBits(got1[j], want1[j]) {
						t.Fatalf("nb=%d nk=%d trial %d: one-row score[%d] = %v, twin %v", nb, nk1, trial, j, got1[j], want1[j])
					}
				}
			}
			ScoresQ8Twin(q, dq, k, ks, nk, want)
			ScoresQ8AVX2(q, dq, k, ks, nk, avx2)
			for r := range 3 {
				for j := range nk {
					d := dot.Q8_0AVX2(n, k[j*ks:j*ks+nb*simd.BytesQ8_0], q[r])
					if !faSameBits(got[r][j], want[r][j]) || !faSameBits(got[r][j], avx2[r][j]) || !faSameBits(got[r][j], d) {
						t.Fatalf("nb=%d nk=%d trial %d: score[%d][%d] = %v, twin %v, avx2 %v, dot %v", nb, nk, trial, r, j, got[r][j], want[r][j], avx2[r][j], d)
					}
				}
			}
		}
	}
}
