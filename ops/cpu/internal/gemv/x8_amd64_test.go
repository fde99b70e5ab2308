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

// x8Kernels lists the AVX2 x8 kernels with their twins.
var x8Kernels = []struct {
	wt        quant.Type
	xb, per   int
	prep      func(y []byte, nb int, side []float32)
	asm, twin X8Func
}{
	{quant.Q4_0, X8BytesQ4_0, X8SlotsQ4_0, Q4_0Prep, X8Q4_0AVX2, X8Q4_0Twin},
	{quant.Q8_0, X8BytesQ8_0, X8SlotsQ8_0, X8Q8_0Prep, X8Q8_0AVX2, X8Q8_0Twin},
	{quant.Q6_K, X8BytesQ6_K, X8SlotsK, X8Q8_KPrep, X8Q6_KAVX2, X8Q6_KTwin},
	{quant.Q4_K, X8BytesQ4_K, X8SlotsK, X8Q8_KPrep, X8Q4_KAVX2, X8Q4_KTwin},
}

// x8Act returns an activation row for x8 kernel c: nb blocks of its
// activation type (q8_0 or q8_K), random bytes at offset off, with
// consistent q8_K sums; special is the share of special values among
// the float32 scales.
func x8Act(rng *rand.Rand, c int, nb, off int, special float64) []byte {
	wt := x8Kernels[c].wt
	return simdtest.Row(rng, wt.VecDotType(), nb*int(wt.BlockSize()), off, special)
}

// x8Diff runs kernel c on ng groups of nb blocks x (any bytes: every
// code, NaN, Inf and denormal scales) with the activation row y, and fails t
// unless every output equals the twin's bit for bit.
func x8Diff(t *testing.T, k int, nb, ng int, x, y []byte) {
	t.Helper()
	c := x8Kernels[k]
	side := make([]float32, max(nb*c.per, 1))
	c.prep(y, nb, side)
	got := make([]float32, 8*ng)
	want := make([]float32, 8*ng)
	for i := range got {
		got[i] = float32(math.NaN())
	}
	c.asm(nb, ng, x, y, side, got, testPFD(nb))
	c.twin(nb, ng, x, y, side, want, testPFD(nb))
	for i := range got {
		if !simdtest.SameFloat(got[i], want[i]) {
			t.Fatalf("%v nb=%d ng=%d output %d: asm %g (%#x), twin %g (%#x)", c.wt, nb, ng, i,
				got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// TestX8Twins checks the AVX2 x8 kernels against their twins bit for
// bit over random block and group counts, offsets and bytes.
func TestX8Twins(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(81, 82))
	for k, c := range x8Kernels {
		t.Run(c.wt.String(), func(t *testing.T) {
			for trial := range 300 {
				nb, ng := rng.IntN(20), 1+rng.IntN(4)
				special := []float64{0, 0.05}[trial%2]
				// Random bytes as the weights: any code, any f16 scale.
				x := simdtest.Row(rng, quant.I8, max(ng*nb*c.xb, 1), rng.IntN(64), 0)
				y := x8Act(rng, k, nb, rng.IntN(64), special)
				x8Diff(t, k, nb, ng, x, y)
			}
		})
	}
}

// FuzzX8 is the fuzzing form of TestX8Twins: the fuzzer picks the
// kernel, the sizes, the offsets and the bytes.
func FuzzX8(f *testing.F) {
	simdtest.NeedAVX2(f)
	f.Add(uint8(0), uint8(3), uint8(2), uint8(1), uint8(7), []byte{3, 128, 255, 0, 17, 200})
	f.Add(uint8(1), uint8(9), uint8(1), uint8(0), uint8(0), []byte{1})
	f.Fuzz(func(t *testing.T, kind, blocks, groups, xoff, yoff uint8, data []byte) {
		k := int(kind) % len(x8Kernels)
		c := x8Kernels[k]
		nb, ng := int(blocks)%24, 1+int(groups)%4
		x := simdtest.FillRow(quant.I8, max(ng*nb*c.xb, 1), int(xoff%64), data)
		y := simdtest.FillRow(c.wt.VecDotType(), nb*int(c.wt.BlockSize()), int(yoff%64), data[len(data)/2:])
		x8Diff(t, k, nb, ng, x, y)
	})
}

// TestX8Extremes checks the AVX2 x8 kernels against their twins on
// weights and activations of one repeated byte (the largest and smallest
// codes and scales, where the word sums come nearest to wrapping) with
// unit block scales, so the integer sums decide the outputs.
func TestX8Extremes(t *testing.T) {
	simdtest.NeedAVX2(t)
	for k, c := range x8Kernels {
		act := c.wt.VecDotType()
		ab := int(simdtest.MustRowSize(t, act, int(c.wt.BlockSize())))
		for _, xb := range []byte{0x00, 0xff, 0x80, 0x7f, 0xc0, 0x3f, 0x55, 0xaa} {
			for _, yb := range []byte{0x80, 0x7f, 0x81} {
				const nb, ng = 3, 2
				x := bytes.Repeat([]byte{xb}, ng*nb*c.xb)
				for b := range ng * nb {
					// Every row's d (and q4_K's dmin) is 1.
					scales := 8
					if c.wt == quant.Q4_K {
						scales = 16
					}
					for r := range scales {
						binary.LittleEndian.PutUint16(x[b*c.xb+2*r:], 0x3c00)
					}
				}
				y := bytes.Repeat([]byte{yb}, nb*ab)
				for b := range nb {
					if act == quant.Q8_K {
						binary.LittleEndian.PutUint32(y[b*ab:], math.Float32bits(1))
					} else {
						binary.LittleEndian.PutUint16(y[b*ab:], 0x3c00)
					}
				}
				simdtest.FixBsums(act, y)
				x8Diff(t, k, nb, ng, x, y)
			}
		}
	}
}

// TestX8Bounds checks that the wrappers refuse slices too short for
// what the assembly would read.
func TestX8Bounds(t *testing.T) {
	simdtest.NeedAVX2(t)
	for _, c := range x8Kernels {
		nb, ng := 2, 2
		x := make([]byte, ng*nb*c.xb-1)
		y := make([]byte, nb*int(simdtest.MustRowSize(t, c.wt.VecDotType(), int(c.wt.BlockSize()))))
		side := make([]float32, nb*c.per)
		out := make([]float32, 8*ng)
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%v: a short weight slice did not panic", c.wt)
				}
			}()
			c.asm(nb, ng, x, y, side, out, testPFD(nb))
		}()
	}
}

