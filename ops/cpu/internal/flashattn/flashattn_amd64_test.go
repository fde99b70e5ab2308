//go:build amd64 && !purego

package flashattn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// faSameBits reports whether a and b are the same float32, any NaN
// matching any NaN.
func faSameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// faRandHalf returns a random binary16 value: mostly normal values in
// (-2, 2), now and then (one in 64 with special) an Inf or NaN.
func faRandHalf(rng *rand.Rand, special bool) uint16 {
	if special && rng.IntN(64) == 0 {
		return [3]uint16{0x7c00, 0xfc00, 0x7e00}[rng.IntN(3)]
	}
	return quant.FP32ToFP16(4*rng.Float32() - 2)
}

// TestFAScoresAVX2 compares ScoresAVX2 and Scores1AVX2 with their
// twins bit for bit over row lengths that exercise the runs of 32, the
// runs of 8 past them and both, one to several groups of keys (the
// one-row kernel's blocks of 12 keys and groups of 3 left over), padded
// and zero strides (a key repeated, as a tile of under four keys passes
// it), with and without Inf/NaN keys; the one-row kernel must score a key
// as the three-row kernel does, and (finite keys) each score must be
// within float32 rounding of the float64 dot product.
func TestFAScoresAVX2(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(61, 62))
	for _, n := range []int{8, 16, 24, 32, 40, 56, 64, 72, 96, 120, 128, 136, 256, 264} {
		for trial := range 6 {
			special := trial >= 4
			nk := 4 * (1 + rng.IntN(12))
			ks := 2*n + 2*rng.IntN(4)
			if trial == 3 {
				ks = 0
			}
			var q [3][]float32
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
			var got, want [3][]float32
			for r := range 3 {
				got[r], want[r] = make([]float32, nk), make([]float32, nk)
			}
			pf := trial%2 == 0 // with and without prefetching
			ScoresAVX2(q, k, ks, nk, got, pf)
			ScoresTwin(q, k, ks, nk, want, pf)
			// The one-row kernel on row 0, in groups of three keys.
			nk1 := nk / 4 * 3
			got1, want1 := make([]float32, nk1), make([]float32, nk1)
			Scores1AVX2(q[0], k, ks, nk1, got1, pf)
			Scores1Twin(q[0], k, ks, nk1, want1, pf)
			// The four-row kernel: rows 0..2 and row 0 again.
			q4 := [4][]float32{q[0], q[1], q[2], q[0]}
			var got4, want4 [4][]float32
			for r := range 4 {
				got4[r], want4[r] = make([]float32, nk), make([]float32, nk)
			}
			Scores4AVX2(q4, k, ks, nk, got4, pf)
			Scores4Twin(q4, k, ks, nk, want4, pf)
			for r := range 4 {
				for j := range nk {
					if !faSameBits(got4[r][j], want4[r][j]) || !faSameBits(got4[r][j], want[r%3][j]) {
						t.Fatalf("n=%d trial %d: four-row score[%d][%d] = %v, twin %v, three-row %v", n, trial, r, j, got4[r][j], want4[r][j], want[r%3][j])
					}
				}
			}
			for j := range nk1 {
				if !faSameBits(got1[j], want1[j]) || !faSameBits(got1[j], want[0][j]) {
					t.Fatalf("n=%d trial %d: one-row score[%d] = %v, twin %v, three-row %v", n, trial, j, got1[j], want1[j], want[0][j])
				}
			}
			for r := range 3 {
				for j := range nk {
					if !faSameBits(got[r][j], want[r][j]) {
						t.Fatalf("n=%d trial %d: score[%d][%d] = %v, twin %v", n, trial, r, j, got[r][j], want[r][j])
					}
					if special {
						continue
					}
					// Within float32 rounding of the exact dot product.
					kj := simd.U16s(k, int64(j*ks), int64(n))
					var exact, mag float64
					for i := range n {
						p := float64(simd.HalfTable[kj[i]]) * float64(q[r][i])
						exact += p
						mag += math.Abs(p)
					}
					if e := math.Abs(float64(got[r][j]) - exact); e > float64(n)*0x1p-23*mag+1e-30 {
						t.Fatalf("n=%d trial %d: score[%d][%d] = %v, exact %v", n, trial, r, j, got[r][j], exact)
					}
				}
			}
		}
	}
}

