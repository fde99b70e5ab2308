//go:build amd64 && !purego

package dot

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// vnniDots lists the vnni tier's dot products with the AVX2 ones they
// stand in for, their twins, and the offsets of each block's f16 scales.
var vnniDots = []struct {
	wt               quant.Type
	vnni, avx2, twin Func
	halves           []int
}{
	{quant.Q4_K, Q4_KVNNI, Q4_KAVX2, Q4_K, []int{0, 2}},
	{quant.Q5_K, Q5_KVNNI, Q5_KAVX2, Q5_K, []int{0, 2}},
	{quant.Q6_K, Q6_KVNNI, Q6_KAVX2, Q6_K, []int{208}},
	{quant.Q8_0, Q8_0VNNI, Q8_0AVX2, Q8_0Twin, []int{0}},
	{quant.Q4_0, Q4_0VNNI, Q4_0AVX2, Q4_0Twin, []int{0}},
}

// vnniDotDiff fails t unless case c's VNNI dot product of x and y equals
// the AVX2 one's and the twin's bit for bit.
func vnniDotDiff(t *testing.T, c int, what string, n int, x, y []byte) {
	t.Helper()
	k := vnniDots[c]
	got, a, w := k.vnni(n, x, y), k.avx2(n, x, y), k.twin(n, x, y)
	if !simdtest.SameFloat(got, a) || !simdtest.SameFloat(got, w) {
		t.Fatalf("%v %s n=%d: vnni %g (%#x), avx2 %g (%#x), twin %g (%#x)", k.wt, what, n,
			got, math.Float32bits(got), a, math.Float32bits(a), w, math.Float32bits(w))
	}
}

// TestVNNIDots checks (odd and even block counts: the q8_0 family takes
// two blocks a step) the VNNI dot products against the AVX2 ones and
// the twins bit for bit: random rows with special values and offsets,
// raw random bytes, and rows of extreme bytes (scales 1) where a
// saturation or a wrong sign extension would show.
func TestVNNIDots(t *testing.T) {
	simdtest.NeedVNNI(t)
	rng := rand.New(rand.NewPCG(81, 82))
	codes := []byte{0x00, 0xff, 0x80, 0x7f, 0x81, 0x01, 0xc0, 0x3f, 0x55, 0xaa, 0x0f, 0xf0, 0x88}
	for c, k := range vnniDots {
		act := k.wt.VecDotType()
		bs := int(k.wt.BlockSize())
		for trial := range 300 {
			nb := rng.IntN(9)
			if bs == quant.QK {
				nb = rng.IntN(40)
			}
			n := nb * bs
			var x []byte
			if trial%2 == 0 {
				x = simdtest.Row(rng, quant.I8, int(simdtest.MustRowSize(t, k.wt, n)), rng.IntN(64), 0)
			} else {
				x = simdtest.Row(rng, k.wt, n, rng.IntN(64), []float64{0, 0.01, 0.3}[trial%3])
			}
			y := simdtest.Row(rng, act, n, rng.IntN(64), []float64{0, 0.01, 0.3}[trial%3])
			vnniDotDiff(t, c, fmt.Sprintf("trial %d", trial), n, x, y)
		}
		nb := 3 + c%2*2
		n := nb * bs
		xb := int(simdtest.MustRowSize(t, k.wt, bs))
		yb := int(simdtest.MustRowSize(t, act, bs))
		unit := func(x, y []byte) {
			for b := range nb {
				for _, o := range k.halves {
					binary.LittleEndian.PutUint16(x[b*xb+o:], 0x3c00)
				}
				if act == quant.Q8_K {
					binary.LittleEndian.PutUint32(y[b*yb:], math.Float32bits(1))
				} else {
					binary.LittleEndian.PutUint16(y[b*yb:], 0x3c00)
				}
			}
			simdtest.FixBsums(act, y)
		}
		for _, b := range codes {
			for _, a := range []byte{0x80, 0x7f, 0x81, 0x01, 0xff} {
				x, y := bytes.Repeat([]byte{b}, nb*xb), bytes.Repeat([]byte{a}, nb*yb)
				unit(x, y)
				vnniDotDiff(t, c, fmt.Sprintf("bytes %#x %#x", b, a), n, x, y)
			}
		}
		for trial := range 100 {
			x, y := make([]byte, nb*xb), make([]byte, nb*yb)
			for i := range x {
				x[i] = codes[rng.IntN(len(codes))]
			}
			for i := range y {
				y[i] = codes[rng.IntN(len(codes))]
			}
			unit(x, y)
			vnniDotDiff(t, c, fmt.Sprintf("mix %d", trial), n, x, y)
		}
	}
}

