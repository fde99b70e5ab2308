//go:build amd64 && !purego

package vec

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// vecKinds names the row kernels checkVecTwin compares with their twins.
var vecKinds = []string{"expSum", "smPrepMask", "smPrep", "mulTo", "sumSq", "axpy", "axpyF16", "axpy4", "axpy4F16", "axpyQ8_0", "dot2F16", "f16ToF32"}

func sameFloat64(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b
}

func sameFloats(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if !simdtest.SameFloat(got[i], want[i]) {
			t.Fatalf("%s n=%d: element %d: asm %g (%#x), twin %g (%#x)", what, len(want), i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// checkVecTwin runs row kernel kind (an index into vecKinds) of the AVX2
// tier and its twin on copies of the same inputs and requires equal bits.
// a and b are the float rows (b is the mask, accumulator or output), h the
// binary16 row; all have the same length.
func checkVecTwin(t *testing.T, kind int, a, b []float32, h []uint16, s1, s2 float32) {
	t.Helper()
	n := len(a)
	name := vecKinds[kind]
	// Copies at the callers' offsets: the slices may be misaligned.
	ga, wa := append([]float32(nil), a...), append([]float32(nil), a...)
	gb, wb := append([]float32(nil), b...), append([]float32(nil), b...)
	switch name {
	case "expSum":
		g, w := ExpSumAVX2(ga, s1), ExpSumTwin(wa, s1)
		sameFloats(t, name, ga, wa)
		if !sameFloat64(g, w) {
			t.Fatalf("%s n=%d mx=%g: sum asm %g, twin %g", name, n, s1, g, w)
		}
	case "smPrepMask", "smPrep":
		var m []float32
		if name == "smPrepMask" {
			m = a[len(a)/3:]
			m = append(m, a[:len(a)/3]...)
		}
		g, w := SMPrepAVX2(gb, a, m, s1, s2), SMPrepTwin(wb, a, m, s1, s2)
		sameFloats(t, name, gb, wb)
		if !simdtest.SameFloat(g, w) {
			t.Fatalf("%s n=%d: max asm %g, twin %g", name, n, g, w)
		}
	case "mulTo":
		MulToAVX2(gb, a, s1)
		MulToTwin(wb, a, s1)
		sameFloats(t, name, gb, wb)
		MulToAVX2(ga, ga, s1) // in place
		sameFloats(t, name+" in place", ga, wb)
	case "sumSq":
		if g, w := SumSqAVX2(a), SumSqTwin(a); !sameFloat64(g, w) {
			t.Fatalf("%s n=%d: asm %g, twin %g", name, n, g, w)
		}
	case "axpy":
		AxpyAVX2(gb, a, s1)
		AxpyTwin(wb, a, s1)
		sameFloats(t, name, gb, wb)
	case "axpyF16":
		AxpyF16AVX2(gb, h, s1)
		AxpyF16Twin(wb, h, s1)
		sameFloats(t, name, gb, wb)
	case "axpy4", "axpy4F16":
		// Four rows: a, b's copy, and rotations of a; h and its rotations.
		rot := func(x []float32, k int) []float32 {
			if n == 0 {
				return x
			}
			k %= n
			return append(append([]float32(nil), x[k:]...), x[:k]...)
		}
		roth := func(x []uint16, k int) []uint16 {
			if n == 0 {
				return x
			}
			k %= n
			return append(append([]uint16(nil), x[k:]...), x[:k]...)
		}
		s3, s4 := s1*s2, -s2
		if name == "axpy4" {
			x1, x2, x3 := append([]float32(nil), b...), rot(a, 5), rot(a, 11)
			Axpy4AVX2(gb, a, x1, x2, x3, s1, s2, s3, s4)
			Axpy4Twin(wb, a, x1, x2, x3, s1, s2, s3, s4)
		} else {
			x1, x2, x3 := roth(h, 3), roth(h, 7), roth(h, 13)
			Axpy4F16AVX2(gb, h, x1, x2, x3, s1, s2, s3, s4)
			Axpy4F16Twin(wb, h, x1, x2, x3, s1, s2, s3, s4)
		}
		sameFloats(t, name, gb, wb)
	case "axpyQ8_0":
		// A q8_0 row from h's bytes over the whole blocks of b.
		n32 := n &^ 31
		row := make([]byte, 2*n)
		for i, v := range h {
			binary.LittleEndian.PutUint16(row[2*i:], v)
		}
		AxpyQ8_0AVX2(gb[:n32], row, s1)
		AxpyQ8_0Twin(wb[:n32], row, s1)
		sameFloats(t, name, gb, wb)
		// The generic kernel agrees with dequantization then axpy.
		want := append([]float32(nil), b[:n32]...)
		if n32 > 0 {
			tmp := make([]float32, n32)
			if err := quant.DequantizeRow(quant.Q8_0, row[:34*(n32/32)], tmp); err != nil {
				t.Fatal(err)
			}
			Axpy(want, tmp, s1)
		}
		got := append([]float32(nil), b[:n32]...)
		AxpyQ8_0(got, row, s1)
		sameFloats(t, name+" generic", got, want)
	case "dot2F16":
		k1 := make([]uint16, n)
		qh := make([]uint16, n)
		q := make([]float32, n)
		for i := range n {
			k1[i] = h[(i+3)%n]
			qh[i] = h[(i+7)%n] ^ uint16(i)
			q[i] = simd.HalfTable[qh[i]]
		}
		g0, g1 := Dot2F16AVX2(h, k1, q)
		w0, w1 := Dot2F16Twin(h, k1, q)
		if !simdtest.SameFloat(g0, w0) || !simdtest.SameFloat(g1, w1) {
			t.Fatalf("%s n=%d: asm %g %g, twin %g %g", name, n, g0, g1, w0, w1)
		}
		// Each equals the F16 dot kernel of the key with q's binary16 form.
		qb := make([]byte, 2*n)
		k0b, k1b := make([]byte, 2*n), make([]byte, 2*n)
		for i := range n {
			binary.LittleEndian.PutUint16(qb[2*i:], qh[i])
			binary.LittleEndian.PutUint16(k0b[2*i:], h[i])
			binary.LittleEndian.PutUint16(k1b[2*i:], k1[i])
		}
		if n > 0 {
			if d0, d1 := dot.F16AVX2(n, k0b, qb), dot.F16AVX2(n, k1b, qb); !simdtest.SameFloat(g0, d0) || !simdtest.SameFloat(g1, d1) {
				t.Fatalf("%s n=%d: %g %g, dot kernel %g %g", name, n, g0, g1, d0, d1)
			}
		}
	case "f16ToF32":
		F16ToF32AVX2(gb, h)
		F16ToF32(wb, h)
		sameFloats(t, name, gb, wb)
	}
}

// vecRow returns n random float32 values at element offset off of a
// fresh slice: normal values of the given spread, with special values
// mixed in at rate special.
func vecRow(rng *rand.Rand, n, off int, spread, special float64) []float32 {
	s := make([]float32, n+off)[off:]
	for i := range s {
		if rng.Float64() < special {
			s[i] = simdtest.Special[rng.IntN(len(simdtest.Special))]
		} else {
			s[i] = float32(rng.NormFloat64() * spread)
		}
	}
	return s
}

// TestVecTwins checks every AVX2 row kernel against its twin bit for bit
// over random lengths, offsets and values (with NaN, Inf, denormals and
// extremes mixed in).
func TestVecTwins(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for kind, name := range vecKinds {
		t.Run(name, func(t *testing.T) {
			for trial := range 400 {
				n := rng.IntN(300)
				special := []float64{0, 0.01, 0.3}[trial%3]
				spread := []float64{1, 30, 100}[trial/3%3]
				a := vecRow(rng, n, rng.IntN(8), spread, special)
				b := vecRow(rng, n, rng.IntN(8), spread, special)
				hoff := rng.IntN(8)
				h := make([]uint16, n+hoff)[hoff:]
				for i := range h {
					h[i] = uint16(rng.Uint32())
				}
				s1 := float32(rng.NormFloat64() * spread)
				if trial%7 == 0 {
					s1 = simdtest.Special[rng.IntN(len(simdtest.Special))]
				}
				s2 := float32(rng.Float64() * 4)
				checkVecTwin(t, kind, a, b, h, s1, s2)
			}
		})
	}
}

// FuzzVecTwins is the fuzzing form of TestVecTwins: rows come from the
// fuzzer's bytes, so every float32 bit pattern can occur.
func FuzzVecTwins(f *testing.F) {
	simdtest.NeedAVX2(f)
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range vecKinds {
		data := make([]byte, 900)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		f.Add(uint8(i), uint16(17+13*i), float32(i), float32(0.5), data)
	}
	f.Fuzz(func(t *testing.T, kind uint8, length uint16, s1, s2 float32, data []byte) {
		n := min(int(length)%1024, len(data)/10)
		a, b, h := make([]float32, n), make([]float32, n), make([]uint16, n)
		for i := range n {
			a[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
			b[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*(n+i):]))
			h[i] = binary.LittleEndian.Uint16(data[8*n+2*i:])
		}
		checkVecTwin(t, int(kind)%len(vecKinds), a, b, h, s1, s2)
	})
}

// TestExpAccuracy measures the AVX2 float32 exp (expSum with mx = 0)
// against math.Exp over every 128th float32 in [-87.33, 88] (the
// normal-result range; the softmax feeds x - max <= 0), and checks the
// special inputs.
func TestExpAccuracy(t *testing.T) {
	simdtest.NeedAVX2(t)
	lo, hi := float32(math.Log(0x1p-126)), float32(88)
	var xs []float32
	for b := int64(math.Float32bits(-lo)); b > 0; b -= 128 { // [lo, 0)
		xs = append(xs, -math.Float32frombits(uint32(b)))
	}
	for b := uint32(0); math.Float32frombits(b) <= hi; b += 128 { // [0, hi]
		xs = append(xs, math.Float32frombits(b))
	}
	z := append([]float32(nil), xs...)
	ExpSumAVX2(z, 0)
	var maxRel, maxUlp float64
	var worst float32
	for i, x := range xs {
		want := math.Exp(float64(x))
		rel := math.Abs(float64(z[i])-want) / want
		ulp := math.Abs(float64(z[i])-want) / float64(ulp32(float32(want)))
		if rel > maxRel {
			maxRel, worst = rel, x
		}
		maxUlp = max(maxUlp, ulp)
	}
	t.Logf("float32 exp over %d inputs in [%g, %g]: max relative error %.3g (at x=%g), %.2f ulp", len(xs), lo, hi, maxRel, worst, maxUlp)
	if maxRel > 1.5e-7 {
		t.Errorf("max relative error %g, want <= 1.5e-7 (measured 8.3e-8 over every 16th float32)", maxRel)
	}
	// Below the normal range: absolute error under the smallest normal.
	for x := lo; x > -110; x -= 0.01 {
		want := math.Exp(float64(x))
		if got := ExpTwin(x); math.Abs(float64(got)-want) > 0x1p-126 || got < 0 {
			t.Fatalf("exp(%g) = %g, want %g", x, got, want)
		}
	}
	inf := float32(math.Inf(1))
	for _, c := range []struct{ x, want float32 }{
		{-inf, 0}, {-1e30, 0}, {-88, 0}, {-1000, 0}, {0, 1}, {float32(math.Copysign(0, -1)), 1},
	} {
		row := []float32{c.x, c.x, c.x, c.x, c.x, c.x, c.x, c.x, c.x}
		ExpSumAVX2(row, 0)
		for _, g := range row {
			if g != c.want {
				t.Errorf("exp(%g) = %g, want %g", c.x, g, c.want)
			}
		}
	}
	nan := []float32{float32(math.NaN()), 1, 2, 3, 4, 5, 6, 7, float32(math.NaN())}
	if s := ExpSumAVX2(nan, 0); !math.IsNaN(s) || !math.IsNaN(float64(nan[0])) || !math.IsNaN(float64(nan[8])) {
		t.Errorf("exp(NaN): row %v, sum %g, want NaN", nan, s)
	}
}

// ulp32 returns the spacing of float32 values at |f|.
func ulp32(f float32) float32 {
	f = float32(math.Abs(float64(f)))
	return math.Nextafter32(f, float32(math.Inf(1))) - f
}

// TestHasNaNAVX2 checks HasNaNAVX2 against HasNaN: lengths around the
// runs of 64, rows without a NaN (infinities, denormals and the largest
// finite values included) and rows with one NaN of a random payload and
// sign at every position of a short row and at random ones of longer.
func TestHasNaNAVX2(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(81, 82))
	specials := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 0}
	nan := func() float32 {
		// Exponent all ones, a nonzero mantissa (quiet or signalling),
		// either sign.
		return math.Float32frombits(0x7f800000 | uint32(rng.IntN(1<<23-1)+1) | uint32(rng.IntN(2))<<31)
	}
	for _, n := range []int{0, 1, 63, 64, 65, 127, 128, 191, 4096, 4100} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
			if rng.IntN(8) == 0 {
				x[i] = specials[rng.IntN(len(specials))]
			}
		}
		if HasNaNAVX2(x) || HasNaN(x) {
			t.Fatalf("n=%d: a NaN reported in a row without one", n)
		}
		positions := rng.Perm(n)
		if n <= 200 {
			positions = positions[:n]
		} else {
			positions = positions[:50]
		}
		for _, p := range positions {
			keep := x[p]
			x[p] = nan()
			if !HasNaNAVX2(x) || !HasNaN(x) {
				t.Fatalf("n=%d: the NaN %#x at %d was missed", n, math.Float32bits(x[p]), p)
			}
			x[p] = keep
		}
	}
}

// BenchmarkHasNaN times the NaN scan of a 4096-wide activation row, Go
// against AVX2.
func BenchmarkHasNaN(b *testing.B) {
	simdtest.NeedAVX2(b)
	x := make([]float32, 4096)
	for i := range x {
		x[i] = float32(i)
	}
	for _, f := range []struct {
		name string
		f    func([]float32) bool
	}{{"go", HasNaN}, {"avx2", HasNaNAVX2}} {
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(4 * int64(len(x)))
			for b.Loop() {
				if f.f(x) {
					b.Fatal("NaN")
				}
			}
		})
	}
}
