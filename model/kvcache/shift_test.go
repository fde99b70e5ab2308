package kvcache

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestFindCellsFragmented: when no run of free cells is long enough,
// FindCells takes free cells here and there (from the head on), and
// ApplyCells stores the micro-batch in them; Restore gives them back.
func TestFindCellsFragmented(t *testing.T) {
	c := newCache(t, 8, 2, 0)
	put(t, c, span(0, 8), [][]int32{{0}, {1}, {0}, {1}, {0}, {1}, {0}, {1}})
	if err := c.SeqRm(1, -1, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.FindSlot(2); !errors.Is(err, ErrNoSlot) {
		t.Fatalf("FindSlot(2) in a cache of single free cells: %v", err)
	}
	cells, err := c.FindCells(3)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cells, []int{1, 3, 5}) {
		t.Fatalf("cells %v, want [1 3 5]", cells)
	}
	sv, err := c.ApplyCells(cells, span(0, 3), one(1, 3))
	if err != nil {
		t.Fatal(err)
	}
	if c.Used() != 7 || c.SeqPosMax(1) != 2 {
		t.Fatalf("used %d, seq 1 pos max %d", c.Used(), c.SeqPosMax(1))
	}
	if _, err := c.FindCells(2); !errors.Is(err, ErrNoSlot) {
		t.Errorf("FindCells(2) with one free cell: %v", err)
	}
	c.Restore(sv)
	if c.Used() != 4 || c.SeqPosMax(1) != -1 {
		t.Errorf("after Restore: used %d, seq 1 pos max %d", c.Used(), c.SeqPosMax(1))
	}
	for _, bad := range [][]int{{1, 1}, {0, 1}, {9, 1}} {
		if _, err := c.ApplyCells(bad, span(0, 2), one(1, 2)); err == nil {
			t.Errorf("ApplyCells(%v) succeeded", bad)
		}
	}
}

// TestSeqAddDiv moves positions, records each cell's shift until cleared,
// and empties cells moved below 0.
func TestSeqAddDiv(t *testing.T) {
	c := newCache(t, 8, 2, 0)
	put(t, c, span(0, 4), one(0, 4))
	put(t, c, span(0, 2), one(1, 2))
	if c.HasShift() {
		t.Fatal("shift before any seq_add")
	}
	if err := c.SeqAdd(0, 2, -1, 10); err != nil {
		t.Fatal(err)
	}
	sh := make([]int32, 8)
	c.Shifts(sh)
	if !c.HasShift() || !slices.Equal(sh, []int32{0, 0, 10, 10, 0, 0, 0, 0}) {
		t.Fatalf("shifts %v", sh)
	}
	if p, _ := c.Cell(3); p != 13 || c.SeqPosMax(0) != 13 || c.SeqPosMax(1) != 1 {
		t.Fatalf("cell 3 at %d, pos max %d/%d", p, c.SeqPosMax(0), c.SeqPosMax(1))
	}
	if err := c.SeqDiv(0, -1, -1, 4); err != nil {
		t.Fatal(err)
	}
	c.Shifts(sh)
	// Positions 0, 1, 12, 13 become 0, 0, 3, 3: shifts 0, -1, 10-9, 10-10.
	if !slices.Equal(sh[:4], []int32{0, -1, 1, 0}) {
		t.Fatalf("shifts after seq_div %v", sh[:4])
	}
	c.ClearShifts()
	c.Shifts(sh)
	if c.HasShift() || slices.ContainsFunc(sh, func(x int32) bool { return x != 0 }) {
		t.Fatalf("after ClearShifts: %v %v", c.HasShift(), sh)
	}
	// Moving below 0 empties the cell; every sequence with seq < 0.
	if err := c.SeqAdd(-1, -1, -1, -1); err != nil {
		t.Fatal(err)
	}
	if c.Used() != 3 || c.SeqPosMin(1) != 0 {
		t.Fatalf("after seq_add -1: used %d, seq 1 pos min %d", c.Used(), c.SeqPosMin(1))
	}
	if err := c.SeqDiv(0, -1, -1, 0); err == nil {
		t.Error("seq_div by 0 succeeded")
	}
	if err := c.SeqAdd(5, -1, -1, 1); err == nil {
		t.Error("seq_add of sequence 5 of 2 succeeded")
	}
}

