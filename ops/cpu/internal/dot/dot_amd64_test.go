//go:build amd64 && !purego

package dot

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// quadAVX2 are the quad kernels by weight type.
var quadAVX2 = map[quant.Type]QuadFunc{
	quant.Q4_0: QuadQ4_0AVX2, quant.Q5_0: QuadQ5_0AVX2, quant.Q8_0: QuadQ8_0AVX2,
	quant.Q4_1: QuadQ4_1AVX2, quant.Q5_1: QuadQ5_1AVX2,
	quant.Q2_K: QuadQ2_KAVX2, quant.Q3_K: QuadQ3_KAVX2, quant.Q4_K: QuadQ4_KAVX2,
	quant.Q5_K: QuadQ5_KAVX2, quant.Q6_K: QuadQ6_KAVX2,
}

// genericK are the K formats' generic dot products, which their assembly
// equals bit for bit.
var genericK = map[quant.Type]Func{
	quant.Q2_K: Q2_K, quant.Q3_K: Q3_K, quant.Q4_K: Q4_K, quant.Q5_K: Q5_K, quant.Q6_K: Q6_K,
}

// simdTwin pairs an assembly dot product with its pure-Go twin.
type simdTwin struct {
	name      string
	wt        quant.Type
	asm, twin Func
}

// simdTwins lists every AVX2 dot product with its twin.
func simdTwins() []simdTwin {
	return []simdTwin{
		{"f32", quant.F32, F32AVX2, F32Twin},
		{"f16", quant.F16, F16AVX2, F16Twin},
		{"bf16", quant.BF16, BF16AVX2, BF16Twin},
		{"q8_0", quant.Q8_0, Q8_0AVX2, Q8_0Twin},
		{"q4_0", quant.Q4_0, Q4_0AVX2, Q4_0Twin},
		{"q5_0", quant.Q5_0, Q5_0AVX2, Q5_0Twin},
		{"q4_1", quant.Q4_1, Q4_1AVX2, Q4_1Twin},
		{"q5_1", quant.Q5_1, Q5_1AVX2, Q5_1Twin},
		// The K formats' assembly equals the generic functions.
		{"q2_K", quant.Q2_K, Q2_KAVX2, Q2_K},
		{"q3_K", quant.Q3_K, Q3_KAVX2, Q3_K},
		{"q4_K", quant.Q4_K, Q4_KAVX2, Q4_K},
		{"q5_K", quant.Q5_K, Q5_KAVX2, Q5_K},
		{"q6_K", quant.Q6_K, Q6_KAVX2, Q6_K},
		// IQ4_NL, MXFP4 and IQ4_XS take q8_0's dot with a table
		// lookup, and their own twins.
		{"iq4_nl", quant.IQ4_NL, IQ4_NLAVX2, IQ4_NLTwin},
		{"mxfp4", quant.MXFP4, MXFP4AVX2, MXFP4Twin},
		{"iq4_xs", quant.IQ4_XS, IQ4_XSAVX2, IQ4_XSTwin},
		// The ternary formats' assembly equals the generic functions.
		{"tq1_0", quant.TQ1_0, TQ1_0AVX2, TQ1_0},
		{"tq2_0", quant.TQ2_0, TQ2_0AVX2, TQ2_0},
		// And the codebook formats'.
		{"iq2_xxs", quant.IQ2_XXS, IQ2_XXSAVX2, IQ2_XXS},
		{"iq3_xxs", quant.IQ3_XXS, IQ3_XXSAVX2, IQ3_XXS},
		{"iq3_s", quant.IQ3_S, IQ3_SAVX2, IQ3_S},
		{"iq2_xs", quant.IQ2_XS, IQ2_XSAVX2, IQ2_XS},
		{"iq2_s", quant.IQ2_S, IQ2_SAVX2, IQ2_S},
		{"iq1_s", quant.IQ1_S, IQ1_SAVX2, IQ1_S},
		{"iq1_m", quant.IQ1_M, IQ1_MAVX2, IQ1_M},
	}
}

