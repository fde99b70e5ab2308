package backends_test

import (
	"slices"
	"testing"

	_ "github.com/kernbench/kernbench/ops/backends"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/ops/registry"
)

// TestRegistered checks that the import registers every backend, with a
// CPU variant per tier (available exactly where the tier is supported),
// and that every target that cannot open says why.
func TestRegistered(t *testing.T) {
	var names []string
	for _, e := range registry.Entries() {
		names = append(names, e.Name)
		if e.Description == "" {
			t.Errorf("%s has no description", e.Name)
		}
	}
	if want := []string{"cpu", "cuda", "metal"}; !slices.Equal(names, want) {
		t.Errorf("entries %v, want %v", names, want)
	}
	avail := registry.Available()
	for _, tier := range cpu.Tiers() {
		tg, err := registry.Resolve("cpu-"+tier.Name, "")
		if err != nil {
			t.Errorf("cpu-%s: %v", tier.Name, err)
			continue
		}
		in := slices.ContainsFunc(avail, func(x registry.Target) bool { return x.Name() == tg.Name() })
		if in != tier.Supported || (tg.Err() == nil) != tier.Supported {
			t.Errorf("%s: available %v, Err %v; tier supported %v (%s)", tg, in, tg.Err(), tier.Supported, tier.Reason)
		}
	}
	for _, tg := range registry.Targets() {
		if err := tg.Err(); err != nil && err.Error() == "" {
			t.Errorf("%s is unavailable with no reason", tg)
		}
		t.Logf("%-12s %v", tg, tg.Err())
	}
}

// TestOpenCPU opens the CPU by its name alone (its default tier) and by a
// variant, with a thread count.
func TestOpenCPU(t *testing.T) {
	b, err := registry.Open("cpu", registry.Config{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c, ok := b.(*cpu.Backend)
	if !ok || c.Threads() != 1 {
		t.Fatalf("cpu opened %T", b)
	}
	def, err := registry.Resolve("cpu", "")
	if err != nil || def.Variant != c.Tier().Name {
		t.Errorf("default target %v, %v; the backend runs tier %s", def, err, c.Tier().Name)
	}
	g, err := registry.Open("cpu-generic", registry.Config{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if c := g.(*cpu.Backend); c.Tier().Name != "generic" || c.Threads() != 2 {
		t.Errorf("cpu-generic opened tier %s with %d threads", c.Tier().Name, c.Threads())
	}
}
