package sample

import (
	"fmt"
	"math"
	"slices"
)

// Candidate is one token under consideration: its id in the vocabulary, its
// logit and its probability. P is only meaningful after a sampler that
// computes probabilities (see [Candidates.Softmax]) has run over the current
// list; filters that only drop candidates leave P as it was.
type Candidate struct {
	ID    int32
	Logit float32
	P     float32
}

// Candidates is the working list a chain of samplers narrows down, like
// llama.cpp's llama_token_data_array.
//
// Sorted reports that Items are in non-increasing logit order. A sampler
// that reorders Items or changes logits in a way that may break that order
// clears it; one that sorts sets it.
//
// Selected is the index into Items of the chosen token, or -1 while none is
// chosen. Selecting samplers ([Greedy], [Dist], [MirostatV1], [MirostatV2])
// set it; every other sampler that changes Items or logits resets it to -1,
// so a selection always refers to the list as it finally stands.
type Candidates struct {
	Items    []Candidate
	Sorted   bool
	Selected int
}

// Reset fills c with one candidate per logit (ID i for logits[i], P zero),
// unsorted and with nothing selected. It reuses c.Items' storage when it is
// large enough. len(logits) must fit in an int32; [Chain.Sample] checks that.
func (c *Candidates) Reset(logits []float32) {
	if cap(c.Items) < len(logits) {
		c.Items = make([]Candidate, len(logits))
	}
	c.Items = c.Items[:len(logits)]
	for i, l := range logits {
		c.Items[i] = Candidate{ID: int32(i), Logit: l}
	}
	c.Sorted = false
	c.Selected = -1
}

// Len returns the number of candidates.
func (c *Candidates) Len() int { return len(c.Items) }

// Token returns the id of the selected candidate and true, or 0 and false
// when no candidate is selected or Selected is out of range.
func (c *Candidates) Token() (int32, bool) {
	if c.Selected < 0 || c.Selected >= len(c.Items) {
		return 0, false
	}
	return c.Items[c.Selected].ID, true
}

// better reports whether a ranks before b: higher logit first, and among
// equal logits the lower token id first, so every sort here is
// deterministic. A NaN logit ranks after every other, so the order stays
// total even on lists that [Chain.Sample] would have rejected.
func better(a, b Candidate) bool {
	return cmpCandidates(a, b) < 0
}

// cmpCandidates orders candidates as better does, for slices.SortFunc; the
// common (non-NaN) cases come first.
func cmpCandidates(a, b Candidate) int {
	switch {
	case a.Logit > b.Logit:
		return -1
	case a.Logit < b.Logit:
		return 1
	case a.Logit == b.Logit, a.Logit != a.Logit && b.Logit != b.Logit:
		return int(a.ID) - int(b.ID)
	case a.Logit != a.Logit: // NaN last
		return 1
	}
	return -1
}

// Sort orders Items by descending logit (ties: lower id first) unless they
// are already sorted, and clears the selection.
func (c *Candidates) Sort() {
	c.Selected = -1
	if c.Sorted {
		return
	}
	slices.SortFunc(c.Items, cmpCandidates)
	c.Sorted = true
}

// partialSort moves the k best candidates to the front of Items in sorted
// order, leaving the rest after them in no particular order. It does not
// set Sorted (the tail is unsorted) and clears the selection.
func (c *Candidates) partialSort(k int) {
	c.Selected = -1
	n := len(c.Items)
	if c.Sorted || k <= 0 {
		return
	}
	if k >= n || k > n/4 {
		c.Sort()
		return
	}
	selectTop(c.Items, k)
}

// truncate keeps the first n items (n is clamped to [1, len]) and clears the
// selection. A filter never leaves the list empty.
func (c *Candidates) truncate(n int) {
	c.Selected = -1
	n = max(1, min(n, len(c.Items)))
	if len(c.Items) == 0 {
		return
	}
	c.Items = c.Items[:n]
}

// selectTop rearranges items so that items[:k] are the k best in sorted
// order, using a k-element heap whose root is the worst of the current top
// k: O(n log k) time, no allocation. 0 < k <= len(items).
func selectTop(items []Candidate, k int) {
	h := items[:k]
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	for j := k; j < len(items); j++ {
		if better(items[j], h[0]) {
			h[0], items[j] = items[j], h[0]
			siftDown(h, 0)
		}
	}
	slices.SortFunc(h, cmpCandidates)
}

// siftDown restores the heap property (parent worse than or equal to its
// children) below index i.
func siftDown(h []Candidate, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		w := l
		if r := l + 1; r < len(h) && better(h[l], h[r]) {
			w = r
		}
		if !better(h[i], h[w]) {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

// maxLogit returns the largest logit (the first one when Sorted).
func (c *Candidates) maxLogit() float32 {
	if c.Sorted {
		return c.Items[0].Logit
	}
	m := c.Items[0].Logit
	for _, it := range c.Items[1:] {
		if it.Logit > m {
			m = it.Logit
		}
	}
	return m
}

// Softmax sets every candidate's P to exp(logit - max) / sum. The
// exponentials and their sum are computed in float64; each exponential is
// held as float32 between the two passes, so a stored probability is within
// about one float32 ulp of the exact value. If every logit is -Inf each
// candidate gets 1/len; if some are +Inf they share the probability equally
// and the rest get 0. NaN logits give NaN probabilities ([Chain.Sample]
// rejects them before any sampler runs). Softmax keeps the
// order and the selection, and does nothing on an empty list.
func (c *Candidates) Softmax() {
	n := len(c.Items)
	if n == 0 {
		return
	}
	m := c.maxLogit()
	if math.IsInf(float64(m), 0) {
		// All -Inf: uniform over everything. Some +Inf: uniform over those.
		cnt := 0
		for _, it := range c.Items {
			if it.Logit == m {
				cnt++
			}
		}
		u := float32(1 / float64(cnt))
		for i := range c.Items {
			c.Items[i].P = 0
			if c.Items[i].Logit == m {
				c.Items[i].P = u
			}
		}
		return
	}
	mx := float64(m)
	var sum float64
	for i := range c.Items {
		e := math.Exp(float64(c.Items[i].Logit) - mx)
		c.Items[i].P = float32(e)
		sum += e
	}
	inv := 1 / sum
	for i := range c.Items {
		c.Items[i].P = float32(float64(c.Items[i].P) * inv)
	}
}

// String formats the list compactly for test failures and debugging.
func (c *Candidates) String() string {
	s := fmt.Sprintf("sorted=%v selected=%d [", c.Sorted, c.Selected)
	for i, it := range c.Items {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%d:%g/%.4g", it.ID, it.Logit, it.P)
	}
	return s + "]"
}
