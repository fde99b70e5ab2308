//go:build amd64 && !purego

package vec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
)

// vecSentinel fills the elements past a row's end, which no kernel may
// write.
var vecSentinel = math.Float32frombits(0x7fc0dead)

// padded returns a copy of x with 16 sentinels after it, and the copy's
// first len(x) elements.
func padded(x []float32) (all, row []float32) {
	all = append(append([]float32(nil), x...), make([]float32, 16)...)
	for i := len(x); i < len(all); i++ {
		all[i] = vecSentinel
	}
	return all, all[:len(x)]
}

// checkVec512 runs the AVX-512 row kernel name and its twin on copies of
// the same inputs and requires equal bits, and the AVX-512 kernel's
// sentinels untouched.
func checkVec512(t *testing.T, name string, a, b []float32, h []uint16, s1, s2 float32) {
	t.Helper()
	n := len(a)
	gAll, gb := padded(b)
	_, wb := padded(b)
	switch name {
	case "expSum":
		gAll, ga := padded(a)
		wa := append([]float32(nil), a...)
		g, w := ExpSumAVX512(ga, s1), ExpSumTwin(wa, s1)
		wAll, _ := padded(wa)
		sameFloats(t, name, gAll, wAll)
		if !sameFloat64(g, w) {
			t.Fatalf("%s n=%d mx=%g: sum asm %g, twin %g", name, n, s1, g, w)
		}
	case "smPrepMask", "smPrep":
		var m []float32
		if name == "smPrepMask" {
			m = append(append([]float32(nil), a[n/3:]...), a[:n/3]...)
		}
		g, w := SMPrepAVX512(gb, a, m, s1, s2), SMPrepTwin(wb, a, m, s1, s2)
		sameFloats(t, name, gb, wb)
		if !simdtest.SameFloat(g, w) {
			t.Fatalf("%s n=%d: max asm %g, twin %g", name, n, g, w)
		}
	case "sumSq":
		if g, w := SumSqAVX512(a), SumSqTwin(a); !sameFloat64(g, w) {
			t.Fatalf("%s n=%d: asm %g, twin %g", name, n, g, w)
		}
	case "mulTo":
		MulToAVX512(gb, a, s1)
		MulToTwin(wb, a, s1)
		inAll, in := padded(a)
		MulToAVX512(in, in, s1)
		sameFloats(t, name+" in place", inAll[:n], wb)
		sameFloats(t, name+" in place sentinels", inAll[n:], gAll[n:])
	case "axpy":
		AxpyAVX512(gb, a, s1)
		AxpyTwin(wb, a, s1)
	case "axpyF16":
		AxpyF16AVX512(gb, h, s1)
		AxpyF16Twin(wb, h, s1)
	case "axpy4", "axpy4F16":
		rot := func(k int) []int {
			idx := make([]int, n)
			for i := range idx {
				idx[i] = (i + k) % n
			}
			return idx
		}
		s3, s4 := s1*s2, -s2
		if name == "axpy4" {
			x := [3][]float32{}
			for j, k := range []int{1, 5, 11} {
				for _, i := range rot(k) {
					x[j] = append(x[j], a[i]*float32(j+1))
				}
			}
			Axpy4AVX512(gb, a, x[0], x[1], x[2], s1, s2, s3, s4)
			Axpy4Twin(wb, a, x[0], x[1], x[2], s1, s2, s3, s4)
		} else {
			x := [3][]uint16{}
			for j, k := range []int{3, 7, 13} {
				for _, i := range rot(k) {
					x[j] = append(x[j], h[i])
				}
			}
			Axpy4F16AVX512(gb, h, x[0], x[1], x[2], s1, s2, s3, s4)
			Axpy4F16Twin(wb, h, x[0], x[1], x[2], s1, s2, s3, s4)
		}
	case "f16ToF32":
		F16ToF32AVX512(gb, h)
		F16ToF32(wb, h)
	case "axpyQ8_0":
		// A q8_0 row from h's bytes over the whole blocks of b.
		n32 := n &^ 31
		row := make([]byte, 2*n)
		for i, v := range h {
			binary.LittleEndian.PutUint16(row[2*i:], v)
		}
		AxpyQ8_0AVX512(gb[:n32], row, s1)
		AxpyQ8_0Twin(wb[:n32], row, s1)
	case "dot2F16":
		k1 := make([]uint16, n)
		for i := range n {
			k1[i] = h[(i+3)%n]
		}
		g0, g1 := Dot2F16AVX512(h, k1, a)
		w0, w1 := Dot2F16Twin(h, k1, a)
		if !simdtest.SameFloat(g0, w0) || !simdtest.SameFloat(g1, w1) {
			t.Fatalf("%s n=%d: asm %g %g, twin %g %g", name, n, g0, g1, w0, w1)
		}
		if a0, a1 := Dot2F16AVX2(h, k1, a); !simdtest.SameFloat(g0, a0) || !simdtest.SameFloat(g1, a1) {
			t.Fatalf("%s n=%d: asm %g %g, AVX2 %g %g", name, n, g0, g1, a0, a1)
		}
	default:
		t.Fatalf("no kernel %s", name)
	}
	sameFloats(t, name, gb, wb)
	for i := n; i < len(gAll); i++ {
		if math.Float32bits(gAll[i]) != math.Float32bits(vecSentinel) {
			t.Fatalf("%s n=%d: element %d past the end written", name, n, i)
		}
	}
}

// vec512Kinds are the row kernels of the avx512 tier checkVec512 knows.
var vec512Kinds = []string{"expSum", "smPrepMask", "smPrep", "sumSq", "mulTo", "axpy", "axpyF16", "axpy4", "axpy4F16", "f16ToF32", "axpyQ8_0", "dot2F16"}