// BenchmarkVNNIDot compares the AVX2 and VNNI dot products of one row,
// k = 4096 (both rows in cache), and of 4096 such rows against one
// activation row (weights past L2, as MUL_MAT's one-row dot path).
func BenchmarkVNNIDot(b *testing.B) {
	simdtest.NeedVNNI(b)
	rng := rand.New(rand.NewPCG(83, 84))
	const k = 4096
	for _, c := range vnniDots {
		for _, rows := range []int{1, 4096} {
			xs := int(simdtest.MustRowSize(b, c.wt, k))
			x := simdtest.Row(rng, quant.I8, rows*xs, 0, 0)
			bs := int(c.wt.BlockSize())
			for i := 0; i < len(x); i += xs / (k / bs) {
				for _, o := range c.halves {
					binary.LittleEndian.PutUint16(x[i+o:], 0x3c00)
				}
			}
			y := simdtest.Row(rng, c.wt.VecDotType(), k, 0, 0)
			for _, f := range []struct {
				name string
				f    Func
			}{{"avx2", c.avx2}, {"vnni", c.vnni}} {
				b.Run(fmt.Sprintf("%v/rows%d/%s", c.wt, rows, f.name), func(b *testing.B) {
					var s float32
					b.SetBytes(int64(rows * xs))
					for b.Loop() {
						for r := range rows {
							s += f.f(k, x[r*xs:], y)
						}
					}
					sink = s
				})
			}
		}
	}
}

var sink float32

// TestVNNIQuadK checks the VNNI q2_K and q3_K quad kernels against the
// AVX2 ones and the generic function per column, bit for bit, over random
// block counts, activation strides and contents (quantized rows and raw
// random bytes).
func TestVNNIQuadK(t *testing.T) {
	simdtest.NeedVNNI(t)
	rng := rand.New(rand.NewPCG(85, 86))
	for _, c := range []struct {
		wt         quant.Type
		vnni, avx2 func(nb int, x, y []byte, ldy int, out *[4]float32)
		twin       Func
	}{
		{quant.Q2_K, QuadQ2_KVNNI, QuadQ2_KAVX2, Q2_K},
		{quant.Q3_K, QuadQ3_KVNNI, QuadQ3_KAVX2, Q3_K},
	} {
		for trial := range 200 {
			nb := rng.IntN(10)
			n := nb * quant.QKK
			ldy := nb*simd.BytesQ8_K + 4*rng.IntN(20)
			var x []byte
			if trial%2 == 0 {
				x = simdtest.Row(rng, quant.I8, int(simdtest.MustRowSize(t, c.wt, n)), rng.IntN(64), 0)
			} else {
				x = simdtest.Row(rng, c.wt, n, rng.IntN(64), 0.01)
			}
			y := kQuadRows(rng, nb, ldy, nil)
			got := [4]float32{float32(math.NaN()), 1, 2, 3}
			var want [4]float32
			c.vnni(nb, x, y, ldy, &got)
			c.avx2(nb, x, y, ldy, &want)
			for col := range 4 {
				tw := c.twin(n, x, y[col*ldy:])
				if !simdtest.SameFloat(got[col], want[col]) || !simdtest.SameFloat(got[col], tw) {
					t.Fatalf("%v trial %d nb=%d column %d: vnni %g (%#x), avx2 %g (%#x), twin %g (%#x)", c.wt, trial, nb, col,
						got[col], math.Float32bits(got[col]), want[col], math.Float32bits(want[col]), tw, math.Float32bits(tw))
				}
			}
		}
	}
}

// BenchmarkVNNIQuadK compares the AVX2 and VNNI q2_K and q3_K quad
// kernels over 256 weight rows of k = 4096 (L2) and 4096 rows (past L2)
// against one group of four activation rows.
func BenchmarkVNNIQuadK(b *testing.B) {
	simdtest.NeedVNNI(b)
	rng := rand.New(rand.NewPCG(87, 88))
	const k = 4096
	nb := k / quant.QKK
	ldy := nb * simd.BytesQ8_K
	y := kQuadRows(rng, nb, ldy, nil)
	for _, c := range []struct {
		wt         quant.Type
		vnni, avx2 func(nb int, x, y []byte, ldy int, out *[4]float32)
	}{
		{quant.Q2_K, QuadQ2_KVNNI, QuadQ2_KAVX2},
		{quant.Q3_K, QuadQ3_KVNNI, QuadQ3_KAVX2},
	} {
		xs := int(simdtest.MustRowSize(b, c.wt, k))
		for _, rows := range []int{256, 4096} {
			x := make([]byte, 0, rows*xs)
			for range rows / 64 {
				x = append(x, simdtest.Row(rng, c.wt, 64*k, 0, 0)...)
			}
			for _, f := range []struct {
				name string
				f    func(nb int, x, y []byte, ldy int, out *[4]float32)
			}{{"avx2", c.avx2}, {"vnni", c.vnni}} {
				b.Run(fmt.Sprintf("%v/rows%d/%s", c.wt, rows, f.name), func(b *testing.B) {
					var out [4]float32
					b.SetBytes(int64(rows * xs))
					for b.Loop() {
						for r := range rows {
							f.f(nb, x[r*xs:], y, ldy, &out)
						}
					}
				})
			}
		}
	}
}
