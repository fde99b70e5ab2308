package kvcache

import "fmt"

// SeqAdd adds delta to the position of every cell of sequence seq (every
// sequence when seq < 0) with a position in [p0, p1) (negative bounds as
// in SeqRm), as llama.cpp's seq_add: a cell shared with other sequences
// moves for all of them. A cell whose position becomes negative is
// emptied. The cells' keys were roped at their old positions: the cache
// records each cell's accumulated shift (Shifts) until the model re-ropes
// them (ClearShifts).
func (c *Cache) SeqAdd(seq, p0, p1, delta int32) error {
	if seq >= 0 {
		if err := c.checkSeq(seq); err != nil {
			return err
		}
	}
	if delta == 0 {
		return nil
	}
	p0, p1 = rangeOf(p0, p1)
	first := -1
	for i := range c.cells {
		cl := &c.cells[i]
		if cl.pos < p0 || cl.pos >= p1 || (seq >= 0 && !cl.seqs.has(seq)) {
			continue
		}
		np := int64(cl.pos) + int64(delta)
		if np < 0 {
			c.emptyCell(i)
			if first < 0 {
				first = i
			}
			continue
		}
		if np > int64(^uint32(0)>>1) {
			return fmt.Errorf("kvcache: seq_add moves position %d by %d past the int32 range", cl.pos, delta)
		}
		cl.pos = int32(np)
		cl.shift += delta
		c.hasShift = true
	}
	if first >= 0 && first < c.head {
		c.head = first
	}
	return nil
}

// SeqDiv divides by d the position of every cell of sequence seq (every
// sequence when seq < 0) with a position in [p0, p1), as llama.cpp's
// seq_div (used by self-extend): integer division, d >= 1.
func (c *Cache) SeqDiv(seq, p0, p1, d int32) error {
	if seq >= 0 {
		if err := c.checkSeq(seq); err != nil {
			return err
		}
	}
	if d < 1 {
		return fmt.Errorf("kvcache: seq_div by %d (want d >= 1)", d)
	}
	if d == 1 {
		return nil
	}
	p0, p1 = rangeOf(p0, p1)
	for i := range c.cells {
		cl := &c.cells[i]
		if cl.pos < p0 || cl.pos >= p1 || (seq >= 0 && !cl.seqs.has(seq)) {
			continue
		}
		np := cl.pos / d
		cl.shift += np - cl.pos
		cl.pos = np
		if cl.shift != 0 {
			c.hasShift = true
		}
	}
	return nil
}

// HasShift reports whether some cell has moved since its keys were roped.
func (c *Cache) HasShift() bool { return c.hasShift }

// Shifts fills dst with the shift of cells 0, 1, ..., len(dst)-1: how far
// each cell's position moved since its keys were roped (0 for empty and
// unmoved cells). Re-roping a key by its cell's shift puts it at the
// cell's position.
func (c *Cache) Shifts(dst []int32) {
	for i := range dst {
		dst[i] = 0
		if i < len(c.cells) && c.cells[i].pos >= 0 {
			dst[i] = c.cells[i].shift
		}
	}
}

// ClearShifts records that every cell's keys are at its position again.
func (c *Cache) ClearShifts() {
	for i := range c.cells {
		c.cells[i].shift = 0
	}
	c.hasShift = false
}

// A Move is one step of a defragmentation: the rows of n cells from cell
// From on go to the cells from To on.
type Move struct {
	From, To, N int
}

// Defrag compacts the used cells into the first Used() cells and returns
// the moves the cache tensors' rows must make, as llama.cpp's defrag
// does: each run of empty cells (a hole) is filled with the last used
// cells of the cache, kept in their order. A move's destination cells are
// empty and its sources lie after them, so within a move nothing
// overlaps; moves must be applied in order (a later move may fill cells an
// earlier one emptied). The head goes to the first empty cell.
func (c *Cache) Defrag() []Move {
	var moves []Move
	n := len(c.cells)
	hole := 0
	for {
		for hole < n && c.cells[hole].pos >= 0 {
			hole++
		}
		last := n - 1
		for last >= 0 && c.cells[last].pos < 0 {
			last--
		}
		if hole >= last {
			break
		}
		nh := 0
		for hole+nh < last && c.cells[hole+nh].pos < 0 {
			nh++
		}
		var src []int
		for j := last; j >= hole+nh && len(src) < nh; j-- {
			if c.cells[j].pos >= 0 {
				src = append(src, j)
			}
		}
		for k := range src {
			j := src[len(src)-1-k]
			c.cells[hole+k], c.cells[j] = c.cells[j], cell{pos: -1}
			moves = append(moves, Move{From: j, To: hole + k, N: 1})
		}
		hole += len(src)
	}
	c.head = c.used % n
	return mergeMoves(moves)
}

// mergeMoves joins consecutive moves whose sources and destinations both
// continue the previous move's into one run, where the run's destination
// stays clear of its source.
func mergeMoves(ms []Move) []Move {
	var out []Move
	for _, m := range ms {
		if k := len(out); k > 0 {
			p := &out[k-1]
			if p.From+p.N == m.From && p.To+p.N == m.To && m.To+m.N <= p.From {
				p.N += m.N
				continue
			}
		}
		out = append(out, m)
	}
	return out
}
