package cpu

import (
	"errors"
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/registry"
)

// init registers the CPU backend as "cpu", with a variant per tier
// ("cpu-generic", "cpu-avx2", ...), so that every tier this CPU supports is
// validated and can be measured as a backend of its own.
func init() {
	registry.Register(registry.Entry{
		Name:        "cpu",
		Description: description(),
		Open: func(c registry.Config) (ops.Backend, error) {
			return NewWithOptions(Options{Threads: c.Threads, Tier: c.Variant})
		},
		Variants: func() []registry.Variant {
			var out []registry.Variant
			for _, t := range Tiers() {
				v := registry.Variant{Name: t.Name}
				if !t.Supported {
					v.Err = errors.New(t.Reason)
				}
				out = append(out, v)
			}
			return out
		},
		DefaultVariant: func() (string, error) {
			t, err := resolveTier("")
			if err != nil {
				return "", err
			}
			return t.Name, nil
		},
	})
}

// description describes the backend and its default tier.
func description() string {
	const d = "Go and assembly kernels on a pool of worker threads; "
	t, err := resolveTier("")
	switch {
	case err != nil:
		return d + err.Error()
	case t.Name != fastestTier().Name:
		return d + fmt.Sprintf("default tier %s (from $%s)", t.Name, EnvTier)
	}
	return d + fmt.Sprintf("default tier %s (the fastest this CPU supports)", t.Name)
}
