// Package cputest gives tests a CPU backend, stopping the test with the
// reason when one cannot be made (a bad $KERNBENCH_CPU, say).
package cputest

import (
	"testing"

	"github.com/kernbench/kernbench/ops/cpu"
)

// New returns a CPU backend of threads workers and the default tier (see
// cpu.New), closed when the test ends. It stops the test when the backend
// cannot be made.
func New(tb testing.TB, threads int) *cpu.Backend {
	tb.Helper()
	b, err := cpu.New(threads)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	return b
}

// UnsupportedTier returns the name of a tier this build knows and this
// CPU cannot run (the fastest such), for tests of the error a command
// gives for one; "" where the CPU runs them all.
func UnsupportedTier() string {
	name := ""
	for _, t := range cpu.Tiers() {
		if !t.Supported {
			name = t.Name
		}
	}
	return name
}
