package sample

import (
	"math"
	"slices"
)

// Greedy returns a sampler that selects the candidate with the highest
// logit. Among equal logits it selects the lowest token id, whatever the
// order of the list (llama.cpp takes the first in list order, which is the
// same thing on an unsorted or sorted list). It changes nothing else.
func Greedy() Sampler { return greedy{} }

type greedy struct{}

func (greedy) Name() string { return "greedy" }
func (greedy) Accept(int32) {}
func (greedy) Reset()       {}
func (greedy) Apply(c *Candidates) {
	c.Selected = bestIndex(c.Items)
}

// keepFinite returns v, or the largest finite float32 of v's sign if v
// overflowed from the finite logit l: a transform must not turn a possible
// token into an impossible (-Inf) or overwhelming (+Inf) one.
func keepFinite(l, v float32) float32 {
	if math.IsInf(float64(v), 0) && !math.IsInf(float64(l), 0) {
		return float32(math.Copysign(math.MaxFloat32, float64(v)))
	}
	return v
}

// bestIndex returns the index of the best candidate (highest logit, then
// lowest id), or -1 for an empty list.
func bestIndex(items []Candidate) int {
	if len(items) == 0 {
		return -1
	}
	b := 0
	for i := 1; i < len(items); i++ {
		if better(items[i], items[b]) {
			b = i
		}
	}
	return b
}

// Temperature returns a sampler that divides every logit by t, sharpening
// the distribution for t < 1 and flattening it for t > 1.
//
// t <= 0 means greedy: only the best candidate (highest logit, lowest id on
// ties) is kept. llama.cpp instead sets the other logits to -Inf; dropping
// them gives every later sampler the same distribution without the 0/0 that
// zero probabilities cause in mirostat's estimate. t = +Inf sets every
// finite logit to 0 (uniform over them). A NaN t leaves the list unchanged.
// A finite logit that would overflow is clamped to ±MaxFloat32, so a
// possible token never becomes impossible.
func Temperature(t float32) Sampler { return temperature{t: t} }

type temperature struct{ t float32 }

func (temperature) Name() string { return "temp" }
func (temperature) Accept(int32) {}
func (temperature) Reset()       {}
func (s temperature) Apply(c *Candidates) {
	if len(c.Items) == 0 || s.t != s.t {
		return
	}
	c.Selected = -1
	switch {
	case s.t <= 0:
		b := bestIndex(c.Items)
		c.Items[0], c.Items[b] = c.Items[b], c.Items[0]
		c.Items = c.Items[:1]
		c.Sorted = true
	case math.IsInf(float64(s.t), 1):
		for i := range c.Items {
			if !math.IsInf(float64(c.Items[i].Logit), 0) {
				c.Items[i].Logit = 0
			}
		}
		c.Sorted = false
	default:
		// Division by a positive number keeps the order, so Sorted stands.
		for i := range c.Items {
			c.Items[i].Logit = keepFinite(c.Items[i].Logit, c.Items[i].Logit/s.t)
		}
	}
}

// TopK returns a sampler that keeps the k candidates with the highest
// logits (ties: lower ids first), leaving them sorted. k <= 0 disables it;
// k larger than the list keeps everything (and sorts it). It does not
// compute probabilities.
func TopK(k int) Sampler { return topK{k: k} }

type topK struct{ k int }

func (topK) Name() string { return "top-k" }
func (topK) Accept(int32) {}
func (topK) Reset()       {}
func (s topK) Apply(c *Candidates) {
	if s.k <= 0 || len(c.Items) == 0 {
		return
	}
	k := min(s.k, len(c.Items))
	c.partialSort(k)
	c.Items = c.Items[:k]
	c.Sorted = true
}

// TopP returns a nucleus sampler: after a softmax over the current list it
// keeps the smallest prefix, in descending probability order, whose
// cumulative probability is at least p, and at least minKeep candidates
// (never fewer than one). p >= 1 (or NaN) disables it. The kept candidates
// are sorted and carry their probabilities from the softmax (not
// renormalised over the survivors, as in llama.cpp).
//
// Like llama.cpp, on a long unsorted list it first sorts only the best 256
// candidates and sorts the rest only if their cumulative probability falls
// short of p.
func TopP(p float32, minKeep int) Sampler { return topP{p: p, minKeep: minKeep} }

type topP struct {
	p       float32
	minKeep int
}

// topPPartial is the number of candidates top-p sorts first on a long
// unsorted list, and topPLong what counts as long.
const (
	topPPartial = 256
	topPLong    = 1024
)

func (topP) Name() string { return "top-p" }
func (topP) Accept(int32) {}
func (topP) Reset()       {}
func (s topP) Apply(c *Candidates) {
	if len(c.Items) == 0 || !(s.p < 1) {
		return
	}
	c.Softmax()
	n := len(c.Items)
	sorted := n // c.Items[:sorted] is in final order
	if !c.Sorted && n > topPLong {
		sorted = topPPartial
		c.partialSort(sorted)
	} else {
		c.Sort()
	}
	p := float64(s.p)
	var cum float64
	for i := 0; i < n; i++ {
		if i == sorted {
			// The top candidates were not enough: sort everything. The
			// order is total, so the prefix already examined stays put.
			c.Sort()
			sorted = n
		}
		cum += float64(c.Items[i].P)
		if cum >= p && i+1 >= s.minKeep {
			c.truncate(i + 1)
			c.Sorted = true
			return
		}
	}
	// Never reached p (rounding, or p > 1 - float error): keep everything;
	// the loop has sorted the whole list by now.
	c.Selected = -1
}