// TestVecAVX512 checks every AVX-512 row kernel against its twin bit for
// bit over the lengths around the 8-, 16- and 64-element steps, the
// masked tail and streamMax, at several offsets, with NaN, Inf,
// denormals and extremes mixed in, and random lengths.
func TestVecAVX512(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(27, 28))
	for _, name := range vec512Kinds {
		t.Run(name, func(t *testing.T) {
			// The streaming kernels hand rows past streamMax to AVX2.
			lengths := append([]int{streamMax, streamMax + 1, streamMax + 17}, avx512Lengths...)
			for range 60 {
				lengths = append(lengths, rng.IntN(600))
			}
			for trial, n := range lengths {
				for _, special := range []float64{0, 0.01, 0.3} {
					spread := []float64{1, 30, 100}[trial%3]
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
					checkVec512(t, name, a, b, h, s1, s2)
				}
			}
		})
	}
}

// BenchmarkVecAVX512 compares the avx2 and avx512 row kernels at a head
// dimension (128: flash attention's axpy, axpy4 and mulTo) and at the
// row lengths of a 4096- and a 14336-wide model.
func BenchmarkVecAVX512(b *testing.B) {
	if !simdtest.HasAVX512() {
		b.Skip("no AVX-512")
	}
	for _, n := range []int{128, 4096, 14336} {
		x, y := make([]float32, n), make([]float32, n)
		x1, x2, x3 := make([]float32, n), make([]float32, n), make([]float32, n)
		h, h1, h2, h3 := make([]uint16, n), make([]uint16, n), make([]uint16, n), make([]uint16, n)
		for i := range x {
			x[i], y[i] = float32(i%17)/4-2, float32(i%5)
			x1[i], x2[i], x3[i] = float32(i%3), float32(i%7), float32(i%11)
			h[i], h1[i], h2[i], h3[i] = uint16(0x3c00+i%256), uint16(0x3800+i%256), uint16(0xbc00+i%256), uint16(0x4000+i%256)
		}
		q8 := make([]byte, 34*n/32)
		for i := range q8 {
			q8[i] = byte(i * 7)
		}
		for b := range n / 32 {
			q8[34*b], q8[34*b+1] = 0, 0x3c // d = 1
		}
		type kern struct{ avx2, avx512 func() }
		for _, k := range []struct {
			name string
			kern
		}{
			// expSum on a row reset each time would mostly measure the
			// copy; exp(x - 0) of values that stay finite instead.
			{"expSum", kern{func() { ExpSumAVX2(y, 1) }, func() { ExpSumAVX512(y, 1) }}},
			{"smPrep", kern{func() { SMPrepAVX2(y, x, nil, 0.125, 0) }, func() { SMPrepAVX512(y, x, nil, 0.125, 0) }}},
			{"smPrepMask", kern{func() { SMPrepAVX2(y, x, x1, 0.125, 1) }, func() { SMPrepAVX512(y, x, x1, 0.125, 1) }}},
			{"sumSq", kern{func() { SumSqAVX2(x) }, func() { SumSqAVX512(x) }}},
			{"mulTo", kern{func() { MulToAVX2(y, x, 0.5) }, func() { MulToAVX512(y, x, 0.5) }}},
			{"axpy", kern{func() { AxpyAVX2(y, x, 1e-9) }, func() { AxpyAVX512(y, x, 1e-9) }}},
			{"axpyF16", kern{func() { AxpyF16AVX2(y, h, 1e-9) }, func() { AxpyF16AVX512(y, h, 1e-9) }}},
			{"axpy4", kern{func() { Axpy4AVX2(y, x, x1, x2, x3, 1e-9, 1e-9, 1e-9, 1e-9) }, func() { Axpy4AVX512(y, x, x1, x2, x3, 1e-9, 1e-9, 1e-9, 1e-9) }}},
			{"axpy4F16", kern{func() { Axpy4F16AVX2(y, h, h1, h2, h3, 1e-9, 1e-9, 1e-9, 1e-9) }, func() { Axpy4F16AVX512(y, h, h1, h2, h3, 1e-9, 1e-9, 1e-9, 1e-9) }}},
			{"f16ToF32", kern{func() { F16ToF32AVX2(y, h) }, func() { F16ToF32AVX512(y, h) }}},
			{"axpyQ8_0", kern{func() { AxpyQ8_0AVX2(y, q8, 1e-9) }, func() { AxpyQ8_0AVX512(y, q8, 1e-9) }}},
			{"dot2F16", kern{func() { Dot2F16AVX2(h, h1, x) }, func() { Dot2F16AVX512(h, h1, x) }}},
		} {
			for _, tier := range []string{"avx2", "avx512"} {
				f := k.avx2
				if tier == "avx512" {
					f = k.avx512
				}
				b.Run(fmt.Sprintf("%s/n=%d/%s", k.name, n, tier), func(b *testing.B) {
					for i := range y {
						y[i] = float32(i%13) - 6
					}
					for b.Loop() {
						f()
					}
				})
			}
		}
	}
}

// FuzzVecAVX512 is the fuzzing form of TestVecAVX512: rows come from the
// fuzzer's bytes, so every float32 bit pattern can occur.
func FuzzVecAVX512(f *testing.F) {
	simdtest.NeedAVX512(f)
	rng := rand.New(rand.NewPCG(29, 30))
	for i := range vec512Kinds {
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
		checkVec512(t, vec512Kinds[int(kind)%len(vec512Kinds)], a, b, h, s1, s2)
	})
}
