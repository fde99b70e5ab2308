package kvcache

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func newCache(t *testing.T, size, nSeq, nSWA int) *Cache {
	t.Helper()
	c, err := New(size, nSeq, nSWA)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// put finds a slot for the tokens and applies them, returning the head.
func put(t *testing.T, c *Cache, pos []int32, seqs [][]int32) int {
	t.Helper()
	h, err := c.FindSlot(len(pos))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(h, pos, seqs); err != nil {
		t.Fatal(err)
	}
	return h
}

func one(s int32, n int) [][]int32 {
	out := make([][]int32, n)
	for i := range out {
		out[i] = []int32{s}
	}
	return out
}

func span(p0, n int32) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = p0 + int32(i)
	}
	return out
}

func TestFindSlot(t *testing.T) {
	c := newCache(t, 12, 2, 0)
	if h := put(t, c, span(0, 4), one(0, 4)); h != 0 {
		t.Fatalf("first slot at %d, want 0", h)
	}
	if h := put(t, c, span(0, 2), one(1, 2)); h != 4 {
		t.Fatalf("second slot at %d, want 4", h)
	}
	if h := put(t, c, span(4, 4), one(0, 4)); h != 6 {
		t.Fatalf("third slot at %d, want 6", h)
	}
	if c.Used() != 10 || c.Head() != 10 {
		t.Fatalf("used %d head %d, want 10 10", c.Used(), c.Head())
	}
	// Free seq 1's cells 4-5: a 3-token slot fits nowhere (10-11 and 4-5
	// are runs of 2), a 2-token slot is found at the head first.
	if err := c.SeqRm(1, -1, -1); err != nil {
		t.Fatal(err)
	}
	if c.Used() != 8 || c.Head() != 4 {
		t.Fatalf("after removal used %d head %d, want 8 4", c.Used(), c.Head())
	}
	if _, err := c.FindSlot(3); !errors.Is(err, ErrNoSlot) {
		t.Fatalf("3-token slot in a fragmented cache: %v", err)
	}
	if h, err := c.FindSlot(2); err != nil || h != 4 {
		t.Fatalf("2-token slot at %d (%v), want 4", h, err)
	}
	// Wrapping: with the head at 10, a 2-slot search from there finds 10.
	put(t, c, span(0, 2), one(1, 2)) // takes 4-5
	if h, err := c.FindSlot(2); err != nil || h != 10 {
		t.Fatalf("slot at %d (%v), want 10", h, err)
	}
	put(t, c, span(2, 2), one(1, 2))
	if c.Used() != 12 {
		t.Fatalf("used %d, want 12", c.Used())
	}
	if _, err := c.FindSlot(1); !errors.Is(err, ErrNoSlot) {
		t.Fatalf("full cache: %v", err)
	}
	if _, err := c.FindSlot(13); !errors.Is(err, ErrNoSlot) {
		t.Fatalf("oversized batch: %v", err)
	}
	if _, err := c.FindSlot(0); err == nil {
		t.Fatal("empty batch accepted")
	}
}

func TestHeadResetsWhenFarAhead(t *testing.T) {
	c := newCache(t, 64, 1, 0)
	put(t, c, span(0, 40), one(0, 40))
	if err := c.SeqRm(0, 0, 40); err != nil {
		t.Fatal(err)
	}
	// SeqRm moved the head back to the first freed cell.
	if c.Head() != 0 {
		t.Fatalf("head %d after clearing, want 0", c.Head())
	}
	put(t, c, span(0, 2), one(0, 2))
	c.head = 30 // as if earlier cells had been freed without moving it
	if h, _ := c.FindSlot(4); h != 2 {
		t.Fatalf("slot at %d, want 2 (head > used+2n restarts at 0)", h)
	}
}

// maskString renders a mask row as "x" for -Inf and "." for 0.
func maskString(m []float32, nKV int) []string {
	var rows []string
	for r := 0; r < len(m)/nKV; r++ {
		var b strings.Builder
		for _, v := range m[r*nKV : (r+1)*nKV] {
			switch {
			case math.IsInf(float64(v), -1):
				b.WriteByte('x')
			case v == 0:
				b.WriteByte('.')
			default:
				b.WriteByte('?')
			}
		}
		rows = append(rows, b.String())
	}
	return rows
}

