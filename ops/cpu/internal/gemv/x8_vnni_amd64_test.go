//go:build amd64 && !purego

package gemv

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// x8VNNIKernels lists the vnni tier's x8 kernels with the AVX2 kernels
// they stand in for (their x8Kernels index) and their twins.
var x8VNNIKernels = []struct {
	k    int // the x8Kernels entry: type, sizes, prep, AVX2 kernel
	vnni X8Func
	name string
	twin X8Func
}{
	{0, X8Q4_0VNNI, "q4_0", X8Q4_0Twin},
	{1, X8Q8_0VNNI, "q8_0", X8Q8_0Twin},
	{2, X8Q6_KVNNI, "q6_K", X8Q6_KTwin},
	{3, X8Q4_KVNNI, "q4_K", X8Q4_KTwin},
}

// x8VNNIDiff runs VNNI kernel v on ng groups of nb blocks x with the
// activation row y, and fails t unless every output equals the twin's
// and the AVX2 kernel's bit for bit.
func x8VNNIDiff(t *testing.T, v int, nb, ng int, x, y []byte) {
	t.Helper()
	c := x8VNNIKernels[v]
	a := x8Kernels[c.k]
	side := make([]float32, max(nb*a.per, 1))
	a.prep(y, nb, side)
	got := make([]float32, 8*ng)
	want := make([]float32, 8*ng)
	avx2 := make([]float32, 8*ng)
	for i := range got {
		got[i] = float32(math.NaN())
	}
	c.vnni(nb, ng, x, y, side, got, testPFD(nb))
	c.twin(nb, ng, x, y, side, want, testPFD(nb))
	a.asm(nb, ng, x, y, side, avx2, testPFD(nb))
	for i := range got {
		if !simdtest.SameFloat(got[i], want[i]) || !simdtest.SameFloat(got[i], avx2[i]) {
			t.Fatalf("%s nb=%d ng=%d output %d: vnni %g (%#x), twin %g (%#x), avx2 %g (%#x)", c.name, nb, ng, i,
				got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]), avx2[i], math.Float32bits(avx2[i]))
		}
	}
}

// TestX8VNNITwins checks the VNNI x8 kernels against their twins (and
// the AVX2 kernels) bit for bit over random block and group counts,
// offsets and bytes.
func TestX8VNNITwins(t *testing.T) {
	simdtest.NeedVNNI(t)
	rng := rand.New(rand.NewPCG(91, 92))
	for v, c := range x8VNNIKernels {
		a := x8Kernels[c.k]
		t.Run(c.name, func(t *testing.T) {
			for trial := range 400 {
				nb, ng := rng.IntN(20), 1+rng.IntN(4)
				special := []float64{0, 0.05}[trial%2]
				// Random bytes as the weights: any code, any f16 scale.
				x := simdtest.Row(rng, quant.I8, max(ng*nb*a.xb, 1), rng.IntN(64), 0)
				y := x8Act(rng, c.k, nb, rng.IntN(64), special)
				x8VNNIDiff(t, v, nb, ng, x, y)
			}
		})
	}
}

// FuzzX8VNNI is the fuzzing form of TestX8VNNITwins.
func FuzzX8VNNI(f *testing.F) {
	simdtest.NeedVNNI(f)
	f.Add(uint8(0), uint8(3), uint8(2), uint8(1), uint8(7), []byte{3, 128, 255, 0, 17, 200})
	f.Add(uint8(1), uint8(9), uint8(1), uint8(0), uint8(0), []byte{1})
	f.Fuzz(func(t *testing.T, kind, blocks, groups, xoff, yoff uint8, data []byte) {
		v := int(kind) % len(x8VNNIKernels)
		a := x8Kernels[x8VNNIKernels[v].k]
		nb, ng := int(blocks)%24, 1+int(groups)%4
		x := simdtest.FillRow(quant.I8, max(ng*nb*a.xb, 1), int(xoff%64), data)
		y := simdtest.FillRow(a.wt.VecDotType(), nb*int(a.wt.BlockSize()), int(yoff%64), data[len(data)/2:])
		x8VNNIDiff(t, v, nb, ng, x, y)
	})
}