// TestBlockSums checks the integer kernels of the codebook formats
// (iq2xxsSumsAVX2, iq3xxsSumsAVX2, ...) against their twins on random
// blocks (every code byte included; 600 random trials of about
// five blocks draw each of IQ1_S's 2048 grid indices about 47 times, so
// every grid index, sign code and scale code occurs), on all-zero blocks,
// on blocks of all-ones bits (every code, sign and scale at its maximum)
// and on activations at the int8 extremes, where the int16 lanes come
// closest to saturating (TestTwins checks the row kernels built on them
// against the generic ones, scales at NaN, Inf and denormals included).
func TestBlockSums(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(13, 14))
	for _, c := range []struct {
		name      string
		bytes     int
		per       int // sums per block
		asm, twin func(x, y []byte, out []int32)
	}{
		{"iq2_xxs", bytesIQ2_XXS, 1, intSums(iq2xxsSums), iq2xxsSumsTwin},
		{"iq3_xxs", bytesIQ3_XXS, 1, intSums(iq3xxsSums), iq3xxsSumsTwin},
		{"iq3_s", bytesIQ3_S, 1, intSums(iq3sSums), iq3sSumsTwin},
		{"iq2_xs", bytesIQ2_XS, 1, intSums(iq2xsSums), iq2xsSumsTwin},
		{"iq2_s", bytesIQ2_S, 1, intSums(iq2sSums), iq2sSumsTwin},
		{"iq1_s", bytesIQ1_S, 2, intSums(iq1sSums), iq1sSumsTwin},
		{"iq1_m", bytesIQ1_M, 2, intSums(iq1mSums), iq1mSumsTwin},
	} {
		for trial := range 1000 {
			nb := 1 + rng.IntN(9)
			x, y := extremeBlocks(rng, trial, nb, c.bytes)
			got, want := make([]int32, c.per*nb), make([]int32, c.per*nb)
			c.asm(x, y, got)
			c.twin(x, y, want)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s trial %d nb=%d block %d sum %d: asm %d, twin %d", c.name, trial, nb, i/c.per, i%c.per, got[i], want[i])
				}
			}
		}
	}
}

// extremeBlocks returns nb weight blocks of size bytes and nb q8_K
// blocks for trial: the weight bytes random, all 0xff (every code, sign
// and scale at its maximum) or all 0 (trial%5 = 3, 4); the activation
// bytes random, all -128, or mixed int8 extremes (trial%3 = 1, 2), where
// int16 lanes come closest to saturating. The q8_K scales and bsums are
// whatever bytes those are.
func extremeBlocks(rng *rand.Rand, trial, nb, size int) (x, y []byte) {
	x = make([]byte, nb*size)
	y = make([]byte, nb*simd.BytesQ8_K)
	for i := range x {
		switch trial % 5 {
		case 3:
			x[i] = 0xff
		case 4:
			x[i] = 0
		default:
			x[i] = byte(rng.Uint32())
		}
	}
	for i := range y {
		switch trial % 3 {
		case 0:
			y[i] = byte(rng.Uint32())
		case 1:
			y[i] = 0x80 // -128
		default:
			y[i] = byte([]int8{-128, 127, -127}[rng.IntN(3)])
		}
	}
	return x, y
}

// intSums is a codebook kernel's sums with the float32 sum it also
// returns dropped.
func intSums(f func(x, y []byte, out []int32, acc float32) float32) func(x, y []byte, out []int32) {
	return func(x, y []byte, out []int32) { f(x, y, out, 0) }
}

