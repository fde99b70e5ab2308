package cli

import (
	"fmt"
	"strings"

	"github.com/kernbench/kernbench/ops"
	_ "github.com/kernbench/kernbench/ops/backends" // every backend registers itself
	"github.com/kernbench/kernbench/ops/registry"
)

// DefaultBackend is the backend the commands open when none is named.
const DefaultBackend = "cpu"

// BackendOptions select and configure a backend.
type BackendOptions struct {
	// Name is a registered backend ("cpu", "cuda"), or one variant of
	// it ("cpu-avx2"); empty means DefaultBackend.
	Name string
	// Threads is the worker count (CPU); <= 0 means one per CPU.
	Threads int
	// Tier is the backend's variant, the -tier flag: for the CPU its
	// kernel tier ("generic", "avx2", ...). Empty means the backend's
	// default (for the CPU: $KERNBENCH_CPU, else the fastest tier the CPU
	// supports).
	Tier string
}

// ResolveBackend returns the registry target o names, without opening it,
// so that commands can check -backend before loading a model: an unknown
// backend or variant, and one that cannot open here, are errors naming it
// (with the reason).
func ResolveBackend(o BackendOptions) (registry.Target, error) {
	name := o.Name
	if strings.TrimSpace(name) == "" {
		name = DefaultBackend
	}
	t, err := registry.Resolve(name, o.Tier)
	if err != nil {
		return t, err
	}
	if err := t.Err(); err != nil {
		return t, &registry.UnavailableError{Target: t.Name(), Err: err}
	}
	return t, nil
}

// OpenBackend opens the backend o names through the registry. An unknown
// name or variant, and a backend that cannot open here, are errors naming
// them (with the reason).
func OpenBackend(o BackendOptions) (ops.Backend, error) {
	t, err := ResolveBackend(o)
	if err != nil {
		return nil, err
	}
	return t.Open(o.Threads)
}

// BackendNames returns the registered backends' names, for help texts.
func BackendNames() string {
	var s []string
	for _, e := range registry.Entries() {
		s = append(s, e.Name)
	}
	return strings.Join(s, ", ")
}

// TierNames returns the variants of the default backend (the CPU's
// tiers), marking those this machine lacks, for help texts.
func TierNames() string {
	e, err := registry.Lookup(DefaultBackend)
	if err != nil || e.Variants == nil {
		return "none"
	}
	var s []string
	for _, v := range e.Variants() {
		if v.Err == nil {
			s = append(s, v.Name)
		} else {
			s = append(s, v.Name+" (not on this machine)")
		}
	}
	return strings.Join(s, ", ")
}

// BackendDesc describes b for reports: what its Describe method says
// ("cpu (tier avx2, 2 threads)" for the CPU), else its name.
func BackendDesc(b ops.Backend) string {
	if d, ok := b.(interface{ Describe() string }); ok {
		return d.Describe()
	}
	return b.Name()
}

// Threads returns b's worker count, or 0 when it has no such notion.
func Threads(b ops.Backend) int {
	if t, ok := b.(interface{ Threads() int }); ok {
		return t.Threads()
	}
	return 0
}

// BackendUsage returns the help text of a command's -backend flag: the
// registered backends and, where the default backend has variants, an
// example of naming one.
func BackendUsage() string {
	s := "backend: " + BackendNames()
	if e, err := registry.Lookup(DefaultBackend); err == nil {
		if ts := e.Targets(); len(ts) > 0 && ts[0].Variant != "" {
			s += fmt.Sprintf(", or a variant such as %s", ts[0].Name())
		}
	}
	return s + " (opbench backends lists them all, with why one cannot open here)"
}
