package sample

// Dist returns a sampler that selects a candidate at random with the
// probabilities of the softmax of the current list, from a PCG generator
// seeded with seed. It writes those probabilities into P. Reset reseeds the
// generator, so the same seed replays the same draws. A zero-probability
// candidate (logit -Inf next to finite ones) is never drawn.
func Dist(seed uint64) Sampler { return &dist{rng: newRNG(seed)} }

type dist struct{ rng *seededRNG }

func (*dist) Name() string          { return "dist" }
func (*dist) Accept(int32)          {}
func (s *dist) Reset()              { s.rng.reset() }
func (s *dist) Apply(c *Candidates) { draw(c, s.rng) }
