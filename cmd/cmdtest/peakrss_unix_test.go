//go:build unix

package cmdtest

import (
	"syscall"
	"testing"
)

// peakRSS runs a command and returns its peak resident memory in bytes
// (getrusage's ru_maxrss, KiB on Linux).
func peakRSS(t *testing.T, dir, name string, args ...string) int64 {
	t.Helper()
	r := run(t, dir, name, args...)
	if r.code != 0 {
		t.Fatalf("%s %q: exit %d\n%s", name, args, r.code, r.stderr)
	}
	ru, ok := r.state.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no rusage here")
	}
	return ru.Maxrss << 10
}
