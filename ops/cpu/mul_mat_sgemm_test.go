package cpu

import (
	"fmt"
	"testing"
)

// TestSgemmBlockRows checks the packed float path's row blocking: whole
// groups of six, no taller than the cap, and at least half the blocks
// four work items a thread need (rows evened out over the blocks round
// the count down by up to half) where the rows allow; the table checks
// that the count is evened out to a multiple of the threads.
func TestSgemmBlockRows(t *testing.T) {
	for _, c := range []struct {
		m, others, max int64
		threads        int
		want           int64
	}{
		{4096, 1, 384, 2, 342},  // 11 blocks of 384 would leave one thread a block short: 12 of 342
		{4096, 1, 96, 2, 96},    // 43 blocks of 96: 44 of 96 still need 43 (the last short)
		{4096, 2, 384, 2, 378},  // two column blocks: 22 items already even, 11 blocks of 63 groups
		{1, 1, 384, 2, 6},       // one row: one padded group
		{64, 1, 384, 2, 12},     // 11 groups for 8 items: 6 blocks of 2 groups (the last 4 rows)
		{14336, 1, 768, 2, 720}, // 19 blocks of 768 -> 20 of 720
	} {
		if got := sgemmBlockRows(c.m, c.others, c.max, c.threads); got != c.want {
			t.Errorf("sgemmBlockRows(m=%d, others=%d, max=%d, threads=%d) = %d, want %d", c.m, c.others, c.max, c.threads, got, c.want)
		}
	}
	for _, m := range []int64{1, 5, 6, 7, 64, 100, 1000, 4096, 4097, 14336} {
		for _, others := range []int64{1, 2, 3, 8} {
			for _, maxRows := range []int64{1, 6, 96, 384, 768} {
				for _, threads := range []int{1, 2, 3, 8} {
					name := fmt.Sprintf("m=%d,others=%d,max=%d,t=%d", m, others, maxRows, threads)
					mc := sgemmBlockRows(m, others, maxRows, threads)
					groups := ceilDiv(m, sgemmMR)
					blocks := ceilDiv(m, mc)
					switch {
					case mc <= 0 || mc%sgemmMR != 0:
						t.Errorf("%s: %d rows, not whole groups", name, mc)
					case mc > max(maxRows/sgemmMR, 1)*sgemmMR:
						t.Errorf("%s: %d rows, over the cap", name, mc)
					case 2*others*blocks < min(4*int64(threads), others*groups):
						t.Errorf("%s: %d blocks of %d rows make %d items for %d threads, and more were possible", name, blocks, mc, others*blocks, threads)
					}
				}
			}
		}
	}
}
