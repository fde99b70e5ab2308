package sample

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func sampleN(t *testing.T, c *Chain, logits []float32, n int) []int32 {
	t.Helper()
	out := make([]int32, n)
	for i := range out {
		id, err := c.Sample(logits)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = id
	}
	return out
}

func TestChainReproducible(t *testing.T) {
	logits := randLogits(21, 1000, 2)
	p := DefaultParams()
	p.Temp = 1.5
	p.RepeatPenalty = 1.1
	build := func(seed uint64) *Chain {
		p.Seed = seed
		c, err := FromParams(p, len(logits))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a := sampleN(t, build(42), logits, 200)
	if b := sampleN(t, build(42), logits, 200); !slices.Equal(a, b) {
		t.Error("same seed gave different sequences")
	}
	if d := sampleN(t, build(43), logits, 200); slices.Equal(a, d) {
		t.Error("seeds 42 and 43 gave the same 200 tokens")
	}
	distinct := map[int32]bool{}
	for _, id := range a {
		distinct[id] = true
	}
	if len(distinct) < 5 {
		t.Errorf("temperature 1.5 over 1000 tokens drew only %d distinct tokens", len(distinct))
	}
	c := build(42)
	sampleN(t, c, logits, 50)
	c.Reset()
	if r := sampleN(t, c, logits, 200); !slices.Equal(a, r) {
		t.Error("Reset did not replay the sequence")
	}
}

func TestChainFallbackDraw(t *testing.T) {
	// No selecting sampler: the chain draws from what top-k left, ids 3 and 2.
	c := NewChain(7, TopK(2))
	seen := map[int32]int{}
	for range 400 {
		id, err := c.Sample([]float32{1, 2, 3, 4})
		if err != nil {
			t.Fatal(err)
		}
		seen[id]++
	}
	// p(3) = e/(1+e) = 0.731, p(2) = 0.269.
	if len(seen) != 2 || seen[3] < 200 || seen[2] < 60 {
		t.Errorf("draws %v, want only ids 2 and 3 at about 27%% / 73%%", seen)
	}
}

func TestChainPenaltiesFeedBack(t *testing.T) {
	// Greedy with a frequency penalty of 10 over a window of 2 cycles
	// through the three tokens: each pick is pushed far down while it is
	// in the window.
	c := NewChain(0, Penalties(2, 1, 10, 0), Greedy())
	got := sampleN(t, c, []float32{0, 1, 2}, 6)
	if want := []int32{2, 1, 0, 2, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// Prompt tokens fed through Accept count too.
	c.Reset()
	c.Accept(2)
	if id, _ := c.Sample([]float32{0, 1, 2}); id != 1 {
		t.Errorf("after accepting 2, greedy picked %d, want 1", id)
	}
}

func TestChainNested(t *testing.T) {
	inner := NewChain(1, TopK(3), Temperature(0))
	c := NewChain(2, nil, inner)
	if got := c.Names(); !slices.Equal(got, []string{"chain"}) {
		t.Errorf("names %v: nil not dropped", got)
	}
	id, err := c.Sample([]float32{5, 9, 1, 9})
	if err != nil || id != 1 {
		t.Errorf("nested greedy picked %d (%v), want 1", id, err)
	}
	last := c.Last()
	if tok, ok := last.Token(); !ok || tok != id {
		t.Errorf("Last() selection %d/%v does not match %d", tok, ok, id)
	}
}

func TestChainErrors(t *testing.T) {
	nan := float32(math.NaN())
	fixed, err := FromParams(DefaultParams(), 3)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		chain  *Chain
		logits []float32
		want   string
	}{
		{"empty", NewChain(0, Greedy()), nil, "empty"},
		{"nan", NewChain(0, Greedy()), []float32{1, nan}, "token 1 is NaN"},
		{"+inf", NewChain(0, Greedy()), []float32{inf, 1}, "token 0 is +Inf"},
		{"all -inf", NewChain(0, Greedy()), []float32{-inf, -inf}, "all 2 logits are -Inf"},
		{"length", fixed, []float32{1, 2}, "vocabulary of 3"},
		{"emptied", NewChain(0, emptier{}), []float32{1, 2}, "left no candidate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.chain.Sample(tt.logits)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// emptier is a misbehaving sampler that removes every candidate.
type emptier struct{}

func (emptier) Name() string        { return "emptier" }
func (emptier) Accept(int32)        {}
func (emptier) Reset()              {}
func (emptier) Apply(c *Candidates) { c.Items = c.Items[:0] }
