package cpu

import (
	"errors"
	"fmt"
	"os"
	"strings"

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
		DefaultVariant: defaultTier,
		Tiers:          true,
		Complete:       true,
	})
}

// defaultTier returns the tier a backend gets when none is named: the one
// $KERNBENCH_CPU names, else the fastest this CPU supports.
func defaultTier() (string, error) {
	if env := strings.TrimSpace(os.Getenv(EnvTier)); env != "" {
		t, err := lookupTier(env)
		if err != nil {
			return "", fmt.Errorf("$%s: %w", EnvTier, err)
		}
		return t.Name, nil
	}
	return fastestTier().Name, nil
}

// description describes the backend and its default tier.
func description() string {
	const d = "Go and assembly kernels on a pool of worker threads; "
	t, err := defaultTier()
	switch {
	case err != nil:
		return d + err.Error()
	case t != fastestTier().Name:
		return d + fmt.Sprintf("default tier %s (from $%s)", t, EnvTier)
	}
	s := d + fmt.Sprintf("default tier %s (the fastest this CPU supports)", t)
	if tr, err := lookupTier(t); err == nil && tr.Without != "" {
		s += ", without " + tr.Without
	}
	return s
}
