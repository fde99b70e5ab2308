package gemv

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// x8Types lists the x8 formats with their repacking, side data and twin.
var x8Types = []struct {
	wt     quant.Type
	bs     int
	per    int
	repack func(dst, src []byte, nb int)
	unpack func(dst, src []byte, nb int)
	prep   func(y []byte, nb int, side []float32)
	twin   X8Func
}{
	{quant.Q4_0, simd.BytesQ4_0, X8SlotsQ4_0, RepackX8Q4_0, unpackX8(simd.BytesQ4_0), Q4_0Prep, X8Q4_0Twin},
	{quant.Q8_0, simd.BytesQ8_0, X8SlotsQ8_0, RepackX8Q8_0, unpackX8(simd.BytesQ8_0), X8Q8_0Prep, X8Q8_0Twin},
	{quant.Q6_K, simd.BytesQ6_K, X8SlotsK, RepackX8Q6_K, UnpackX8Q6_K, X8Q8_KPrep, X8Q6_KTwin},
	{quant.Q4_K, simd.BytesQ4_K, X8SlotsK, RepackX8Q4_K, UnpackX8Q4_K, X8Q8_KPrep, X8Q4_KTwin},
}

// unpackX8 is UnpackX8 for blocks of bs bytes.
func unpackX8(bs int) func(dst, src []byte, nb int) {
	return func(dst, src []byte, nb int) { UnpackX8(dst, src, nb, bs) }
}

// quantRows returns rows of n elements of t quantized from random
// values, and the values the rows decode to.
func quantRows(t testing.TB, rng *rand.Rand, wt quant.Type, rows, n int) ([]byte, [][]float32) {
	t.Helper()
	size, err := wt.RowSize(int64(n))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, int64(rows)*size)
	dec := make([][]float32, rows)
	src := make([]float32, n)
	for r := range rows {
		for i := range src {
			src[i] = float32(rng.NormFloat64())
		}
		row := out[int64(r)*size : int64(r+1)*size]
		if err := quant.QuantizeRow(wt, src, row); err != nil {
			t.Fatal(err)
		}
		dec[r] = make([]float32, n)
		if err := quant.DequantizeRow(wt, row, dec[r]); err != nil {
			t.Fatal(err)
		}
	}
	return out, dec
}

// TestX8RoundTrip checks that the UnpackX8 functions restore what
// RepackX8* packed, for any bytes,
// and that a repacked group keeps its size.
func TestX8RoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range x8Types {
		for _, nb := range []int{1, 2, 7, 32} {
			src := make([]byte, 8*nb*c.bs)
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			x8 := make([]byte, len(src))
			c.repack(x8, src, nb)
			if bytes.Equal(x8, src) {
				t.Fatalf("%v nb=%d: repacking changed nothing", c.wt, nb)
			}
			back := make([]byte, len(src))
			c.unpack(back, x8, nb)
			if !bytes.Equal(back, src) {
				t.Fatalf("%v nb=%d: unpacked rows differ from the originals", c.wt, nb)
			}
		}
	}
}

// TestX8TwinsReference checks the x8 twins against the float64 dot
// products of the decoded rows (quantized weights and activations), for
// several groups per call.
func TestX8TwinsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range x8Types {
		for _, shape := range [][2]int{{1, 1}, {3, 2}, {16, 3}} {
			nb, ng := shape[0], shape[1]
			n := nb * int(c.wt.BlockSize())
			t.Run(fmt.Sprintf("%v/nb=%d/ng=%d", c.wt, nb, ng), func(t *testing.T) {
				w, wdec := quantRows(t, rng, c.wt, 8*ng, n)
				y, ydec := quantRows(t, rng, c.wt.VecDotType(), 1, n)
				x := make([]byte, len(w))
				for g := range ng {
					grp := 8 * nb * c.bs
					c.repack(x[g*grp:(g+1)*grp], w[g*grp:(g+1)*grp], nb)
				}
				side := make([]float32, nb*c.per)
				c.prep(y, nb, side)
				out := make([]float32, 8*ng)
				c.twin(nb, ng, x, y, side, out)
				for r := range 8 * ng {
					var want, mag float64
					for i := range n {
						p := float64(wdec[r][i]) * float64(ydec[0][i])
						want += p
						mag += math.Abs(p)
					}
					if d := math.Abs(float64(out[r]) - want); d > 1e-5*mag+1e-6 {
						t.Errorf("row %d: twin %g, reference %g (|diff| %g, sum of |products| %g)", r, out[r], want, d, mag)
					}
				}
			})
		}
	}
}