// MinP returns a sampler that keeps the candidates whose probability is at
// least p times the largest probability, that is whose logit is at least
// maxLogit + ln(p), and at least minKeep candidates (never fewer than one).
// p <= 0 (or NaN) disables it. On an unsorted list that has enough
// survivors it keeps their order without sorting; otherwise it sorts and
// keeps the best max(survivors, minKeep). It does not compute
// probabilities.
func MinP(p float32, minKeep int) Sampler { return minP{p: p, minKeep: minKeep} }

type minP struct {
	p       float32
	minKeep int
}

func (minP) Name() string { return "min-p" }
func (minP) Accept(int32) {}
func (minP) Reset()       {}
func (s minP) Apply(c *Candidates) {
	if len(c.Items) == 0 || !(s.p > 0) {
		return
	}
	c.Selected = -1
	thr := float64(c.maxLogit()) + math.Log(float64(s.p))
	need := max(s.minKeep, 1)
	if !c.Sorted {
		kept := 0
		for _, it := range c.Items {
			if float64(it.Logit) >= thr {
				kept++
			}
		}
		if kept >= need {
			j := 0
			for _, it := range c.Items {
				if float64(it.Logit) >= thr {
					c.Items[j] = it
					j++
				}
			}
			c.Items = c.Items[:j]
			return
		}
	}
	c.Sort()
	i := 1 // the best candidate always survives
	for ; i < len(c.Items); i++ {
		if float64(c.Items[i].Logit) < thr && i >= s.minKeep {
			break
		}
	}
	c.truncate(i)
}

// Typical returns a locally typical sampler (Meister et al.): after a
// softmax it computes the entropy H = -sum p ln p of the current list,
// orders candidates by |-ln p - H| (most typical first; ties keep
// descending-probability order), and keeps the shortest prefix of that
// order whose cumulative probability exceeds p, and at least minKeep
// candidates (never fewer than one). p >= 1 (or NaN) disables it. The kept
// candidates are left in typicality order, so the list is unsorted
// afterwards. Zero-probability candidates count as least typical.
func Typical(p float32, minKeep int) Sampler { return &typical{p: p, minKeep: minKeep} }

type typical struct {
	p       float32
	minKeep int
	buf     []scored
}

type scored struct {
	score float64
	c     Candidate
}

func (*typical) Name() string { return "typical" }
func (*typical) Accept(int32) {}
func (*typical) Reset()       {}
func (s *typical) Apply(c *Candidates) {
	if len(c.Items) == 0 || !(s.p < 1) {
		return
	}
	c.Sort()
	c.Softmax()
	var h float64
	for _, it := range c.Items {
		if it.P > 0 {
			p := float64(it.P)
			h -= p * math.Log(p)
		}
	}
	s.buf = s.buf[:0]
	for _, it := range c.Items {
		sc := math.Inf(1)
		if it.P > 0 {
			sc = math.Abs(-math.Log(float64(it.P)) - h)
		}
		s.buf = append(s.buf, scored{sc, it})
	}
	slices.SortStableFunc(s.buf, func(a, b scored) int {
		switch {
		case a.score < b.score:
			return -1
		case a.score > b.score:
			return 1
		}
		return 0
	})
	keep := len(s.buf)
	var cum float64
	for i, e := range s.buf {
		cum += float64(e.c.P)
		if cum > float64(s.p) && (s.minKeep == 0 || i >= s.minKeep-1) {
			keep = i + 1
			break
		}
	}
	for i := range keep {
		c.Items[i] = s.buf[i].c
	}
	c.truncate(keep)
	c.Sorted = false
}

// TailFree returns a tail-free sampler (Phillips, 2019). After sorting and a
// softmax it takes the discrete second derivative of the probability curve,
// d2[i] = |(p[i] - p[i+1]) - (p[i+1] - p[i+2])| for i in [0, n-2), normalises
// it to sum to one (or makes it uniform when the sum is below 1e-6), and
// cuts the list at the first i >= minKeep where the cumulative sum of d2
// exceeds z, keeping i candidates (never fewer than one). If the sum never
// exceeds z everything is kept. z >= 1 (or NaN) or a list of two or fewer
// candidates disables it. These are llama.cpp's definitions, including its
// keep-i (not i+1) cut; llama.cpp has since removed this sampler.
func TailFree(z float32, minKeep int) Sampler { return &tailFree{z: z, minKeep: minKeep} }

type tailFree struct {
	z       float32
	minKeep int
	d2      []float64
}

func (*tailFree) Name() string { return "tail-free" }
func (*tailFree) Accept(int32) {}
func (*tailFree) Reset()       {}
func (s *tailFree) Apply(c *Candidates) {
	n := len(c.Items)
	if n <= 2 || !(s.z < 1) {
		return
	}
	c.Sort()
	c.Softmax()
	s.d2 = s.d2[:0]
	var sum float64
	for i := 0; i < n-2; i++ {
		p0, p1, p2 := float64(c.Items[i].P), float64(c.Items[i+1].P), float64(c.Items[i+2].P)
		d := math.Abs((p0 - p1) - (p1 - p2))
		s.d2 = append(s.d2, d)
		sum += d
	}
	if sum > 1e-6 {
		for i := range s.d2 {
			s.d2[i] /= sum
		}
	} else {
		u := 1 / float64(len(s.d2))
		for i := range s.d2 {
			s.d2[i] = u
		}
	}
	var cum float64
	for i, d := range s.d2 {
		cum += d
		if cum > float64(s.z) && i >= s.minKeep {
			c.truncate(i)
			return
		}
	}
}
