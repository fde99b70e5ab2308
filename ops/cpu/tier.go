package cpu

import (
	"fmt"
	"os"
	"strings"
)

// A Tier is one implementation level of the CPU kernels: "generic" (pure
// Go, every machine) or a SIMD level such as "avx2". Every tier computes the
// same results as generic up to float rounding; tests run each tier the
// host supports against generic and the float64 reference.
type Tier struct {
	Name string
	// Supported reports whether this CPU can run the tier.
	Supported bool
	// Reason says why an unsupported tier is skipped (missing CPU
	// features, or not built for this architecture).
	Reason string
}

// tierOrder lists the tiers from slowest to fastest; Tiers reports them in
// this order and the default is the fastest supported one.
var tierOrder = []func() Tier{
	func() Tier { return Tier{Name: "generic", Supported: true} },
}

// Tiers returns every tier this build knows, with whether the host CPU
// supports it.
func Tiers() []Tier {
	out := make([]Tier, len(tierOrder))
	for i, f := range tierOrder {
		out[i] = f()
	}
	return out
}

// EnvTier is the environment variable that forces a tier
// (KERNBENCH_CPU=generic|avx2|...).
const EnvTier = "KERNBENCH_CPU"

// Options configure a CPU backend.
type Options struct {
	// Threads is the number of worker threads; GOMAXPROCS when <= 0.
	Threads int
	// Tier names the kernel tier; empty means $KERNBENCH_CPU if set,
	// else the fastest tier the CPU supports.
	Tier string
}

// resolveTier returns the tier to use for name (see Options.Tier).
func resolveTier(name string) (Tier, error) {
	if name == "" {
		name = strings.TrimSpace(os.Getenv(EnvTier))
	}
	tiers := Tiers()
	if name == "" {
		best := tiers[0]
		for _, t := range tiers {
			if t.Supported {
				best = t
			}
		}
		return best, nil
	}
	var names []string
	for _, t := range tiers {
		names = append(names, t.Name)
		if t.Name == name {
			if !t.Supported {
				return Tier{}, fmt.Errorf("cpu: tier %q is not supported on this CPU: %s", name, t.Reason)
			}
			return t, nil
		}
	}
	return Tier{}, fmt.Errorf("cpu: unknown tier %q (known: %s)", name, strings.Join(names, ", "))
}
