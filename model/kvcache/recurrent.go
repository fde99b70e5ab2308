package kvcache

import "fmt"

// States is the bookkeeping of a recurrent state cache (Mamba's): one cell
// per sequence, cell s holding sequence s's state after its last token,
// and that token's position. A state summarizes every token before it, so
// it cannot be rewound to an earlier position: removing part of a
// sequence is an error, removing all of it empties the cell, and copying
// a sequence copies its whole state. States holds no tensors; the model
// keeps each layer's states in cell order and copies or clears them as
// these methods report.
type States struct {
	pos   []int32 // per sequence: the last position, -1 for none
	first []int32 // per sequence: the first position it holds
}

// NewStates returns the bookkeeping of nSeqMax empty state cells.
func NewStates(nSeqMax int) (*States, error) {
	if nSeqMax <= 0 || nSeqMax > MaxSeq {
		return nil, fmt.Errorf("kvcache: n_seq_max %d must be in [1, %d]", nSeqMax, MaxSeq)
	}
	s := &States{pos: make([]int32, nSeqMax), first: make([]int32, nSeqMax)}
	s.Clear()
	return s, nil
}

// Size returns the number of cells (one per sequence id).
func (s *States) Size() int { return len(s.pos) }

// Used returns the number of sequences that have a state.
func (s *States) Used() int {
	n := 0
	for _, p := range s.pos {
		if p >= 0 {
			n++
		}
	}
	return n
}

// Clear empties every cell.
func (s *States) Clear() {
	for i := range s.pos {
		s.pos[i] = -1
	}
}

func (s *States) checkSeq(seq int32) error {
	if seq < 0 || int(seq) >= len(s.pos) {
		return fmt.Errorf("kvcache: sequence id %d outside [0, %d)", seq, len(s.pos))
	}
	return nil
}

// SeqPosMax returns the position of sequence seq's last token, or -1 when
// it has no state.
func (s *States) SeqPosMax(seq int32) int32 {
	if s.checkSeq(seq) != nil {
		return -1
	}
	return s.pos[seq]
}

// SeqPosMin returns the first position sequence seq's state holds (the
// state sums the tokens from there to SeqPosMax), or -1 when it has none.
func (s *States) SeqPosMin(seq int32) int32 {
	if s.checkSeq(seq) != nil || s.pos[seq] < 0 {
		return -1
	}
	return s.first[seq]
}

// whole reports whether [p0, p1) (negative bounds as in Cache.SeqRm)
// covers every position of sequence seq, and after reports whether it
// starts after the last (so it holds none of them).
func (s *States) whole(seq, p0, p1 int32) (all, after bool) {
	p0, p1 = rangeOf(p0, p1)
	last := s.pos[seq]
	return p0 <= s.first[seq] && p1 > last, p0 > last
}

// SeqRm removes sequence seq (every sequence when seq < 0) from positions
// [p0, p1). Removing all of a sequence empties its cell (the model then
// starts it from a zero state); a range after its last position removes
// nothing. Any other range is an error: the state cannot drop part of
// what it has summed.
func (s *States) SeqRm(seq, p0, p1 int32) error {
	if seq < 0 {
		for i := range s.pos {
			if err := s.SeqRm(int32(i), p0, p1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := s.checkSeq(seq); err != nil {
		return err
	}
	last := s.pos[seq]
	if last < 0 {
		return nil
	}
	all, after := s.whole(seq, p0, p1)
	switch {
	case after:
		return nil
	case all:
		s.pos[seq] = -1
		return nil
	}
	return fmt.Errorf("kvcache: cannot remove positions [%d, %d) of sequence %d: a recurrent state holds positions 0..%d summed up and cannot be rewound (remove the whole sequence, or nothing)", p0, p1, seq, last)
}

// SeqCp makes dst a copy of src: its cell takes src's position, and the
// caller copies the state. Only whole sequences can be copied (p0 <= 0
// and p1 past src's last position, or negative). It reports whether there
// was a state to copy (false when src has none: dst is emptied).
func (s *States) SeqCp(src, dst, p0, p1 int32) (bool, error) {
	if err := s.checkSeq(src); err != nil {
		return false, err
	}
	if err := s.checkSeq(dst); err != nil {
		return false, err
	}
	last := s.pos[src]
	if all, _ := s.whole(src, p0, p1); !all && last >= 0 {
		return false, fmt.Errorf("kvcache: cannot copy positions [%d, %d) of sequence %d: a recurrent state can only be copied whole (0..%d)", p0, p1, src, last)
	}
	if src == dst {
		return false, nil
	}
	s.pos[dst], s.first[dst] = last, s.first[src]
	return last >= 0, nil
}

// SeqKeep empties every cell but seq's.
func (s *States) SeqKeep(seq int32) error {
	if err := s.checkSeq(seq); err != nil {
		return err
	}
	for i := range s.pos {
		if int32(i) != seq {
			s.pos[i] = -1
		}
	}
	return nil
}

// SeqAdd moves sequence seq's position by delta when it lies in [p0, p1)
// (every sequence when seq < 0). A state does not depend on positions, so
// nothing else changes; a position moved below 0 empties the cell.
func (s *States) SeqAdd(seq, p0, p1, delta int32) error {
	return s.each(seq, p0, p1, func(p int32) int32 { return p + delta })
}

// SeqDiv divides sequence seq's position by d (d >= 1) when it lies in
// [p0, p1).
func (s *States) SeqDiv(seq, p0, p1, d int32) error {
	if d < 1 {
		return fmt.Errorf("kvcache: seq_div by %d (want d >= 1)", d)
	}
	return s.each(seq, p0, p1, func(p int32) int32 { return p / d })
}

func (s *States) each(seq, p0, p1 int32, f func(int32) int32) error {
	if seq >= 0 {
		if err := s.checkSeq(seq); err != nil {
			return err
		}
	}
	lo, hi := rangeOf(p0, p1)
	for i, p := range s.pos {
		if p < 0 || (seq >= 0 && int32(i) != seq) || p < lo || p >= hi {
			continue
		}
		if np := f(p); np >= 0 {
			s.pos[i], s.first[i] = np, max(0, f(s.first[i]))
		} else {
			s.pos[i] = -1
		}
	}
	return nil
}

// Advance records that sequence seq's state has taken the tokens at
// positions first..last: it now ends at last. Positions must increase.
func (s *States) Advance(seq, first, last int32) error {
	if err := s.checkSeq(seq); err != nil {
		return err
	}
	if first <= s.pos[seq] || last < first {
		return fmt.Errorf("kvcache: sequence %d at position %d cannot take positions %d..%d", seq, s.pos[seq], first, last)
	}
	if s.pos[seq] < 0 {
		s.first[seq] = first
	}
	s.pos[seq] = last
	return nil
}

// StateOf returns sequence seq's first and last positions, for
// RestoreState.
func (s *States) StateOf(seq int32) (first, last int32) {
	if s.checkSeq(seq) != nil {
		return -1, -1
	}
	return s.first[seq], s.pos[seq]
}

// RestoreState sets sequence seq's positions back (as StateOf returned
// them), undoing Advance.
func (s *States) RestoreState(seq, first, last int32) {
	if s.checkSeq(seq) == nil {
		s.first[seq], s.pos[seq] = first, last
	}
}