// TestFAValuesAVX2 compares ValuesAVX2 with its twin bit for bit over
// row lengths (chunks of 32 and of 8), key counts, strides, and weights
// with zeros, Inf and NaN.
func TestFAValuesAVX2(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(63, 64))
	for _, n := range []int{8, 16, 24, 32, 40, 64, 96, 104, 128, 136, 192, 264} {
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
							p[r][i] = float32(math.Inf(1))
						}
					}
				}
				acc1 := append([]float32(nil), got[0]...)
				ValuesAVX2(got, p, v, vs, nk)
				ValuesTwin(want, p, v, vs, nk)
				// The one-row kernel on row 0.
				want1 := append([]float32(nil), acc1...)
				Values1AVX2(acc1, p[0], v, vs, nk)
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

// faRandQ8 returns nb random q8_0 blocks: scales in (0, 1) (now and
// then an Inf or NaN with special), codes in [-127, 127] and, in keys
// (extreme), now and then -128.
func faRandQ8(rng *rand.Rand, nb int, special, extreme bool) []byte {
	b := make([]byte, nb*simd.BytesQ8_0)
	for i := range nb {
		h := quant.FP32ToFP16(rng.Float32())
		if special && rng.IntN(16) == 0 {
			h = [2]uint16{0x7c00, 0x7e00}[rng.IntN(2)]
		}
		b[i*simd.BytesQ8_0], b[i*simd.BytesQ8_0+1] = byte(h), byte(h>>8)
		for j := range 32 {
			c := int8(rng.IntN(255) - 127)
			if extreme && rng.IntN(32) == 0 {
				c = -128
			}
			b[i*simd.BytesQ8_0+2+j] = byte(c)
		}
	}
	return b
}

// TestFAQ8KernelsAVX2 compares the q8_0 block kernels with their twins
// bit for bit: the scores (also against the tier's q8_0 dot kernel, the
// one-row path), the widening (also against quant.DequantizeRow), and
// the float32 value kernels.
func TestFAQ8KernelsAVX2(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(73, 74))
	dot := dot.Q8_0AVX2
	for _, nb := range []int{1, 2, 3, 4, 5, 8} {
		n := 32 * nb
		for trial := range 4 {
			special := trial == 3
			nk := 2 * (1 + rng.IntN(5))
			ks := nb*simd.BytesQ8_0 + rng.IntN(5)
			if trial == 2 {
				ks = 0
			}
			k := faRandQ8(rng, (nk-1)*ks/simd.BytesQ8_0+nb+1, special, true)[:(nk-1)*ks+nb*simd.BytesQ8_0]
			var q [3][]byte
			var dq, got, want [3][]float32
			for r := range 3 {
				q[r] = faRandQ8(rng, nb, false, false)
				dq[r] = make([]float32, 8*nb)
				for b := range nb {
					for l := range 8 {
						dq[r][8*b+l] = simd.HalfAt(q[r], b*simd.BytesQ8_0)
					}
				}
				got[r], want[r] = make([]float32, nk), make([]float32, nk)
			}
			ScoresQ8AVX2(q, dq, k, ks, nk, got)
			ScoresQ8Twin(q, dq, k, ks, nk, want)
			// The one-row kernel on row 0, in groups of four keys.
			nk1 := nk / 4 * 4
			if nk1 > 0 {
				got1, want1 := make([]float32, nk1), make([]float32, nk1)
				Scores1Q8AVX2(q[0], dq[0], k, ks, nk1, got1)
				Scores1Q8Twin(q[0], dq[0], k, ks, nk1, want1)
				for j := range nk1 {
					if !faSameBits(got1[j], want1[j]) || !faSameBits(got1[j], want[0][j]) {
						t.Fatalf("nb=%d trial %d: one-row score[%d] = %v, twin %v, three-row %v", nb, trial, j, got1[j], want1[j], want[0][j])
					}
				}
			}
			for r := range 3 {
				for j := range nk {
					d := dot(n, k[j*ks:j*ks+nb*simd.BytesQ8_0], q[r])
					if !faSameBits(got[r][j], want[r][j]) || !faSameBits(got[r][j], d) {
						t.Fatalf("nb=%d trial %d: score[%d][%d] = %v, twin %v, dot %v", nb, trial, r, j, got[r][j], want[r][j], d)
					}
				}
			}
			// Widening.
			src := faRandQ8(rng, nb, special, true)
			gw, ww, dw := make([]float32, n), make([]float32, n), make([]float32, n)
			DequantQ8AVX2(gw, src)
			DequantQ8Twin(ww, src)
			if err := quant.DequantizeRow(quant.Q8_0, src, dw); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if !faSameBits(gw[i], ww[i]) || !faSameBits(gw[i], dw[i]) {
					t.Fatalf("nb=%d trial %d: widened[%d] = %v, twin %v, DequantizeRow %v", nb, trial, i, gw[i], ww[i], dw[i])
				}
			}
		}
	}
	for _, n := range []int{8, 24, 32, 40, 64, 96, 128, 136, 256, 264} {
		for _, nk := range []int{1, 3, 17, 64} {
			vs := n + rng.IntN(3)
			v := make([]float32, (nk-1)*vs+n)
			for i := range v {
				v[i] = 4*rng.Float32() - 2
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
				}
			}
			one := append([]float32(nil), got[0]...)
			ValuesF32AVX2(got, p, v, vs, nk)
			ValuesF32Twin(want, p, v, vs, nk)
			oneTwin := append([]float32(nil), one...)
			Values1F32AVX2(one, p[0], v, vs, nk)
			Values1F32Twin(oneTwin, p[0], v, vs, nk)
			for r := range 3 {
				for i := range n {
					if !faSameBits(got[r][i], want[r][i]) || r == 0 && (!faSameBits(one[i], want[0][i]) || !faSameBits(one[i], oneTwin[i])) {
						t.Fatalf("n=%d nk=%d: acc[%d][%d] = %v, twin %v (one row %v, twin %v)", n, nk, r, i, got[r][i], want[r][i], one[i], oneTwin[i])
					}
				}
			}
		}
	}
}

