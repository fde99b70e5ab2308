package cli

import (
	"fmt"
	"strings"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu"
)

// BackendOptions select and configure a backend.
type BackendOptions struct {
	// Name is the backend: "cpu" (the default when empty). "cuda" and
	// "metal" are known names this build does not provide.
	Name string
	// Threads is the worker count (CPU); <= 0 means one per CPU.
	Threads int
	// Tier is the CPU kernel tier ("generic", "avx2", ...; empty: the
	// fastest the CPU supports, or $KERNBENCH_CPU).
	Tier string
}

// BackendNames lists the backends the flag accepts, available or not.
var BackendNames = []string{"cpu", "cuda", "metal"}

// OpenBackend returns the backend o names. An unknown name, a backend this
// build lacks, and a CPU tier that is unknown or unsupported here are
// errors naming them.
func OpenBackend(o BackendOptions) (ops.Backend, error) {
	name := strings.ToLower(o.Name)
	switch name {
	case "", "cpu":
		b, err := cpu.NewWithOptions(cpu.Options{Threads: o.Threads, Tier: o.Tier})
		if err != nil {
			return nil, fmt.Errorf("cpu backend: %w", err)
		}
		return b, nil
	case "cuda", "metal":
		if o.Tier != "" {
			return nil, fmt.Errorf("-tier applies to the cpu backend only")
		}
		return nil, fmt.Errorf("backend %s is not available in this build", name)
	}
	return nil, fmt.Errorf("unknown backend %q (known: %s)", o.Name, strings.Join(BackendNames, ", "))
}

// TierNames returns the CPU tiers this build knows, marking those the host
// lacks, for help texts.
func TierNames() string {
	var s []string
	for _, t := range cpu.Tiers() {
		if t.Supported {
			s = append(s, t.Name)
		} else {
			s = append(s, t.Name+" (not on this CPU)")
		}
	}
	return strings.Join(s, ", ")
}

// BackendDesc describes b for reports: its name, and for the CPU its tier
// and threads.
func BackendDesc(b ops.Backend) string {
	if c, ok := b.(*cpu.Backend); ok {
		return fmt.Sprintf("cpu (tier %s, %d threads)", c.Tier().Name, c.Threads())
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
