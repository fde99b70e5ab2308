package cpu

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// vdScaleFields lists, per block type, the byte offsets of the f16 scale
// fields in a block; random blocks get sane values there so that the dot
// products stay finite.
var vdScaleFields = map[quant.Type][]int{
	quant.Q4_0: {0}, quant.Q4_1: {0, 2}, quant.Q5_0: {0}, quant.Q5_1: {0, 2},
	quant.Q8_0: {0}, quant.Q8_1: {0, 2},
	quant.Q2_K: {80, 82}, quant.Q3_K: {108}, quant.Q4_K: {0, 2}, quant.Q5_K: {0, 2},
	quant.Q6_K:   {208},
	quant.IQ4_NL: {0}, quant.IQ4_XS: {0}, quant.TQ1_0: {52}, quant.TQ2_0: {64},
	quant.IQ3_XXS: {0}, quant.IQ3_S: {0}, quant.IQ2_S: {0},
}

// vdRandomRow returns a row of n elements of type wt: random bytes with
// sane scales for block types (so every code pattern occurs, including
// those the quantizers rarely emit), random values for float types.
func vdRandomRow(t testing.TB, rng *rand.Rand, wt quant.Type, n int) []byte {
	t.Helper()
	size, err := wt.RowSize(int64(n))
	if err != nil {
		t.Fatal(err)
	}
	row := alignedBytes(size)
	if wt.IsFloat() {
		if err := quant.QuantizeRow(wt, mxRandom(rng, int64(n)), row); err != nil {
			t.Fatal(err)
		}
		return row
	}
	for i := range row {
		row[i] = byte(rng.Uint32())
	}
	if !quant.CanQuantize(wt) {
		// The codebook types: random codes, finite scales below 1.
		if err := quant.RandomBlocks(wt, row, rng.Uint64()); err != nil {
			t.Fatal(err)
		}
		return row
	}
	bs := int(wt.TypeSize())
	for b := 0; b < len(row); b += bs {
		if wt == quant.Q8_K {
			binary.LittleEndian.PutUint32(row[b:], math.Float32bits(0.01+0.02*rng.Float32()))
			continue
		}
		if wt == quant.MXFP4 {
			row[b] = byte(118 + rng.IntN(8)) // E8M0 scales 2^-10 .. 2^-3
			continue
		}
		for _, off := range vdScaleFields[wt] {
			v := (0.002 + 0.05*rng.Float32()) * float32(1-2*int(rng.IntN(2)))
			binary.LittleEndian.PutUint16(row[b+off:], quant.FP32ToFP16(v))
		}
	}
	return row
}

// dequant returns row (n elements of type typ) as float64.
func vdDequant(t *testing.T, typ quant.Type, row []byte, n int) []float64 {
	t.Helper()
	f := make([]float32, n)
	if err := quant.DequantizeRow(typ, row, f); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, n)
	for i, v := range f {
		out[i] = float64(v)
	}
	return out
}

// TestVecDot checks every dot kernel against a float64 dot product of the
// dequantized operands. The kernels sum in float32 (or float64), so they
// must agree to float32 rounding of the sum of |x*y|; q4_1 and q5_1 also
// use the activation's s = d*sum(q) field, which is stored as f16, so the
// min term carries an extra relative error of 2^-11 of |m_x*s_y| per block.
func TestVecDot(t *testing.T) {
	forEachTier(t, testVecDot)
}

