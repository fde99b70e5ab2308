//go:build amd64 && !purego

package gemv

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

// twinFunc is a twin of one row: the dot product of n elements.
type twinFunc func(n int, x, y []byte) float32

// rows4 is simdtest.Rows4 for nb blocks (runs of F16Run elements for the
// float types).
func rows4(rng *rand.Rand, wt quant.Type, nb, ldx, off int, special float64, data []byte) []byte {
	return simdtest.Rows4(rng, wt, nb*run(wt), ldx, off, special, data)
}

// run is the elements per block of the four-row kernel of wt.
func run(wt quant.Type) int {
	if wt.IsFloat() {
		return F16Run
	}
	return int(wt.BlockSize())
}

// scaledCases lists the four-row kernels of the q8_0 family with their
// twins.
var scaledCases = []struct {
	wt   quant.Type
	new  Func
	twin twinFunc
}{
	{quant.Q4_0, Q4_0AVX2, Q4_0Twin},
	{quant.Q8_0, Q8_0AVX2, Q8_0Twin},
	{quant.Q5_0, Q5_0AVX2, Q5_0Twin},
	{quant.IQ4_NL, IQ4_NLAVX2, IQ4_NLTwin},
	{quant.MXFP4, MXFP4AVX2, MXFP4Twin},
}

// TestScaledTwins checks the q4_0, q8_0, q5_0, iq4_nl and mxfp4 four-row kernels
// row by row against their twins, bit for bit, over random lengths, row
// strides, offsets and bytes (any code, -128 included; NaN, Inf and
// denormal scales).
func TestScaledTwins(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(41, 42))
	for _, c := range scaledCases {
		for trial := range 300 {
			nb := rng.IntN(24)
			n := nb * quant.QK
			rowBytes := simdtest.MustRowSize(t, c.wt, n)
			ldx := int(rowBytes) + rng.IntN(40)
			var x []byte
			if trial%2 == 0 {
				x = simdtest.Row(rng, quant.I8, 3*ldx+int(rowBytes), rng.IntN(64), 0)
			} else {
				x = rows4(rng, c.wt, nb, ldx, rng.IntN(64), 0.05, nil)
			}
			y := simdtest.Row(rng, quant.Q8_0, n, rng.IntN(64), []float64{0, 0.05}[trial%2])
			dy := make([]float32, nb)
			for ib := range dy {
				dy[ib] = simd.HalfAt(y, ib*simd.BytesQ8_0)
			}
			var got [4]float32
			c.new(nb, x, ldx, y, dy, &got)
			checkRows(t, fmt.Sprintf("%v nb=%d ldx=%d", c.wt, nb, ldx), &got, func(r int) float32 { return c.twin(n, x[r*ldx:], y) })
		}
	}
}

// sideCases lists the side kernels of the q8_0
// family (two rows per vector register, side data prepared once per
// activation row) with their twins.
var sideCases = []struct {
	wt   quant.Type
	twin twinFunc
}{
	{quant.Q4_0, SideQ4_0Twin},
}

// sideRun runs the side kernel of q4_0 as MUL_MAT does: the side data
// prepared from y, then the kernel.
func sideRun(_ quant.Type, nb int, x []byte, ldx int, y []byte, out *[4]float32) {
	side := make([]float32, nb*SideSlots)
	Q4_0Prep(y, nb, side)
	SideQ4_0AVX2(nb, x, ldx, y, side, out)
}

