package sample

import (
	"math"
	"slices"
	"testing"
)

func TestPenalties(t *testing.T) {
	// Logits: id0 = 1, id1 = -1, id2 = 2, id3 = -2, id4 = 0.
	in := []float32{1, -1, 2, -2, 0}
	tests := []struct {
		name                  string
		lastN                 int
		repeat, freq, present float32
		history               []int32
		want                  []float32
	}{
		// History 2, 2, 3, 4 (counts: id2 x2, id3 x1, id4 x1), repeat 2,
		// freq 0.5, present 0.25:
		//   id2:  2 / 2 = 1,  then - (2*0.5 + 0.25) = -0.25
		//   id3: -2 * 2 = -4, then - (1*0.5 + 0.25) = -4.75
		//   id4:  0 * 2 = 0,  then - (1*0.5 + 0.25) = -0.75
		//   id0, id1 not in the history: unchanged.
		{"all", 8, 2, 0.5, 0.25, []int32{2, 2, 3, 4}, []float32{1, -1, -0.25, -4.75, -0.75}},
		// Repeat only.
		{"repeat", 8, 2, 0, 0, []int32{2, 2, 3}, []float32{1, -1, 1, -4, 0}},
		// Frequency only: id2 seen twice loses 2*0.5.
		{"freq", 8, 1, 0.5, 0, []int32{2, 2, 3}, []float32{1, -1, 1, -2.5, 0}},
		// Presence only: the same for one or two occurrences.
		{"present", 8, 1, 0, 0.25, []int32{2, 2, 3}, []float32{1, -1, 1.75, -2.25, 0}},
		// Window of 2: history 2, 2, 3 leaves [2, 3] (counts 1, 1):
		//   id2: 2/2 - (0.5 + 0.25) = 0.25;  id3: -4 - 0.75 = -4.75.
		{"window", 2, 2, 0.5, 0.25, []int32{2, 2, 3}, []float32{1, -1, 0.25, -4.75, 0}},
		// Disabled.
		{"neutral", 8, 1, 0, 0, []int32{2, 2, 3}, in},
		{"lastN=0", 0, 2, 0.5, 0.25, []int32{2, 2, 3}, in},
		{"lastN<0", -1, 2, 0.5, 0.25, []int32{2, 2, 3}, in},
		// Tokens outside the list are ignored.
		{"unknown id", 8, 2, 0, 0, []int32{99, -5}, in},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Penalties(tt.lastN, tt.repeat, tt.freq, tt.present)
			for _, id := range tt.history {
				s.Accept(id)
			}
			c := cands(in...)
			s.Apply(c)
			if got := logitsOf(c); !slices.Equal(got, tt.want) {
				t.Errorf("logits %v, want %v", got, tt.want)
			}
			// Same answer on a reordered list (the by-id lookup path).
			r := cands(in...)
			r.Sort()
			s.Apply(r)
			for _, it := range r.Items {
				if it.Logit != tt.want[it.ID] {
					t.Errorf("sorted list: id %d logit %g, want %g", it.ID, it.Logit, tt.want[it.ID])
				}
			}
		})
	}
}

func TestPenaltiesWindow(t *testing.T) {
	s := Penalties(3, 1.5, 0, 0)
	seq := []int32{1, 2, 1, 3, 3, 3, 4}
	for i, id := range seq {
		s.Accept(id)
		// Reference counts over the last 3 accepted tokens.
		lo := max(0, i+1-3)
		for _, tok := range []int32{1, 2, 3, 4} {
			want := 0
			for _, h := range seq[lo : i+1] {
				if h == tok {
					want++
				}
			}
			if got := s.Count(tok); got != want {
				t.Fatalf("after %v: count(%d) = %d, want %d", seq[:i+1], tok, got, want)
			}
		}
	}
	s.Reset()
	if s.Count(3) != 0 || s.Count(4) != 0 {
		t.Error("Reset kept history")
	}
	c := cands(1, 1, 1, 1, 1)
	s.Apply(c)
	if !slices.Equal(logitsOf(c), []float32{1, 1, 1, 1, 1}) {
		t.Errorf("penalties after Reset changed logits: %v", c)
	}
}

func TestPenaltiesOverflow(t *testing.T) {
	s := Penalties(4, 2, 0, 0)
	s.Accept(0)
	c := cands(-3e38, -inf)
	s.Apply(c)
	if got := c.Items[0].Logit; got != -math.MaxFloat32 {
		t.Errorf("-3e38 * 2 gave %g, want -MaxFloat32", got)
	}
}