func TestMaskInterleavedSequences(t *testing.T) {
	c := newCache(t, 16, 2, 0)
	// Two sequences interleaved in one micro-batch: seq 0 at positions
	// 0,1,2 and seq 1 at 0,1,2, alternating.
	pos := []int32{0, 0, 1, 1, 2, 2}
	seqs := [][]int32{{0}, {1}, {0}, {1}, {0}, {1}}
	put(t, c, pos, seqs)
	nKV := c.NKV(8)
	if nKV != 8 {
		t.Fatalf("n_kv %d, want 8", nKV)
	}
	m := make([]float32, 8*nKV)
	if err := c.Mask(m, nKV, 8, pos, seqs); err != nil {
		t.Fatal(err)
	}
	want := []string{
		".xxxxxxx", // seq 0 pos 0: cell 0
		"x.xxxxxx", // seq 1 pos 0: cell 1
		".x.xxxxx", // seq 0 pos 1: cells 0, 2
		"x.x.xxxx", // seq 1 pos 1: cells 1, 3
		".x.x.xxx", // seq 0 pos 2: cells 0, 2, 4
		"x.x.x.xx", // seq 1 pos 2: cells 1, 3, 5
		"xxxxxxxx", // padding
		"xxxxxxxx",
	}
	if got := maskString(m, nKV); !slices.Equal(got, want) {
		t.Fatalf("mask\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The next token of seq 1 (pos 3) sees all of seq 1 and itself.
	put(t, c, []int32{3}, one(1, 1))
	m1 := make([]float32, nKV)
	if err := c.Mask(m1, nKV, 1, []int32{3}, one(1, 1)); err != nil {
		t.Fatal(err)
	}
	if got := maskString(m1, nKV)[0]; got != "x.x.x..x" {
		t.Fatalf("seq 1 pos 3 row %s, want x.x.x..x", got)
	}
}

func TestSharedPrefixAndSeqOps(t *testing.T) {
	c := newCache(t, 16, 3, 0)
	// A prompt shared by sequences 0, 1 and 2, then one token each.
	put(t, c, span(0, 3), [][]int32{{0, 1, 2}, {0, 1, 2}, {0, 1, 2}})
	put(t, c, []int32{3, 3, 3}, [][]int32{{0}, {1}, {2}})
	nKV := c.NKV(1)
	m := make([]float32, nKV)
	if err := c.Mask(m, nKV, 1, []int32{3}, one(1, 1)); err != nil {
		t.Fatal(err)
	}
	if got := maskString(m, nKV)[0]; got != "...x.x" {
		t.Fatalf("seq 1 sees %s, want ...x.x (shared prefix and its own cell 4)", got)
	}
	if p, s := c.Cell(1); p != 1 || !slices.Equal(s, []int32{0, 1, 2}) {
		t.Fatalf("cell 1: pos %d seqs %v", p, s)
	}

	// Remove seq 1 entirely: the prefix stays (still in 0 and 2), its own
	// cell empties.
	if err := c.SeqRm(1, -1, -1); err != nil {
		t.Fatal(err)
	}
	if c.Used() != 5 || c.SeqPosMax(1) != -1 {
		t.Fatalf("after removing seq 1: used %d, pos max %d", c.Used(), c.SeqPosMax(1))
	}
	if p, s := c.Cell(0); p != 0 || !slices.Equal(s, []int32{0, 2}) {
		t.Fatalf("cell 0 after removal: pos %d seqs %v", p, s)
	}

	// Copy seq 0's positions [0, 2) to seq 1, then keep only seq 1.
	if err := c.SeqCp(0, 1, 0, 2); err != nil {
		t.Fatal(err)
	}
	if c.SeqPosMin(1) != 0 || c.SeqPosMax(1) != 1 {
		t.Fatalf("copied seq 1 spans [%d, %d], want [0, 1]", c.SeqPosMin(1), c.SeqPosMax(1))
	}
	if err := c.SeqKeep(1); err != nil {
		t.Fatal(err)
	}
	if c.Used() != 2 || c.SeqPosMax(0) != -1 || c.SeqPosMax(2) != -1 {
		t.Fatalf("after keep: used %d, seq0 max %d, seq2 max %d", c.Used(), c.SeqPosMax(0), c.SeqPosMax(2))
	}

	// Remove a position range of every sequence.
	if err := c.SeqRm(-1, 1, 2); err != nil {
		t.Fatal(err)
	}
	if c.Used() != 1 || c.SeqPosMax(1) != 0 {
		t.Fatalf("after range removal: used %d, max %d", c.Used(), c.SeqPosMax(1))
	}
	c.Clear()
	if c.Used() != 0 || c.Head() != 0 || c.NKV(4) != 4 {
		t.Fatalf("after clear: used %d head %d n_kv %d", c.Used(), c.Head(), c.NKV(4))
	}
}

func TestSeqRmTail(t *testing.T) {
	c := newCache(t, 8, 1, 0)
	put(t, c, span(0, 6), one(0, 6))
	if err := c.SeqRm(0, 4, -1); err != nil {
		t.Fatal(err)
	}
	if c.Used() != 4 || c.SeqPosMax(0) != 3 || c.Head() != 4 {
		t.Fatalf("used %d pos max %d head %d, want 4 3 4", c.Used(), c.SeqPosMax(0), c.Head())
	}
	// Re-decoding positions 4 and 5 reuses the freed cells.
	if h := put(t, c, span(4, 2), one(0, 2)); h != 4 {
		t.Fatalf("re-decode at %d, want 4", h)
	}
}

func TestSlidingWindow(t *testing.T) {
	c := newCache(t, 8, 1, 3)
	put(t, c, span(0, 6), one(0, 6))
	m := make([]float32, 6*8)
	if err := c.Mask(m, 8, 6, span(0, 6), one(0, 6)); err != nil {
		t.Fatal(err)
	}
	want := []string{
		".xxxxxxx",
		"..xxxxxx",
		"...xxxxx",
		"x...xxxx", // pos 3: 3-0 >= 3 masks pos 0
		"xx...xxx",
		"xxx...xx",
	}
	if got := maskString(m, 8); !slices.Equal(got, want) {
		t.Fatalf("sliding mask\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSlidingWindowReusesCells decodes far more tokens than the cache has
// cells: possible only because cells out of the window are reused.
func TestSlidingWindowReusesCells(t *testing.T) {
	for _, nSWA := range []int{0, 2} {
		c := newCache(t, 4, 1, nSWA)
		var err error
		for p := int32(0); p < 20 && err == nil; p++ {
			var h int
			if h, err = c.FindSlot(1); err == nil {
				_, err = c.Apply(h, []int32{p}, one(0, 1))
			}
			if err == nil {
				// The window (positions p-1, p) must survive.
				m := make([]float32, 4)
				if err := c.Mask(m, 4, 1, []int32{p}, one(0, 1)); err != nil {
					t.Fatal(err)
				}
				seen := 0
				for _, v := range m {
					if v == 0 {
						seen++
					}
				}
				if nSWA > 0 && seen != min(int(p)+1, nSWA) {
					t.Fatalf("pos %d sees %d cells, want %d", p, seen, min(int(p)+1, nSWA))
				}
			}
		}
		if nSWA == 0 && !errors.Is(err, ErrNoSlot) {
			t.Errorf("full cache without a window: %v", err)
		}
		if nSWA > 0 && err != nil {
			t.Errorf("window %d: %v", nSWA, err)
		}
	}
}

func TestRestore(t *testing.T) {
	c := newCache(t, 8, 1, 0)
	put(t, c, span(0, 3), one(0, 3))
	h, _ := c.FindSlot(2)
	sv, err := c.Apply(h, span(3, 2), one(0, 2))
	if err != nil {
		t.Fatal(err)
	}
	c.Restore(sv)
	if c.Used() != 3 || c.Head() != 3 || c.SeqPosMax(0) != 2 {
		t.Fatalf("after restore: used %d head %d max %d", c.Used(), c.Head(), c.SeqPosMax(0))
	}
}

func TestErrors(t *testing.T) {
	for _, a := range [][3]int{{0, 1, 0}, {4, 0, 0}, {4, MaxSeq + 1, 0}, {4, 1, -1}} {
		if _, err := New(a[0], a[1], a[2]); err == nil {
			t.Errorf("New%v accepted", a)
		}
	}
	c := newCache(t, 8, 2, 0)
	bad := []struct {
		pos  []int32
		seqs [][]int32
		want string
	}{
		{[]int32{0}, [][]int32{{2}}, "sequence id 2"},
		{[]int32{-1}, [][]int32{{0}}, "negative position"},
		{[]int32{0}, [][]int32{{}}, "no sequence"},
		{[]int32{0}, [][]int32{{1, 1}}, "twice"},
		{[]int32{0, 1}, [][]int32{{0}}, "2 positions"},
	}
	for _, b := range bad {
		if _, err := c.Apply(0, b.pos, b.seqs); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("Apply(%v, %v): %v, want %q", b.pos, b.seqs, err, b.want)
		}
	}
	put(t, c, []int32{0}, one(0, 1))
	if _, err := c.Apply(0, []int32{1}, one(0, 1)); err == nil {
		t.Error("Apply over a used cell accepted")
	}
	if err := c.SeqRm(5, 0, 1); err == nil {
		t.Error("SeqRm of sequence 5 accepted")
	}
	if err := c.SeqCp(0, 9, 0, 1); err == nil {
		t.Error("SeqCp to sequence 9 accepted")
	}
	if err := c.Mask(make([]float32, 3), 2, 1, []int32{0}, one(0, 1)); err == nil {
		t.Error("short mask buffer accepted")
	}
	if err := c.Mask(make([]float32, 9*1), 9, 1, []int32{0}, one(0, 1)); err == nil {
		t.Error("n_kv past the cache accepted")
	}
}

// FuzzCacheOps applies a random sequence of operations and checks the
// invariants after each: Used counts the non-empty cells, and no mask row
// lets a token see a later position, another sequence or an empty cell.
func FuzzCacheOps(f *testing.F) {
	f.Add([]byte{0, 3, 1, 0, 5, 2, 1, 1, 0, 4})
	f.Add([]byte{0, 7, 0, 7, 0, 7, 3, 1, 4, 0, 2, 0, 1})
	f.Fuzz(func(t *testing.T, prog []byte) {
		const size, nSeq = 12, 3
		c, err := New(size, nSeq, int(len(prog)%4))
		if err != nil {
			t.Fatal(err)
		}
		next := make([]int32, nSeq) // next position per sequence
		for len(prog) >= 2 {
			op, arg := prog[0]%6, prog[1]
			prog = prog[2:]
			seq := int32(arg % nSeq)
			switch op {
			case 0, 1: // decode 1..4 tokens of one sequence
				n := int(arg/nSeq)%4 + 1
				h, err := c.FindSlot(n)
				if err != nil {
					continue
				}
				pos, seqs := span(next[seq], int32(n)), one(seq, n)
				sv, err := c.Apply(h, pos, seqs)
				if err != nil {
					t.Fatal(err)
				}
				m := make([]float32, n*c.NKV(4))
				if err := c.Mask(m, c.NKV(4), n, pos, seqs); err != nil {
					t.Fatal(err)
				}
				for i := range n {
					for j := range c.NKV(4) {
						if m[i*c.NKV(4)+j] != 0 {
							continue
						}
						p, ss := c.Cell(j)
						if p < 0 || p > pos[i] || !slices.Contains(ss, seq) {
							t.Fatalf("token at %d of seq %d sees cell %d (pos %d, seqs %v)", pos[i], seq, j, p, ss)
						}
					}
				}
				if op == 1 {
					c.Restore(sv)
				} else {
					next[seq] += int32(n)
				}
			case 2:
				p0 := int32(arg) % 8
				if err := c.SeqRm(seq, p0, -1); err != nil {
					t.Fatal(err)
				}
				next[seq] = min(next[seq], max(p0, c.SeqPosMax(seq)+1))
			case 3:
				dst := (seq + 1) % nSeq
				if err := c.SeqRm(dst, -1, -1); err != nil {
					t.Fatal(err)
				}
				if err := c.SeqCp(seq, dst, -1, -1); err != nil {
					t.Fatal(err)
				}
				next[dst] = next[seq]
			case 4:
				if err := c.SeqKeep(seq); err != nil {
					t.Fatal(err)
				}
				for s := range next {
					if int32(s) != seq {
						next[s] = 0
					}
				}
			case 5:
				c.Clear()
				clear(next)
			}
			used := 0
			for i := range size {
				if p, _ := c.Cell(i); p >= 0 {
					used++
				}
			}
			if used != c.Used() {
				t.Fatalf("Used() = %d, %d cells are not empty", c.Used(), used)
			}
		}
	})
}