// TestDefrag compacts used cells to the front, filling each hole with the
// last used cells, and the moves reproduce the new layout from the old.
func TestDefrag(t *testing.T) {
	c := newCache(t, 12, 3, 0)
	seqs := [][]int32{{0}, {1}, {2}, {0}, {1}, {2}, {0}, {1}, {2}, {0}, {1}, {2}}
	put(t, c, span(0, 12), seqs)
	if err := c.SeqRm(1, -1, -1); err != nil {
		t.Fatal(err)
	}
	if err := c.SeqRm(0, 6, -1); err != nil {
		t.Fatal(err)
	}
	before := make([]int32, 12) // position per cell, -1 empty
	for i := range before {
		before[i], _ = c.Cell(i)
	}
	moves := c.Defrag()
	if c.Used() != 6 || c.Head() != 6 {
		t.Fatalf("used %d head %d", c.Used(), c.Head())
	}
	rows := slices.Clone(before)
	for _, m := range moves {
		for k := range m.N {
			if rows[m.To+k] >= 0 {
				t.Fatalf("move %+v overwrites a used cell", m)
			}
			if m.To+m.N > m.From && m.From+m.N > m.To {
				t.Fatalf("move %+v overlaps itself", m)
			}
			rows[m.To+k], rows[m.From+k] = rows[m.From+k], -1
		}
	}
	for i := range 12 {
		p, s := c.Cell(i)
		if p != rows[i] || (i < 6) != (p >= 0) {
			t.Fatalf("cell %d: position %d (sequences %v), the moved rows say %d", i, p, s, rows[i])
		}
	}
	if c.SeqPosMax(2) != 11 || c.SeqPosMax(0) != 3 || c.SeqPosMax(1) != -1 {
		t.Errorf("pos max %d/%d/%d", c.SeqPosMax(0), c.SeqPosMax(1), c.SeqPosMax(2))
	}
	if len(c.Defrag()) != 0 {
		t.Error("a second defrag moved cells")
	}
}

// TestStates covers the recurrent bookkeeping: advancing, whole-sequence
// removal and copy, the refusal of partial ones, keep, add and div.
func TestStates(t *testing.T) {
	s, err := NewStates(3)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Advance(0, 0, 4); err != nil {
		t.Fatal(err)
	}
	if err := s.Advance(1, 2, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Advance(0, 4, 6); err == nil {
		t.Error("advancing to a position already taken succeeded")
	}
	if s.Used() != 2 || s.SeqPosMax(0) != 4 || s.SeqPosMin(0) != 0 || s.SeqPosMin(1) != 2 || s.SeqPosMax(2) != -1 {
		t.Fatalf("used %d, seq 0 %d..%d, seq 1 from %d", s.Used(), s.SeqPosMin(0), s.SeqPosMax(0), s.SeqPosMin(1))
	}
	for _, r := range [][2]int32{{1, -1}, {0, 3}, {2, 4}} {
		if err := s.SeqRm(0, r[0], r[1]); err == nil || !strings.Contains(err.Error(), "rewound") {
			t.Errorf("SeqRm(0, %d, %d): %v", r[0], r[1], err)
		}
	}
	if err := s.SeqRm(0, 5, -1); err != nil || s.SeqPosMax(0) != 4 {
		t.Errorf("removing after the end: %v, pos %d", err, s.SeqPosMax(0))
	}
	copied, err := s.SeqCp(0, 2, -1, -1)
	if err != nil || !copied || s.SeqPosMax(2) != 4 || s.SeqPosMin(2) != 0 {
		t.Fatalf("SeqCp: %v %v, seq 2 %d..%d", copied, err, s.SeqPosMin(2), s.SeqPosMax(2))
	}
	if _, err := s.SeqCp(0, 1, 1, -1); err == nil {
		t.Error("copying part of a state succeeded")
	}
	if err := s.SeqRm(1, 2, 3); err != nil || s.SeqPosMax(1) != -1 {
		t.Errorf("removing all of sequence 1 (2..2): %v, pos %d", err, s.SeqPosMax(1))
	}
	if err := s.SeqAdd(2, -1, -1, 3); err != nil || s.SeqPosMax(2) != 7 || s.SeqPosMin(2) != 3 {
		t.Errorf("SeqAdd: %v, seq 2 %d..%d", err, s.SeqPosMin(2), s.SeqPosMax(2))
	}
	if err := s.SeqDiv(2, -1, -1, 2); err != nil || s.SeqPosMax(2) != 3 {
		t.Errorf("SeqDiv: %v, pos %d", err, s.SeqPosMax(2))
	}
	if err := s.SeqKeep(2); err != nil || s.Used() != 1 || s.SeqPosMax(0) != -1 {
		t.Errorf("SeqKeep: %v, used %d", err, s.Used())
	}
	first, last := s.StateOf(2)
	if err := s.Advance(2, 4, 9); err != nil {
		t.Fatal(err)
	}
	s.RestoreState(2, first, last)
	if s.SeqPosMax(2) != 3 {
		t.Errorf("after RestoreState: pos %d", s.SeqPosMax(2))
	}
	if err := s.SeqRm(-1, -1, -1); err != nil || s.Used() != 0 {
		t.Errorf("SeqRm of every sequence: %v, used %d", err, s.Used())
	}
	if _, err := NewStates(0); err == nil {
		t.Error("NewStates(0) succeeded")
	}
	if err := s.Advance(3, 0, 0); err == nil {
		t.Error("sequence 3 of 3 accepted")
	}
}