// TestSideTwins checks the side kernels row by row
// against their twins, bit for bit, over random lengths (odd and even
// block counts: the kernels take two blocks a step), row strides,
// offsets and bytes (any code, -128 included; NaN, Inf and denormal
// scales).
func TestSideTwins(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(61, 62))
	for _, c := range sideCases {
		for trial := range 400 {
			nb := rng.IntN(24)
			n := nb * quant.QK
			rowBytes := simdtest.MustRowSize(t, c.wt, n)
			ldx := int(rowBytes) + rng.IntN(40)
			var x []byte
			if trial%2 == 0 {
				x = simdtest.Row(rng, quant.I8, 3*ldx+int(rowBytes), rng.IntN(64), 0)
			} else {
				x = rows4(rng, c.wt, nb, ldx, rng.IntN(64), 0.05, nil)
			}
			y := simdtest.Row(rng, quant.Q8_0, n, rng.IntN(64), []float64{0, 0.05}[trial%2])
			var got [4]float32
			sideRun(c.wt, nb, x, ldx, y, &got)
			checkRows(t, fmt.Sprintf("%v nb=%d ldx=%d", c.wt, nb, ldx), &got, func(r int) float32 { return c.twin(n, x[r*ldx:], y) })
		}
	}
}

// FuzzSide is the fuzzing form of TestSideTwins.
func FuzzSide(f *testing.F) {
	simdtest.NeedAVX2(f)
	f.Add(uint8(0), uint8(3), uint8(5), uint8(1), uint8(7), []byte{3, 128, 255, 0, 17, 200})
	f.Add(uint8(0), uint8(8), uint8(0), uint8(0), uint8(0), []byte{1})
	f.Fuzz(func(t *testing.T, kind, blocks, gap, xoff, yoff uint8, data []byte) {
		c := sideCases[int(kind)%len(sideCases)]
		nb := int(blocks) % 40
		n := nb * quant.QK
		rowBytes, _ := c.wt.RowSize(int64(n))
		ldx := int(rowBytes) + int(gap)
		var xd []byte
		if len(data) > 0 {
			xd = data
		}
		x := rows4(rand.New(rand.NewPCG(uint64(len(data)), 7)), c.wt, nb, ldx, int(xoff%64), 0, xd)
		y := simdtest.FillRow(quant.Q8_0, n, int(yoff%64), data[len(data)/2:])
		var out [4]float32
		sideRun(c.wt, nb, x, ldx, y, &out)
		checkRows(t, fmt.Sprintf("%v nb=%d", c.wt, nb), &out, func(r int) float32 { return c.twin(n, x[r*ldx:], y) })
	})
}

// FuzzScaled is the fuzzing form of TestScaledTwins: the fuzzer
// picks the kernel, the length, the row gap, the offsets and the bytes.
func FuzzScaled(f *testing.F) {
	simdtest.NeedAVX2(f)
	f.Add(uint8(2), uint8(3), uint8(5), uint8(1), uint8(7), []byte{3, 128, 255, 0, 17, 200})
	f.Add(uint8(0), uint8(9), uint8(0), uint8(0), uint8(0), []byte{1})
	f.Fuzz(func(t *testing.T, kind, blocks, gap, xoff, yoff uint8, data []byte) {
		c := scaledCases[int(kind)%len(scaledCases)]
		nb := int(blocks) % 40
		n := nb * quant.QK
		rowBytes, _ := c.wt.RowSize(int64(n))
		ldx := int(rowBytes) + int(gap)
		var xd []byte
		if len(data) > 0 {
			xd = data
		}
		x := rows4(rand.New(rand.NewPCG(uint64(len(data)), 7)), c.wt, nb, ldx, int(xoff%64), 0, xd)
		y := simdtest.FillRow(quant.Q8_0, n, int(yoff%64), data[len(data)/2:])
		dy := make([]float32, nb)
		for ib := range dy {
			dy[ib] = simd.HalfAt(y, ib*simd.BytesQ8_0)
		}
		var out [4]float32
		c.new(nb, x, ldx, y, dy, &out)
		checkRows(t, fmt.Sprintf("%v nb=%d", c.wt, nb), &out, func(r int) float32 { return c.twin(n, x[r*ldx:], y) })
	})
}

// q81Cases lists the q8_1-activation four-row kernels with their twins.
var q81Cases = []struct {
	wt   quant.Type
	f    Func
	twin twinFunc
}{
	{quant.Q4_1, Q4_1AVX2, Q4_1Twin},
	{quant.Q5_1, Q5_1AVX2, Q5_1Twin},
}

