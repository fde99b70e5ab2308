//go:build amd64 && !purego

package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/gemv"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// gemvUnscaledTwins pairs the four-row kernels without widened scales
// with the twin of one row.
var gemvUnscaledTwins = []struct {
	wt   quant.Type
	twin vecDotFunc
}{
	{quant.Q4_K, dotKernels[quant.Q4_K].dot}, {quant.Q5_K, dotKernels[quant.Q5_K].dot},
	{quant.Q6_K, dotKernels[quant.Q6_K].dot}, {quant.F16, gemv.F16Twin},
}

// gemvRows is simdtest.Rows4 for nb blocks of the four-row kernel of wt.
func gemvRows(rng *rand.Rand, wt quant.Type, nb, ldx, off int, special float64, data []byte) []byte {
	return simdtest.Rows4(rng, wt, nb*int(gemvRun(wt)), ldx, off, special, data)
}

// checkGemv runs the four-row kernel of wt and compares every row with
// the twin bit for bit.
func checkGemv(t *testing.T, wt quant.Type, twin vecDotFunc, nb, ldx int, x, y []byte) {
	t.Helper()
	n := nb * int(gemvRun(wt))
	var out [4]float32
	avx2Kernels.gemv[wt](nb, x, ldx, y, nil, &out)
	for r := range 4 {
		want := twin(n, x[r*ldx:], y)
		if !sameFloat(out[r], want) {
			t.Fatalf("%v nb=%d ldx=%d row %d: asm %g (%#x), twin %g (%#x)", wt, nb, ldx, r,
				out[r], math.Float32bits(out[r]), want, math.Float32bits(want))
		}
	}
}

// TestGemvUnscaledTwins checks the q4_K and f16 four-row kernels row by
// row against their twins, bit for bit, over random lengths, row strides
// (larger than a row, as for views), offsets and contents (NaN, Inf and
// denormals included).
func TestGemvUnscaledTwins(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(21, 22))
	for _, c := range gemvUnscaledTwins {
		act := c.wt.VecDotType()
		for trial := range 200 {
			nb := rng.IntN(12)
			if c.wt == quant.F16 {
				nb = rng.IntN(40)
			}
			n := nb * int(gemvRun(c.wt))
			rowBytes := mustRowSize(t, c.wt, n)
			ldx := int(rowBytes) + 2*rng.IntN(40)
			special := []float64{0, 0.01, 0.3}[trial%3]
			x := gemvRows(rng, c.wt, nb, ldx, rng.IntN(64), special, nil)
			y := simdRow(rng, act, n, rng.IntN(64), special)
			checkGemv(t, c.wt, c.twin, nb, ldx, x, y)
		}
	}
}

// TestGemvMatchesDot checks that the K-format four-row kernels equal the
// AVX2 dot products bit for bit, so MUL_MAT gives the same outputs with
// one activation row as with several.
func TestGemvMatchesDot(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(23, 24))
	for _, wt := range []quant.Type{quant.Q4_K, quant.Q5_K, quant.Q6_K} {
		dot := avx2Kernels.dots[wt].dot
		for range 100 {
			nb := 1 + rng.IntN(12)
			n := nb * quant.QKK
			ldx := int(mustRowSize(t, wt, n))
			x := gemvRows(rng, wt, nb, ldx, 0, 0, nil)
			y := simdRow(rng, quant.Q8_K, n, 0, 0)
			checkGemv(t, wt, dot, nb, ldx, x, y)
		}
	}
}

// FuzzGemvUnscaled is the fuzzing form of TestGemvUnscaledTwins: the
// fuzzer picks the kernel, the length, the row gap, the offsets and the
// bytes.
func FuzzGemvUnscaled(f *testing.F) {
	if !hasAVX2() {
		f.Skip("CPU lacks AVX2/FMA/F16C")
	}
	rng := rand.New(rand.NewPCG(25, 26))
	for i := range 4 {
		data := make([]byte, 800)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		f.Add(uint8(i), uint8(1+3*i), uint8(i), uint8(5*i), uint8(2*i), data)
	}
	f.Fuzz(func(t *testing.T, kind, blocks, gap, xoff, yoff uint8, data []byte) {
		c := gemvUnscaledTwins[int(kind)%len(gemvUnscaledTwins)]
		nb := int(blocks) % 24
		n := nb * int(gemvRun(c.wt))
		rowBytes, _ := c.wt.RowSize(int64(n))
		ldx := int(rowBytes) + int(gap)
		var xd []byte
		if len(data) > 0 {
			xd = data
		}
		x := gemvRows(rand.New(rand.NewPCG(uint64(len(data)), 1)), c.wt, nb, ldx, int(xoff%64), 0, xd)
		y := fillRow(c.wt.VecDotType(), n, int(yoff%64), data[len(data)/2:])
		checkGemv(t, c.wt, c.twin, nb, ldx, x, y)
	})
}

