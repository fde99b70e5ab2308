package main

import (
	"fmt"
	"strings"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu"
)

// A backendEntry names a backend and opens it with a thread count; open is
// nil for a backend this build does not include.
type backendEntry struct {
	name string
	open func(threads int) (ops.Backend, error)
}

// backends lists every backend opbench knows, available or not.
var backends = []backendEntry{
	{name: "cpu", open: func(threads int) (ops.Backend, error) { return cpu.New(threads) }},
	{name: "cuda"},
	{name: "metal"},
}

// cpuTierBackends returns one CPU backend entry per tier, named
// "cpu-<tier>", so that validation covers every tier the CPU supports.
func cpuTierBackends(tiers []string) []backendEntry {
	out := make([]backendEntry, 0, len(tiers))
	for _, tier := range tiers {
		out = append(out, backendEntry{
			name: "cpu-" + tier,
			open: func(threads int) (ops.Backend, error) {
				return cpu.NewWithOptions(cpu.Options{Threads: threads, Tier: tier})
			},
		})
	}
	return out
}

// lookupBackend returns the entry named name, or an error naming it: unknown,
// or not available in this build.
func lookupBackend(name string) (backendEntry, error) {
	var names []string
	for _, b := range backends {
		if b.name == name {
			if b.open == nil {
				return b, fmt.Errorf("backend %s is not available in this build", name)
			}
			return b, nil
		}
		names = append(names, b.name)
	}
	return backendEntry{}, fmt.Errorf("unknown backend %q (known: %s)", name, strings.Join(names, ", "))
}
