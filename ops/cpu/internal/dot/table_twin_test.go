package dot

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// TestTableTwinsNearGeneric checks the twins of the IQ4_NL, MXFP4 and
// IQ4_XS kernels (q8_0's lanes and FMAs; IQ4_XS's scales applied to
// integer lanes) against the generic dot products, which sum in another
// order: on quantized rows of gaussian values they agree within float32
// rounding of the sum of the products' magnitudes.
func TestTableTwinsNearGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, c := range []struct {
		wt            quant.Type
		twin, generic Func
	}{
		{quant.IQ4_NL, IQ4_NLTwin, IQ4_NL},
		{quant.MXFP4, MXFP4Twin, MXFP4},
		{quant.IQ4_XS, IQ4_XSTwin, IQ4_XS},
	} {
		for _, blocks := range []int{1, 3, 8, 130} {
			n := blocks * int(c.wt.BlockSize())
			xs, ys := make([]float32, n), make([]float32, n)
			var mag float64
			for i := range xs {
				xs[i], ys[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
				mag += math.Abs(float64(xs[i]) * float64(ys[i]))
			}
			x := quantRow(t, c.wt, xs)
			y := quantRow(t, c.wt.VecDotType(), ys)
			got, want := c.twin(n, x, y), c.generic(n, x, y)
			if d := math.Abs(float64(got) - float64(want)); d > 1e-5*mag {
				t.Errorf("%v n=%d: twin %g, generic %g (|diff| %g, sum of |products| about %g)", c.wt, n, got, want, d, mag)
			}
		}
	}
}

// quantRow quantizes v to a row of type wt.
func quantRow(t *testing.T, wt quant.Type, v []float32) []byte {
	t.Helper()
	size, err := wt.RowSize(int64(len(v)))
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, size)
	if err := quant.QuantizeRow(wt, v, b); err != nil {
		t.Fatal(err)
	}
	return b
}