// TestQ81Twins checks the q4_1 and q5_1 four-row kernels row by row
// against their twins, bit for bit, over random lengths, row strides,
// offsets and contents (random bytes: NaN, Inf and denormal scales, any
// code).
func TestQ81Twins(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(55, 56))
	for _, c := range q81Cases {
		for trial := range 300 {
			nb := rng.IntN(24)
			n := nb * quant.QK
			rowBytes := simdtest.MustRowSize(t, c.wt, n)
			ldx := int(rowBytes) + rng.IntN(40)
			var x, y []byte
			if trial%2 == 0 {
				x = simdtest.Row(rng, quant.I8, 3*ldx+int(rowBytes), rng.IntN(64), 0)
				y = simdtest.Row(rng, quant.I8, nb*simd.BytesQ8_1, rng.IntN(64), 0)
			} else {
				x = rows4(rng, c.wt, nb, ldx, rng.IntN(64), 0.05, nil)
				y = simdtest.Row(rng, quant.Q8_1, n, rng.IntN(64), 0.05)
			}
			var got [4]float32
			c.f(nb, x, ldx, y, nil, &got)
			checkRows(t, fmt.Sprintf("%v nb=%d ldx=%d", c.wt, nb, ldx), &got, func(r int) float32 { return c.twin(n, x[r*ldx:], y) })
		}
	}
}

// FuzzQ81 is the fuzzing form of TestQ81Twins.
func FuzzQ81(f *testing.F) {
	simdtest.NeedAVX2(f)
	f.Add(uint8(0), uint8(3), uint8(5), uint8(1), uint8(7), []byte{3, 128, 255, 0, 17, 200})
	f.Add(uint8(1), uint8(9), uint8(0), uint8(0), uint8(0), []byte{1})
	f.Fuzz(func(t *testing.T, kind, blocks, gap, xoff, yoff uint8, data []byte) {
		c := q81Cases[int(kind)%len(q81Cases)]
		nb := int(blocks) % 40
		n := nb * quant.QK
		rowBytes, _ := c.wt.RowSize(int64(n))
		ldx := int(rowBytes) + int(gap)
		var xd []byte
		if len(data) > 0 {
			xd = data
		}
		x := rows4(rand.New(rand.NewPCG(uint64(len(data)), 9)), c.wt, nb, ldx, int(xoff%64), 0, xd)
		y := simdtest.FillRow(quant.Q8_1, n, int(yoff%64), data[len(data)/2:])
		var out [4]float32
		c.f(nb, x, ldx, y, nil, &out)
		checkRows(t, fmt.Sprintf("%v nb=%d", c.wt, nb), &out, func(r int) float32 { return c.twin(n, x[r*ldx:], y) })
	})
}

// floatCases lists the float four-row kernels with their twins.
var floatCases = []struct {
	wt   quant.Type
	new  Func
	twin twinFunc
}{
	{quant.F16, F16AVX2, F16Twin},
	{quant.BF16, BF16AVX2, BF16Twin},
	{quant.F32, F32AVX2, F32Twin},
}

// TestFloatTwins checks the f16, bf16 and f32 four-row kernels row
// by row against their twins, bit for bit, over random lengths, row strides, offsets and
// values (NaN, Inf and denormals included), and that the avx2 tier
// installs them.
func TestFloatTwins(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(51, 52))
	for _, c := range floatCases {
		for trial := range 200 {
			nb, ldx, x, y := floatTrial(rng, c.wt, trial)
			n := nb * F16Run
			var got [4]float32
			c.new(nb, x, ldx, y, nil, &got)
			checkRows(t, fmt.Sprintf("%v nb=%d ldx=%d", c.wt, nb, ldx), &got, func(r int) float32 { return c.twin(n, x[r*ldx:], y) })
		}
	}
}

