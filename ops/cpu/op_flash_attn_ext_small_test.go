package cpu

import "testing"

const faAllMasked = ^uint64(0)

// TestFaLiveEnd checks faLiveEnd over masks with their last live key in
// each place of a tile, and bits past the tile.
func TestFaLiveEnd(t *testing.T) {
	cases := []struct {
		name string
		mb   []uint64
		nt   int64
		want int64
	}{
		{"none masked", []uint64{0, 0, 0, 0}, 256, 256},
		{"all masked", []uint64{faAllMasked, faAllMasked}, 100, 0},
		{"causal edge", []uint64{faAllMasked &^ (1<<10 - 1)}, 64, 10},
		{"bits past nt ignored", []uint64{faAllMasked, 0}, 70, 70},
		{"masked past nt", []uint64{0, faAllMasked &^ 7}, 70, 67},
		{"first key only", []uint64{^uint64(1), faAllMasked, faAllMasked, faAllMasked}, 256, 1},
		{"last key of a word", []uint64{1 << 63, faAllMasked}, 128, 63},
		{"empty tile", []uint64{0}, 0, 0},
	}
	for _, c := range cases {
		if got := faLiveEnd(c.mb, c.nt); got != c.want {
			t.Errorf("%s: faLiveEnd = %d, want %d", c.name, got, c.want)
		}
	}
}