// BenchmarkGemv compares, in cache and on one thread, a four-row kernel
// with four calls of the tier's dot product over rows of k = 4096
// (GFLOP/s counts 2k per row).
func BenchmarkGemv(b *testing.B) {
	if !hasAVX2() {
		b.Skip("CPU lacks AVX2/FMA/F16C")
	}
	const k = 4096
	rng := rand.New(rand.NewPCG(27, 28))
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.F16} {
		run := int(gemvRun(wt))
		nb := k / run
		rowBytes, _ := wt.RowSize(k)
		ldx := int(rowBytes)
		x := gemvRows(rng, wt, nb, ldx, 0, 0, nil)
		if wt != quant.F16 {
			// Real quantized rows: random bytes would make NaN scales.
			for r := range 4 {
				if err := quant.QuantizeRow(wt, mxRandom(rng, k), x[r*ldx:(r+1)*ldx]); err != nil {
					b.Fatal(err)
				}
			}
		}
		act := wt.VecDotType()
		ysize, _ := act.RowSize(k)
		y := alignedBytes(ysize)
		if err := avx2Kernels.convertRow(act, mxRandom(rng, k), y); err != nil {
			b.Fatal(err)
		}
		var dy []float32
		if act == quant.Q8_0 {
			dy = make([]float32, nb)
			for i := range dy {
				dy[i] = simd.HalfAt(y, i*simd.BytesQ8_0)
			}
		}
		gv, dot := avx2Kernels.gemv[wt], avx2Kernels.dots[wt].dot
		if g := avx2Kernels.gemv[wt]; g != nil {
			gv = g
		}
		var out [4]float32
		b.Run(wt.String()+"/gemv4", func(b *testing.B) {
			for b.Loop() {
				gv(nb, x, ldx, y, dy, &out)
			}
			b.ReportMetric(8*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(wt.String()+"/dot", func(b *testing.B) {
			for b.Loop() {
				for r := range 4 {
					out[r] = dot(k, x[r*ldx:], y)
				}
			}
			b.ReportMetric(8*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// checkQuadK runs the K-format tiled kernel of wt on the weight row x and
// four q8_K rows ldy bytes apart at y, and compares each output with the
// generic dot product bit for bit.
func checkQuadK(t *testing.T, wt quant.Type, nb int, x, y []byte, ldy int) {
	t.Helper()
	var got [4]float32
	avx2Kernels.gemm[wt].quad(nb, x, y, ldy, &got)
	for c := range 4 {
		want := dotKernels[wt].dot(nb*quant.QKK, x, y[c*ldy:])
		if !sameFloat(got[c], want) {
			t.Fatalf("%v quad nb=%d column %d: asm %g (%#x), generic %g (%#x)", wt, nb, c,
				got[c], math.Float32bits(got[c]), want, math.Float32bits(want))
		}
	}
}

// kQuadRows returns four q8_K rows of nb super-blocks ldy bytes apart
// (random bytes between them), from data when it is not nil.
func kQuadRows(rng *rand.Rand, nb, ldy int, data []byte) []byte {
	n := nb * quant.QKK
	rowBytes := nb * simd.BytesQ8_K
	buf := alignedBytes(int64(3*ldy + rowBytes + 1))[:3*ldy+rowBytes]
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for c := range 4 {
		var row []byte
		if data != nil {
			row = fillRow(quant.Q8_K, n, 0, data[c*len(data)/4:])
		} else {
			row = simdRow(rng, quant.Q8_K, n, 0, 0)
		}
		copy(buf[c*ldy:], row)
	}
	return buf
}

// TestQuadKTwins checks the K-format tiled kernels (q2_K to q6_K)
// column by column against the generic dot product, bit for bit.
func TestQuadKTwins(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(31, 32))
	for _, wt := range []quant.Type{quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K} {
		for range 100 {
			nb := rng.IntN(10)
			ldy := nb*simd.BytesQ8_K + 4*rng.IntN(20)
			x := simdRow(rng, wt, nb*quant.QKK, rng.IntN(64), 0)
			checkQuadK(t, wt, nb, x, kQuadRows(rng, nb, ldy, nil), ldy)
		}
	}
}

// FuzzQuadK is the fuzzing form of TestQuadKTwins.
func FuzzQuadK(f *testing.F) {
	if !hasAVX2() {
		f.Skip("CPU lacks AVX2/FMA/F16C")
	}
	f.Add(uint8(0), uint8(2), uint8(3), uint8(1), []byte{9, 8, 7, 250, 3})
	f.Add(uint8(1), uint8(1), uint8(0), uint8(0), []byte{1})
	kinds := []quant.Type{quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K}
	f.Fuzz(func(t *testing.T, kind, blocks, gap, xoff uint8, data []byte) {
		wt := kinds[int(kind)%len(kinds)]
		nb := int(blocks) % 6
		ldy := nb*simd.BytesQ8_K + 4*int(gap%32)
		x := fillRow(wt, nb*quant.QKK, int(xoff%64), data)
		var yd []byte
		if len(data) > 0 {
			yd = data
		}
		checkQuadK(t, wt, nb, x, kQuadRows(rand.New(rand.NewPCG(uint64(len(data)), 2)), nb, ldy, yd), ldy)
	})
}

// FuzzGemvQ8 fuzzes the q4_0 and q8_0 four-row kernels against their
// twins, row by row and bit for bit: the fuzzer picks the kernel, the
// length, the row gap, the offsets and the bytes.
func FuzzGemvQ8(f *testing.F) {
	if !hasAVX2() {
		f.Skip("CPU lacks AVX2/FMA/F16C")
	}
	f.Add(uint8(0), uint8(3), uint8(5), uint8(1), uint8(7), []byte{3, 128, 255, 0, 17, 200})
	f.Add(uint8(1), uint8(9), uint8(0), uint8(0), uint8(0), []byte{1})
	twins := []struct {
		wt   quant.Type
		twin vecDotFunc
	}{{quant.Q4_0, gemv.Q4_0Twin}, {quant.Q8_0, gemv.Q8_0Twin}}
	f.Fuzz(func(t *testing.T, kind, blocks, gap, xoff, yoff uint8, data []byte) {
		c := twins[int(kind)%len(twins)]
		nb := int(blocks) % 40
		n := nb * quant.QK
		rowBytes, _ := c.wt.RowSize(int64(n))
		ldx := int(rowBytes) + int(gap)
		var xd []byte
		if len(data) > 0 {
			xd = data
		}
		x := gemvRows(rand.New(rand.NewPCG(uint64(len(data)), 3)), c.wt, nb, ldx, int(xoff%64), 0, xd)
		y := fillRow(quant.Q8_0, n, int(yoff%64), data[len(data)/2:])
		dy := make([]float32, nb)
		for ib := range dy {
			dy[ib] = simd.HalfAt(y, ib*simd.BytesQ8_0)
		}
		var out [4]float32
		avx2Kernels.gemv[c.wt](nb, x, ldx, y, dy, &out)
		for r := range 4 {
			if want := c.twin(n, x[r*ldx:], y); !sameFloat(out[r], want) {
				t.Fatalf("%v nb=%d row %d: asm %g, twin %g", c.wt, nb, r, out[r], want)
			}
		}
	})
}

// legacyQuadTwins pairs the packed-group tiled kernels with their twins.
var legacyQuadTwins = []struct {
	wt    quant.Type
	block int // bytes per packed block
	twin  func(nb int, x, y []byte) [4]float32
}{
	{quant.Q5_0, packQ8Block, quadQ5_0Twin},
	{quant.Q4_1, packQ81Block, quadQ4_1Twin},
	{quant.Q5_1, packQ81Block, quadQ5_1Twin},
}

// checkLegacyQuad runs the tiled kernel of c on x and the packed group y
// and compares it with the twin bit for bit.
func checkLegacyQuad(t *testing.T, wt quant.Type, twin func(int, []byte, []byte) [4]float32, nb int, x, y []byte) {
	t.Helper()
	var got [4]float32
	avx2Kernels.gemm[wt].quad(nb, x, y, 0, &got)
	want := twin(nb, x, y)
	for c := range 4 {
		if !sameFloat(got[c], want[c]) {
			t.Fatalf("%v quad nb=%d column %d: asm %g (%#x), twin %g (%#x)", wt, nb, c,
				got[c], math.Float32bits(got[c]), want[c], math.Float32bits(want[c]))
		}
	}
}

// TestLegacyQuadTwins checks the q5_0, q4_1 and q5_1 tiled kernels
// against their twins bit for bit on random rows and packed groups
// (random bytes: NaN, Inf and denormal scales included, or finite
// float32 scales as the packing writes them).
func TestLegacyQuadTwins(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(33, 34))
	for _, c := range legacyQuadTwins {
		for range 300 {
			nb := rng.IntN(16)
			x := simdRow(rng, c.wt, nb*quant.QK, rng.IntN(64), 0)
			y := simdRow(rng, quant.I8, nb*c.block, rng.IntN(64), 0)
			if rng.IntN(2) == 0 {
				for ib := range nb {
					for s := range (c.block - 128) / 4 {
						f32s(y[ib*c.block:], int64(4*s), 1)[0] = float32(rng.NormFloat64())
					}
				}
			}
			checkLegacyQuad(t, c.wt, c.twin, nb, x, y)
		}
	}
}

// FuzzLegacyQuad is the fuzzing form of TestLegacyQuadTwins.
func FuzzLegacyQuad(f *testing.F) {
	if !hasAVX2() {
		f.Skip("CPU lacks AVX2/FMA/F16C")
	}
	f.Add(uint8(0), uint8(3), uint8(1), uint8(2), []byte{1, 2, 3, 200, 17})
	f.Add(uint8(1), uint8(5), uint8(0), uint8(0), []byte{255, 128})
	f.Add(uint8(2), uint8(7), uint8(9), uint8(3), []byte{60, 0, 1})
	f.Fuzz(func(t *testing.T, kind, blocks, xoff, yoff uint8, data []byte) {
		c := legacyQuadTwins[int(kind)%len(legacyQuadTwins)]
		nb := int(blocks) % 20
		x := fillRow(c.wt, nb*quant.QK, int(xoff%64), data)
		y := fillRow(quant.I8, nb*c.block, int(yoff%64), data[len(data)/3:])
		checkLegacyQuad(t, c.wt, c.twin, nb, x, y)
	})
}
