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
