package sample

import (
	"slices"
	"testing"
)

// Dist's draws must follow the softmax probabilities. With a fixed seed the
// test is deterministic; the bound is Pearson's chi-square critical value
// for 3 degrees of freedom at the 0.001 level, 16.27.
func TestDistFrequencies(t *testing.T) {
	probs := []float64{0.1, 0.2, 0.3, 0.4}
	const draws = 40000
	for _, seed := range []uint64{1, 2, 3} {
		s := Dist(seed)
		var counts [4]int
		c := &Candidates{}
		for range draws {
			c.Reset(lnp(probs...))
			s.Apply(c)
			id, ok := c.Token()
			if !ok {
				t.Fatal("dist selected nothing")
			}
			counts[id]++
		}
		var chi2 float64
		for i, p := range probs {
			e := p * draws
			d := float64(counts[i]) - e
			chi2 += d * d / e
		}
		t.Logf("seed %d: counts %v chi2 %.2f", seed, counts, chi2)
		if chi2 > 16.27 {
			t.Errorf("seed %d: counts %v, chi-square %.2f > 16.27 against %v", seed, counts, chi2, probs)
		}
		for i, p := range probs {
			if !near(float64(c.Items[i].P), p, 1e-6) {
				t.Errorf("P[%d] = %g, want %g", i, c.Items[i].P, p)
			}
		}
	}
}

func TestDistNeverDrawsImpossible(t *testing.T) {
	s := Dist(9)
	c := &Candidates{}
	for range 20000 {
		c.Reset([]float32{-inf, 0, -inf, 0, -inf})
		s.Apply(c)
		if id, _ := c.Token(); id != 1 && id != 3 {
			t.Fatalf("drew id %d with probability zero", id)
		}
	}
}

func TestDistReproducible(t *testing.T) {
	logits := randLogits(2, 50, 1)
	run := func(s Sampler) []int32 {
		var out []int32
		c := &Candidates{}
		for range 100 {
			c.Reset(logits)
			s.Apply(c)
			id, _ := c.Token()
			out = append(out, id)
		}
		return out
	}
	a, b := Dist(5), Dist(5)
	ra := run(a)
	if rb := run(b); !slices.Equal(ra, rb) {
		t.Error("same seed, different draws")
	}
	a.Reset()
	if rr := run(a); !slices.Equal(ra, rr) {
		t.Error("Reset did not replay the draws")
	}
	if rc := run(Dist(6)); slices.Equal(ra, rc) {
		t.Error("seeds 5 and 6 drew the same 100 tokens")
	}
}
