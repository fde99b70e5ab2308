package sample

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// cands returns an unsorted candidate list with ID i for logits[i].
func cands(logits ...float32) *Candidates {
	c := &Candidates{}
	c.Reset(logits)
	return c
}

// lnp returns the natural logs of probabilities, as logits whose softmax is
// those probabilities (when they sum to one).
func lnp(ps ...float64) []float32 {
	l := make([]float32, len(ps))
	for i, p := range ps {
		l[i] = float32(math.Log(p))
	}
	return l
}

func ids(c *Candidates) []int32 {
	out := make([]int32, len(c.Items))
	for i, it := range c.Items {
		out[i] = it.ID
	}
	return out
}

func logitsOf(c *Candidates) []float32 {
	out := make([]float32, len(c.Items))
	for i, it := range c.Items {
		out[i] = it.Logit
	}
	return out
}

func wantIDs(t *testing.T, c *Candidates, want []int32) {
	t.Helper()
	if got := ids(c); !slices.Equal(got, want) {
		t.Errorf("kept ids %v, want %v (%v)", got, want, c)
	}
}

// randLogits returns n logits drawn from N(0, scale^2) with a fixed seed,
// rounded to a grid of 1/8 so that ties occur.
func randLogits(seed uint64, n int, scale float64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	l := make([]float32, n)
	for i := range l {
		l[i] = float32(math.Round(r.NormFloat64()*scale*8) / 8)
	}
	return l
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }
