// Package kvcache keeps the bookkeeping of a key/value cache as llama.cpp's
// llama_kv_cache does: a fixed number of cells, each holding the key and
// value rows of one token, with the token's position and the set of
// sequences it belongs to. It finds room for a micro-batch (a contiguous
// run, or free cells here and there), builds the attention mask from the
// cells (with a sliding window, whose cells it reuses once they leave
// it), removes, copies and keeps sequences, moves positions (SeqAdd,
// SeqDiv, recording each cell's shift for the re-rope of its keys) and
// plans defragmentation moves. A Cache is one stream: a cache with a
// stream per sequence is one Cache per sequence. States is the
// bookkeeping of a recurrent model's states: one cell per sequence. The
// package holds no tensors: the model stores each layer's K and V rows in
// cell order, so cell i's rows are at row i of the cache tensors (of its
// stream).
package kvcache

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// MaxSeq is the largest number of sequences a cache tracks (as llama.cpp's
// LLAMA_MAX_SEQ).
const MaxSeq = 256

// seqSet is a set of sequence ids below MaxSeq.
type seqSet [MaxSeq / 64]uint64

func (s *seqSet) add(id int32)      { s[id/64] |= 1 << (id % 64) }
func (s *seqSet) remove(id int32)   { s[id/64] &^= 1 << (id % 64) }
func (s *seqSet) has(id int32) bool { return s[id/64]&(1<<(id%64)) != 0 }
func (s *seqSet) empty() bool       { return *s == seqSet{} }
func (s *seqSet) ids() (out []int32) {
	for w, x := range s {
		for x != 0 {
			b := bits.TrailingZeros64(x)
			out = append(out, int32(w*64+b))
			x &^= 1 << b
		}
	}
	return out
}

// cell is one slot of the cache. pos < 0 marks an empty cell. shift is
// how far seq_add and seq_div have moved the cell's position since its
// keys were last roped (see Shifts).
type cell struct {
	pos   int32
	shift int32
	seqs  seqSet
}

// ErrNoSlot is returned (wrapped) when a micro-batch does not fit in the
// cache's free cells.
var ErrNoSlot = errors.New("kvcache: no free slot")

// Cache is the cell bookkeeping of a unified KV cache. It is not safe for
// concurrent use.
type Cache struct {
	cells    []cell
	head     int
	used     int
	nSeqMax  int
	nSWA     int32
	hasShift bool
}

// New returns an empty cache of size cells for sequences 0..nSeqMax-1.
// nSWA > 0 makes it a sliding-window cache: a query at position p sees
// only keys at positions above p - nSWA, and cells that have fallen out of
// the window of every sequence they belong to may be reused.
func New(size, nSeqMax, nSWA int) (*Cache, error) {
	switch {
	case size <= 0 || size > math.MaxInt32:
		return nil, fmt.Errorf("kvcache: size %d must be in [1, %d]", size, math.MaxInt32)
	case nSeqMax <= 0 || nSeqMax > MaxSeq:
		return nil, fmt.Errorf("kvcache: n_seq_max %d must be in [1, %d]", nSeqMax, MaxSeq)
	case nSWA < 0 || nSWA > math.MaxInt32:
		return nil, fmt.Errorf("kvcache: n_swa %d must be >= 0", nSWA)
	}
	c := &Cache{cells: make([]cell, size), nSeqMax: nSeqMax, nSWA: int32(nSWA)}
	c.Clear()
	return c, nil
}

// Size returns the number of cells.
func (c *Cache) Size() int { return len(c.cells) }

// Used returns the number of non-empty cells.
func (c *Cache) Used() int { return c.used }

// Head returns the cell where the next slot search starts.
func (c *Cache) Head() int { return c.head }

// NSeqMax returns the number of sequence ids the cache accepts.
func (c *Cache) NSeqMax() int { return c.nSeqMax }

// NSWA returns the sliding window (0: none).
func (c *Cache) NSWA() int { return int(c.nSWA) }

// Clear empties every cell.
func (c *Cache) Clear() {
	for i := range c.cells {
		c.cells[i] = cell{pos: -1}
	}
	c.head, c.used, c.hasShift = 0, 0, false
}

// Cell returns the position and sequences of cell i; pos is -1 and seqs
// nil for an empty cell.
func (c *Cache) Cell(i int) (pos int32, seqs []int32) {
	if i < 0 || i >= len(c.cells) || c.cells[i].pos < 0 {
		return -1, nil
	}
	return c.cells[i].pos, c.cells[i].seqs.ids()
}

func (c *Cache) checkSeq(id int32) error {
	if id < 0 || int(id) >= c.nSeqMax {
		return fmt.Errorf("kvcache: sequence id %d outside [0, %d)", id, c.nSeqMax)
	}
	return nil
}

// CheckUbatch validates a micro-batch's positions and sequence sets: equal
// lengths, positions >= 0, each token in at least one sequence, ids in
// range and not repeated within a token.
func (c *Cache) CheckUbatch(pos []int32, seqs [][]int32) error {
	if len(pos) != len(seqs) {
		return fmt.Errorf("kvcache: %d positions for %d sequence sets", len(pos), len(seqs))
	}
	for i, p := range pos {
		if p < 0 {
			return fmt.Errorf("kvcache: token %d has negative position %d", i, p)
		}
		if len(seqs[i]) == 0 {
			return fmt.Errorf("kvcache: token %d belongs to no sequence", i)
		}
		var s seqSet
		for _, id := range seqs[i] {
			if err := c.checkSeq(id); err != nil {
				return fmt.Errorf("token %d: %w", i, err)
			}
			if s.has(id) {
				return fmt.Errorf("kvcache: token %d lists sequence %d twice", i, id)
			}
			s.add(id)
		}
	}
	return nil
}

// FindSlot returns the first cell of a run of n contiguous empty cells,
// searching from the head and wrapping around, as llama.cpp's find_slot.
// When the head is far past the used cells (more than used + 2n) the
// search starts from cell 0 instead, to keep the occupied prefix short. In
// a sliding-window cache, when no run is free it first empties the cells
// that every one of their sequences has moved beyond the window of, then
// searches again. Apart from that pruning it changes no cell: Apply
// stores the micro-batch.
func (c *Cache) FindSlot(n int) (int, error) {
	if n <= 0 {
		return 0, fmt.Errorf("kvcache: slot for %d tokens", n)
	}
	if n > len(c.cells) {
		return 0, fmt.Errorf("%w: %d tokens do not fit in %d cells", ErrNoSlot, n, len(c.cells))
	}
	if c.head > c.used+2*n {
		c.head = 0
	}
	if h, ok := c.search(n); ok {
		return h, nil
	}
	if c.nSWA > 0 && c.pruneSWA() > 0 {
		if h, ok := c.search(n); ok {
			return h, nil
		}
	}
	return 0, fmt.Errorf("%w: no %d contiguous free cells (%d of %d used)", ErrNoSlot, n, c.used, len(c.cells))
}

// FindCells returns n empty cells for a micro-batch: a contiguous run
// when FindSlot finds one (the common case, and the cheapest to store
// into), else any n empty cells from the head on, wrapping around, so
// that a fragmented cache (cells freed here and there by seq_rm or by the
// sliding window) still takes the micro-batch while it has room. The
// cells are in increasing order from the head. Like FindSlot it changes
// no cell but the sliding window's pruning.
func (c *Cache) FindCells(n int) ([]int, error) { return c.AppendCells(nil, n) }

// AppendCells is FindCells appending the cells to dst (which it may
// reuse), so that a decoder that keeps dst allocates nothing.
func (c *Cache) AppendCells(dst []int, n int) ([]int, error) {
	h, err := c.FindSlot(n)
	if err == nil {
		for i := range n {
			dst = append(dst, h+i)
		}
		return dst, nil
	}
	if n > len(c.cells) || len(c.cells)-c.used < n {
		return dst, err
	}
	found := 0
	for k := range len(c.cells) {
		i := (c.head + k) % len(c.cells)
		if c.cells[i].pos < 0 {
			dst = append(dst, i)
			if found++; found == n {
				break
			}
		}
	}
	return dst, nil
}

// search looks for n contiguous empty cells from the head, wrapping once.
func (c *Cache) search(n int) (int, bool) {
	size := len(c.cells)
	h, tested := c.head, 0
	for tested < size {
		if h+n > size {
			tested += size - h
			h = 0
			continue
		}
		free := true
		for i := range n {
			if c.cells[h+i].pos >= 0 {
				free = false
				h += i + 1
				tested += i + 1
				break
			}
		}
		if free {
			return h, true
		}
	}
	return 0, false
}

// pruneSWA removes each sequence from the cells that lie outside its
// window for every position it can still take (above its largest
// position), and returns the number of cells emptied.
func (c *Cache) pruneSWA() int {
	maxPos := make([]int32, c.nSeqMax)
	for s := range maxPos {
		maxPos[s] = c.SeqPosMax(int32(s))
	}
	freed := 0
	for i := range c.cells {
		cl := &c.cells[i]
		if cl.pos < 0 {
			continue
		}
		for _, s := range cl.seqs.ids() {
			if c.maskedSWA(cl.pos, maxPos[s]+1) {
				cl.seqs.remove(s)
			}
		}
		if cl.seqs.empty() {
			c.emptyCell(i)
			freed++
		}
	}
	return freed
}

func (c *Cache) emptyCell(i int) {
	c.cells[i] = cell{pos: -1}
	c.used--
}

// maskedSWA reports whether a key at position kpos is outside the window
// of a query at position qpos.
func (c *Cache) maskedSWA(kpos, qpos int32) bool {
	return c.nSWA > 0 && int64(qpos)-int64(kpos) >= int64(c.nSWA)
}

// Apply stores a micro-batch in the cells from head on: cell head+i gets
// position pos[i] and the sequences seqs[i]. The cells must be empty (as
// FindSlot returns them). It returns the previous state of those cells for
// Restore.
func (c *Cache) Apply(head int, pos []int32, seqs [][]int32) (Saved, error) {
	if head < 0 || head+len(pos) > len(c.cells) {
		return Saved{}, fmt.Errorf("kvcache: cells [%d, %d) outside a cache of %d", head, head+len(pos), len(c.cells))
	}
	cells := make([]int, len(pos))
	for i := range cells {
		cells[i] = head + i
	}
	return c.ApplyCells(cells, pos, seqs)
}

// ApplyCells stores a micro-batch in the given cells (as FindCells
// returns them): cell cells[i] gets position pos[i] and the sequences
// seqs[i]. The cells must be empty and distinct. It returns the previous
// state of those cells for Restore.
func (c *Cache) ApplyCells(cells []int, pos []int32, seqs [][]int32) (Saved, error) {
	var sv Saved
	err := c.ApplyCellsTo(&sv, cells, pos, seqs)
	return sv, err
}

// ApplyCellsTo is ApplyCells saving the cells' previous state into sv,
// reusing its memory, so that a decoder that keeps sv allocates nothing.
func (c *Cache) ApplyCellsTo(sv *Saved, cells []int, pos []int32, seqs [][]int32) error {
	if err := c.CheckUbatch(pos, seqs); err != nil {
		return err
	}
	if len(cells) != len(pos) {
		return fmt.Errorf("kvcache: %d cells for %d tokens", len(cells), len(pos))
	}
	for k, i := range cells {
		if i < 0 || i >= len(c.cells) {
			return fmt.Errorf("kvcache: cell %d outside a cache of %d", i, len(c.cells))
		}
		if c.cells[i].pos >= 0 {
			return fmt.Errorf("kvcache: cell %d is in use", i)
		}
		if slices.Contains(cells[:k], i) {
			return fmt.Errorf("kvcache: cell %d given twice", i)
		}
	}
	sv.head = c.head
	sv.at = append(sv.at[:0], cells...)
	sv.cells = sv.cells[:0]
	if len(cells) == 0 {
		return nil
	}
	for k, i := range cells {
		sv.cells = append(sv.cells, c.cells[i])
		cl := &c.cells[i]
		cl.pos, cl.shift = pos[k], 0
		for _, id := range seqs[k] {
			cl.seqs.add(id)
		}
		c.used++
	}
	c.head = cells[len(cells)-1] + 1
	if c.head >= len(c.cells) {
		c.head = 0
	}
	return nil
}

// Saved is the state of the cells a micro-batch took, to undo Apply when
// the micro-batch fails.
type Saved struct {
	head  int
	at    []int
	cells []cell
}

// Restore puts back the cells Apply changed.
func (c *Cache) Restore(s Saved) {
	for k, old := range s.cells {
		i := s.at[k]
		if c.cells[i].pos >= 0 {
			c.used--
		}
		c.cells[i] = old
		if old.pos >= 0 {
			c.used++
		}
	}
	c.head = s.head
}

// NKV returns how many cells, from 0, the attention reads: the last used
// cell plus one, rounded up to a multiple of pad (at least pad), and at
// most the cache size. Reading fewer than all cells saves work while the
// cache fills, as llama.cpp's n_kv.
func (c *Cache) NKV(pad int) int {
	if pad <= 0 {
		pad = 1
	}
	last := 0
	for i := len(c.cells) - 1; i >= 0; i-- {
		if c.cells[i].pos >= 0 {
			last = i + 1
			break
		}
	}
	n := max(pad, (last+pad-1)/pad*pad)
	return min(n, len(c.cells))
}

// Mask fills dst, rows x nKV float32 in row-major order, with the
// attention mask of a micro-batch: row i (token i, at position pos[i] in
// sequence seqs[i][0]) has 0 for the cells it attends to and -Inf for the
// rest. A token attends to a non-empty cell that belongs to its first
// sequence and whose position is at most its own (causal), and, in a
// sliding-window cache, is less than nSWA positions back. Rows past
// len(pos) (padding) are all -Inf. The micro-batch must already be
// applied, so each token sees itself.
func (c *Cache) Mask(dst []float32, nKV, rows int, pos []int32, seqs [][]int32) error {
	if len(pos) != len(seqs) {
		return fmt.Errorf("kvcache: %d positions for %d sequence sets", len(pos), len(seqs))
	}
	if nKV <= 0 || nKV > len(c.cells) || rows < len(pos) {
		return fmt.Errorf("kvcache: mask of %d rows x %d cells for %d tokens in a cache of %d", rows, nKV, len(pos), len(c.cells))
	}
	if len(dst) != rows*nKV {
		return fmt.Errorf("kvcache: mask buffer holds %d values, want %d", len(dst), rows*nKV)
	}
	inf := float32(math.Inf(-1))
	for i := range rows {
		row := dst[i*nKV : (i+1)*nKV]
		if i >= len(pos) {
			for j := range row {
				row[j] = inf
			}
			continue
		}
		if len(seqs[i]) == 0 {
			return fmt.Errorf("kvcache: token %d belongs to no sequence", i)
		}
		s, p := seqs[i][0], pos[i]
		if err := c.checkSeq(s); err != nil {
			return err
		}
		for j := range row {
			cl := &c.cells[j]
			if cl.pos < 0 || !cl.seqs.has(s) || cl.pos > p || c.maskedSWA(cl.pos, p) {
				row[j] = inf
			} else {
				row[j] = 0
			}
		}
	}
	return nil
}

// rangeOf turns llama.cpp's [p0, p1) convention (negative p0: from 0,
// negative p1: to the end) into bounds.
func rangeOf(p0, p1 int32) (int32, int32) {
	if p0 < 0 {
		p0 = 0
	}
	if p1 < 0 {
		p1 = math.MaxInt32
	}
	return p0, p1
}

// SeqRm removes sequence seq (every sequence when seq < 0) from the cells
// with positions in [p0, p1); negative p0 means 0 and negative p1 means no
// upper bound. Cells left without a sequence become empty.
func (c *Cache) SeqRm(seq, p0, p1 int32) error {
	if seq >= 0 {
		if err := c.checkSeq(seq); err != nil {
			return err
		}
	}
	p0, p1 = rangeOf(p0, p1)
	first := -1
	for i := range c.cells {
		cl := &c.cells[i]
		if cl.pos < 0 || cl.pos < p0 || cl.pos >= p1 {
			continue
		}
		if seq < 0 {
			cl.seqs = seqSet{}
		} else if cl.seqs.has(seq) {
			cl.seqs.remove(seq)
		} else {
			continue
		}
		if cl.seqs.empty() {
			c.emptyCell(i)
			if first < 0 {
				first = i
			}
		}
	}
	if first >= 0 && first < c.head {
		c.head = first
	}
	return nil
}

// SeqCp adds sequence dst to every cell of sequence src with a position in
// [p0, p1) (negative bounds as in SeqRm): the two share those cells.
func (c *Cache) SeqCp(src, dst, p0, p1 int32) error {
	if err := c.checkSeq(src); err != nil {
		return err
	}
	if err := c.checkSeq(dst); err != nil {
		return err
	}
	if src == dst {
		return nil
	}
	p0, p1 = rangeOf(p0, p1)
	for i := range c.cells {
		cl := &c.cells[i]
		if cl.pos >= p0 && cl.pos < p1 && cl.seqs.has(src) {
			cl.seqs.add(dst)
		}
	}
	return nil
}

// SeqKeep removes every sequence but seq from every cell.
func (c *Cache) SeqKeep(seq int32) error {
	if err := c.checkSeq(seq); err != nil {
		return err
	}
	first := -1
	for i := range c.cells {
		cl := &c.cells[i]
		if cl.pos < 0 {
			continue
		}
		if cl.seqs.has(seq) {
			cl.seqs = seqSet{}
			cl.seqs.add(seq)
			continue
		}
		c.emptyCell(i)
		if first < 0 {
			first = i
		}
	}
	if first >= 0 && first < c.head {
		c.head = first
	}
	return nil
}

// SeqPosMin returns the smallest position of sequence seq in the cache,
// or -1 when it has none.
func (c *Cache) SeqPosMin(seq int32) int32 {
	best := int32(-1)
	if c.checkSeq(seq) != nil {
		return best
	}
	for i := range c.cells {
		cl := &c.cells[i]
		if cl.pos >= 0 && cl.seqs.has(seq) && (best < 0 || cl.pos < best) {
			best = cl.pos
		}
	}
	return best
}

// SeqPosMax returns the largest position of sequence seq in the cache, or
// -1 when it has none.
func (c *Cache) SeqPosMax(seq int32) int32 {
	best := int32(-1)
	if c.checkSeq(seq) != nil {
		return best
	}
	for i := range c.cells {
		cl := &c.cells[i]
		if cl.pos >= 0 && cl.seqs.has(seq) && cl.pos > best {
			best = cl.pos
		}
	}
	return best
}
