//go:build !unix

package cmdtest

import "testing"

// peakRSS skips the test: getrusage is unix's.
func peakRSS(t *testing.T, _, _ string, _ ...string) int64 {
	t.Helper()
	t.Skip("no getrusage here")
	return 0
}
