package cpu

import "testing"

// TestNearLLC checks the window of weight sizes about the last level
// cache's that takes kernelSet.gemvLLC's kernels: from just over 11/16
// of the LLC to 3/2 of it.
func TestNearLLC(t *testing.T) {
	const mib, llc = 1 << 20, 32 << 20
	for _, tc := range []struct {
		bytes int64
		want  bool
	}{
		{16 * mib, false}, {22 * mib, false}, {22*mib + 1, true}, {24 * mib, true},
		{32 * mib, true}, {48 * mib, true}, {48*mib + 1, false}, {112 * mib, false},
	} {
		if got := nearLLC(tc.bytes, llc); got != tc.want {
			t.Errorf("nearLLC(%d MiB + %d, 32 MiB) = %v, want %v", tc.bytes/mib, tc.bytes%mib, got, tc.want)
		}
	}
}