// TestFAMaskLogitsAVX2 compares MaskF16AVX2 and LogitsAVX2
// with their twins over tile lengths 1..64, mask values with -Inf runs
// (causal), scattered -Inf, NaN and +Inf, and ALiBi slopes; the logits'
// maximum must match too (NaN for NaN).
func TestFAMaskLogitsAVX2(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(69, 70))
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
			got, want := make([]float32, n), make([]float32, n)
			gb, wb := MaskF16AVX2(got, m, slope), MaskF16Twin(want, m, slope)
			if gb != wb {
				t.Fatalf("n=%d trial %d: mask bits %x, twin %x", n, trial, gb, wb)
			}
			dots := make([]float32, n)
			for i := range dots {
				dots[i] = 8*rng.Float32() - 4
				if trial == 3 && rng.IntN(16) == 0 {
					dots[i] = float32(math.Inf(1))
				}
			}
			for i := range n {
				if !faSameBits(got[i], want[i]) {
					t.Fatalf("n=%d trial %d: mask[%d] = %v, twin %v", n, trial, i, got[i], want[i])
				}
			}
			gm, wm := LogitsAVX2(got, dots, 0.125), LogitsTwin(want, dots, 0.125)
			if gm != wm && !(gm != gm && wm != wm) {
				t.Fatalf("n=%d trial %d: logits max %v, twin %v", n, trial, gm, wm)
			}
			for i := range n {
				if !faSameBits(got[i], want[i]) {
					t.Fatalf("n=%d trial %d: logit[%d] = %v, twin %v", n, trial, i, got[i], want[i])
				}
			}
		}
	}
}

// TestFARoundF16AVX2 compares RoundF16AVX2 with its twin (and so
// with quant.FP32ToFP16) over random values of every magnitude, halfway
// cases between binary16 neighbours (ties to even), binary16 subnormals
// and values past its range, zeros, Inf and NaN.
func TestFARoundF16AVX2(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(81, 82))
	const n = 8 * 64
	src := make([]float32, n)
	for trial := range 20 {
		for i := range src {
			switch rng.IntN(6) {
			case 0: // any bits
				src[i] = math.Float32frombits(rng.Uint32())
			case 1: // a halfway case: a binary16 value plus half an ulp
				h := simd.HalfTable[faRandHalf(rng, false)]
				src[i] = math.Float32frombits(math.Float32bits(h) | 1<<12)
			case 2: // around the binary16 subnormals
				src[i] = float32(rng.NormFloat64() * 1e-6)
			case 3: // around the largest binary16 values
				src[i] = float32(rng.NormFloat64() * 65520)
			case 4:
				src[i] = [...]float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 65504, 65519.996, 65520}[rng.IntN(8)]
			default:
				src[i] = float32(rng.NormFloat64())
			}
		}
		m := 8 * (trial%64 + 1)
		got, want := make([]float32, m), make([]float32, m)
		RoundF16AVX2(got, src[:m])
		RoundF16Twin(want, src[:m])
		for i := range got {
			if !faSameBits(got[i], want[i]) {
				t.Fatalf("%v (%#x): got %v, twin %v", src[i], math.Float32bits(src[i]), got[i], want[i])
			}
		}
	}
}