func testVecDot(t *testing.T, ks *kernelSet) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, wt := range mxWeightTypes {
		kern, err := ks.dot(wt)
		if err != nil {
			t.Fatal(err)
		}
		for _, blocks := range []int{1, 3, 8} {
			n := blocks * int(wt.BlockSize())
			for trial := range 20 {
				x := vdRandomRow(t, rng, wt, n)
				ysize, err := kern.actType.RowSize(int64(n))
				if err != nil {
					t.Fatal(err)
				}
				y := alignedBytes(ysize)
				yf := mxRandom(rng, int64(n))
				if trial%2 == 1 {
					for i := range yf {
						yf[i] *= 100 // large activations
					}
				}
				if err := ks.convertRow(kern.actType, yf, y); err != nil {
					t.Fatal(err)
				}
				xd, yd := vdDequant(t, wt, x, n), vdDequant(t, kern.actType, y, n)
				var want, mag float64
				for i := range xd {
					want += xd[i] * yd[i]
					mag += math.Abs(xd[i] * yd[i])
				}
				tol := 1e-5*mag + 1e-30
				if kern.actType == quant.Q8_1 {
					tol += vdMinTermBound(t, wt, x, y, n)
				}
				got := float64(kern.dot(n, x, y))
				if math.Abs(got-want) > tol {
					t.Errorf("%v n=%d trial %d: got %.9g, want %.9g (tol %.3g)", wt, n, trial, got, want, tol)
				}
			}
		}
	}
}

// vdMinTermBound bounds the error the f16 s field of q8_1 blocks adds to a
// q4_1 or q5_1 dot product: per block |m_x|*|s_y|*2^-10.
func vdMinTermBound(t *testing.T, wt quant.Type, x, y []byte, n int) float64 {
	t.Helper()
	var bound float64
	for b := range n / quant.QK {
		m := float64(simd.HalfAt(x, b*int(wt.TypeSize())+2))
		s := float64(simd.HalfAt(y, b*simd.BytesQ8_1+2))
		bound += math.Abs(m*s) * math.Ldexp(1, -10)
	}
	return bound
}

// TestDotKernelTable checks that the kernel table covers every weight type
// with the activation type quant names, and refuses the others.
func TestDotKernelTable(t *testing.T) {
	for _, wt := range quant.Types() {
		_, err := dotKernelFor(wt)
		want := wt.IsFloat() || wt.IsQuantized()
		if (err == nil) != want {
			t.Errorf("%v: dotKernelFor err = %v, want supported=%v", wt, err, want)
		}
	}
}

// TestHalfTable spot-checks the f16 lookup table against quant.
func TestHalfTable(t *testing.T) {
	for _, h := range []uint16{0, 0x8000, 0x3c00, 0x7bff, 0x0001, 0x7c00, 0xfc00, 0x3555} {
		if got, want := simd.HalfTable[h], quant.FP16ToFP32(h); math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("simd.HalfTable[%#04x] = %v, want %v", h, got, want)
		}
	}
}

// TestConvertRowMarksNaN checks that converting an activation row to
// the quantized vec-dot types marks exactly the blocks whose source holds
// a NaN (their scale made NaN, so the product is NaN), on every tier: a
// NaN first, last, in the middle, in a row's tail beyond the tier's
// vector runs, and none (no block marked; infinities do not count).
func TestConvertRowMarksNaN(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for _, ks := range kernelSets() {
		for _, vt := range []quant.Type{quant.Q8_0, quant.Q8_1, quant.Q8_K} {
			bs := int(vt.BlockSize())
			n := 17 * bs
			for _, at := range []int{-1, 0, n - 1, n / 2, n - bs/2 - 3} {
				src := make([]float32, n)
				for i := range src {
					src[i] = float32(rng.NormFloat64())
				}
				src[5] = float32(math.Inf(1))
				if at >= 0 {
					src[at] = float32(math.NaN())
				}
				dst := make([]byte, 17*int(vt.TypeSize()))
				if err := ks.convertRow(vt, src, dst); err != nil {
					t.Fatal(err)
				}
				for b := range 17 {
					blk := dst[b*int(vt.TypeSize()):]
					var d float64
					if vt == quant.Q8_K {
						d = float64(math.Float32frombits(binary.LittleEndian.Uint32(blk)))
					} else {
						d = float64(quant.FP16ToFP32(binary.LittleEndian.Uint16(blk)))
					}
					if want := at >= 0 && at/bs == b; math.IsNaN(d) != want {
						t.Errorf("%s %v NaN at %d: block %d scale %v", ks.name, vt, at, b, d)
					}
				}
			}
		}
	}
}