// TestX8MatchesPlain checks the x8 kernels against the plain layout's
// four-row kernels (SideQ4_0AVX2, Q8_0AVX2, Q6_KAVX2, Q4_KAVX2) on the
// same rows, bit for bit: a product gives the same outputs in either
// layout.
func TestX8MatchesPlain(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(83, 84))
	for _, c := range []struct {
		k      int
		plain  Func
		bs     int
		unpack func(dst, src []byte, nb int)
	}{
		{0, SideQ4_0AVX2, 18, unpackX8(18)},
		{1, Q8_0AVX2, 34, unpackX8(34)},
		{2, Q6_KAVX2, 210, UnpackX8Q6_K},
		{3, Q4_KAVX2, 144, UnpackX8Q4_K},
	} {
		x8k := x8Kernels[c.k]
		for trial := range 100 {
			nb, ng := 1+rng.IntN(16), 1+rng.IntN(3)
			x := simdtest.Row(rng, quant.I8, ng*nb*x8k.xb, rng.IntN(64), 0)
			y := x8Act(rng, c.k, nb, rng.IntN(64), []float64{0, 0.05}[trial%2])
			side := make([]float32, nb*x8k.per)
			x8k.prep(y, nb, side)
			got := make([]float32, 8*ng)
			x8k.asm(nb, ng, x, y, side, got, testPFD(nb))
			rows := make([]byte, 8*nb*c.bs)
			for g := range ng {
				c.unpack(rows, x[g*nb*x8k.xb:(g+1)*nb*x8k.xb], nb)
				for h := range 2 {
					var out [4]float32
					c.plain(nb, rows[4*h*nb*c.bs:], nb*c.bs, y, side, &out)
					for r := range 4 {
						if i := 8*g + 4*h + r; !simdtest.SameFloat(got[i], out[r]) {
							t.Fatalf("%v nb=%d output %d: x8 %g (%#x), plain %g (%#x)", x8k.wt, nb, i,
								got[i], math.Float32bits(got[i]), out[r], math.Float32bits(out[r]))
						}
					}
				}
			}
		}
	}
}

// BenchmarkX8 compares, per x8 format, one thread's matrix-vector
// product (m = k = 4096, one activation row) on the plain layout with
// the four-row kernel (plain) and on the x8 copy with the x8 kernel
// (x8): alternate the two with -count and take the ratio of medians.
func BenchmarkX8(b *testing.B) {
	simdtest.NeedAVX2(b)
	const m, k = 4096, 4096
	plains := map[quant.Type]Func{
		quant.Q4_0: SideQ4_0AVX2, quant.Q8_0: Q8_0AVX2,
		quant.Q6_K: Q6_KAVX2, quant.Q4_K: Q4_KAVX2,
	}
	rng := rand.New(rand.NewPCG(85, 86))
	for _, c := range x8Kernels {
		qk := int(c.wt.BlockSize())
		nb := k / qk
		bs := c.xb / 8
		// 64 quantized rows repeated: real scales, no NaNs.
		few, _ := quantRows(b, rng, c.wt, 64, k)
		w := bytes.Repeat(few, m/64)
		y, _ := quantRows(b, rng, c.wt.VecDotType(), 1, k)
		side := make([]float32, nb*c.per)
		c.prep(y, nb, side)
		x8 := make([]byte, len(w))
		var repack func(dst, src []byte, nb int)
		for _, t := range x8Types {
			if t.wt == c.wt {
				repack = t.repack
			}
		}
		for g := range m / 8 {
			repack(x8[g*nb*c.xb:(g+1)*nb*c.xb], w[g*nb*c.xb:(g+1)*nb*c.xb], nb)
		}
		out := make([]float32, m)
		b.Run(c.wt.String()+"/plain", func(b *testing.B) {
			plain := plains[c.wt]
			b.SetBytes(int64(len(w)))
			for b.Loop() {
				for r := 0; r < m; r += 4 {
					plain(nb, w[r*nb*bs:], nb*bs, y, side, (*[4]float32)(out[r:r+4]))
				}
			}
		})
		b.Run(c.wt.String()+"/x8", func(b *testing.B) {
			b.SetBytes(int64(len(x8)))
			for b.Loop() {
				c.asm(nb, m/8, x8, y, side, out, benchPFD)
			}
		})
	}
}
