// Package gputest holds what the GPU backends' tests share.
package gputest

import (
	"testing"

	"github.com/kernbench/kernbench/internal/require"
	"github.com/kernbench/kernbench/simt"
)

// Emulated opens a backend on the SIMT emulator with open and closes it
// when tb ends. Where the emulator cannot run here, tb is skipped, or
// fails under $KERNBENCH_STRICT (as CI sets it); an emulator that runs
// but a backend that does not open fails tb.
func Emulated[B interface{ Close() error }](tb testing.TB, open func() (B, error)) B {
	tb.Helper()
	if err := simt.Available(); err != nil {
		require.Skip(tb, "SIMT emulator unavailable: %v", err)
	}
	b, err := open()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	return b
}