// floatTrial draws case trial of a float four-row kernel of wt: under 40
// runs, a row stride up to 39 elements past the row, random offsets, and
// special values (NaN, Inf, denormals) in a share that cycles with trial.
func floatTrial(rng *rand.Rand, wt quant.Type, trial int) (nb, ldx int, x, y []byte) {
	size := int(wt.TypeSize())
	nb = rng.IntN(40)
	n := nb * F16Run
	ldx = size*n + size*rng.IntN(40)
	special := []float64{0, 0.01, 0.3}[trial%3]
	x = rows4(rng, wt, nb, ldx, rng.IntN(64), special, nil)
	y = simdtest.Row(rng, wt, n, rng.IntN(64), special)
	return nb, ldx, x, y
}

// FuzzFloat is the fuzzing form of TestFloatTwins.
func FuzzFloat(f *testing.F) {
	simdtest.NeedAVX2(f)
	f.Add(uint8(0), uint8(3), uint8(5), uint8(1), uint8(7), []byte{3, 128, 255, 0, 17, 200})
	f.Add(uint8(2), uint8(9), uint8(0), uint8(0), uint8(0), []byte{1})
	f.Fuzz(func(t *testing.T, kind, blocks, gap, xoff, yoff uint8, data []byte) {
		c := floatCases[int(kind)%len(floatCases)]
		nb := int(blocks) % 24
		n := nb * F16Run
		size := int(c.wt.TypeSize())
		ldx := size*n + size*int(gap%32)
		var xd []byte
		if len(data) > 0 {
			xd = data
		}
		x := rows4(rand.New(rand.NewPCG(uint64(len(data)), 11)), c.wt, nb, ldx, int(xoff%64), 0, xd)
		y := simdtest.FillRow(c.wt, n, int(yoff%64), data[len(data)/2:])
		var out [4]float32
		c.new(nb, x, ldx, y, nil, &out)
		checkRows(t, fmt.Sprintf("%v nb=%d", c.wt, nb), &out, func(r int) float32 { return c.twin(n, x[r*ldx:], y) })
	})
}

// checkRows fails t when a kernel's four outputs got differ from the
// twin's want(r) (bit for bit, NaN payloads aside), naming what.
func checkRows(t *testing.T, what string, got *[4]float32, want func(r int) float32) {
	t.Helper()
	for r := range 4 {
		if w := want(r); !simdtest.SameFloat(got[r], w) {
			t.Fatalf("%s row %d: asm %g (%#x), twin %g (%#x)", what, r, got[r], math.Float32bits(got[r]), w, math.Float32bits(w))
		}
	}
}

// TestIQ4_XSTwin checks the IQ4_XS four-row kernel row by row against
// internal/dot's IQ4_XSTwin, bit for bit, over random lengths, row
// strides, offsets and contents (random bytes: NaN, Inf and denormal
// scales, every index and sub-block scale, activations -128 included).
func TestIQ4_XSTwin(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(57, 58))
	for trial := range 300 {
		nb := rng.IntN(10)
		n := nb * quant.QKK
		rowBytes := simdtest.MustRowSize(t, quant.IQ4_XS, n)
		ldx := int(rowBytes) + rng.IntN(40)
		var x []byte
		if trial%2 == 0 {
			x = simdtest.Row(rng, quant.I8, 3*ldx+int(rowBytes), rng.IntN(64), 0)
		} else {
			x = rows4(rng, quant.IQ4_XS, nb, ldx, rng.IntN(64), 0.05, nil)
		}
		y := simdtest.Row(rng, quant.Q8_K, n, rng.IntN(64), []float64{0, 0.05}[trial%2])
		var got [4]float32
		IQ4_XSAVX2(nb, x, ldx, y, nil, &got)
		checkRows(t, fmt.Sprintf("iq4_xs nb=%d ldx=%d", nb, ldx), &got, func(r int) float32 { return dot.IQ4_XSTwin(n, x[r*ldx:], y) })
	}
}

