package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// readProfileSet reads path as opbench profile's JSON records; ok is
// false when the file is not one (then it is a sweep's record set).
func readProfileSet(path string) (set *profileSet, ok bool, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	if !bytes.Contains(b, []byte(`"`+ProfileSchema+`"`)) {
		return nil, false, nil
	}
	var s profileSet
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, true, fmt.Errorf("%s: %w", path, err)
	}
	if s.Schema != ProfileSchema {
		return nil, false, nil
	}
	return &s, true, nil
}

// profileMetric is one counter compared between two profiles: higher is
// worse unless better is set.
type profileMetric struct {
	name   string
	get    func(k *profileKernel) float64
	higher bool // higher is better
}

var profileMetrics = []profileMetric{
	{"gld sectors/req", func(k *profileKernel) float64 { return k.GlobalLoads.SectorsPerRequest() }, false},
	{"gst sectors/req", func(k *profileKernel) float64 { return k.GlobalStores.SectorsPerRequest() }, false},
	{"global requests", func(k *profileKernel) float64 {
		return float64(k.GlobalLoads.Requests + k.GlobalStores.Requests + k.Atomics.Requests)
	}, false},
	{"bank conflicts", func(k *profileKernel) float64 {
		return float64(k.SharedLoads.BankConflicts() + k.SharedStores.BankConflicts())
	}, false},
	{"warp efficiency", func(k *profileKernel) float64 { return k.WarpEfficiency() }, true},
	{"DRAM bytes", func(k *profileKernel) float64 { return k.DRAMBytes() }, false},
	{"tensor share", func(k *profileKernel) float64 { return k.TensorShare }, true},
	{"estimate", func(k *profileKernel) float64 {
		if len(k.Estimates) == 0 {
			return 0
		}
		return k.Estimates[0].Seconds
	}, false},
}

// compareProfiles prints the counters that differ by more than 1%
// between two profile record sets, kernel by kernel (joined on op, type,
// shape, backend, kernel name and its launch number in the point), and
// returns how many got worse.
func compareProfiles(w io.Writer, a, b *profileSet, pathA, pathB string) (worse int, err error) {
	fmt.Fprintf(w, "A: %s (commit %s, %s)\nB: %s (commit %s, %s)\n", pathA, short(a.Provenance.Commit), a.Provenance.Date.Format("2006-01-02 15:04"),
		pathB, short(b.Provenance.Commit), b.Provenance.Date.Format("2006-01-02 15:04"))
	key := func(p profilePoint) string { return strings.Join([]string{p.Op, p.Type, p.Shape, p.Backend}, " ") }
	kernels := func(p profilePoint) map[string]*profileKernel {
		m := map[string]*profileKernel{}
		seen := map[string]int{}
		for i := range p.Kernels {
			k := &p.Kernels[i]
			n := seen[k.Kernel]
			seen[k.Kernel]++
			m[fmt.Sprintf("%s#%d", k.Kernel, n)] = k
		}
		return m
	}
	bp := map[string]profilePoint{}
	for _, p := range b.Points {
		bp[key(p)] = p
	}
	var rows [][]string
	joined := 0
	for _, pa := range a.Points {
		pb, ok := bp[key(pa)]
		if !ok {
			fmt.Fprintf(w, "only in A: %s\n", key(pa))
			continue
		}
		delete(bp, key(pa))
		ka, kb := kernels(pa), kernels(pb)
		for name, x := range ka {
			y, ok := kb[name]
			if !ok {
				fmt.Fprintf(w, "only in A: %s kernel %s\n", key(pa), name)
				continue
			}
			joined++
			for _, m := range profileMetrics {
				va, vb := m.get(x), m.get(y)
				if va == vb || math.Abs(vb-va) <= 0.01*math.Max(math.Abs(va), math.Abs(vb)) {
					continue
				}
				verdict := "better"
				if (vb > va) != m.higher {
					verdict = "WORSE"
					worse++
				}
				rows = append(rows, []string{key(pa), strings.TrimSuffix(name, "#0"), m.name, fmt.Sprintf("%.4g", va), fmt.Sprintf("%.4g", vb), verdict})
			}
		}
		for name := range kb {
			if _, ok := ka[name]; !ok {
				fmt.Fprintf(w, "only in B: %s kernel %s\n", key(pa), name)
			}
		}
	}
	for k := range bp {
		fmt.Fprintf(w, "only in B: %s\n", k)
	}
	if joined == 0 {
		return 0, fmt.Errorf("no kernel is in both sets")
	}
	if len(rows) == 0 {
		fmt.Fprintf(w, "%d kernels: no counter differs by more than 1%%\n", joined)
		return 0, nil
	}
	if err := renderTable(w, []string{"point", "kernel", "counter", "A", "B", "B vs A"}, rows); err != nil {
		return 0, err
	}
	fmt.Fprintf(w, "%d kernels, %d counters changed by more than 1%%, %d worse\n", joined, len(rows), worse)
	return worse, nil
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
