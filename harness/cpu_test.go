package harness

import (
	"flag"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/kernbench/kernbench/ops/cpu"
)

var (
	calibrate = flag.Bool("calibrate", false, "print the worst NMSE and relative error per tolerance entry")
	withLarge = flag.Bool("large", false, "also run LargeCases")
)

// TestCPU runs the whole default matrix on the CPU backend, once per tier
// the CPU supports: every case must pass, none may be skipped.
func TestCPU(t *testing.T) {
	for _, tier := range cpu.Tiers() {
		if !tier.Supported {
			t.Logf("tier %s skipped: %s", tier.Name, tier.Reason)
			continue
		}
		t.Run(tier.Name, func(t *testing.T) {
			be, err := cpu.NewWithOptions(cpu.Options{Threads: 2, Tier: tier.Name})
			if err != nil {
				t.Fatal(err)
			}
			defer be.Close()
			testCPU(t, be)
		})
	}
}

func testCPU(t *testing.T, be *cpu.Backend) {
	cases := Cases()
	if *withLarge {
		cases = append(cases, LargeCases()...)
	}
	start := time.Now()
	type worst struct {
		nmse, rel float64
		n         int
		tol       Tolerance
		where     string
	}
	worsts := map[string]*worst{}
	for _, c := range cases {
		r := Run(be, c)
		if !r.Passed() {
			t.Errorf("%s: %s (err: %s)", c.ID(), r.Summary(), r.Err)
			continue
		}
		if r.Status != StatusOK {
			continue
		}
		key := fmt.Sprintf("%v/%v/%s", c.Op, primaryType(c), c.Tag)
		w := worsts[key]
		if w == nil {
			w = &worst{tol: r.Tol}
			worsts[key] = w
		}
		w.n++
		if float64(r.NMSE) > w.nmse {
			w.nmse, w.where = float64(r.NMSE), c.ID()
		}
		if r.RefMax > 0 {
			w.rel = max(w.rel, float64(r.MaxErr/r.RefMax))
		}
	}
	t.Logf("%d cases in %v", len(cases), time.Since(start))
	if *calibrate {
		keys := make([]string, 0, len(worsts))
		for k := range worsts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			w := worsts[k]
			t.Logf("%-32s n=%3d worst nmse %.3g (tol %.3g) rel %.3g (tol %.3g) at %s", k, w.n, w.nmse, w.tol.MaxNMSE, w.rel, w.tol.MaxRelErr, w.where)
		}
	}
}
