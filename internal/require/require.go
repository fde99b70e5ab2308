// Package require decides what a test does when something it needs is
// missing: a shared test file, the SIMT emulator, NVRTC, a CPU tier the
// host reports. By default the test is skipped, so a checkout without the
// shared files or a machine without g++ still passes; with
// KERNBENCH_STRICT=1 in the environment (CI sets it) the test fails
// instead, so that nothing CI is meant to run is passed over silently.
package require

import (
	"os"
	"testing"
)

// Env is the environment variable that turns skips into failures.
const Env = "KERNBENCH_STRICT"

// Strict reports whether $KERNBENCH_STRICT asks for failures instead of
// skips: it is set to anything but "" or "0".
func Strict() bool {
	v := os.Getenv(Env)
	return v != "" && v != "0"
}

// Skip stops tb because something it needs is missing: it skips tb with
// the message, or fails it (Fatalf) under KERNBENCH_STRICT=1.
func Skip(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if Strict() {
		tb.Fatalf("required under "+Env+"=1: "+format, args...)
		return
	}
	tb.Skipf(format, args...)
}
