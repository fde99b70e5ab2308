package sample

import "math"

// Mirostat is the sampler [MirostatV1] and [MirostatV2] return: an
// adaptive sampler (Basu et al., 2020) that aims for a target surprise tau
// (in bits) per token. It keeps a running bound mu, initially 2*tau, and
// after each draw lowers it by eta*(observed surprise - tau), where the
// observed surprise is -log2 of the drawn candidate's probability among the
// candidates it kept. Reset restores mu and reseeds the generator.
type Mirostat struct {
	v2       bool
	tau, eta float64
	m        int
	nVocab   int
	mu       float64
	rng      *seededRNG
}

// MirostatV1 returns llama.cpp's mirostat (version 1) sampler. On each
// Apply it sorts the list, takes a softmax, and estimates the Zipf exponent
// s from the m most probable candidates by least squares on
// b_i = ln(p_i/p_{i+1}) against t_i = ln((i+2)/(i+1)):
// s = sum(t_i*b_i) / sum(t_i^2). With eps = s - 1 and N = nVocab it keeps
// the top k = (eps * 2^mu / (1 - N^-eps))^(1/s) candidates (at least one),
// renormalises, draws one with its generator, and updates mu.
//
// Departures from llama.cpp, which produces NaN in these cases: the
// estimate stops at the first zero probability; with nothing to estimate
// from (m < 2, one candidate) k is 1; at eps = 0 the limit
// eps/(1 - N^-eps) = 1/ln N is used; k is clamped to [1, len]. nVocab <= 0
// means the length of the list. llama.cpp's tools use m = 100.
func MirostatV1(tau, eta float32, m, nVocab int, seed uint64) *Mirostat {
	s := &Mirostat{tau: float64(tau), eta: float64(eta), m: m, nVocab: nVocab, rng: newRNG(seed)}
	s.Reset()
	return s
}

// MirostatV2 returns llama.cpp's mirostat 2 sampler. On each Apply it sorts
// the list, takes a softmax, keeps the candidates before the first one whose
// surprise -log2 p exceeds mu (at least one), renormalises, draws one with
// its generator, and updates mu.
func MirostatV2(tau, eta float32, seed uint64) *Mirostat {
	s := &Mirostat{v2: true, tau: float64(tau), eta: float64(eta), rng: newRNG(seed)}
	s.Reset()
	return s
}

// Name returns "mirostat" or "mirostat-v2".
func (s *Mirostat) Name() string {
	if s.v2 {
		return "mirostat-v2"
	}
	return "mirostat"
}

// Mu returns the current surprise bound.
func (s *Mirostat) Mu() float64 { return s.mu }

// Accept does nothing: mirostat updates mu when it draws.
func (*Mirostat) Accept(int32) {}

// Reset restores mu to 2*tau and reseeds the generator.
func (s *Mirostat) Reset() {
	s.mu = 2 * s.tau
	s.rng.reset()
}

// Apply truncates the list, draws a candidate and updates mu.
func (s *Mirostat) Apply(c *Candidates) {
	if len(c.Items) == 0 {
		c.Selected = -1
		return
	}
	c.Sort()
	c.Softmax()
	if s.v2 {
		keep := 0
		for _, it := range c.Items {
			if -math.Log2(float64(it.P)) > s.mu {
				break
			}
			keep++
		}
		c.truncate(keep)
	} else {
		c.truncate(s.k(c.Items))
	}
	i := draw(c, s.rng)
	surprise := -math.Log2(float64(c.Items[i].P))
	s.mu -= s.eta * (surprise - s.tau)
}

// k computes mirostat 1's top-k bound for the sorted, normalised items.
func (s *Mirostat) k(items []Candidate) int {
	var sumTB, sumTT float64
	for i := 0; i < s.m-1 && i < len(items)-1; i++ {
		p0, p1 := float64(items[i].P), float64(items[i+1].P)
		if p1 <= 0 {
			break
		}
		t := math.Log(float64(i+2) / float64(i+1))
		b := math.Log(p0 / p1)
		sumTB += t * b
		sumTT += t * t
	}
	if sumTT == 0 {
		return 1
	}
	sHat := sumTB / sumTT
	n := float64(s.nVocab)
	if s.nVocab <= 0 {
		n = float64(len(items))
	}
	eps := sHat - 1
	var ratio float64 // eps / (1 - N^-eps)
	if math.Abs(eps) < 1e-9 {
		ratio = 1 / math.Log(n)
	} else {
		ratio = eps / (1 - math.Pow(n, -eps))
	}
	k := math.Pow(ratio*math.Exp2(s.mu), 1/sHat)
	switch {
	case k != k || k < 1:
		return 1
	case k >= float64(len(items)):
		return len(items)
	}
	return int(k)
}
