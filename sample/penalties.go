package sample

// Penalties returns llama.cpp's repetition penalties sampler. It remembers
// the last lastN accepted tokens; on Apply, a candidate that occurs count > 0
// times in that window has its logit divided by repeat if positive, or
// multiplied by repeat if zero or negative (so repeat > 1 always makes it
// less likely), and then reduced by count*freq + present. A finite logit
// that would overflow is clamped to ±MaxFloat32.
//
// lastN <= 0, or repeat == 1 with freq == present == 0, disables it. The
// history grows with accepted tokens up to lastN entries, so a large lastN
// costs memory only as tokens arrive. Reset clears the history.
func Penalties(lastN int, repeat, freq, present float32) *PenaltiesSampler {
	return &PenaltiesSampler{
		lastN:   max(lastN, 0),
		repeat:  repeat,
		freq:    freq,
		present: present,
		counts:  make(map[int32]int),
	}
}

// PenaltiesSampler is the sampler [Penalties] returns. Count reports how
// often a token occurs in its window.
type PenaltiesSampler struct {
	lastN                 int
	repeat, freq, present float32

	ring   []int32 // the window; once full, a circular buffer starting at head
	head   int
	counts map[int32]int
}

// Name returns "penalties".
func (*PenaltiesSampler) Name() string { return "penalties" }

// Count returns how many times id occurs among the last lastN accepted
// tokens.
func (s *PenaltiesSampler) Count(id int32) int { return s.counts[id] }

// Accept records id in the window, evicting the oldest token once the
// window holds lastN tokens.
func (s *PenaltiesSampler) Accept(id int32) {
	if s.lastN == 0 {
		return
	}
	s.counts[id]++
	if len(s.ring) < s.lastN {
		s.ring = append(s.ring, id)
		return
	}
	old := s.ring[s.head]
	if s.counts[old]--; s.counts[old] == 0 {
		delete(s.counts, old)
	}
	s.ring[s.head] = id
	s.head = (s.head + 1) % s.lastN
}

// Reset clears the history.
func (s *PenaltiesSampler) Reset() {
	s.ring = s.ring[:0]
	s.head = 0
	clear(s.counts)
}

// Apply penalises the candidates that occur in the window.
func (s *PenaltiesSampler) Apply(c *Candidates) {
	if s.lastN == 0 || len(s.counts) == 0 || (s.repeat == 1 && s.freq == 0 && s.present == 0) {
		return
	}
	// Fast path: on a list fresh from the logits Items[id].ID == id, so the
	// window's tokens can be found directly instead of by a map lookup per
	// candidate.
	direct := true
	for id := range s.counts {
		if int(id) < 0 || int(id) >= len(c.Items) || c.Items[id].ID != id {
			direct = false
			break
		}
	}
	if direct {
		for id, n := range s.counts {
			c.Items[id].Logit = s.penalise(c.Items[id].Logit, n)
		}
	} else {
		for i := range c.Items {
			if n := s.counts[c.Items[i].ID]; n > 0 {
				c.Items[i].Logit = s.penalise(c.Items[i].Logit, n)
			}
		}
	}
	c.Sorted = false
	c.Selected = -1
}

// penalise applies the penalties to the logit of a token seen n > 0 times.
// A finite logit stays finite (clamped to ±MaxFloat32 on overflow).
func (s *PenaltiesSampler) penalise(l float32, n int) float32 {
	v := l
	if v <= 0 {
		v *= s.repeat
	} else {
		v /= s.repeat
	}
	v -= float32(n)*s.freq + s.present
	return keepFinite(l, v)
}
