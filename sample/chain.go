package sample

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Sampler is one step of a sampling chain, as llama.cpp's llama_sampler.
//
// Apply narrows, reweights or selects from the candidates. Accept tells the
// sampler which token was finally chosen (the chain calls it after every
// pick; callers also feed it prompt tokens so that penalties see them).
// Reset returns the sampler to its freshly constructed state: histories are
// cleared, generators reseeded with their original seed, mirostat's mu
// restored.
//
// Apply must not panic on any list, including an empty one, and must leave
// Selected either -1 or a valid index.
type Sampler interface {
	Name() string
	Apply(c *Candidates)
	Accept(id int32)
	Reset()
}

// pcgStream is the second PCG seed word used by every generator in this
// package; the first is the caller's seed.
const pcgStream = 0x73616d706c652e67 // "sample.g"

// seededRNG is a PCG generator that remembers its seed so Reset can restart
// the same sequence.
type seededRNG struct {
	seed uint64
	pcg  *rand.PCG
	r    *rand.Rand
}

func newRNG(seed uint64) *seededRNG {
	p := rand.NewPCG(seed, pcgStream)
	return &seededRNG{seed: seed, pcg: p, r: rand.New(p)}
}

func (g *seededRNG) reset() { g.pcg.Seed(g.seed, pcgStream) }

// draw computes the softmax of c and selects a candidate with probability P:
// it takes u uniform in [0, 1) and picks the first candidate whose
// cumulative probability exceeds u times the total. The comparison is
// strict, so a zero-probability candidate is never drawn (llama.cpp's ">="
// can pick a leading zero-probability candidate when u is 0). It returns the
// index it picked, or -1 for an empty list.
func draw(c *Candidates, g *seededRNG) int {
	if len(c.Items) == 0 {
		c.Selected = -1
		return -1
	}
	c.Softmax()
	var total float64
	for _, it := range c.Items {
		total += float64(it.P)
	}
	target := g.r.Float64() * total
	var cum float64
	last := -1
	for i, it := range c.Items {
		if it.P <= 0 {
			continue
		}
		cum += float64(it.P)
		last = i
		if cum > target {
			c.Selected = i
			return i
		}
	}
	// Only reachable through rounding in the running sum (or if no
	// candidate has positive probability, which Softmax rules out).
	if last < 0 {
		last = 0
	}
	c.Selected = last
	return last
}

// Chain runs samplers in order and picks a token, as llama.cpp's sampler
// chain. It is itself a [Sampler], so chains nest.
//
// If no sampler in the chain selects a token (the chain does not end in
// [Greedy], [Dist] or a mirostat sampler, or a later sampler cleared the
// selection), the chain draws one from the softmax of the remaining
// candidates with its own generator, seeded by the seed given to
// [NewChain]. A chain is not safe for concurrent use.
type Chain struct {
	samplers []Sampler
	rng      *seededRNG
	nVocab   int
	cand     Candidates
}

// NewChain returns a chain running samplers in the given order; nil entries
// are dropped. seed seeds the chain's fallback draw (see [Chain]); samplers
// with their own generators ([Dist], mirostat) have their own seeds.
func NewChain(seed uint64, samplers ...Sampler) *Chain {
	c := &Chain{rng: newRNG(seed)}
	for _, s := range samplers {
		if s != nil {
			c.samplers = append(c.samplers, s)
		}
	}
	return c
}

// Name returns "chain".
func (c *Chain) Name() string { return "chain" }

// Names returns the names of the chain's samplers in order.
func (c *Chain) Names() []string {
	names := make([]string, len(c.samplers))
	for i, s := range c.samplers {
		names[i] = s.Name()
	}
	return names
}

// Samplers returns the chain's samplers in order. The slice is a copy; the
// samplers are shared.
func (c *Chain) Samplers() []Sampler {
	return append([]Sampler(nil), c.samplers...)
}

// Apply runs every sampler over cand in order, then, if none left a valid
// selection and cand is not empty, draws one (see [Chain]).
func (c *Chain) Apply(cand *Candidates) {
	cand.Selected = -1
	for _, s := range c.samplers {
		s.Apply(cand)
	}
	if cand.Selected < 0 || cand.Selected >= len(cand.Items) {
		draw(cand, c.rng)
	}
}

// Accept passes id to every sampler, e.g. to record prompt tokens in the
// penalties history. [Chain.Sample] calls it with the token it picks.
func (c *Chain) Accept(id int32) {
	for _, s := range c.samplers {
		s.Accept(id)
	}
}

// Reset resets every sampler and reseeds the chain's own generator, so the
// chain replays the same choices for the same logits.
func (c *Chain) Reset() {
	for _, s := range c.samplers {
		s.Reset()
	}
	c.rng.reset()
}

// Sample picks the next token from logits (logits[i] is token i's logit):
// it builds the candidate list, applies the chain, accepts the chosen token
// and returns it. It is an error for logits to be empty, longer than an
// int32 can index, a different length from the vocabulary size the chain was
// built for (by [FromParams]), to hold a NaN or +Inf, or to be all -Inf.
func (c *Chain) Sample(logits []float32) (int32, error) {
	if err := c.checkLogits(logits); err != nil {
		return 0, err
	}
	c.cand.Reset(logits)
	c.Apply(&c.cand)
	id, ok := c.cand.Token()
	if !ok {
		return 0, fmt.Errorf("sample: chain %v left no candidate to pick", c.Names())
	}
	c.Accept(id)
	return id, nil
}

// Last returns the candidate list as the last [Chain.Sample] left it: the
// surviving candidates, their probabilities where the chain computed them,
// and the selection. After a call that returned an error its contents are
// unspecified. The next call to Sample overwrites it.
func (c *Chain) Last() *Candidates { return &c.cand }

func (c *Chain) checkLogits(logits []float32) error {
	n := len(logits)
	if n == 0 {
		return fmt.Errorf("sample: empty logit vector")
	}
	if n > math.MaxInt32 {
		return fmt.Errorf("sample: %d logits exceed the int32 token id range", n)
	}
	if c.nVocab > 0 && n != c.nVocab {
		return fmt.Errorf("sample: %d logits for a chain built for a vocabulary of %d", n, c.nVocab)
	}
	finite := false
	for i, l := range logits {
		switch {
		case l != l:
			return fmt.Errorf("sample: logit of token %d is NaN", i)
		case math.IsInf(float64(l), 1):
			return fmt.Errorf("sample: logit of token %d is +Inf", i)
		case !math.IsInf(float64(l), -1):
			finite = true
		}
	}
	if !finite {
		return fmt.Errorf("sample: all %d logits are -Inf", n)
	}
	return nil
}