// FuzzIQ4_XS is the fuzzing form of TestIQ4_XSTwin.
func FuzzIQ4_XS(f *testing.F) {
	simdtest.NeedAVX2(f)
	f.Add(uint8(3), uint8(5), uint8(1), uint8(7), []byte{3, 128, 255, 0, 17, 200})
	f.Add(uint8(1), uint8(0), uint8(0), uint8(0), []byte{1})
	f.Fuzz(func(t *testing.T, blocks, gap, xoff, yoff uint8, data []byte) {
		nb := int(blocks) % 12
		n := nb * quant.QKK
		rowBytes, _ := quant.IQ4_XS.RowSize(int64(n))
		ldx := int(rowBytes) + int(gap)
		var xd []byte
		if len(data) > 0 {
			xd = data
		}
		x := rows4(rand.New(rand.NewPCG(uint64(len(data)), 11)), quant.IQ4_XS, nb, ldx, int(xoff%64), 0, xd)
		y := simdtest.FillRow(quant.Q8_K, n, int(yoff%64), data[len(data)/2:])
		var out [4]float32
		IQ4_XSAVX2(nb, x, ldx, y, nil, &out)
		checkRows(t, fmt.Sprintf("iq4_xs nb=%d", nb), &out, func(r int) float32 { return dot.IQ4_XSTwin(n, x[r*ldx:], y) })
	})
}

// TestTableNearOracle checks the IQ4_NL, MXFP4 and IQ4_XS four-row kernels on
// quantized gaussian rows against a float64 dot product of the
// dequantized rows (an oracle independent of the twins): they agree
// within float32 rounding of the sum of the products' magnitudes.
func TestTableNearOracle(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(43, 44))
	for _, c := range []struct {
		wt quant.Type
		f  Func
	}{{quant.IQ4_NL, IQ4_NLAVX2}, {quant.MXFP4, MXFP4AVX2}, {quant.IQ4_XS, IQ4_XSAVX2}} {
		act := c.wt.VecDotType()
		for _, blocks := range []int{1, 3, 8, 130} {
			n := blocks * int(c.wt.BlockSize())
			nb := blocks
			rowBytes := int(simdtest.MustRowSize(t, c.wt, n))
			x := make([]byte, 4*rowBytes)
			xd := make([][]float32, 4)
			for r := range 4 {
				xd[r] = quantDequant(t, c.wt, gaussian(rng, n), x[r*rowBytes:(r+1)*rowBytes])
			}
			y := make([]byte, simdtest.MustRowSize(t, act, n))
			yd := quantDequant(t, act, gaussian(rng, n), y)
			var dy []float32
			if act == quant.Q8_0 {
				dy = make([]float32, nb)
				for ib := range dy {
					dy[ib] = simd.HalfAt(y, ib*simd.BytesQ8_0)
				}
			}
			var got [4]float32
			c.f(nb, x, rowBytes, y, dy, &got)
			for r := range 4 {
				var want, mag float64
				for i := range n {
					p := float64(xd[r][i]) * float64(yd[i])
					want += p
					mag += math.Abs(p)
				}
				if d := math.Abs(float64(got[r]) - want); d > 1e-5*mag {
					t.Errorf("%v nb=%d row %d: kernel %g, oracle %g (|diff| %g, sum of |products| %g)", c.wt, nb, r, got[r], want, d, mag)
				}
			}
		}
	}
}

// gaussian returns n standard normal values.
func gaussian(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// quantDequant quantizes v to wt into row and returns the row
// dequantized.
func quantDequant(t *testing.T, wt quant.Type, v []float32, row []byte) []float32 {
	t.Helper()
	if err := quant.QuantizeRow(wt, v, row); err != nil {
		t.Fatal(err)
	}
	d := make([]float32, len(v))
	if err := quant.DequantizeRow(wt, row, d); err != nil {
		t.Fatal(err)
	}
	return d
}
