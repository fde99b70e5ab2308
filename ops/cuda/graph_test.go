package cuda

import (
	"slices"
	"testing"
)

// TestParseGraphMode: $KERNBENCH_CUDA_GRAPHS's values, and the chunks a
// split of 200 nodes is cut into for each.
func TestParseGraphMode(t *testing.T) {
	for _, tc := range []struct {
		v      string
		on     bool
		chunks []int // of a 200-node split, when on
		bad    bool
	}{
		{v: "", on: true, chunks: []int{8, 16, 32, 64, 64, 16}},
		{v: "on", on: true, chunks: []int{8, 16, 32, 64, 64, 16}},
		{v: "Chunked", on: true, chunks: []int{8, 16, 32, 64, 64, 16}},
		{v: "off"}, {v: "0"}, {v: "false"},
		{v: "whole", on: true, chunks: []int{200}},
		{v: "48", on: true, chunks: []int{48, 48, 48, 48, 8}},
		{v: " 1000 ", on: true, chunks: []int{200}},
		{v: "-3", bad: true}, {v: "sometimes", bad: true},
	} {
		on, chunk, err := parseGraphMode(tc.v)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: no error", tc.v)
			}
			continue
		}
		if err != nil || on != tc.on {
			t.Errorf("%q: on %v, %v; want on %v", tc.v, on, err, tc.on)
			continue
		}
		if !on {
			continue
		}
		var got []int
		for k, i := 0, 0; i < 200; k++ {
			j := chunkEnd(chunk, k, i, 200)
			got = append(got, j-i)
			i = j
		}
		if !slices.Equal(got, tc.chunks) {
			t.Errorf("%q: chunks %v, want %v", tc.v, got, tc.chunks)
		}
	}
}