func TestFMA32Hardware(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200000 {
		var v [3]float32
		for j := range v {
			switch rng.IntN(4) {
			case 0:
				v[j] = simdtest.Special[rng.IntN(len(simdtest.Special))]
			case 1:
				v[j] = math.Float32frombits(rng.Uint32())
			default:
				v[j] = float32(math.Ldexp(rng.Float64()-0.5, rng.IntN(60)-30))
			}
		}
		if i%3 == 0 {
			// Make z cancel most of x*y, where rounding is delicate.
			v[2] = -v[0] * v[1] * (1 + float32(rng.IntN(5)-2)*0x1p-23)
		}
		got, want := simd.FMA32(v[0], v[1], v[2]), fma32AVX2(v[0], v[1], v[2])
		if !simdtest.SameFloat(got, want) {
			t.Fatalf("simd.FMA32(%g, %g, %g) = %g (%#x), hardware %g (%#x)", v[0], v[1], v[2], got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
}

// TestTwins checks every AVX2 dot product against its twin bit for
// bit over random lengths, offsets and contents (random bytes for block
// formats, so scales include NaN, Inf and denormal f16 values; random
// values with NaN, Inf, denormals and extremes mixed in for float rows).
func TestTwins(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tw := range simdTwins() {
		t.Run(tw.name, func(t *testing.T) {
			act := tw.wt.VecDotType()
			bs := int(tw.wt.BlockSize())
			for trial := range 300 {
				blocks := rng.IntN(12)
				if bs == 1 {
					blocks = rng.IntN(300)
				}
				n := blocks * bs
				special := []float64{0, 0.01, 0.3}[trial%3]
				x := simdtest.Row(rng, tw.wt, n, rng.IntN(64), special)
				y := simdtest.Row(rng, act, n, rng.IntN(64), special)
				checkTwin(t, tw, n, x, y)
			}
		})
	}
}

func checkTwin(t *testing.T, tw simdTwin, n int, x, y []byte) {
	t.Helper()
	got, want := tw.asm(n, x, y), tw.twin(n, x, y)
	if !simdtest.SameFloat(got, want) {
		t.Fatalf("%s n=%d: asm %g (%#x), twin %g (%#x)", tw.name, n, got, math.Float32bits(got), want, math.Float32bits(want))
	}
}

// FuzzTwins is the fuzzing form of TestTwins (FuzzSIMDTwins before the
// kernels moved here): the fuzzer picks
// the kernel, the length, the offsets and the bytes of both rows.
func FuzzTwins(f *testing.F) {
	simdtest.NeedAVX2(f)
	twins := simdTwins()
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range twins {
		data := make([]byte, 600)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		f.Add(uint8(i), uint16(1+i), uint8(i), uint8(3*i), data)
	}
	f.Fuzz(func(t *testing.T, kind uint8, length uint16, xoff, yoff uint8, data []byte) {
		tw := twins[int(kind)%len(twins)]
		bs := int(tw.wt.BlockSize())
		n := int(length) % 4096 / bs * bs
		act := tw.wt.VecDotType()
		x := simdtest.FillRow(tw.wt, n, int(xoff%64), data)
		y := simdtest.FillRow(act, n, int(yoff%64), data[len(data)/2:])
		checkTwin(t, tw, n, x, y)
	})
}

// checkQuadK runs the K-format tiled kernel of wt on the weight row x and
// four q8_K rows ldy bytes apart at y, and compares each output with the
// generic dot product bit for bit.
func checkQuadK(t *testing.T, wt quant.Type, nb int, x, y []byte, ldy int) {
	t.Helper()
	var got [4]float32
	quadAVX2[wt](nb, x, y, ldy, &got)
	for c := range 4 {
		want := genericK[wt](nb*quant.QKK, x, y[c*ldy:])
		if !simdtest.SameFloat(got[c], want) {
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
	buf := simdtest.AlignedBytes(int64(3*ldy + rowBytes + 1))[:3*ldy+rowBytes]
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for c := range 4 {
		var row []byte
		if data != nil {
			row = simdtest.FillRow(quant.Q8_K, n, 0, data[c*len(data)/4:])
		} else {
			row = simdtest.Row(rng, quant.Q8_K, n, 0, 0)
		}
		copy(buf[c*ldy:], row)
	}
	return buf
}

// TestQuadKTwins checks the K-format tiled kernels (q2_K to q6_K)
// column by column against the generic dot product, bit for bit.
func TestQuadKTwins(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(31, 32))
	for _, wt := range []quant.Type{quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K} {
		for range 100 {
			nb := rng.IntN(10)
			ldy := nb*simd.BytesQ8_K + 4*rng.IntN(20)
			x := simdtest.Row(rng, wt, nb*quant.QKK, rng.IntN(64), 0)
			checkQuadK(t, wt, nb, x, kQuadRows(rng, nb, ldy, nil), ldy)
		}
	}
}

// FuzzQuadK is the fuzzing form of TestQuadKTwins.
func FuzzQuadK(f *testing.F) {
	simdtest.NeedAVX2(f)
	f.Add(uint8(0), uint8(2), uint8(3), uint8(1), []byte{9, 8, 7, 250, 3})
	f.Add(uint8(1), uint8(1), uint8(0), uint8(0), []byte{1})
	kinds := []quant.Type{quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K}
	f.Fuzz(func(t *testing.T, kind, blocks, gap, xoff uint8, data []byte) {
		wt := kinds[int(kind)%len(kinds)]
		nb := int(blocks) % 6
		ldy := nb*simd.BytesQ8_K + 4*int(gap%32)
		x := simdtest.FillRow(wt, nb*quant.QKK, int(xoff%64), data)
		var yd []byte
		if len(data) > 0 {
			yd = data
		}
		checkQuadK(t, wt, nb, x, kQuadRows(rand.New(rand.NewPCG(uint64(len(data)), 2)), nb, ldy, yd), ldy)
	})
}

// legacyQuadTwins pairs the packed-group tiled kernels with their twins.
var legacyQuadTwins = []struct {
	wt    quant.Type
	block int // bytes per packed block
	twin  func(nb int, x, y []byte) [4]float32
}{
	{quant.Q5_0, PackQ8Block, QuadQ5_0Twin},
	{quant.Q4_1, PackQ81Block, QuadQ4_1Twin},
	{quant.Q5_1, PackQ81Block, QuadQ5_1Twin},
}

// checkLegacyQuad runs the tiled kernel of c on x and the packed group y
// and compares it with the twin bit for bit.
func checkLegacyQuad(t *testing.T, wt quant.Type, twin func(int, []byte, []byte) [4]float32, nb int, x, y []byte) {
	t.Helper()
	var got [4]float32
	quadAVX2[wt](nb, x, y, 0, &got)
	want := twin(nb, x, y)
	for c := range 4 {
		if !simdtest.SameFloat(got[c], want[c]) {
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
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(33, 34))
	for _, c := range legacyQuadTwins {
		for range 300 {
			nb := rng.IntN(16)
			x := simdtest.Row(rng, c.wt, nb*quant.QK, rng.IntN(64), 0)
			y := simdtest.Row(rng, quant.I8, nb*c.block, rng.IntN(64), 0)
			if rng.IntN(2) == 0 {
				for ib := range nb {
					for s := range (c.block - 128) / 4 {
						simd.F32s(y[ib*c.block:], int64(4*s), 1)[0] = float32(rng.NormFloat64())
					}
				}
			}
			checkLegacyQuad(t, c.wt, c.twin, nb, x, y)
		}
	}
}

// FuzzLegacyQuad is the fuzzing form of TestLegacyQuadTwins.
func FuzzLegacyQuad(f *testing.F) {
	simdtest.NeedAVX2(f)
	f.Add(uint8(0), uint8(3), uint8(1), uint8(2), []byte{1, 2, 3, 200, 17})
	f.Add(uint8(1), uint8(5), uint8(0), uint8(0), []byte{255, 128})
	f.Add(uint8(2), uint8(7), uint8(9), uint8(3), []byte{60, 0, 1})
	f.Fuzz(func(t *testing.T, kind, blocks, xoff, yoff uint8, data []byte) {
		c := legacyQuadTwins[int(kind)%len(legacyQuadTwins)]
		nb := int(blocks) % 20
		x := simdtest.FillRow(c.wt, nb*quant.QK, int(xoff%64), data)
		y := simdtest.FillRow(quant.I8, nb*c.block, int(yoff%64), data[len(data)/3:])
		checkLegacyQuad(t, c.wt, c.twin, nb, x, y)
	})
}

// TestTableKernelsLong checks the table-coded, ternary and codebook
// kernels on rows longer than the tableChunk (64) blocks one call of the
// chunked integer kernels covers.
func TestTableKernelsLong(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tw := range simdTwins() {
		switch tw.wt {
		case quant.IQ4_NL, quant.MXFP4, quant.IQ4_XS, quant.TQ1_0, quant.TQ2_0, quant.IQ2_XXS,
			quant.IQ3_XXS, quant.IQ3_S, quant.IQ2_XS, quant.IQ2_S, quant.IQ1_S, quant.IQ1_M:
		default:
			continue
		}
		for _, blocks := range []int{63, 64, 65, 129, 200} {
			n := blocks * int(tw.wt.BlockSize())
			x := simdtest.Row(rng, tw.wt, n, 0, 0)
			y := simdtest.Row(rng, tw.wt.VecDotType(), n, 0, 0)
			checkTwin(t, tw, n, x, y)
		}
	}
}

// TestSuperBlockExtremes checks the q8_K kernels that sum a whole
// super-block in integer lanes (IQ4_XS against its twin, TQ1_0 and TQ2_0
// against the generic functions) where their int16 and int32 lanes come
// closest to saturating: weight code bytes all 0xff or all 0 (every
// index, scale and trit at its largest or smallest; tq1_0's bytes above
// 242 included) or random, activations all -128, all 127 or mixed
// extremes, with finite scales so that the sums are not hidden by a NaN.
func TestSuperBlockExtremes(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(15, 16))
	for _, tw := range simdTwins() {
		var dOff int // offset of the f16 scale in the weight block
		switch tw.wt {
		case quant.IQ4_XS:
		case quant.TQ1_0:
			dOff = bytesTQ1_0 - 2
		case quant.TQ2_0:
			dOff = bytesTQ2_0 - 2
		default:
			continue
		}
		bs := int(simdtest.MustRowSize(t, tw.wt, quant.QKK))
		for trial := range 60 {
			nb := 1 + rng.IntN(5)
			x, y := superBlockExtremes(rng, trial, nb, bs, dOff)
			checkTwin(t, tw, nb*quant.QKK, x, y)
		}
	}
}

// superBlockExtremes returns nb weight blocks of size bytes and nb q8_K
// blocks for trial: the weight bytes all 0xff, all 0 or random
// (trial%3), the activations all -128, all 127 or mixed int8 extremes
// (trial/3%3), the weights' f16 scale at dOff and the activations'
// scale about 1 (so that no sum hides behind a NaN), and the bsums the
// sums of the codes.
func superBlockExtremes(rng *rand.Rand, trial, nb, size, dOff int) (x, y []byte) {
	x = make([]byte, nb*size)
	y = make([]byte, nb*simd.BytesQ8_K)
	for i := range x {
		x[i] = []byte{0xff, 0, byte(rng.Uint32())}[trial%3]
	}
	for i := range y {
		switch trial / 3 % 3 {
		case 0:
			y[i] = 0x80
		case 1:
			y[i] = 127
		default:
			y[i] = byte([]int8{-128, 127, -127}[rng.IntN(3)])
		}
	}
	for b := range nb {
		binary.LittleEndian.PutUint16(x[b*size+dOff:], 0x3c00+uint16(rng.IntN(64))) // about 1
		binary.LittleEndian.PutUint32(y[b*simd.BytesQ8_K:], math.Float32bits(1+float32(rng.IntN(64))/64))
	}
	simdtest.FixBsums(quant.Q8_K, y)
	return x, y
}

// BenchmarkIQDot measures the codebook formats' AVX2 dot products on one
// row of 4096 elements against a q8_K row, both from L1 (the per-row
// kernel of MUL_MAT with one activation row).
func BenchmarkIQDot(b *testing.B) {
	if !simdtest.HasAVX2() {
		b.Skip("CPU lacks AVX2")
	}
	for _, c := range []struct {
		name string
		wt   quant.Type
		f    Func
	}{
		{"iq2_xxs", quant.IQ2_XXS, IQ2_XXSAVX2}, {"iq2_xs", quant.IQ2_XS, IQ2_XSAVX2}, {"iq2_s", quant.IQ2_S, IQ2_SAVX2},
		{"iq3_xxs", quant.IQ3_XXS, IQ3_XXSAVX2}, {"iq3_s", quant.IQ3_S, IQ3_SAVX2},
		{"iq1_s", quant.IQ1_S, IQ1_SAVX2}, {"iq1_m", quant.IQ1_M, IQ1_MAVX2},
		{"tq1_0", quant.TQ1_0, TQ1_0AVX2}, {"tq2_0", quant.TQ2_0, TQ2_0AVX2},
	} {
		benchIQDot(b, c.name, c.wt, c.f)
	}
}

// benchIQDot times f on a random row of 4096 elements of type wt against
// a q8_K row of normal values, both from L1.
func benchIQDot(b *testing.B, name string, wt quant.Type, f Func) {
	const n = 4096
	rng := rand.New(rand.NewPCG(5, 6))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	y := make([]byte, n/quant.QKK*simd.BytesQ8_K)
	if err := quant.QuantizeRow(quant.Q8_K, v, y); err != nil {
		b.Fatal(err)
	}
	size, err := wt.RowSize(n)
	if err != nil {
		b.Fatal(err)
	}
	x := make([]byte, size)
	for i := range x {
		x[i] = byte(rng.Uint32())
	}
	b.Run(name, func(b *testing.B) {
		for b.Loop() {
			f(n, x, y)
		}
	})
}
