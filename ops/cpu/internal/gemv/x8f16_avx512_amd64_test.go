//go:build amd64 && !purego

package gemv

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// x8Half512Kernels are the zmm 2-byte float x8 kernels with the AVX2
// kernels they stand in for and their twins.
var x8Half512Kernels = []struct {
	name            string
	zmm, avx2, twin X8Func
	wt              quant.Type
}{
	{"f16", X8F16AVX512, X8F16AVX2, X8F16Twin, quant.F16},
	{"bf16", X8BF16AVX512, X8BF16AVX2, X8BF16Twin, quant.BF16},
}

// x8Half512Diff fails t unless every zmm kernel's outputs on ng groups
// of nb blocks x with the activation row y equal the twin's and the
// AVX2 kernel's bit for bit.
func x8Half512Diff(t *testing.T, nb, ng int, x, y []byte) {
	t.Helper()
	for _, k := range x8Half512Kernels {
		got := make([]float32, 8*ng)
		want := make([]float32, 8*ng)
		avx2 := make([]float32, 8*ng)
		for i := range got {
			got[i] = float32(math.NaN())
		}
		k.zmm(nb, ng, x, y, nil, got, testPFD(nb))
		k.twin(nb, ng, x, y, nil, want, testPFD(nb))
		k.avx2(nb, ng, x, y, nil, avx2, testPFD(nb))
		for i := range got {
			if !simdtest.SameFloat(got[i], want[i]) || !simdtest.SameFloat(got[i], avx2[i]) {
				t.Fatalf("%s nb=%d ng=%d output %d: avx512 %g (%#x), twin %g (%#x), avx2 %g (%#x)", k.name, nb, ng, i,
					got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]), avx2[i], math.Float32bits(avx2[i]))
			}
		}
	}
}

// TestX8F16AVX512Twins checks the zmm f16 and bf16 x8 kernels against
// their twins and the AVX2 kernels bit for bit over random sizes and
// offsets, arbitrary weight bits (NaN and Inf included) and special
// values mixed into the activations.
func TestX8F16AVX512Twins(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(185, 186))
	for trial := range 300 {
		nb, ng := rng.IntN(20), 1+rng.IntN(4)
		x := simdtest.Row(rng, quant.I8, max(ng*nb*X8BytesF16, 1), rng.IntN(64), 0)
		for _, wt := range []quant.Type{quant.F16, quant.BF16} {
			y := simdtest.Row(rng, wt, max(nb, 1)*32, rng.IntN(64), []float64{0, 0.05}[trial%2])
			x8Half512Diff(t, nb, ng, x, y)
		}
	}
	// Finite products that do not overflow: the sums carry real bits.
	for _, nb := range []int{1, 2, 7, 24, 128} {
		ng := 3
		for _, wt := range []quant.Type{quant.F16, quant.BF16} {
			w, _ := quantRows(t, rng, wt, 8*ng, 32*nb)
			y, _ := quantRows(t, rng, wt, 1, 32*nb)
			x := make([]byte, len(w))
			for g := range ng {
				grp := X8BytesF16 * nb
				RepackX8F16(x[g*grp:(g+1)*grp], w[g*grp:(g+1)*grp], nb)
			}
			x8Half512Diff(t, nb, ng, x, y)
		}
	}
}

// FuzzX8F16AVX512 is the fuzzing form of TestX8F16AVX512Twins.
func FuzzX8F16AVX512(f *testing.F) {
	simdtest.NeedAVX512(f)
	f.Add(uint8(3), uint8(2), uint8(1), uint8(7), []byte{3, 128, 255, 0, 17, 200})
	f.Fuzz(func(t *testing.T, blocks, groups, xoff, yoff uint8, data []byte) {
		nb, ng := int(blocks)%24, 1+int(groups)%4
		x := simdtest.FillRow(quant.I8, max(ng*nb*X8BytesF16, 1), int(xoff%64), data)
		y := simdtest.FillRow(quant.F16, max(nb, 1)*32, int(yoff%64), data[len(data)/2:])
		x8Half512Diff(t, nb, ng, x, y)
	})
}

// TestX8F16AVX512Bounds checks that the wrappers refuse slices too
// short for what the assembly would read, and clear out for nb = 0.
func TestX8F16AVX512Bounds(t *testing.T) {
	simdtest.NeedAVX512(t)
	nb, ng := 2, 2
	for _, k := range x8Half512Kernels {
		for _, c := range []struct {
			name string
			x, y int
		}{{"weights", ng*nb*X8BytesF16 - 1, 64 * nb}, {"activations", ng * nb * X8BytesF16, 64*nb - 1}} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: a short %s slice did not panic", k.name, c.name)
					}
				}()
				k.zmm(nb, ng, make([]byte, c.x), make([]byte, c.y), nil, make([]float32, 8*ng), testPFD(nb))
			}()
		}
		out := []float32{1, 2, 3, 4, 5, 6, 7, 8}
		k.zmm(0, 1, nil, nil, nil, out, testPFD(0))
		for i, o := range out {
			if o != 0 {
				t.Fatalf("%s nb=0: output %d = %g, want 0", k.name, i, o)
			}
		}
	}
}

// BenchmarkX8F16AVX512 compares one thread's matrix-vector product (one
// activation row) with the AVX2 and zmm f16/bf16 x8 kernels: l2 (256 x
// 2048, the weights in L2) and 4096 (4096 x 4096, as a decoding model's
// projection: memory-bound).
func BenchmarkX8F16AVX512(b *testing.B) {
	simdtest.NeedAVX512(b)
	rng := rand.New(rand.NewPCG(195, 196))
	for _, k := range x8Half512Kernels {
		for _, size := range []struct {
			name string
			m, k int
		}{{"l2", 256, 2048}, {"4096", 4096, 4096}} {
			nb := size.k / 32
			few, _ := quantRows(b, rng, k.wt, 64, size.k)
			w := bytes.Repeat(few, size.m/64)
			y, _ := quantRows(b, rng, k.wt, 1, size.k)
			x8 := make([]byte, len(w))
			for g := range size.m / 8 {
				grp := nb * X8BytesF16
				RepackX8F16(x8[g*grp:(g+1)*grp], w[g*grp:(g+1)*grp], nb)
			}
			out := make([]float32, size.m)
			for _, f := range []struct {
				name string
				f    X8Func
			}{{"avx2", k.avx2}, {"avx512", k.zmm}} {
				b.Run(k.name+"/"+size.name+"/"+f.name, func(b *testing.B) {
					b.SetBytes(int64(len(w)))
					for b.Loop() {
						f.f(nb, size.m/8, x8, y, nil, out, benchPFD)
					}
				})
			}
		}
	}
}