// TestX8VNNIExtremes checks the VNNI x8 kernels on weights and
// activations of one repeated byte with unit scales (the codes where the
// AVX2 kernels' word sums come nearest to saturating, and -128 against
// negative weights, where the sign trick wraps), so the integer sums
// decide the outputs; and on mixed rows of extreme codes.
func TestX8VNNIExtremes(t *testing.T) {
	simdtest.NeedVNNI(t)
	rng := rand.New(rand.NewPCG(93, 94))
	codes := []byte{0x00, 0xff, 0x80, 0x7f, 0x81, 0x01, 0xc0, 0x3f, 0x55, 0xaa, 0x0f, 0xf0, 0x88}
	for v, c := range x8VNNIKernels {
		a := x8Kernels[c.k]
		act := a.wt.VecDotType()
		ab := int(simdtest.MustRowSize(t, act, int(a.wt.BlockSize())))
		const nb, ng = 3, 2
		// unit sets every row's d (and q4_K's dmin) and d_y to 1.
		unit := func(x, y []byte) {
			scales := 8
			if a.wt == quant.Q4_K {
				scales = 16
			}
			for b := range ng * nb {
				for r := range scales {
					binary.LittleEndian.PutUint16(x[b*a.xb+2*r:], 0x3c00)
				}
			}
			for b := range nb {
				if act == quant.Q8_K {
					binary.LittleEndian.PutUint32(y[b*ab:], math.Float32bits(1))
				} else {
					binary.LittleEndian.PutUint16(y[b*ab:], 0x3c00)
				}
			}
			simdtest.FixBsums(act, y)
		}
		for _, xb := range codes {
			for _, yb := range []byte{0x80, 0x7f, 0x81, 0x01, 0xff} {
				x := bytes.Repeat([]byte{xb}, ng*nb*a.xb)
				y := bytes.Repeat([]byte{yb}, nb*ab)
				unit(x, y)
				x8VNNIDiff(t, v, nb, ng, x, y)
			}
		}
		for range 200 {
			x := make([]byte, ng*nb*a.xb)
			y := make([]byte, nb*ab)
			for i := range x {
				x[i] = codes[rng.IntN(len(codes))]
			}
			for i := range y {
				y[i] = codes[rng.IntN(len(codes))]
			}
			unit(x, y)
			x8VNNIDiff(t, v, nb, ng, x, y)
		}
	}
}

// TestX8VNNIBounds checks that the VNNI wrappers refuse slices too short
// for what the assembly would read, and clear the outputs of empty rows.
func TestX8VNNIBounds(t *testing.T) {
	simdtest.NeedVNNI(t)
	for _, c := range x8VNNIKernels {
		a := x8Kernels[c.k]
		nb, ng := 2, 2
		y := make([]byte, nb*int(simdtest.MustRowSize(t, a.wt.VecDotType(), int(a.wt.BlockSize()))))
		side := make([]float32, nb*a.per)
		out := make([]float32, 8*ng)
		for _, short := range []int{0, 1, 2, 3} {
			x := make([]byte, ng*nb*a.xb)
			yy, ss, oo := y, side, out
			switch short {
			case 0:
				x = x[:len(x)-1]
			case 1:
				yy = y[:len(y)-1]
			case 2:
				ss = side[:len(side)-1]
			case 3:
				oo = out[:len(out)-1]
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: a short slice (%d) did not panic", c.name, short)
					}
				}()
				c.vnni(nb, ng, x, yy, ss, oo, testPFD(nb))
			}()
		}
		for i := range out {
			out[i] = 1
		}
		c.vnni(0, ng, nil, nil, nil, out, testPFD(0))
		for i, o := range out {
			if o != 0 {
				t.Fatalf("%s nb=0: output %d = %g, want 0", c.name, i, o)
			}
		}
	}
}

// BenchmarkX8VNNI compares one thread's matrix-vector product (one
// activation row) with the AVX2 and VNNI x8 kernels, per format and
// size: l2 (256 x 2048, the weights in L2: the compute gain), 4096
// (4096 x 4096, as a decoding model's projection) and cold (eight
// 4096 x 4096 copies in turn, past the L3: memory-bound). Alternate
// the kernels with -count and take the ratio of medians.
func BenchmarkX8VNNI(b *testing.B) {
	simdtest.NeedVNNI(b)
	rng := rand.New(rand.NewPCG(95, 96))
	for _, c := range x8VNNIKernels {
		a := x8Kernels[c.k]
		for _, size := range []struct {
			name         string
			m, k, copies int
		}{{"l2", 256, 2048, 1}, {"4096", 4096, 4096, 1}, {"cold", 4096, 4096, 8}} {
			nb := size.k / int(a.wt.BlockSize())
			few, _ := quantRows(b, rng, a.wt, 64, size.k)
			w := bytes.Repeat(few, size.m/64)
			y, _ := quantRows(b, rng, a.wt.VecDotType(), 1, size.k)
			side := make([]float32, nb*a.per)
			a.prep(y, nb, side)
			x8 := make([][]byte, size.copies)
			for i := range x8 {
				x8[i] = make([]byte, len(w))
				for g := range size.m / 8 {
					grp := x8[i][g*nb*a.xb : (g+1)*nb*a.xb]
					for _, t := range x8Types {
						if t.wt == a.wt {
							t.repack(grp, w[g*nb*a.xb:(g+1)*nb*a.xb], nb)
						}
					}
				}
			}
			out := make([]float32, size.m)
			for _, k := range []struct {
				name string
				f    X8Func
			}{{"avx2", a.asm}, {"vnni", c.vnni}} {
				b.Run(c.name+"/"+size.name+"/"+k.name, func(b *testing.B) {
					b.SetBytes(int64(len(w)))
					i := 0
					for b.Loop() {
						k.f(nb, size.m/8, x8[i], y, side, out, benchPFD)
						i = (i + 1) % len(x8)
					}
				})
			}
		}
	}
}
